package nginxconf

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/streamsub/streamsub/internal/nginxrun"
	"github.com/streamsub/streamsub/matcher"
)

func lit(name, pattern, replace string) matcher.Rule {
	return matcher.Rule{Name: name, Pattern: pattern, Literal: true, Replace: replace}
}

func TestCheckRules(t *testing.T) {
	ok := lit("host", "www.example.com", "clone.example.net")
	tests := []struct {
		name  string
		rules []matcher.Rule
		want  string // substring of the error; "" = accepted
	}{
		{"literals", []matcher.Rule{ok, lit("", "UA-1", "UA-2")}, ""},
		{"ignore case ASCII", []matcher.Rule{{Pattern: "Example", Literal: true, IgnoreCase: true}}, ""},
		{"none", nil, "no rules"},
		{"regex", []matcher.Rule{ok, {Name: "re", Pattern: `a+`}}, "rule 1 (re) is a regex"},
		{"once", []matcher.Rule{{Name: "o", Pattern: "a", Literal: true, Once: true}}, "rule 0 (o) is once"},
		{"dollar in pattern", []matcher.Rule{ok, ok, lit("", "$host", "x")}, "rule 2 (#2) contains $"},
		{"dollar in replacement", []matcher.Rule{lit("d", "a", "$$")}, "rule 0 (d) contains $"},
		{"empty", []matcher.Rule{lit("e", "", "x")}, "rule 0 (e) has an empty literal"},
		{"ignore case non-ASCII", []matcher.Rule{{Name: "u", Pattern: "Ärger", Literal: true, IgnoreCase: true}}, "rule 0 (u) ignores case in non-ASCII"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckRules(tc.rules)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("rejected: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func params() Params {
	return Params{
		Source: "s.yaml", RuleSet: "standard",
		Rules:        []matcher.Rule{lit("a", "www.example.com", "x"), {Pattern: "Corp", Literal: true, IgnoreCase: true, Replace: "Inc"}},
		ContentTypes: []string{"text/html", "text/css"},
		Origin:       "127.0.0.1:8080", SubListen: "127.0.0.1:1", SubsListen: "127.0.0.1:2",
		Dir: "/tmp/x", SubsModule: "/m.so", Workers: 2,
	}
}

func TestWriteRejects(t *testing.T) {
	tests := []struct {
		name   string
		change func(*Params)
		want   string
	}{
		{"regex rule", func(p *Params) { p.Rules = []matcher.Rule{{Name: "r", Pattern: "a|b"}} }, `rule set "standard" of s.yaml: rule 0 (r) is a regex`},
		{"no workers", func(p *Params) { p.Workers = 0 }, "workers 0"},
		{"no dir", func(p *Params) { p.Dir = "" }, `dir ""`},
		{"blank in dir", func(p *Params) { p.Dir = "/tmp/a b" }, `dir "/tmp/a b"`},
		{"injection", func(p *Params) { p.Origin = "127.0.0.1:1; }" }, "origin"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := params()
			tc.change(&p)
			err := Write(io.Discard, p)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestWriteDirectives checks the filter directives per server: one per
// rule, in rule order, with the case flag of each rule.
func TestWriteDirectives(t *testing.T) {
	var b bytes.Buffer
	if err := Write(&b, params()); err != nil {
		t.Fatal(err)
	}
	var sub, subs []string
	for _, line := range strings.Split(b.String(), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		switch f[0] {
		case "sub_filter":
			sub = append(sub, strings.Join(f[1:], " "))
		case "subs_filter":
			subs = append(subs, strings.Join(f[1:], " "))
		case "sub_filter_types", "subs_filter_types":
			if line := strings.Join(f[1:], " "); line != "text/css;" {
				t.Errorf("%s %s, want text/css only (text/html is built in)", f[0], line)
			}
		}
	}
	wantSub := []string{"'www.example.com' 'x';", "'Corp' 'Inc';"}
	wantSubs := []string{"'www.example.com' 'x' g;", "'Corp' 'Inc' gi;"}
	if fmt.Sprint(sub) != fmt.Sprint(wantSub) || fmt.Sprint(subs) != fmt.Sprint(wantSubs) {
		t.Errorf("sub_filter %q, subs_filter %q; want %q, %q", sub, subs, wantSub, wantSubs)
	}
}

// TestNginxRewritesLikeStreamsub runs the real nginx (skipped when it or
// the subs_filter module is not installed) on a written configuration and
// compares both servers' bodies with the matcher's: rules with quotes,
// backslashes and nginx syntax in them must reach the modules unchanged.
func TestNginxRewritesLikeStreamsub(t *testing.T) {
	nginx, module := nginxrun.Binaries(t)
	rules := []matcher.Rule{
		lit("url", "https://www.example.com", "https://clone.example.net"),
		lit("host", "www.example.com", "clone.example.net"),
		lit("quote", `it's "here"`, `it\'s`),
		lit("backslash", `a\tb\n`, `\\`),
		lit("syntax", "{x; y}", "#z;"),
		lit("spaces", "two  words", " "),
	}
	rs, err := matcher.Compile(rules, matcher.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var page strings.Builder
	for i := range 300 {
		fmt.Fprintf(&page, "<p>%d https://www.example.com/%d at www.example.com: it's \"here\", a\\tb\\n {x; y} two  words</p>\n", i, i)
	}
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ct := map[string]string{"/html": "text/html", "/css": "text/css", "/plain": "text/plain"}[r.URL.Path]
		w.Header().Set("Content-Type", ct+"; charset=utf-8")
		io.WriteString(w, page.String())
	}))
	defer origin.Close()

	dir := t.TempDir()
	p := Params{
		Source: "test", RuleSet: "test", Rules: rules, ContentTypes: []string{"text/html", "text/css"},
		// Unix sockets: no free port to find.
		Origin: origin.Listener.Addr().String(), SubListen: "unix:" + filepath.Join(dir, "sub.sock"),
		SubsListen: "unix:" + filepath.Join(dir, "subs.sock"),
		Dir:        dir, SubsModule: module, Workers: 1,
	}
	var conf bytes.Buffer
	if err := Write(&conf, p); err != nil {
		t.Fatal(err)
	}
	confPath := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(confPath, conf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := nginxrun.Start(t, nginx, dir, confPath)

	st := rs.NewStream()
	want := string(st.Close(st.Write(nil, []byte(page.String()))))
	if want == page.String() {
		t.Fatal("the page has no match")
	}
	for _, listen := range []string{p.SubListen, p.SubsListen} {
		sock := strings.TrimPrefix(listen, "unix:")
		srv.WaitListening(t, "unix", sock)
		client := &http.Client{Transport: &http.Transport{
			DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
				return (&net.Dialer{}).DialContext(ctx, "unix", sock)
			},
		}}
		for _, tc := range []struct{ path, want string }{
			{"/html", want}, {"/css", want}, {"/plain", page.String()},
		} {
			resp, err := client.Get("http://nginx" + tc.path)
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("%s %s: body differs from the expected one (%d bytes, want %d):\n%.300s", listen, tc.path, len(got), len(tc.want), got)
			}
		}
	}
}
