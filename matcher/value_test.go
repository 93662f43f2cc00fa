package matcher

import (
	"bytes"
	"fmt"
	"sync"
	"testing"
)

// cloneRules are the demo clone's rules, as a header rewriter uses them.
var cloneRules = []Rule{
	{Name: "origin-url", Pattern: "https://www.example.com", Literal: true, Replace: "https://clone.example.net"},
	{Name: "origin-host", Pattern: "www.example.com", Literal: true, Replace: "clone.example.net"},
	{Name: "cookie-domain", Pattern: `(?i)(;\s*domain=)\.example\.com\b`, Replace: "${1}clone.example.net"},
}

// valueCases are hand-written from semantics.md: a value is rewritten as a
// body of its own.
var valueCases = []struct {
	rules []Rule
	value string
	want  string
	n     int
}{
	{cloneRules, "https://www.example.com/landing?ref=www.example.com", "https://clone.example.net/landing?ref=clone.example.net", 2},
	{cloneRules, "sid=1; Path=/; Domain=.example.com; Secure", "sid=1; Path=/; Domain=clone.example.net; Secure", 1},
	{cloneRules, "sid=1; Domain=www.example.com", "sid=1; Domain=clone.example.net", 1},
	{cloneRules, "sid=1; Domain=.example.community", "sid=1; Domain=.example.community", 0},
	{cloneRules, "<https://www.example.com/app.css>; rel=preload", "<https://clone.example.net/app.css>; rel=preload", 1},
	{cloneRules, "default-src 'self'", "default-src 'self'", 0},
	{cloneRules, "", "", 0},
	// once: at most one replacement per value, and each value starts afresh.
	{[]Rule{{Pattern: "a", Replace: "X", Once: true}}, "aaa", "Xaa", 1},
	// Anchors see the value's edges.
	{[]Rule{re(`\Ahttp://`, "https://")}, "http://a http://b", "https://a http://b", 1},
	{[]Rule{re(`/\z`, "")}, "https://a/", "https://a", 1},
	// Captures, and bytes that are no valid UTF-8.
	{[]Rule{re(`x(.)y`, "[$1]")}, "x\ry x\xffy", "[\r] [\xff]", 2},
	// Empty matches.
	{[]Rule{re("x*", "-")}, "ab", "-a-b-", 3},
}

func TestRewriteValue(t *testing.T) {
	for _, tc := range valueCases {
		t.Run(fmt.Sprintf("%s/%q", rulesString(tc.rules), tc.value), func(t *testing.T) {
			ref, err := refRewrite(tc.rules, []byte(tc.value))
			if err != nil {
				t.Fatal(err)
			}
			if string(ref) != tc.want {
				t.Fatalf("reference rewriter gives %q, the table says %q", ref, tc.want)
			}
			forEachEngine(t, tc.rules, Options{}, func(rs *RuleSet, e engine) {
				const prefix = "kept:"
				// Twice: the second call runs on a pooled stream.
				for round := range 2 {
					got, n := rs.RewriteValue([]byte(prefix), []byte(tc.value))
					if string(got) != prefix+tc.want || n != tc.n {
						t.Errorf("engine %s, round %d: got %q, %d replacements; want %q, %d",
							e.name, round, got, n, prefix+tc.want, tc.n)
					}
				}
			})
		})
	}
}

// TestRewriteValueConcurrent runs RewriteValue from several goroutines on
// one rule set (run it with -race): each result equals the sequential one.
func TestRewriteValueConcurrent(t *testing.T) {
	rs, err := Compile(cloneRules, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := make([][]byte, len(valueCases))
	for i, tc := range valueCases {
		want[i], _ = rs.RewriteValue(nil, []byte(tc.value))
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			var dst []byte
			for k := range 200 {
				i := (g + k) % len(valueCases)
				dst, _ = rs.RewriteValue(dst[:0], []byte(valueCases[i].value))
				if !bytes.Equal(dst, want[i]) {
					t.Errorf("goroutine %d: %q → %q, want %q", g, valueCases[i].value, dst, want[i])
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestRewriteValueAllocs: a value costs no allocation once the pool is warm
// and dst has room, whether it matches or not.
func TestRewriteValueAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop streams")
	}
	rs, err := Compile(cloneRules, Options{})
	if err != nil {
		t.Fatal(err)
	}
	dst := make([]byte, 0, 256)
	for _, hv := range headerValues {
		v := []byte(hv.value)
		rs.RewriteValue(dst, v) // warm the pool and the DFA caches
		if a := testing.AllocsPerRun(100, func() { rs.RewriteValue(dst, v) }); a != 0 {
			t.Errorf("%s %q: %v allocations per value", hv.name, v, a)
		}
	}
}

// headerValues are header values of a redirect through the clone, with and
// without matches.
var headerValues = []struct{ name, value string }{
	{"location", "https://www.example.com/landing?ref=www.example.com"},
	{"set-cookie", "sid=1; Path=/; Domain=.example.com; Secure; HttpOnly"},
	{"csp", "default-src 'self' https://cdn.example.org; img-src *"},
	{"content-type", "text/html; charset=utf-8"},
}

// BenchmarkRewriteValue measures one header value through the clone rules:
// the fixed cost of a pooled stream plus the scan.
func BenchmarkRewriteValue(b *testing.B) {
	rs, err := Compile(cloneRules, Options{})
	if err != nil {
		b.Fatal(err)
	}
	dst := make([]byte, 0, 256)
	for _, hv := range headerValues {
		v := []byte(hv.value)
		b.Run(hv.name, func(b *testing.B) {
			b.SetBytes(int64(len(v)))
			b.ReportAllocs()
			for b.Loop() {
				rs.RewriteValue(dst, v)
			}
		})
	}
}
