package lazydfa

import (
	"math/rand/v2"
	"testing"

	"github.com/streamsub/streamsub/matcher/internal/nfa"
	"github.com/streamsub/streamsub/matcher/internal/nfatest"
	"github.com/streamsub/streamsub/matcher/internal/pikevm"
)

// vmAnchored returns the Pike VM's leftmost-first match starting at p, if
// the leftmost match from p starts there.
func vmAnchored(vm *pikevm.VM, hay []byte, p int) (end int, rule nfa.RuleID, ok bool) {
	before := nfa.Edge
	if p > 0 {
		before = int(hay[p-1])
	}
	vm.Restart(int64(p), before, int64(p))
	if vm.Advance(hay, 0, true, 1<<40) != pikevm.Found {
		return 0, 0, false
	}
	m := vm.Match()
	if m.Start != int64(p) {
		return 0, 0, false
	}
	return int(m.End), m.Rule, true
}

// boundaries returns the unit boundaries of hay's decoding from 0.
func boundaries(hay []byte) []int {
	var out []int
	for p := 0; p < len(hay); {
		out = append(out, p)
		n, _ := nfa.UnitLen(hay[p:], true)
		p += n
	}
	return out
}

func TestAnchoredTable(t *testing.T) {
	tests := []struct {
		pats []string
		body string
		p    int
		end  int
		rule nfa.RuleID
		res  Status
	}{
		{[]string{"abc"}, "abcd", 0, 3, 0, Found},
		{[]string{"abc"}, "abd", 0, 0, 0, NoMatch},
		{[]string{"a", "ab"}, "ab", 0, 1, 0, Found},         // earlier rule wins
		{[]string{"a+?", "ab"}, "aab", 0, 1, 0, Found},      // lazy
		{[]string{"x", "a+"}, "aaab", 0, 3, 1, Found},       // greedy
		{[]string{`foo\b`}, "foox", 0, 0, 0, NoMatch},       // assertion after
		{[]string{`foo\b`}, "foo", 0, 3, 0, Found},          // at EOI
		{[]string{`\bfoo`}, "xfoo", 1, 0, 0, NoMatch},       // assertion before
		{[]string{`a$`}, "a\nb", 0, 1, 0, Found},            // multi-line $
		{[]string{`(a|ab)(c|bcd)`}, "abcd", 0, 4, 0, Found}, // a then bcd (Perl order)
		{[]string{`(ab|a)(c|bcd)`}, "abcd", 0, 3, 0, Found}, // ab then c, not the longest
		{[]string{`abc`}, "ab", 0, 0, 0, NeedMore},
		{[]string{`[^x]{3}`}, "a\xffb", 0, 3, 0, Found},    // invalid unit
		{[]string{`[^x]{2}`}, "\xc3\xa9b", 0, 3, 0, Found}, // é is one unit
	}
	for _, tt := range tests {
		a := NewAnchored(nfatest.New(t, tt.pats...), Config{})
		c := a.NewCache()
		eof := tt.res != NeedMore
		for range 2 {
			before := nfa.Edge
			if tt.p > 0 {
				before = int(tt.body[tt.p-1])
			}
			end, rule, res := c.Find([]byte(tt.body), tt.p, before, eof, 1<<20)
			if res != tt.res || (res == Found && (end != tt.end || rule != tt.rule)) {
				t.Errorf("%q on %q at %d: got %d rule %d %v, want %d rule %d %v", tt.pats, tt.body, tt.p, end, rule, res, tt.end, tt.rule, tt.res)
			}
		}
	}
}

// TestAnchoredVsPikeVM compares Find with the Pike VM at every unit
// boundary of random bodies, for random rule sets, with normal, class-less
// and tiny caches.
func TestAnchoredVsPikeVM(t *testing.T) {
	atoms := []string{"a", "b", "ab", "[a-c]", "[^a]", ".", `\b`, "^", "$", "x|y", "é", "(?i)k", `\B`, "[0-9]{2}", `\A`, `\z`, "(?-s:.)", "(a)|b", "a*?", "(?:b+)?"}
	quants := []string{"", "", "*", "+", "?", "{1,3}", "*?", "??"}
	r := rand.New(rand.NewPCG(3, 4))
	alpha := []string{"a", "b", "c", "x", "y", "k", "K", "0", "1", " ", "\n", "é", "\xff", "\xc3", "\xe2\x82", "\x80"}
	for iter := range 2000 {
		pats := randRules(r, atoms, quants)
		hay := []byte(randText(r, alpha, 16))
		n := nfatest.New(t, pats...)
		cfg := Config{NoClasses: iter%5 == 1}
		if iter%5 == 2 {
			cfg.CacheBytes, cfg.MaxClears = 1, 1000000
		}
		c := NewAnchored(n, cfg).NewCache()
		vm := pikevm.New(n)
		for _, p := range boundaries(hay) {
			before := nfa.Edge
			if p > 0 {
				before = int(hay[p-1])
			}
			end, rule, res := c.Find(hay, p, before, true, 1<<20)
			wend, wrule, wok := vmAnchored(vm, hay, p)
			if res != Found && res != NoMatch {
				t.Fatalf("%q on %q at %d: %v", pats, hay, p, res)
			}
			if (res == Found) != wok || wok && (end != wend || rule != wrule) {
				t.Fatalf("%q on %q at %d: Find = %d rule %d %v; Pike VM = %d rule %d found %v", pats, hay, p, end, rule, res, wend, wrule, wok)
			}
		}
	}
}
