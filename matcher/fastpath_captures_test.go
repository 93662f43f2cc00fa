package matcher

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/streamsub/streamsub/matcher/internal/nfa"
	"github.com/streamsub/streamsub/matcher/internal/pikevm"
)

// TestBacktrackerCaptures compares the fast path's capture backtracker
// with the Pike VM's capture pass on every match the Pike VM finds, for
// random rules with groups over random bodies.
func TestBacktrackerCaptures(t *testing.T) {
	atoms := []string{"(a)", "(b+)", "(a|ab)", "([a-c]*)", "(x?)", `(\b)`, "(é|.)", "(?:(a)|(b))", "([^a]{1,2})", "($)", "(c*?)"}
	alpha := []string{"a", "b", "c", "x", " ", "\n", "é", "\xff", "ab"}
	r := rand.New(rand.NewPCG(5, 6))
	var bt backtracker
	checked := 0
	for range 3000 {
		var sb strings.Builder
		for range 1 + r.IntN(4) {
			sb.WriteString(atoms[r.IntN(len(atoms))])
		}
		rs, err := Compile([]Rule{{Pattern: "x", Replace: "-"}, {Pattern: sb.String(), Replace: "$1"}}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		var body strings.Builder
		for range r.IntN(12) {
			body.WriteString(alpha[r.IntN(len(alpha))])
		}
		hay := []byte(body.String())
		vm := pikevm.New(rs.nfa)
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
			got, ok := bt.captures(nil, rs.nfa, ruleSpans(rs.nfa)[m.Rule], m.Rule, ext[m.Start:], int(m.End-m.Start), before)
			if ok && m.End < int64(len(hay)) && !slices.Equal(got, want) {
				t.Fatalf("rule %q on %q match %+v: backtracker %v, Pike VM %v", sb.String(), hay, m, got, want)
			}
			if ok {
				checked++
			}
			if m.End == m.Start {
				break
			}
			vm.Restart(m.End, int(hay[m.End-1]), m.End)
		}
	}
	if checked < 1000 {
		t.Fatalf("only %d matches checked", checked)
	}
}
