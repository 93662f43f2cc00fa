package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files of TestImportNginxExamplesGolden")

const (
	nginxConf = `http {
    server {
        server_name www.example.com;
        location / {
            replace_filter 'https?://www\.example\.com' 'https://clone.example.net' gi;
            subs_filter 'UA-12345-1' 'UA-99999-9';
        }
    }
}
`
	nginxBody = `<a href="HTTP://www.example.com/x">UA-12345-1</a>`
	// nginxBody rewritten by hand with nginxConf's rules.
	nginxWant = `<a href="https://clone.example.net/x">UA-99999-9</a>`
)

func runImportNginxWith(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = importNginx(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestImportNginx(t *testing.T) {
	good := writeFile(t, "nginx.conf", nginxConf)
	untranslatable := writeFile(t, "bad.conf", "server { location / {\n replace_filter '(a)\\1' x;\n replace_filter b c;\n} }\n")
	syntax := writeFile(t, "syntax.conf", "http {\n server {\n")
	include := writeFile(t, "include.conf", "http {\n include missing.conf;\n}\n")
	tests := []struct {
		name      string
		args      []string
		code      int
		stdoutHas string // "" = no output
		stderrHas []string
	}{
		{"ok", []string{good}, 0, "- {regex: 'https?://www\\.example\\.com', replace: 'https://clone.example.net', ignore_case: true} # " + good + ":5 replace_filter",
			[]string{good + ":4: warning: rules of replace_filter and subs_filter apply here", "2 rule(s) in 1 rule set(s), 2 warning(s), 0 untranslated"}},
		{"untranslatable", []string{untranslatable}, 2, "",
			[]string{untranslatable + ":2: cannot be translated: backreference `\\1`", "1 directive(s) cannot be translated; nothing written"}},
		{"lenient", []string{"-lenient", untranslatable}, 0, "# UNTRANSLATED " + untranslatable + ":2 replace_filter",
			[]string{untranslatable + ":2: not translated (written as a comment): backreference"}},
		{"syntax error", []string{syntax}, 2, "", []string{syntax + `:3: unexpected end of file, expecting "}"`, "not imported"}},
		{"missing file", []string{filepath.Join(t.TempDir(), "nope.conf")}, 1, "", []string{"no such file or directory"}},
		{"missing include", []string{include}, 1, "", []string{include + `:2: include "missing.conf"`}},
		{"no file", nil, 2, "", []string{"want exactly one nginx configuration file"}},
		{"two files", []string{good, good}, 2, "", []string{"want exactly one"}},
		{"bad flag", []string{"-x", good}, 2, "", []string{"flag provided but not defined: -x"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runImportNginxWith(tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, tc.code, errOut)
			}
			if tc.stdoutHas == "" && out != "" || !strings.Contains(out, tc.stdoutHas) {
				t.Errorf("stdout:\n%s\nwant it to contain %q", out, tc.stdoutHas)
			}
			for _, want := range tc.stderrHas {
				if !strings.Contains(errOut, want) {
					t.Errorf("stderr:\n%s\nwant it to contain %q", errOut, want)
				}
			}
		})
	}
}

// TestImportNginxThenApply runs the migration path: import to a file with
// -o, check it, and rewrite a body with it.
func TestImportNginxThenApply(t *testing.T) {
	conf := writeFile(t, "nginx.conf", nginxConf)
	out := filepath.Join(t.TempDir(), "streamsub.yaml")
	if code, stdout, errOut := runImportNginxWith("-o", out, conf); code != 0 || stdout != "" {
		t.Fatalf("import-nginx -o: exit %d, stdout %q, stderr %q", code, stdout, errOut)
	}
	if _, err := os.Stat(out); err != nil {
		t.Fatal(err)
	}
	var checkOut, checkErr bytes.Buffer
	if code := check([]string{"-config", out}, &checkOut, &checkErr); code != 0 {
		t.Fatalf("check: exit %d\n%s", code, checkErr.String())
	}
	if code, got, errOut := runApplyWith([]string{"-config", out, "-chunk-size", "3"}, nginxBody); code != 0 || got != nginxWant {
		t.Errorf("apply: exit %d, stderr %q\n got %s\nwant %s", code, errOut, got, nginxWant)
	}
}

// The import-nginx -examples test data: a configuration tree and example
// pages that streamsub rewrites as the examples say.
const (
	examplesConf = "testdata/import-nginx/nginx.conf"
	examplesDir  = "testdata/import-nginx/examples"
)

// TestImportNginxExamplesGolden imports testdata/import-nginx with its
// examples and compares the output with examples.yaml (go test -update
// rewrites it); `check` must accept it and run its tests.
func TestImportNginxExamplesGolden(t *testing.T) {
	code, out, errOut := runImportNginxWith("-examples", examplesDir, examplesConf)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	if want := "0 untranslated, 3 example test(s)"; !strings.Contains(errOut, want) {
		t.Errorf("stderr:\n%s\nwant it to contain %q", errOut, want)
	}
	golden := "testdata/import-nginx/examples.yaml"
	if *update {
		if err := os.WriteFile(golden, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if out != string(want) {
		t.Errorf("output differs from %s (go test -update rewrites it):\n%s", golden, out)
	}
	var checkOut, checkErr bytes.Buffer
	if code := check([]string{"-config", golden}, &checkOut, &checkErr); code != 0 || !strings.Contains(checkOut.String(), "3 test(s) passed") {
		t.Errorf("check: exit %d\n%s%s", code, checkOut.String(), checkErr.String())
	}
}

// TestImportNginxExamples covers -examples and -examples-rule-set: a
// directory whose expected body streamsub does not produce fails the
// import with the difference, or is left out with -lenient; the tests
// land in the rule set asked for.
func TestImportNginxExamples(t *testing.T) {
	// A copy of the examples where the expected page has a change no rule
	// makes.
	differs := t.TempDir()
	for _, name := range []string{"home.input.html", "home.expected.html", "api.input.json", "api.expected.json"} {
		data, err := os.ReadFile(filepath.Join(examplesDir, name))
		if err != nil {
			t.Fatal(err)
		}
		if name == "home.expected.html" {
			data = bytes.Replace(data, []byte("About Example Corp"), []byte("About Clone Corp"), 1)
		}
		if err := os.WriteFile(filepath.Join(differs, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	unpaired := t.TempDir()
	writeIn(t, unpaired, "a.input.html", "x")
	twoSets := writeFile(t, "two.conf", `http {
    server { server_name a.example; location / { sub_filter a b; } }
    server { server_name c.example; location / { sub_filter c d; } }
}`)
	twoSetsEx := t.TempDir()
	writeIn(t, twoSetsEx, "p.input.html", "a c")
	writeIn(t, twoSetsEx, "p.expected.html", "a d")
	// Rules nginx chains: the second rewrites what the first wrote.
	chained := writeFile(t, "chained.conf", `server { location / {
    subs_filter 'http://a.example' 'https://a.example';
    subs_filter 'https://a.example' 'https://b.example';
} }`)
	chainedEx := t.TempDir()
	writeIn(t, chainedEx, "p.input.html", "http://a.example https://a.example")
	writeIn(t, chainedEx, "p.expected.html", "https://b.example https://b.example")
	tests := []struct {
		name      string
		args      []string
		code      int
		stdoutHas []string // nil: no output
		stderrHas []string
	}{
		{"differs", []string{"-examples", differs, examplesConf}, 2, nil, []string{
			filepath.Join(differs, "home.expected.html") + `: rule set "www.example.com location /": test "home": output differs; first difference at offset 243:`,
			`  want: …"/clone.example.net/about\">About Clone Corp</a>\n</body>\n</html>\n"`,
			`  got:  …"/clone.example.net/about\">About Example Corp</a>\n</body>\n</html>"…`,
			"1 of 2 example(s) give other output in streamsub; nothing written (-lenient leaves them out)"}},
		{"differs, lenient", []string{"-lenient", "-examples", differs, examplesConf}, 0, []string{
			"# NOT A TEST: example " + filepath.Join(differs, "home.input.html") + ": streamsub's output differs from " + filepath.Join(differs, "home.expected.html") + " at offset 243\n",
			"  - name: api\n"}, []string{"1 of 2 example(s) give other output in streamsub; left out (noted in a comment)", "1 example test(s)"}},
		{"differs where the import warned", []string{"-examples", chainedEx, chained}, 2, nil, []string{
			chained + ":3: warning: in nginx this subs_filter rule runs on the output of the one at " + chained + ":2",
			`rule set "server ` + chained + `:1 location /": test "p": output differs; first difference at offset 8:`,
			`the import warned that rule set "server ` + chained + `:1 location /" may rewrite bodies differently from nginx: see the warning(s) at ` + chained + ":3"}},
		{"other rule set", []string{"-examples", twoSetsEx, "-examples-rule-set", "c.example location /", twoSets}, 0,
			[]string{"  - name: c.example location /\n    rules:\n      - {literal: c, replace: d, ignore_case: true, once: true} # " + twoSets + ":3 sub_filter\n    tests:\n"}, nil},
		{"the first rule set", []string{"-examples", twoSetsEx, twoSets}, 2, nil,
			[]string{`rule set "a.example location /": test "p": output differs; first difference at offset 0:`}},
		{"unknown rule set", []string{"-examples", examplesDir, "-examples-rule-set", "nope", examplesConf}, 2, nil,
			[]string{`-examples-rule-set "nope": no such rule set in the import (it has "www.example.com location /")`}},
		{"rule set without examples", []string{"-examples-rule-set", "x", examplesConf}, 2, nil, []string{"-examples-rule-set needs -examples"}},
		{"no such directory", []string{"-examples", filepath.Join(unpaired, "nope"), examplesConf}, 1, nil, []string{"no such file or directory"}},
		{"unpaired", []string{"-examples", unpaired, examplesConf}, 2, nil,
			[]string{filepath.Join(unpaired, "a.input.html") + ": no a.expected.html beside it", "examples not read; nothing written"}},
	}
	// The import warned of nothing in how examplesConf's rules rewrite.
	if _, _, errOut := runImportNginxWith("-examples", differs, examplesConf); strings.Contains(errOut, "the import warned") {
		t.Errorf("stderr:\n%s\nwant no warning about the rule set", errOut)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runImportNginxWith(tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, tc.code, errOut)
			}
			if tc.stdoutHas == nil && out != "" {
				t.Errorf("stdout:\n%s\nwant none", out)
			}
			for _, want := range tc.stdoutHas {
				if !strings.Contains(out, want) {
					t.Errorf("stdout:\n%s\nwant it to contain %q", out, want)
				}
			}
			for _, want := range tc.stderrHas {
				if !strings.Contains(errOut, want) {
					t.Errorf("stderr:\n%s\nwant it to contain %q", errOut, want)
				}
			}
		})
	}
}

func writeIn(t *testing.T, dir, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
