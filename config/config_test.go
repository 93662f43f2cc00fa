package config

import (
	"errors"
	"regexp/syntax"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/streamsub/streamsub/headerrewrite"
	"github.com/streamsub/streamsub/matcher"
)

// set returns an uncompiled HTML rule set called name with one literal rule
// per pattern, each replaced by its upper case.
func set(name string, literals ...string) *RuleSet {
	rs := &RuleSet{Name: name, ContentTypes: []string{DefaultContentType}}
	for _, l := range literals {
		rs.Rules = append(rs.Rules, matcher.Rule{Pattern: l, Literal: true, Replace: strings.ToUpper(l)})
	}
	return rs
}

func mustNew(t testing.TB, c Config) *Config {
	t.Helper()
	cfg, err := New(c)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return cfg
}

func TestNew(t *testing.T) {
	in := []*RuleSet{set("a", "x"), set("b", "y")}
	cfg := mustNew(t, Config{Source: "test", RuleSets: in, Hosts: map[string]string{"b.example": "b"}})
	if cfg.MaxBufferedBytes != matcher.DefaultMaxBufferedBytes || cfg.DFACacheBytes != matcher.DefaultDFACacheBytes {
		t.Errorf("limits %d, %d; want the matcher's defaults", cfg.MaxBufferedBytes, cfg.DFACacheBytes)
	}
	for i, rs := range cfg.RuleSets {
		if rs.Name != in[i].Name || rs.Compiled == nil || cfg.RuleSet(rs.Name) != rs {
			t.Errorf("rule set %d (%q): not in order, not compiled or not found by name", i, rs.Name)
		}
		if in[i].Compiled != nil {
			t.Errorf("New changed the rule set %q it was given", in[i].Name)
		}
	}
	if cfg.RuleSet("nope") != nil {
		t.Error("RuleSet(unknown) != nil")
	}
	if want := (Remember{TTL: DefaultRememberTTL}); cfg.Remember != want {
		t.Errorf("Remember %+v, want %+v (off, default TTL)", cfg.Remember, want)
	}
	var out []byte
	st := cfg.RuleSet("b").Compiled.NewStream()
	out = st.Write(out, []byte("xyz"))
	if out = st.Close(out); string(out) != "xYz" {
		t.Errorf("rule set b rewrote xyz to %q, want xYz", out)
	}
}

// TestNewRejects: every problem is reported, naming its rule set or host.
func TestNewRejects(t *testing.T) {
	noTypes := set("plain", "x")
	noTypes.ContentTypes = nil
	badRule := set("bad", "ok")
	badRule.Rules = append(badRule.Rules, matcher.Rule{Name: "paren", Pattern: "(a"})
	tests := []struct {
		name string
		c    Config
		want []string
	}{
		{"no rule sets", Config{}, []string{"no rule sets"}},
		{"names", Config{RuleSets: []*RuleSet{set("a"), set(""), set("a")}}, []string{
			"rule set 1: empty name",
			`rule set 2: duplicate rule set name "a"`,
		}},
		{"content types", Config{RuleSets: []*RuleSet{noTypes}}, []string{`rule set "plain": no content types`}},
		{"hosts", Config{RuleSets: []*RuleSet{set("a")}, Hosts: map[string]string{"A.example": "a", "b.example.": "a", "c.example": "c"}}, []string{
			`hosts["A.example"]: not normalised; want "a.example"`,
			`hosts["b.example."]: not normalised; want "b.example"`,
			`hosts["c.example"]: unknown rule set "c"`,
		}},
		{"remember", Config{RuleSets: []*RuleSet{set("a")}, Remember: Remember{Entries: -1, TTL: -time.Second, VerifyOneIn: -2}}, []string{
			"remember: entries -1: want 0..10000000",
			"remember: negative ttl -1s",
			"remember: negative verify_one_in -2",
		}},
		{"rule", Config{RuleSets: []*RuleSet{set("a", "x"), badRule}}, []string{
			"rule set \"bad\": rule 1 (\"paren\"): error parsing regexp: missing closing ): `(a`",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := New(tt.c)
			if err == nil {
				t.Fatalf("New accepted it: %d rule sets", len(cfg.RuleSets))
			}
			if got := strings.Split(err.Error(), "\n"); !slices.Equal(got, tt.want) {
				t.Errorf("got:\n%s\nwant:\n%s", err, strings.Join(tt.want, "\n"))
			}
		})
	}
	_, err := New(Config{RuleSets: []*RuleSet{badRule}})
	var re *matcher.RuleError
	if !errors.As(err, &re) || re.Set != "bad" || re.Index != 1 || re.Name != "paren" {
		t.Errorf("no *matcher.RuleError{Set: bad, Index: 1, Name: paren} in %v", err)
	}
	if !errors.As(err, new(*syntax.Error)) {
		t.Errorf("no *syntax.Error in %v", err)
	}
}

func TestRuleSetForHost(t *testing.T) {
	sets := []*RuleSet{set("first"), set("exact"), set("wild"), set("deeper"), set("any"), set("v6")}
	cfg := mustNew(t, Config{RuleSets: sets, Hosts: map[string]string{
		"x.example":   "exact",
		"*.example":   "wild",
		"*.y.example": "deeper",
		"[::1]":       "v6",
		"127.0.0.1":   "exact",
		"*":           "any",
	}})
	tests := []struct{ authority, want string }{
		{"x.example", "exact"},
		{"X.EXAMPLE:8443", "exact"},
		{"x.example.", "exact"},
		{"z.example", "wild"},
		{"a.b.example", "wild"},
		{"y.example", "wild"}, // "*.y.example" is strictly below y.example
		{"q.y.example", "deeper"},
		{"deep.q.Y.example:80", "deeper"},
		{"example", "any"},
		{"other.org", "any"},
		{"", "any"},
		{"[::1]:8080", "v6"},
		{"[::1]", "v6"},
		{"127.0.0.1:10000", "exact"},
		{strings.Repeat("A", 300) + ".EXAMPLE", "wild"}, // longer than the stack buffer
	}
	for _, tc := range tests {
		rs := cfg.RuleSetForHost(tc.authority)
		if rs == nil || rs.Name != tc.want {
			t.Errorf("RuleSetForHost(%.40q) = %v, want %q", tc.authority, rs, tc.want)
		}
	}

	noStar := mustNew(t, Config{RuleSets: []*RuleSet{set("a"), set("b")}, Hosts: map[string]string{"*.b.example": "b"}})
	if rs := noStar.RuleSetForHost("elsewhere.example"); rs != nil {
		t.Errorf("without \"*\", an unmatched host got rule set %q, want nil", rs.Name)
	}
	if rs := noStar.RuleSetForHost("www.b.example"); rs == nil || rs.Name != "b" {
		t.Errorf("RuleSetForHost(www.b.example) = %v, want b", rs)
	}

	noHosts := mustNew(t, Config{RuleSets: []*RuleSet{set("a"), set("b")}})
	for _, h := range []string{"anything.example", "", "b"} {
		if rs := noHosts.RuleSetForHost(h); rs == nil || rs.Name != "a" {
			t.Errorf("without hosts, RuleSetForHost(%q) = %v, want the first rule set", h, rs)
		}
	}
}

func TestAcceptsContentType(t *testing.T) {
	sets := map[string]*RuleSet{
		"html": {ContentTypes: []string{DefaultContentType}},
		"some": {ContentTypes: []string{"text/html", "Application/JSON"}},
		"any":  {ContentTypes: []string{AnyContentType}},
	}
	tests := []struct {
		set, contentType string
		want             bool
	}{
		{"html", "text/html", true},
		{"html", "text/html; charset=utf-8", true},
		{"html", "TEXT/HTML;charset=UTF-8", true},
		{"html", " text/html ; q=1", true},
		{"html", "text/css", false},
		{"html", "", false},
		{"some", "application/json", true},
		{"some", "application/json; charset=utf-8", true},
		{"some", "application/jsonx", false},
		{"some", "text/plain", false},
		{"any", "image/png", true},
		{"any", "", true},
	}
	for _, tc := range tests {
		if got := sets[tc.set].AcceptsContentType(tc.contentType); got != tc.want {
			t.Errorf("%s.AcceptsContentType(%q) = %v, want %v", tc.set, tc.contentType, got, tc.want)
		}
	}
}

// TestHeaderRewriters: New builds each direction's rewriter from the right
// rules, and rejects templates that would put CR, LF or NUL in a header.
func TestHeaderRewriters(t *testing.T) {
	reuse := set("reuse", "www")
	reuse.ResponseHeaders = []string{"Location", "link"}
	own := set("own", "www")
	own.ResponseHeaders = []string{"location"}
	own.HeaderRules = []matcher.Rule{{Pattern: "www", Literal: true, Replace: "hdr"}}
	own.RequestHeaders = []string{"referer"}
	own.RequestHeaderRules = []matcher.Rule{{Pattern: "clone", Literal: true, Replace: "www"}}
	noRequestRules := set("none", "www")
	noRequestRules.RequestHeaders = []string{"referer"}
	cfg := mustNew(t, Config{RuleSets: []*RuleSet{reuse, own, noRequestRules}, MaxHeaderValueBytes: 100})

	rewrite := func(rw *headerrewrite.Rewriter, v string) string {
		out, _, _ := rw.Rewrite(nil, []byte(v))
		return string(out)
	}

	r := cfg.RuleSet("reuse")
	if r.ResponseRewriter == nil || r.ResponseRewriter.Rules() != r.Compiled {
		t.Fatalf("reuse: the response rewriter does not share the body's compiled rules")
	}
	if got := rewrite(r.ResponseRewriter, "www.example"); got != "WWW.example" {
		t.Errorf("reuse: location rewritten to %q", got)
	}
	if !r.ResponseRewriter.Applies("LINK") || r.ResponseRewriter.Applies("set-cookie") {
		t.Errorf("reuse: names %v", r.ResponseRewriter.Names())
	}
	if r.RequestRewriter != nil || r.ResponseRewriter.MaxValueBytes() != 100 {
		t.Errorf("reuse: request rewriter %v, limit %d", r.RequestRewriter, r.ResponseRewriter.MaxValueBytes())
	}
	o := cfg.RuleSet("own")
	if got := rewrite(o.ResponseRewriter, "www.example"); got != "hdr.example" {
		t.Errorf("own: location rewritten to %q, want the header rules' hdr.example", got)
	}
	if got := rewrite(o.RequestRewriter, "https://clone/a"); got != "https://www/a" {
		t.Errorf("own: referer rewritten to %q", got)
	}
	if n := cfg.RuleSet("none"); n.RequestRewriter != nil || n.ResponseRewriter != nil {
		t.Errorf("none: rewriters %v, %v; want none", n.ResponseRewriter, n.RequestRewriter)
	}
	if d := mustNew(t, Config{RuleSets: []*RuleSet{reuse}}); d.MaxHeaderValueBytes != headerrewrite.DefaultMaxValueBytes {
		t.Errorf("default limit %d", d.MaxHeaderValueBytes)
	}

	crBody := set("cr-body")
	crBody.Rules = []matcher.Rule{{Name: "ok", Pattern: "a", Replace: "b"}, {Name: "nl", Pattern: "x", Replace: "x\ny"}}
	crBody.ResponseHeaders = []string{"location"}
	crOwn := set("cr-own", "x")
	crOwn.ResponseHeaders = []string{"location"}
	crOwn.HeaderRules = []matcher.Rule{{Pattern: "x", Replace: "\r"}}
	crOwn.RequestHeaders = []string{"referer"}
	crOwn.RequestHeaderRules = []matcher.Rule{{Pattern: "x", Replace: "ok"}, {Name: "nul", Pattern: "y", Replace: "$1\x00"}}
	badRegex := set("bad-regex")
	badRegex.ResponseHeaders = []string{"location"}
	badRegex.HeaderRules = []matcher.Rule{{Name: "paren", Pattern: "(a"}}
	_, err := New(Config{RuleSets: []*RuleSet{crBody, crOwn, badRegex}})
	want := []string{
		`rule set "cr-body": rule 1 ("nl"): replacement template "x\ny": byte '\n' at offset 1 is not allowed in a header value (these rules also rewrite the response headers: give the rule set header rules of its own)`,
		`rule set "cr-own": header rule 0: replacement template "\r": byte '\r' at offset 0 is not allowed in a header value`,
		`rule set "cr-own": request header rule 1 ("nul"): replacement template "$1\x00": byte '\x00' at offset 2 is not allowed in a header value`,
		"rule set \"bad-regex\": header rule 0 (\"paren\"): error parsing regexp: missing closing ): `(a`",
	}
	if err == nil || !slices.Equal(strings.Split(err.Error(), "\n"), want) {
		t.Errorf("got:\n%v\nwant:\n%s", err, strings.Join(want, "\n"))
	}
	var re *matcher.RuleError
	if !errors.As(err, &re) || re.Set != "cr-body" || re.Index != 1 || re.Kind != "" {
		t.Errorf("first *matcher.RuleError = %+v", re)
	}
	if _, err := New(Config{RuleSets: []*RuleSet{reuse}, MaxHeaderValueBytes: -1}); err == nil {
		t.Error("a negative MaxHeaderValueBytes was accepted")
	}
}
