package nginximport

import (
	"strings"
	"testing"
	"testing/fstest"
	"unicode/utf8"
)

func TestReadExamples(t *testing.T) {
	file := func(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }
	tests := []struct {
		name  string
		files fstest.MapFS
		want  string // the examples as NAME:CONTENT-TYPE:INPUT>EXPECTED, space-separated
		err   []string
	}{
		{"pairs of every kind", fstest.MapFS{
			"home.input.html": file("a"), "home.expected.html": file("b"),
			"app.v2.input.js": file("c"), "app.v2.expected.js": file("c"),
			"README.txt": file("notes"), ".input.html": file("hidden"), "sub/x.input.html": file("nested"),
		}, "app.v2:application/javascript:c>c home::a>b", nil},
		{"input without expected", fstest.MapFS{"a.input.html": file("a"), "b.expected.css": file("b")},
			"", []string{"ex/a.input.html: no a.expected.html beside it", "ex/b.expected.css: no b.input.css beside it"}},
		{"unknown extension", fstest.MapFS{"a.input.php": file("a"), "a.expected.php": file("a")},
			"", []string{"ex/a.input.php: unknown extension \"php\" (want one of .css .htm .html .js .json .svg .txt .xml)"}},
		{"one name twice", fstest.MapFS{"a.input.html": file("a"), "a.expected.html": file("a"), "a.input.css": file("a"), "a.expected.css": file("a")},
			"", []string{`ex/a.input.html: example "a" is also ex/a.input.css`}},
		{"not UTF-8", fstest.MapFS{"a.input.html": file("ok \xff"), "a.expected.html": file("ok")},
			"", []string{"ex/a.input.html: not UTF-8 (at byte 3)"}},
		{"nothing", fstest.MapFS{"README": file("x")}, "", []string{"examples: ex: no NAME.input.EXT with its NAME.expected.EXT"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			exs, err := ReadExamples(tc.files, "ex")
			if tc.err != nil {
				for _, w := range tc.err {
					if err == nil || !strings.Contains(err.Error(), w) {
						t.Errorf("error %v, want one containing %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range exs {
				got = append(got, e.Name+":"+e.ContentType+":"+string(e.Input)+">"+string(e.Expected))
			}
			if strings.Join(got, " ") != tc.want {
				t.Errorf("got %q, want %q", strings.Join(got, " "), tc.want)
			}
		})
	}
}

// testsConf is an import with two rule sets, for the tests of AddTests.
const testsConf = `http {
    server {
        server_name a.example;
        location / { sub_filter 'cat' 'dog'; sub_filter_once off; }
    }
    server {
        server_name b.example;
        location / { subs_filter 'cat' 'cow'; }
    }
}`

func importTestsConf(t testing.TB) *Result {
	res, err := Import(fstest.MapFS{"n.conf": {Data: []byte(testsConf)}}, "n.conf")
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestAddTests writes tests into rule sets and loads the result: the
// loader runs them, so a body the YAML does not carry back exactly fails.
func TestAddTests(t *testing.T) {
	res := importTestsConf(t)
	if strings.Join(res.Names, ",") != "a.example location /,b.example location /" {
		t.Fatalf("rule sets %q", res.Names)
	}
	body := "<p>a cat</p>\n  <p>CAT\t</p>  \n\r\nyes"
	err := res.AddTests("", []Test{
		{Name: "page", Input: body, Output: strings.NewReplacer("cat", "dog", "CAT", "dog").Replace(body), Comment: "from a → b"},
		{Name: "css", Input: "cat", Unchanged: true, ContentType: "text/css"},
	}, []string{"a note\nwith a line feed"})
	if err != nil {
		t.Fatal(err)
	}
	if err := res.AddTests("b.example location /", []Test{{Name: "true", Input: "cat", Output: "cow"}}, nil); err != nil {
		t.Fatal(err)
	}
	cfg := loadConfig(t, res.YAML, "tests.yaml")
	for name, want := range map[string]int{"a.example location /": 2, "b.example location /": 1} {
		if got := cfg.RuleSet(name).Tests; got != want {
			t.Errorf("rule set %q: %d tests, want %d\n%s", name, got, want, res.YAML)
		}
	}
	for _, want := range []string{"# from a → b\n", "# a note\\nwith a line feed\n"} {
		if !strings.Contains(string(res.YAML), want) {
			t.Errorf("no %q in\n%s", want, res.YAML)
		}
	}
	if err := res.AddTests("c", nil, nil); err == nil || !strings.Contains(err.Error(), `no rule set "c" in the imported configuration (it has "a.example location /" and "b.example location /")`) {
		t.Errorf("unknown rule set: error %v", err)
	}
}

// FuzzAddTests checks that any UTF-8 body written as a test comes back
// from the configuration file exactly: the loader runs the test, which
// fails if the input or the output changed on the way.
func FuzzAddTests(f *testing.F) {
	for _, s := range []string{"cat", "a\n cat \n", "\r\n\tcat:", "- cat # x", "'\"\\", "\u2028cat\ufeff", "\x00\x1b[cat"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		if body == "" || !utf8.ValidString(body) {
			return // an empty name is rejected by the loader, rightly
		}
		res := importTestsConf(t)
		want := strings.ReplaceAll(body, "cat", "cow")
		if err := res.AddTests("b.example location /", []Test{{Name: body, Input: body, Output: want}}, nil); err != nil {
			t.Fatal(err)
		}
		loadConfig(t, res.YAML, "fuzz.yaml")
	})
}
