package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

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
