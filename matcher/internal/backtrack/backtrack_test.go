package backtrack

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/streamsub/streamsub/matcher/internal/nfa"
	"github.com/streamsub/streamsub/matcher/internal/nfatest"
	"github.com/streamsub/streamsub/matcher/internal/pikevm"
)

// TestCapturesVsPikeVM compares the capture backtracker with the Pike
// VM's capture pass on every match the Pike VM finds, for random rules
// with groups over random bodies.
func TestCapturesVsPikeVM(t *testing.T) {
	atoms := []string{"(a)", "(b+)", "(a|ab)", "([a-c]*)", "(x?)", `(\b)`, "(é|.)", "(?:(a)|(b))", "([^a]{1,2})", "($)", "(c*?)"}
	alpha := []string{"a", "b", "c", "x", " ", "\n", "é", "\xff", "ab"}
	r := rand.New(rand.NewPCG(5, 6))
	checked, affixed := 0, 0 // matches compared; those without a search (affixSlots)
	for range 3000 {
		var sb strings.Builder
		for range 1 + r.IntN(4) {
			sb.WriteString(atoms[r.IntN(len(atoms))])
		}
		n := nfatest.New(t, "x", sb.String())
		p := New(n)
		bt := p.Searcher()
		var body strings.Builder
		for range r.IntN(12) {
			body.WriteString(alpha[r.IntN(len(alpha))])
		}
		hay := []byte(body.String())
		vm := pikevm.New(n)
		vm.Restart(0, nfa.Edge, 0)
		for vm.Advance(hay, 0, true, 1<<20) == pikevm.Found {
			m := vm.Match()
			before := nfa.Edge
			if m.Start > 0 {
				before = int(hay[m.Start-1])
			}
			want := vm.Captures(nil, m.Rule, hay[m.Start:], int(m.End-m.Start), before, true)
			// The fast path passes hay up to the chunk end, never at EOF:
			// give it one more byte so that $ and \b at the end are decided.
			ext := append(slices.Clone(hay), '#')
			got, ok := bt.Captures(nil, m.Rule, ext[m.Start:], int(m.End-m.Start), before)
			if ok && m.End < int64(len(hay)) && !slices.Equal(got, want) {
				t.Fatalf("rule %q on %q match %+v: backtracker %v, Pike VM %v", sb.String(), hay, m, got, want)
			}
			if ok {
				checked++
				if p.rules[m.Rule].affix != nil {
					affixed++
				}
			}
			if m.End == m.Start {
				break
			}
			vm.Restart(m.End, int(hay[m.End-1]), m.End)
		}
	}
	t.Logf("%d matches checked, %d by affix slots", checked, affixed)
	if checked < 1000 || affixed < 200 {
		t.Fatalf("only %d matches checked, %d of them by affix slots", checked, affixed)
	}
}

// TestAffixSlots checks which group structures get captures without a
// search (affixSlots) and that those captures are the Pike VM's.
func TestAffixSlots(t *testing.T) {
	tests := []struct {
		pattern string
		body    string
		affix   bool
	}{
		{`([a-z0-9._%+-]+)@example\.com`, "mail bob.x@example.com now", true},
		{`x(a+)(b)c`, "zxaaabc", true},
		{`(\bab)(c*)`, "ab abccc", true},
		{`(?i)(id-)[0-9]+`, "ID-42", true},
		{`(?:(a)b)+`, "ababab", false},    // the group repeats: last iteration wins
		{`(a){2}`, "aaa", false},          // two Capture states for one slot
		{`(a|ab)(c|bcd)`, "abcd", false},  // group ends at a variable distance
		{`(?:(a)|(b))c`, "bc", false},     // groups that may not participate
		{`a(x*)b(y*)c`, "axxbyyc", false}, // group 2 starts at no fixed distance
		{`(é|.)z`, "éz", true},            // the group is the match less its last byte
	}
	for _, tt := range tests {
		n := nfatest.New(t, tt.pattern)
		p := New(n)
		if got := p.rules[0].affix != nil; got != tt.affix {
			t.Errorf("%q: affix plan %v, want %v", tt.pattern, p.rules[0].affix, tt.affix)
		}
		hay := []byte(tt.body + "#")
		vm := pikevm.New(n)
		vm.Restart(0, nfa.Edge, 0)
		if vm.Advance(hay[:len(tt.body)], 0, true, 1<<20) != pikevm.Found {
			t.Fatalf("%q: no match in %q", tt.pattern, tt.body)
		}
		m := vm.Match()
		before := nfa.Edge
		if m.Start > 0 {
			before = int(hay[m.Start-1])
		}
		want := vm.Captures(nil, m.Rule, hay[m.Start:len(tt.body)], int(m.End-m.Start), before, true)
		bt := p.Searcher()
		got, ok := bt.Captures(nil, m.Rule, hay[m.Start:], int(m.End-m.Start), before)
		if !ok || !slices.Equal(got, want) {
			t.Errorf("%q on %q: captures %v (ok %v), Pike VM %v", tt.pattern, tt.body, got, ok, want)
		}
	}
}
