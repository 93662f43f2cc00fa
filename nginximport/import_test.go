package nginximport

import (
	"errors"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/streamsub/streamsub/nginxparse"
)

// TestImportedConfigRewrites checks what the imported configurations do,
// through the real loader and rewriter: which rule set a host gets (or a
// route, by name), which content types it takes, and the body it writes,
// worked out by hand from nginx's semantics.
func TestImportedConfigRewrites(t *testing.T) {
	tests := []struct {
		name        string
		conf        string
		host        string // the rule set for this host, unless ruleSet is set
		ruleSet     string
		contentType string
		body, want  string // want "" means: not rewritten (no set, or the type is not taken)
	}{
		{"one location, no hosts map", "basic.conf", "any.example", "", "text/css",
			"Visit HTTP://WWW.EXAMPLE.COM/ UA-1-1 G-22-1 <!-- build 12 -->\n<!-- build 13 -->\n",
			"Visit https://clone.example.net/ UA-1-2 G-22-2 <!-- build 13 -->\n"},
		{"http rules under server rules", "site.conf", "shop.example.com", "", "text/html",
			`<a href="http://shop.example.com/x">UA-12345-1 //CDN.example.com/a.js ua-12345-1`,
			`<a href="https://shop.clone.example.net/x">UA-99999-9 //cdn.clone.example.net/a.js UA-99999-9`},
		{".shop.example.com covers subdomains", "site.conf", "fr.shop.example.com:8080", "", "text/html",
			"https://SHOP.example.com", "https://shop.clone.example.net"},
		// nginx would leave the URL (replace_filter does not take
		// JavaScript there, sub_filter does): a warned difference, the
		// rule set takes the union of the modules' types.
		{"content types are the modules' union", "site.conf", "shop.example.com", "", "application/javascript",
			"http://shop.example.com UA-12345-1", "https://shop.clone.example.net UA-99999-9"},
		{"a location's sub_filter replaces the http list", "site.conf", "blog.example.com", "", "text/html",
			`http://blog.example.com/p <img src="/assets/a.png"> &COPY; example corp UA-12345-1 HTTP://blog.example.com`,
			`https://blog.clone.example.net/p <img src="https://assets.clone.example.net/a.png"> &copy; Clone Corp UA-12345-1 HTTP://blog.example.com`},
		{"only the http rules", "site.conf", "docs.example.com", "", "text/css",
			"UA-12345-1 http://shop.example.com", "UA-99999-9 http://shop.example.com"},
		{"default_server takes other hosts", "site.conf", "elsewhere.example", "", "text/html",
			"http://shop.example.com", "https://shop.clone.example.net"},
		{"a type the default server does not take", "site.conf", "elsewhere.example", "", "application/json",
			"http://shop.example.com", ""},
		{"a location's own replace_filter rules", "site.conf", "", "shop.example.com location /api/", "application/json",
			`{"price":   42, "id": "UA-12345-1", "url": "http://shop.example.com"}`,
			`{"price": 42, "id": "UA-99999-9", "url": "http://shop.example.com"}`},
		{"wildcard host", "hosts.conf", "x.shop.example.com", "", "text/html", "shop shop", "boutique boutique"},
		{"a server without rules under a wildcard", "hosts.conf", "api.shop.example.com", "", "text/html", "shop", "shop"},
		{"the first server is the default", "hosts.conf", "unknown.example", "", "text/html",
			"example.com EXAMPLE.COM", "clone.example.net EXAMPLE.COM"},
		{"sub_filter_once off", "site.conf", "docs.example.com", "", "text/html", "UA-12345-1 UA-12345-1", "UA-99999-9 UA-99999-9"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Import(nginxparse.OS, "testdata/"+tc.conf)
			if err != nil {
				t.Fatal(err)
			}
			cfg := loadConfig(t, res.YAML, tc.conf)
			rs := cfg.RuleSetForHost(tc.host)
			if tc.ruleSet != "" {
				rs = cfg.RuleSet(tc.ruleSet)
			}
			got := ""
			if rs != nil && rs.AcceptsContentType(tc.contentType) {
				st := rs.Compiled.NewStream()
				out := st.Write(nil, []byte(tc.body))
				got = string(st.Close(out))
			}
			if got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestImportErrors(t *testing.T) {
	tests := []struct {
		name, conf string
		want       []string // each must be in the error
	}{
		{"unknown replace_filter flag", "server { replace_filter a b gx; }",
			[]string{`n.conf:1: replace_filter: unknown flag in "gx" (want g, i)`}},
		{"arguments", "server {\n sub_filter a;\n replace_filter a;\n}",
			[]string{`n.conf:2: invalid number of arguments in "sub_filter" directive`, `n.conf:3: invalid number of arguments in "replace_filter" directive`}},
		{"duplicate flag", "sub_filter_once on;\nsub_filter_once off;\nsub_filter a b;",
			[]string{`n.conf:2: "sub_filter_once" directive is duplicate`}},
		{"bad on/off", "sub_filter_once yes;\nsub_filter a b;",
			[]string{`n.conf:1: invalid value "yes" in "sub_filter_once" directive, it must be "on" or "off"`}},
		{"bad keep/clear", "replace_filter_last_modified on; replace_filter a b;",
			[]string{`n.conf:1: invalid value "on" in "replace_filter_last_modified" directive, it must be "keep" or "clear"`}},
		{"bad size", "replace_filter_max_buffered_size 12x; replace_filter a b;",
			[]string{`n.conf:1: replace_filter_max_buffered_size: invalid size "12x"`}},
		{"empty sub_filter string", "sub_filter '' b;", []string{`n.conf:1: sub_filter: empty search pattern`}},
		{"block on a rule", "replace_filter a b { }", []string{`n.conf:1: directive "replace_filter" is not terminated by ";"`}},
		{"location outside a server", "http {\n location / { sub_filter a b; }\n}",
			[]string{`n.conf:2: "location" directive is not allowed here (outside a server block)`}},
		{"location without a path", "server {\n location { sub_filter a b; }\n}",
			[]string{`n.conf:2: invalid number of arguments in "location" directive`}},
		{"rules outside http", "sub_filter a b;\nhttp { }", []string{`n.conf:1: "sub_filter" directive is not allowed here`}},
		{"two http blocks", "http { }\nhttp { }", []string{`n.conf:2: "http" directive is duplicate`}},
		{"no rules", "http { server { listen 80; } }", []string{"n.conf: no replace_filter, subs_filter or sub_filter rule applies"}},
		{"only skipped rules", "replace_filter_skip 1; replace_filter a b;", []string{"nothing to import"}},
		{"syntax", "http {\n server {\n", []string{`n.conf:3: unexpected end of file, expecting "}"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Import(fstest.MapFS{"n.conf": {Data: []byte(tc.conf)}}, "n.conf")
			if err == nil {
				t.Fatalf("Import(%q) succeeded, want an error", tc.conf)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error:\n%v\nwant it to contain %q", err, w)
				}
			}
		})
	}
}

func TestImportMissingInclude(t *testing.T) {
	files := fstest.MapFS{"conf/n.conf": {Data: []byte("http {\n include sites/*.conf;\n include extra.conf;\n}")}}
	_, err := Import(files, "conf/n.conf")
	var pe *nginxparse.Error
	if !errors.As(err, &pe) || pe.Pos.String() != "conf/n.conf:3" || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("got %v, want a not-exist error at conf/n.conf:3 (the glob that matches nothing is fine)", err)
	}
}

// TestImportSetsAndExtends checks the structure of the output for
// inheritance shapes the golden files do not cover: a shared block no
// location uses alone becomes a rule set of its own, named after its level
// and module, and a location that only changes a setting extends the rules.
func TestImportSetsAndExtends(t *testing.T) {
	conf := `http {
    replace_filter a b g;
    server {
        server_name s.example;
        location / { sub_filter x y; }
        location /t/ { sub_filter z w; }
        location /u/ { replace_filter_types text/plain; sub_filter z w; }
    }
}`
	res, err := Import(fstest.MapFS{"n.conf": {Data: []byte(conf)}}, "n.conf")
	if err != nil {
		t.Fatal(err)
	}
	cfg := loadConfig(t, res.YAML, "n.conf")
	want := map[string]struct {
		extends []string
		rules   int
		types   string
	}{
		"s.example location /":   {[]string{"http replace_filter"}, 2, "text/html"},
		"s.example location /t/": {[]string{"http replace_filter"}, 2, "text/html"},
		"s.example location /u/": {[]string{"http replace_filter"}, 2, "text/html,text/plain"},
		"http replace_filter":    {nil, 1, "text/html"},
	}
	if len(cfg.RuleSets) != len(want) {
		t.Fatalf("%d rule sets, want %d:\n%s", len(cfg.RuleSets), len(want), res.YAML)
	}
	if cfg.RuleSets[0].Name != "s.example location /" {
		t.Errorf("first rule set %q, want the host's", cfg.RuleSets[0].Name)
	}
	for _, rs := range cfg.RuleSets {
		w, ok := want[rs.Name]
		if !ok {
			t.Errorf("unexpected rule set %q", rs.Name)
			continue
		}
		if strings.Join(rs.Extends, ",") != strings.Join(w.extends, ",") || len(rs.Rules) != w.rules || strings.Join(rs.ContentTypes, ",") != w.types {
			t.Errorf("%s: extends %q, %d rules, types %q; want %q, %d, %q", rs.Name, rs.Extends, len(rs.Rules), rs.ContentTypes, w.extends, w.rules, w.types)
		}
	}
}

func TestCommentText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"replace_filter 'a b' c", "replace_filter 'a b' c"},
		{"a\nb\tc", `a\nb\tc`},
		{"x\x01y\x1cz", `x\x01y\x1cz`},
		{"line\u2028sep", `line\u2028sep`},
		{"bad \xe5 byte", "bad \uFFFD byte"},
		{"café", "café"},
	}
	for _, tc := range tests {
		if got := commentText(tc.in); got != tc.want {
			t.Errorf("commentText(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestImportBodyOnlyRules checks a rule whose replacement holds a line
// break, which a header value cannot carry: it keeps to bodies, every rule
// set gets header_rules of the others (a shared set's first), and a set
// left with none rewrites no header.
func TestImportBodyOnlyRules(t *testing.T) {
	conf := `http {
    replace_filter 'www\.example\.com' 'clone.example.net' g;
    server {
        server_name s.example;
        location / { sub_filter '</p>' "</p>\n"; sub_filter_once off; }
        location /n/ { sub_filter x y; }
    }
    server {
        server_name t.example;
        replace_filter_types text/plain;
        location / { replace_filter '</p>' "</p>\r\n"; }
    }
}`
	res, err := Import(fstest.MapFS{"n.conf": {Data: []byte(conf)}}, "n.conf")
	if err != nil {
		t.Fatal(err)
	}
	warned := 0
	for _, w := range res.Warnings {
		if strings.Contains(w.Msg, "rewrites bodies only") {
			warned++
		}
	}
	if warned != 2 {
		t.Errorf("%d body-only warnings, want 2 (n.conf:5 and n.conf:11): %v", warned, res.Warnings)
	}
	cfg := loadConfig(t, res.YAML, "n.conf")
	tests := []struct {
		host, body, wantBody, header, wantHeader string
	}{
		{"s.example", "<p>www.example.com</p><p>x</p>", "<p>clone.example.net</p>\n<p>x</p>\n",
			"https://www.example.com/</p>", "https://clone.example.net/</p>"},
		{"t.example", "<p>www.example.com</p>", "<p>www.example.com</p>\r\n",
			"https://www.example.com/</p>", ""},
	}
	for _, tc := range tests {
		rs := cfg.RuleSetForHost(tc.host)
		st := rs.Compiled.NewStream()
		if got := string(st.Close(st.Write(nil, []byte(tc.body)))); got != tc.wantBody {
			t.Errorf("%s (%s): body %q, want %q", tc.host, rs.Name, got, tc.wantBody)
		}
		if tc.wantHeader == "" {
			if rs.ResponseRewriter != nil {
				t.Errorf("%s (%s): rewrites response headers %v, want none\n%s", tc.host, rs.Name, rs.ResponseRewriter.Names(), res.YAML)
			}
			continue
		}
		if rs.ResponseRewriter == nil {
			t.Fatalf("%s (%s): no response header rewriter\n%s", tc.host, rs.Name, res.YAML)
		}
		got, _, _ := rs.ResponseRewriter.Rewrite(nil, []byte(tc.header))
		if string(got) != tc.wantHeader {
			t.Errorf("%s (%s): header %q, want %q", tc.host, rs.Name, got, tc.wantHeader)
		}
	}
}
