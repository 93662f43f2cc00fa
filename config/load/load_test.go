package load

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp/syntax"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/streamsub/streamsub/config"
	"github.com/streamsub/streamsub/headerrewrite"
	"github.com/streamsub/streamsub/internal/htmlgen"
	"github.com/streamsub/streamsub/matcher"
)

const testdata = "testdata"

// TestBadConfigs loads one file per failure mode and asserts the exact
// message: file (and position where the YAML gives it), then the culprit.
func TestBadConfigs(t *testing.T) {
	tests := []struct {
		file string
		msg  string // the message after the file name
	}{
		// YAML and schema: position and field path.
		{"yaml_syntax.yaml", `:3: invalid YAML: did not find expected '-' indicator`},
		{"second_document.yaml", `:4:1: a second YAML document; want one document per file`},
		{"unknown_field.yaml", `:8:9: rule_sets[1].rules[0].regx: unknown field (known: name, regex, literal, replace, once, ignore_case)`},
		{"wrong_type.yaml", `:4:40: rule_sets[0].rules[0].once: want true or false, got "yes"`},
		{"not_a_list.yaml", `:3:20: rule_sets[0].content_types: want a list, got "text/html"`},
		{"duplicate_key.yaml", `:6:9: rule_sets[0].rules[0].replace: duplicate key (first at line 5)`},
		// Rule sets.
		{"no_rule_sets.yaml", `: no rule sets: want at least one under rule_sets`},
		{"empty_rule_set_name.yaml", `: rule_sets[1]: empty name`},
		{"duplicate_rule_set_name.yaml", `: rule_sets[2]: duplicate rule set name "standard" (also rule_sets[0])`},
		{"unknown_extends.yaml", `: rule set "shop-fr": extends: unknown rule set "standrad"`},
		{"extends_twice.yaml", `: rule set "shop-fr": extends lists "standard" twice`},
		{"extends_cycle.yaml", `: rule set "standard": extends cycle: standard -> shop-fr -> shop-de -> standard`},
		{"bad_content_type.yaml", `: rule set "shop-fr": content_types[1]: invalid media type "text/html; charset=utf-8"; want type/subtype without parameters, or "*"`},
		// Rules.
		{"regex_and_literal.yaml", `: rule set "shop-fr": rule 1 ("ga-id"): both regex and literal are set; want exactly one`},
		{"neither_regex_nor_literal.yaml", `: rule set "shop-fr": rule 0 ("ga-id"): neither regex nor literal is set; want exactly one`},
		{"empty_literal.yaml", `: rule set "shop-fr": rule 0: empty literal pattern`},
		{"invalid_regex.yaml", ": rule set \"shop-fr\": rule 2 (\"ga-id\"): error parsing regexp: missing closing ): `(a`"},
		{"backreference.yaml", ": rule set \"shop-fr\": rule 0 (\"double\"): error parsing regexp: invalid escape sequence: `\\1` (backreferences are not supported)"},
		{"lookaround.yaml", ": rule set \"shop-fr\": rule 0 (\"ahead\"): error parsing regexp: invalid or unsupported Perl syntax: `(?=` (look-around is not supported)"},
		{"bad_template_dollar.yaml", `: rule set "shop-fr": rule 0 ("price"): replacement template "$x EUR": '$' followed by 'x' (want &, 0-9, {N}, {name} or $) at offset 0`},
		{"bad_template_unterminated.yaml", `: rule set "shop-fr": rule 0 ("price"): replacement template "${1 EUR": unterminated '${' at offset 0`},
		{"bad_template_group_name.yaml", `: rule set "shop-fr": rule 0 ("price"): replacement template "${amuont} EUR": unknown group name "amuont" at offset 0`},
		{"duplicate_rule_name.yaml", `: rule set "shop-fr": rule 1 ("price"): duplicate rule name (also rule 0)`},
		// Hosts.
		{"unknown_host_rule_set.yaml", `: hosts["fr.shop.example"]: unknown rule set "shop-fx"`},
		{"bad_host_pattern.yaml", `: hosts["shop.*.example"]: invalid host pattern: "*" only as a whole label at the start ("*.example.com") or alone`},
		{"host_with_port.yaml", `: hosts["shop.example:8080"]: invalid host pattern: has a port or a bare IPv6 address; hosts are matched without port, IPv6 in brackets`},
		{"duplicate_host.yaml", `: hosts["shop.example"]: same host as hosts["Shop.Example."]`},
		// Header filter and limits.
		{"empty_header_name.yaml", `: header_filter.request.remove[1]: empty header name`},
		{"empty_header_prefix.yaml", `: header_filter.response.remove_prefixes[0]: empty header prefix`},
		{"invalid_header_name.yaml", `: header_filter.response.remove[0]: invalid header name "x powered by": character ' ' is not allowed`},
		{"negative_max_buffered_bytes.yaml", `: max_buffered_bytes: must not be negative, got -1`},
		{"small_dfa_cache_bytes.yaml", `: dfa_cache_bytes: want 0 (default 2097152) or 4096..268435456, got 1024`},
		{"negative_dfa_cache_bytes.yaml", `: dfa_cache_bytes: want 0 (default 2097152) or 4096..268435456, got -4096`},
		// Self-tests: where each is written, and what failed.
		{"test_fails.yaml", `:7:9: rule set "standard": test "typo": output differs; first difference at offset 31:` + "\n" +
			`  want: "<a href=\"https://clone.example.com/x\">home</a>"` + "\n" +
			`  got:  "<a href=\"https://clone.example.net/x\">home</a>"` + "\n" +
			strings.Repeat(" ", 41) + "^"},
		{"test_cap_overflow.yaml", `:6:9: rule set "comments": test "long comment": output differs in 1-byte chunks and 5 other chunking(s) ` +
			`(the hold-back cap, max_buffered_bytes, overflowed: the rest of the body passed through unchanged); first difference at offset 1:` + "\n" +
			`  want: "ab"` + "\n" +
			`  got:  "a<!-- a comment longer than the c"…` + "\n" +
			strings.Repeat(" ", 10) + "^"},
		{"test_content_type_not_rewritten.yaml", `:6:9: rule set "standard": test "image": output differs ` +
			`(content type "image/svg+xml" is not rewritten by this rule set: the body passes through unchanged); first difference at offset 0:` + "\n" +
			`  want: "clone.example.net"` + "\n" +
			`  got:  "www.example.com"` + "\n" +
			strings.Repeat(" ", 9) + "^"},
		{"test_no_expectation.yaml", `:6:9: rule set "standard": test "forgot": neither output nor unchanged: true is set; want exactly one`},
		{"test_output_and_unchanged.yaml", `:6:9: rule set "standard": test "both": both output and unchanged: true are set; want exactly one`},
		{"test_duplicate_name.yaml", `:7:9: rule set "standard": test "t": duplicate test name (also tests[0])`},
		{"test_empty_name.yaml", `:6:9: rule set "standard": tests[0]: empty name`},
		{"test_bad_content_type.yaml", `:6:9: rule set "standard": test "t": content_type "text/": mime: expected token after slash`},
		// Shadows.
		{"shadow_unknown.yaml", `: shadows["standard"]: unknown rule set "standard-v2"`},
		{"shadow_itself.yaml", `: shadows["standard"]: a rule set cannot shadow itself`},
		{"shadow_sample_range.yaml", `: shadow_sample: want a fraction from 0 to 1, got 1.5`},
		{"shadow_sample_not_a_number.yaml", `:4:16: shadow_sample: want a number, got "half"`},
		// Remember.
		{"negative_remember_entries.yaml", `: remember.entries: want 0 (off) to 10000000, got -5`},
		{"remember_ttl_no_unit.yaml", `: remember.ttl: "600" is not a duration such as "10m" or "1h30m"`},
		{"remember_ttl_too_long.yaml", `: remember.ttl: want 1s to 24h0m0s, got 48h0m0s`},
		{"negative_verify_one_in.yaml", `: remember.verify_one_in: want 0 (never) to 2147483647, got -1`},
		{"negative_max_header_value_bytes.yaml", `: max_header_value_bytes: must not be negative, got -1`},
		// Header rewriting.
		{"header_template_crlf.yaml", `: rule set "standard": header rule 0 ("loc"): replacement template "a\r\nb": byte '\r' at offset 1 is not allowed in a header value`},
		{"body_template_newline.yaml", `: rule set "standard": rule 1 ("nl"): replacement template "</p>\n": byte '\n' at offset 4 is not allowed in a header value (these rules also rewrite the response headers: give the rule set header rules of its own)`},
		{"request_header_template_nul.yaml", `: rule set "standard": request header rule 1 ("nul"): replacement template "$1\x00": byte '\x00' at offset 2 is not allowed in a header value`},
		{"duplicate_header_rule_name.yaml", `: rule set "standard": header rule 1 ("x"): duplicate rule name (also header rule 0)`},
		{"response_headers_rewrite_off.yaml", `: rule set "standard": response_headers lists headers, but rewrite_response_headers is false`},
		{"request_header_host.yaml", `: rule set "standard": request_headers[0]: "host" is Envoy's to rewrite (host_rewrite_literal on the route)`},
		{"pseudo_response_header.yaml", `: rule set "standard": response_headers[1]: ":status" is a pseudo-header; Envoy never lets those be removed or set`},
		{"negative_max_nfa_states.yaml", `: max_nfa_states: want 0 (default 200000) or 1..4194304, got -1`},
		// The automaton budget names the rule that takes a rule set over it.
		{"rule_over_nfa_budget.yaml", `: rule set "standard": rule 1 ("any-line"): the rule set's automaton is too big: more than 1000 states (max_nfa_states) with this rule`},
		{"rule_set_over_nfa_budget.yaml", `: rule set "shop-fr": rule 1 ("c-lines"): the rule set's automaton is too big: more than 600 states (max_nfa_states) with this rule`},
		{"inherited_over_nfa_budget.yaml", `: rule set "shop-fr": rule 2 ("c-lines"): the rule set's automaton is too big: more than 600 states (max_nfa_states) with this rule (the rule is written in rule set "extra" as rule 1)`},
	}
	covered := map[string]bool{"good.yaml": true, "several_problems.yaml": true}
	for _, tc := range tests {
		covered[tc.file] = true
		t.Run(tc.file, func(t *testing.T) {
			path := filepath.Join(testdata, tc.file)
			cfg, err := File(path)
			if err == nil {
				t.Fatalf("File(%s) accepted the file: %d rule sets", path, len(cfg.RuleSets))
			}
			if got, want := err.Error(), path+tc.msg; got != want {
				t.Errorf("File(%s):\n got: %s\nwant: %s", path, got, want)
			}
			var ce *Error
			if !errors.As(err, &ce) || ce.Source != path {
				t.Errorf("error %v is not a *load.Error for %s", err, path)
			}
		})
	}
	// Every bad file in testdata has its row, so none is silently untested.
	files, _ := filepath.Glob(filepath.Join(testdata, "*.yaml"))
	for _, f := range files {
		if !covered[filepath.Base(f)] {
			t.Errorf("%s has no row in TestBadConfigs", f)
		}
	}
}

func TestSeveralProblemsAreAllReported(t *testing.T) {
	path := filepath.Join(testdata, "several_problems.yaml")
	_, err := File(path)
	if err == nil {
		t.Fatal("accepted")
	}
	want := []string{
		path + `: max_buffered_bytes: must not be negative, got -5`,
		path + ": rule set \"standard\": rule 0: error parsing regexp: missing closing ): `(a`",
		path + `: rule set "standard": rule 1 ("ga-id"): replacement template "$": '$' at the end (write $$ for a literal '$') at offset 0`,
		path + `: hosts["*"]: unknown rule set "nowhere"`,
	}
	if got := strings.Split(err.Error(), "\n"); !slices.Equal(got, want) {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestRuleErrorIsReachable(t *testing.T) {
	_, err := File(filepath.Join(testdata, "invalid_regex.yaml"))
	var re *matcher.RuleError
	if !errors.As(err, &re) {
		t.Fatalf("no *matcher.RuleError in %v", err)
	}
	if re.Set != "shop-fr" || re.Index != 2 || re.Name != "ga-id" {
		t.Errorf("RuleError{Set: %q, Index: %d, Name: %q}, want shop-fr, 2, ga-id", re.Set, re.Index, re.Name)
	}
	var se *syntax.Error
	if !errors.As(err, &se) || se.Code != syntax.ErrMissingParen || se.Expr != "(a" {
		t.Errorf("no *syntax.Error{ErrMissingParen, `(a`} in %v", err)
	}
}

func TestMissingFileIsNotALoadError(t *testing.T) {
	_, err := File(filepath.Join(t.TempDir(), "absent.yaml"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("File(absent) = %v, want fs.ErrNotExist", err)
	}
	if errors.As(err, new(*Error)) {
		t.Errorf("an I/O error must not be a *load.Error: %v", err)
	}
}

func mustParse(t *testing.T, src string) *config.Config {
	t.Helper()
	cfg, err := parse([]byte(src), "test.yaml")
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return cfg
}

func ruleNames(rs *config.RuleSet) []string {
	var names []string
	for _, r := range rs.Rules {
		names = append(names, r.Name)
	}
	return names
}

func TestGoodConfig(t *testing.T) {
	cfg, err := File(filepath.Join(testdata, "good.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, rs := range cfg.RuleSets {
		names = append(names, rs.Name)
		if rs.Compiled == nil {
			t.Errorf("rule set %q is not compiled", rs.Name)
		}
		if cfg.RuleSet(rs.Name) != rs {
			t.Errorf("RuleSet(%q) does not return it", rs.Name)
		}
	}
	if want := []string{"standard", "shop-fr", "legacy"}; !slices.Equal(names, want) {
		t.Errorf("rule sets %q, want %q (declaration order)", names, want)
	}
	if cfg.RuleSet("nope") != nil {
		t.Error("RuleSet(unknown) != nil")
	}
	if cfg.MaxBufferedBytes != 131072 {
		t.Errorf("MaxBufferedBytes = %d", cfg.MaxBufferedBytes)
	}
	if cfg.DFACacheBytes != 1048576 {
		t.Errorf("DFACacheBytes = %d", cfg.DFACacheBytes)
	}

	shop := cfg.RuleSet("shop-fr")
	want := []matcher.Rule{
		{Name: "origin-url", Pattern: `https?://(?:www\.)?example\.com`, Replace: "https://clone.example.net", IgnoreCase: true},
		{Pattern: "UA-12345-1", Literal: true, Replace: "UA-99999-9"},
		{Name: "lang", Pattern: `<html lang="(?P<lang>[a-z]+)">`, Replace: `<html lang="fr" data-was="${lang}">`, Once: true},
		{Name: "price", Pattern: "USD", Literal: true, Replace: "EUR"},
	}
	if !slices.Equal(shop.Rules, want) {
		t.Errorf("shop-fr rules:\n got %+v\nwant %+v", shop.Rules, want)
	}
	if got := cfg.RuleSet("legacy").Rules; len(got) != 1 || got[0].Replace != "[$1|$$|$&]" {
		t.Errorf("legacy rules %+v", got)
	}

	// Host keys are normalised: "Legacy.Example" is looked up as any case.
	wantHosts := map[string]string{"fr.shop.example": "shop-fr", "*.shop.example": "standard",
		"*.eu.shop.example": "shop-fr", "legacy.example": "legacy", "*": "standard"}
	if !maps.Equal(cfg.Hosts, wantHosts) {
		t.Errorf("hosts %v, want %v", cfg.Hosts, wantHosts)
	}
	for host, want := range map[string]string{"LEGACY.example:80": "legacy", "x.eu.shop.example": "shop-fr", "b.shop.example": "standard", "other.example": "standard"} {
		if rs := cfg.RuleSetForHost(host); rs == nil || rs.Name != want {
			t.Errorf("RuleSetForHost(%q) = %v, want %s", host, rs, want)
		}
	}

	cts := []string{"text/html", "text/css", "application/javascript", "application/json"}
	for name, want := range map[string][]string{"standard": cts, "shop-fr": cts, "legacy": {"*"}} {
		if got := cfg.RuleSet(name).ContentTypes; !slices.Equal(got, want) {
			t.Errorf("%s content types %q, want %q", name, got, want)
		}
	}
	for name, want := range map[string]bool{"standard": false, "shop-fr": false, "legacy": true} {
		if got := cfg.RuleSet(name).KeepLastModified; got != want {
			t.Errorf("%s KeepLastModified = %v, want %v", name, got, want)
		}
	}

	for _, tc := range []struct {
		hs   string
		name string
		want bool
	}{
		{"request", "x-internal-route", true},
		{"request", "X-Debug-Token", true},
		{"request", "x-debug-token", true},
		{"request", "X-Internal-Anything", true},
		{"request", "x-internal", false},
		{"request", "x-powered-by", false},
		{"response", "X-Powered-By", true},
		{"response", "x-origin-server", true},
		{"response", "x-internal-route", false},
	} {
		hs := cfg.RequestHeaders
		if tc.hs == "response" {
			hs = cfg.ResponseHeaders
		}
		if got := hs.Contains(tc.name); got != tc.want {
			t.Errorf("%s headers Contains(%q) = %v, want %v", tc.hs, tc.name, got, tc.want)
		}
	}
}

// TestDefaultContentType: a rule set with no content types, itself or
// inherited, rewrites text/html; one that lists some gets them lower-cased.
func TestDefaultContentType(t *testing.T) {
	cfg := mustParse(t, `
rule_sets:
  - {name: plain, rules: [{literal: a, replace: A}]}
  - {name: child, extends: [plain], rules: [{literal: b, replace: B}]}
  - {name: some, content_types: [text/html, Application/JSON], rules: [{literal: a, replace: A}]}
`)
	for name, want := range map[string][]string{
		"plain": {config.DefaultContentType},
		"child": {config.DefaultContentType},
		"some":  {"text/html", "application/json"},
	} {
		if got := cfg.RuleSet(name).ContentTypes; !slices.Equal(got, want) {
			t.Errorf("%s content types %q, want %q", name, got, want)
		}
	}
}

// TestExtends checks inherited rules come first, depth first in extends
// order, each ancestor once (a diamond does not duplicate rules), and how
// settings are inherited.
func TestExtends(t *testing.T) {
	cfg := mustParse(t, `
rule_sets:
  - name: d
    extends: [b, c]
    rules: [{name: d1, literal: d, replace: D}]
  - name: a
    content_types: [text/css]
    keep_last_modified: true
    rules: [{name: a1, literal: a, replace: A}, {name: a2, literal: aa, replace: AA}]
  - name: b
    extends: [a]
    rules: [{name: b1, literal: b, replace: B}]
  - name: c
    extends: [a]
    content_types: [text/html]
    keep_last_modified: false
    rules: [{name: c1, literal: c, replace: C}]
  - name: e
    extends: [b]
    keep_last_modified: false
`)
	tests := []struct {
		set   string
		rules []string
		cts   []string
		keep  bool
	}{
		{"a", []string{"a1", "a2"}, []string{"text/css"}, true},
		{"b", []string{"a1", "a2", "b1"}, []string{"text/css"}, true},
		{"c", []string{"a1", "a2", "c1"}, []string{"text/html"}, false},
		{"d", []string{"a1", "a2", "b1", "c1", "d1"}, []string{"text/css", "text/html"}, false},
		{"e", []string{"a1", "a2", "b1"}, []string{"text/css"}, false},
	}
	for _, tc := range tests {
		rs := cfg.RuleSet(tc.set)
		if got := ruleNames(rs); !slices.Equal(got, tc.rules) {
			t.Errorf("%s rules %q, want %q", tc.set, got, tc.rules)
		}
		if !slices.Equal(rs.ContentTypes, tc.cts) {
			t.Errorf("%s content types %q, want %q", tc.set, rs.ContentTypes, tc.cts)
		}
		if rs.KeepLastModified != tc.keep {
			t.Errorf("%s KeepLastModified = %v, want %v", tc.set, rs.KeepLastModified, tc.keep)
		}
	}
	if cfg.RuleSets[0].Name != "d" {
		t.Errorf("first rule set %q, want d (declaration order, not dependency order)", cfg.RuleSets[0].Name)
	}
}

// TestHeaderSettings checks the header settings of rule sets and how they
// are inherited: names (own, else the parents' union, else the defaults),
// rules (the ancestors' first), rewrite_response_headers.
func TestHeaderSettings(t *testing.T) {
	cfg := mustParse(t, `
rule_sets:
  - name: base
    rules: [{name: b1, literal: www.example.com, replace: clone.example.net}]
    request_header_rules: [{name: q1, literal: clone.example.net, replace: www.example.com}]
  - name: own
    extends: [base]
    response_headers: [Location, X-Custom, location]
    header_rules: [{name: h1, literal: www, replace: hdr}]
    request_headers: [Referer]
  - name: child
    extends: [own]
    header_rules: [{name: h2, literal: c, replace: d}]
    request_header_rules: [{name: q2, literal: e, replace: f}]
  - name: "off"
    extends: [base]
    rewrite_response_headers: false
  - name: off-child
    extends: ["off"]
  - name: on-again
    extends: ["off"]
    rewrite_response_headers: true
  - name: no-request
    rules: [{literal: a, replace: b}]
    request_headers: [referer]
max_header_value_bytes: 1000
`)
	names := func(rules []matcher.Rule) []string {
		var out []string
		for _, r := range rules {
			out = append(out, r.Name)
		}
		return out
	}
	defaults := headerrewrite.DefaultResponseHeaders
	tests := []struct {
		set                              string
		response, headerRules            []string
		request, requestRules            []string
		reusesBodyRules, requestRewriter bool
	}{
		{"base", defaults, nil, []string{"referer", "origin"}, []string{"q1"}, true, true},
		{"own", []string{"location", "x-custom"}, []string{"h1"}, []string{"referer"}, []string{"q1"}, false, true},
		{"child", []string{"location", "x-custom"}, []string{"h1", "h2"}, []string{"referer"}, []string{"q1", "q2"}, false, true},
		{"off", nil, nil, []string{"referer", "origin"}, []string{"q1"}, false, true},
		{"off-child", nil, nil, []string{"referer", "origin"}, []string{"q1"}, false, true},
		{"on-again", defaults, nil, []string{"referer", "origin"}, []string{"q1"}, true, true},
		{"no-request", defaults, nil, nil, nil, true, false},
	}
	for _, tc := range tests {
		rs := cfg.RuleSet(tc.set)
		if !slices.Equal(rs.ResponseHeaders, tc.response) || !slices.Equal(names(rs.HeaderRules), tc.headerRules) ||
			!slices.Equal(rs.RequestHeaders, tc.request) || !slices.Equal(names(rs.RequestHeaderRules), tc.requestRules) {
			t.Errorf("%s: response %q rules %q, request %q rules %q; want %q %q, %q %q", tc.set,
				rs.ResponseHeaders, names(rs.HeaderRules), rs.RequestHeaders, names(rs.RequestHeaderRules),
				tc.response, tc.headerRules, tc.request, tc.requestRules)
		}
		if rw := rs.ResponseRewriter; (rw != nil) != (len(tc.response) > 0) ||
			rw != nil && ((rw.Rules() == rs.Compiled) != tc.reusesBodyRules || rw.MaxValueBytes() != 1000) {
			t.Errorf("%s: response rewriter %+v", tc.set, rw)
		}
		if (rs.RequestRewriter != nil) != tc.requestRewriter {
			t.Errorf("%s: request rewriter %v, want one: %v", tc.set, rs.RequestRewriter, tc.requestRewriter)
		}
	}
	// own's header rules, not its body rules, rewrite its location.
	out, n, _ := cfg.RuleSet("own").ResponseRewriter.Rewrite(nil, []byte("https://www.example.com/"))
	if string(out) != "https://hdr.example.com/" || n != 1 {
		t.Errorf("own: location rewritten to %q (%d)", out, n)
	}
}

// TestJSONAndYAMLAgree parses the same configuration written as JSON (with
// a camelCase key, as protojson allows) and as YAML (with an anchor, aliases,
// a merge key and a plain scalar that looks like a number) and compares.
func TestJSONAndYAMLAgree(t *testing.T) {
	js := mustParse(t, `{
	"rule_sets": [
		{"name": "s", "content_types": ["text/html", "text/css"], "rules": [
			{"name": "r", "regex": "a(b)", "replace": "<$1>", "once": true, "ignore_case": true},
			{"literal": "x", "replace": "y"}
		]},
		{"name": "t", "extends": ["s"], "keepLastModified": true, "rules": [
			{"name": "r2", "regex": "a(b)", "replace": "<$1>", "once": true, "ignore_case": true},
			{"literal": "q", "replace": "1.50"}
		]}
	],
	"hosts": {"a.example": "t", "*": "s"},
	"header_filter": {"request": {"remove": ["x-a"], "remove_prefixes": ["x-b-"]}},
	"max_buffered_bytes": 4096
}`)
	ym := mustParse(t, `
rule_sets:
  - name: s
    content_types: [text/html, text/css]
    rules:
      - &r {name: r, regex: 'a(b)', replace: '<$1>', once: true, ignore_case: true}
      - {literal: x, replace: y}
  - name: t
    extends: [s]
    keep_last_modified: true
    rules:
      - {<<: *r, name: r2}
      - {literal: q, replace: 1.50}
hosts: {a.example: t, "*": s}
header_filter:
  request: {remove: [x-a], remove_prefixes: [x-b-]}
max_buffered_bytes: 4096
`)
	if got, want := summary(ym), summary(js); got != want {
		t.Errorf("YAML and JSON differ:\nYAML: %s\nJSON: %s", got, want)
	}
	if !js.RequestHeaders.Contains("x-b-c") || js.ResponseHeaders != nil {
		t.Errorf("header sets: request %v, response %v", js.RequestHeaders, js.ResponseHeaders)
	}
}

// summary renders everything of a Config but the compiled automata.
func summary(c *config.Config) string {
	var b strings.Builder
	fmt.Fprintf(&b, "max=%d hosts=%v;", c.MaxBufferedBytes, c.Hosts)
	for _, rs := range c.RuleSets {
		fmt.Fprintf(&b, " %s ext=%q cts=%q keep=%v rules=%+v resp=%q hdr=%+v req=%q reqrules=%+v;", rs.Name, rs.Extends,
			rs.ContentTypes, rs.KeepLastModified, rs.Rules, rs.ResponseHeaders, rs.HeaderRules, rs.RequestHeaders, rs.RequestHeaderRules)
	}
	return b.String()
}

func TestAliasBombIsBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString("rule_sets:\n  - name: s0\n    rules: &l [")
	for i := range 1200 {
		if i == 0 {
			b.WriteString("&r {literal: a, replace: b}")
		} else {
			b.WriteString(", *r")
		}
	}
	b.WriteString("]\n")
	for i := 1; i < 1200; i++ {
		fmt.Fprintf(&b, "  - {name: s%d, rules: *l}\n", i)
	}
	_, err := parse([]byte(b.String()), "bomb.yaml")
	if err == nil || !strings.Contains(err.Error(), "too many YAML nodes") {
		t.Errorf("parse(alias bomb) = %v, want a too-many-nodes error", err)
	}
}

func TestNormalizeHostPattern(t *testing.T) {
	tests := []struct{ in, want string }{
		{"*", "*"},
		{"Example.COM", "example.com"},
		{"example.com.", "example.com"},
		{"*.Example.com", "*.example.com"},
		{"127.0.0.1", "127.0.0.1"},
		{"[::1]", "[::1]"},
		{"under_score.example", "under_score.example"},
		{"", ""},
		{"*.", ""},
		{"**.example", ""},
		{"a.*", ""},
		{"*example.com", ""},
		{"a..b", ""},
		{"a b", ""},
		{"::1", ""},
		{"[::1]:80", ""},
		{"[zz]", ""},
		{"*.[::1]", ""},
		{strings.Repeat("a", 64) + ".example", ""},
	}
	for _, tc := range tests {
		got, err := normalizeHostPattern(tc.in)
		if tc.want == "" {
			if err == nil {
				t.Errorf("normalizeHostPattern(%q) = %q, want an error", tc.in, got)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("normalizeHostPattern(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

// FuzzConfig feeds arbitrary bytes to parse: it must never panic, every
// error must be a *Error, and an accepted config must be coherent.
func FuzzConfig(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(testdata, "*.yaml"))
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"rule_sets":[{"name":"a","rules":[{"literal":"x","replace":"y"}]}],"hosts":{"*.a":"a"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := parse(data, "fuzz.yaml")
		if err != nil {
			if !errors.As(err, new(*Error)) {
				t.Fatalf("error is not a *load.Error: %v", err)
			}
			if !strings.HasPrefix(err.Error(), "fuzz.yaml") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		if len(cfg.RuleSets) == 0 {
			t.Fatal("accepted a config without rule sets")
		}
		if cfg.MaxBufferedBytes <= 0 {
			t.Fatalf("MaxBufferedBytes = %d", cfg.MaxBufferedBytes)
		}
		for _, rs := range cfg.RuleSets {
			if rs.Name == "" || cfg.RuleSet(rs.Name) != rs || rs.Compiled == nil {
				t.Fatalf("rule set %q: not named, not found by name or not compiled", rs.Name)
			}
			if len(rs.ContentTypes) == 0 {
				t.Fatalf("rule set %q has no content types", rs.Name)
			}
			for _, ct := range rs.ContentTypes {
				if ct != strings.ToLower(ct) || !validMediaType(ct) {
					t.Fatalf("rule set %q: content type %q", rs.Name, ct)
				}
			}
			for i, r := range rs.Rules {
				if r.Literal && r.Pattern == "" {
					t.Fatalf("rule set %q: rule %d: empty literal accepted", rs.Name, i)
				}
			}
			if (rs.ResponseRewriter != nil) != (len(rs.ResponseHeaders) > 0) {
				t.Fatalf("rule set %q: response headers %q, rewriter %v", rs.Name, rs.ResponseHeaders, rs.ResponseRewriter)
			}
			headerRules := slices.Clone(rs.RequestHeaderRules)
			switch {
			case rs.ResponseRewriter != nil && len(rs.HeaderRules) > 0:
				headerRules = append(headerRules, rs.HeaderRules...)
			case rs.ResponseRewriter != nil:
				headerRules = append(headerRules, rs.Rules...)
			}
			for _, r := range headerRules {
				if strings.ContainsAny(r.Replace, "\r\n\x00") {
					t.Fatalf("rule set %q: header rule template %q accepted", rs.Name, r.Replace)
				}
			}
		}
		if !(cfg.ShadowSample > 0 && cfg.ShadowSample <= 1) {
			t.Fatalf("ShadowSample = %v", cfg.ShadowSample)
		}
		for live, shadow := range cfg.Shadows {
			if rs := cfg.RuleSet(live); rs == nil || cfg.Shadow(rs) == nil || cfg.Shadow(rs).Name != shadow || shadow == live {
				t.Fatalf("shadows[%q] = %q: not two different rule sets", live, shadow)
			}
		}
		if len(cfg.Hosts) == 0 && cfg.RuleSetForHost("any.example") != cfg.RuleSets[0] {
			t.Fatal("without hosts, a host did not get the first rule set")
		}
		for pattern, name := range cfg.Hosts {
			if cfg.RuleSet(name) == nil {
				t.Fatalf("hosts[%q] names unknown rule set %q", pattern, name)
			}
			host := strings.TrimPrefix(pattern, "*.")
			if pattern == "*" {
				host = "no-such-host.invalid"
			} else if host != pattern {
				host = "fuzz." + host
			}
			if rs := cfg.RuleSetForHost(host); rs == nil {
				t.Fatalf("RuleSetForHost(%q) = nil though hosts has %q", host, pattern)
			}
			if pattern != "*" && pattern[0] != '*' && cfg.RuleSetForHost(pattern).Name != name {
				t.Fatalf("exact host %q does not get its rule set %q", pattern, name)
			}
		}
	})
}

// TestDFACacheBytesReachesTheMatcher: the file's dfa_cache_bytes is the
// budget the rule sets are compiled with: over 16 KiB of htmlgen.StateThrash
// a 4 KiB budget gives up, the default does not.
func TestDFACacheBytesReachesTheMatcher(t *testing.T) {
	body := htmlgen.StateThrash(1, 16<<10)
	for _, tt := range []struct {
		setting string
		gaveUp  bool
	}{{"", false}, {"dfa_cache_bytes: 4096\n", true}} {
		cfg, err := parse([]byte("rule_sets: [{name: s, rules: [{regex: '"+htmlgen.StateThrashRule+"', replace: X}]}]\n"+tt.setting), "dfa.yaml")
		if err != nil {
			t.Fatal(err)
		}
		st := cfg.RuleSets[0].Compiled.NewStream()
		st.Write(nil, body)
		if got := st.Stats().CacheGaveUp; got != tt.gaveUp {
			t.Errorf("%q: DFA cache gave up %v, want %v", tt.setting, got, tt.gaveUp)
		}
	}
}

// TestRemember: the remember section's defaults and settings reach the
// Config.
func TestRemember(t *testing.T) {
	const sets = "rule_sets: [{name: s, rules: [{literal: a, replace: b}]}]\n"
	tests := []struct {
		section string
		want    config.Remember
	}{
		{"", config.Remember{TTL: config.DefaultRememberTTL}},
		{"remember: {}", config.Remember{TTL: config.DefaultRememberTTL, VerifyOneIn: config.DefaultVerifyOneIn}},
		{"remember: {entries: 10000}", config.Remember{Entries: 10000, TTL: config.DefaultRememberTTL, VerifyOneIn: config.DefaultVerifyOneIn}},
		{"remember: {entries: 5, ttl: 1h30m, verify_one_in: 7}", config.Remember{Entries: 5, TTL: 90 * time.Minute, VerifyOneIn: 7}},
		{"remember: {entries: 5, ttl: 1s, verify_one_in: 0}", config.Remember{Entries: 5, TTL: time.Second}},
	}
	for _, tt := range tests {
		if got := mustParse(t, sets+tt.section).Remember; got != tt.want {
			t.Errorf("%q: Remember %+v, want %+v", tt.section, got, tt.want)
		}
	}
}

// TestShippedConfigsFitTheNFABudget: the example config and the good test
// config fit the default automaton budget with a wide margin, and the
// file's max_nfa_states is the budget the rule sets are compiled with.
func TestShippedConfigsFitTheNFABudget(t *testing.T) {
	for _, path := range []string{filepath.Join("..", "..", "examples", "streamsub.yaml"), filepath.Join(testdata, "good.yaml")} {
		cfg, err := File(path)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.MaxNFAStates != matcher.DefaultMaxNFAStates {
			t.Errorf("%s: budget %d, want the default %d", path, cfg.MaxNFAStates, matcher.DefaultMaxNFAStates)
		}
		for _, rs := range cfg.RuleSets {
			if n := rs.Compiled.NumStates(); n > matcher.DefaultMaxNFAStates/100 {
				t.Errorf("%s: rule set %q has %d states, over 1%% of the default budget", path, rs.Name, n)
			}
		}
	}
	src := "rule_sets: [{name: s, rules: [{regex: 'a.{10}Z', replace: X}]}]\n"
	cfg, err := parse([]byte(src+"max_nfa_states: 216\n"), "exact.yaml")
	if err != nil || cfg.MaxNFAStates != 216 || cfg.RuleSets[0].Compiled.NumStates() != 216 {
		t.Fatalf("a rule set of exactly max_nfa_states: %v", err)
	}
	if _, err := parse([]byte(src+"max_nfa_states: 215\n"), "under.yaml"); !errors.Is(err, matcher.ErrTooBig) {
		t.Errorf("one state under: %v, want ErrTooBig", err)
	}
}
