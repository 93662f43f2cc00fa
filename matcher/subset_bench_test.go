package matcher_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/streamsub/streamsub/internal/htmlgen"
	"github.com/streamsub/streamsub/matcher"
)

// subsetBodySize is the body size of BenchmarkSubset: a static file's
// (the demo origin's /static/ files are 64 KiB).
const subsetBodySize = 64 << 10

// subsetTables are the rule tables of BenchmarkSubset: the standard rule
// set of examples/streamsub.yaml (three literals and a regex), the same
// without its regex (scripts/load.yaml), and htmlgen's 10-regex tables.
func subsetTables() []htmlgen.Workload {
	standard := []htmlgen.Rule{
		{Name: "origin-url", Pattern: "https://www.example.com", Literal: true, Replace: "https://clone.example.net"},
		{Name: "origin-host", Pattern: "www.example.com", Literal: true, Replace: "clone.example.net"},
		{Name: "analytics", Pattern: "UA-12345-1", Literal: true, Replace: "UA-99999-9"},
		{Name: "cookie-domain", Pattern: `(?i)(domain=)\.example\.com\b`, Replace: "${1}clone.example.net"},
	}
	return []htmlgen.Workload{
		{Name: "standard", Rules: standard},
		{Name: "load", Rules: standard[:3]},
		htmlgen.Clone(),
		htmlgen.Regexes(),
	}
}

// subsetBodies are bodies that only some rules of a table match: a
// stylesheet with the origin's URL in one rule of 40, and the generated
// page with every match but the origin's URLs defused (analytics IDs, keys,
// brand, CDN and e-mail addresses).
func subsetBodies() map[string][]byte {
	var css bytes.Buffer
	for i := 0; css.Len() < subsetBodySize; i++ {
		if i%40 == 39 {
			fmt.Fprintf(&css, ".bg%d { background: url(https://www.example.com/img/%d.png) no-repeat; }\n", i, i)
			continue
		}
		fmt.Fprintf(&css, ".c%d { margin: %dpx %dpx; color: #%06x; }\n", i, i%17, i%5, i*2654435761%0xffffff)
	}
	page := htmlgen.Page(1, subsetBodySize)
	for _, r := range [][2]string{
		{"UA-", "QA-"}, {"G-", "Q-"}, {"AIza", "QIza"}, {"GTM-", "QTM-"}, {"fbq(", "qbq("},
		{"@example.com", "@exampla.com"}, {"cdn.example.com", "cdn.exampla.com"}, {"CDN.Example.com", "CDN.Exampla.com"},
		{"Example Corp", "Exampla Corp"}, {"example corp", "exampla corp"},
	} {
		page = bytes.ReplaceAll(page, []byte(r[0]), []byte(r[1]))
	}
	return map[string][]byte{"css": css.Bytes()[:subsetBodySize], "page": page}
}

// subsetOf returns the rules of rules that replaced anything in body, in
// their order, and whether that is a strict, non-empty subset.
func subsetOf(tb testing.TB, rules []matcher.Rule, body []byte) ([]matcher.Rule, bool) {
	rs, err := matcher.Compile(rules, matcher.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	st := rs.NewStream()
	st.Close(st.Write(nil, body))
	var sub []matcher.Rule
	for r, n := range st.RuleReplacements() {
		if n > 0 {
			sub = append(sub, rules[r])
		}
	}
	return sub, len(sub) > 0 && len(sub) < len(rules)
}

// BenchmarkSubset measures what rewriting a body with only the rules that
// matched it last time would save: the same body streamed in 16 KiB chunks
// with the whole rule table (engine=full) and with a rule set compiled
// from the rules that replaced anything in it (engine=subset; its output is
// the same, TestSubsetSameOutput), both with warm caches; and what a subset
// engine costs to make: engine=compile compiles it, engine=cold compiles
// it and rewrites the body once with its caches still empty.
func BenchmarkSubset(b *testing.B) {
	bodies := subsetBodies()
	for _, w := range subsetTables() {
		rules := toRules(w.Rules)
		for _, name := range []string{"css", "page"} {
			body := bodies[name]
			sub, ok := subsetOf(b, rules, body)
			if !ok {
				continue
			}
			full, err := matcher.Compile(rules, matcher.Options{})
			if err != nil {
				b.Fatal(err)
			}
			part, err := matcher.Compile(sub, matcher.Options{})
			if err != nil {
				b.Fatal(err)
			}
			prefix := fmt.Sprintf("work=%s/body=%s/rules=%dof%d/engine=", w.Name, name, len(sub), len(rules))
			b.Run(prefix+"full", func(b *testing.B) { benchStream(b, full, body, benchChunk) })
			b.Run(prefix+"subset", func(b *testing.B) { benchStream(b, part, body, benchChunk) })
			b.Run(prefix+"compile", func(b *testing.B) {
				for b.Loop() {
					if _, err := matcher.Compile(sub, matcher.Options{}); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run(prefix+"cold", func(b *testing.B) {
				dst := make([]byte, 0, 2*len(body))
				for b.Loop() {
					rs, err := matcher.Compile(sub, matcher.Options{})
					if err != nil {
						b.Fatal(err)
					}
					dst = streamBody(dst[:0], rs, body, benchChunk)
				}
			})
		}
	}
}

// TestSubsetSameOutput checks BenchmarkSubset's premise on its bodies: the
// rules that replaced anything in a body rewrite it as the whole table does.
func TestSubsetSameOutput(t *testing.T) {
	bodies := subsetBodies()
	for _, w := range subsetTables() {
		rules := toRules(w.Rules)
		for name, body := range bodies {
			sub, ok := subsetOf(t, rules, body)
			t.Logf("%s/%s: %d of %d rules", w.Name, name, len(sub), len(rules))
			if !ok {
				continue
			}
			want := rewriteWhole(t, rules, body)
			if got := rewriteWhole(t, sub, body); !bytes.Equal(got, want) {
				t.Errorf("%s/%s: the %d rules that matched rewrite the body differently from all %d", w.Name, name, len(sub), len(rules))
			}
		}
	}
}

func rewriteWhole(t *testing.T, rules []matcher.Rule, body []byte) []byte {
	rs, err := matcher.Compile(rules, matcher.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st := rs.NewStream()
	return st.Close(st.Write(nil, body))
}
