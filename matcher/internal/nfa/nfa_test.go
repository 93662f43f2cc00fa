package nfa

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"regexp/syntax"
	"strings"
	"testing"
	"unicode/utf8"
)

const testFlags = syntax.Perl&^syntax.OneLine | syntax.DotNL

func mustNew(t testing.TB, patterns ...string) *NFA {
	t.Helper()
	var res []*syntax.Regexp
	for _, p := range patterns {
		re, err := syntax.Parse(p, testFlags)
		if err != nil {
			t.Fatalf("parse %q: %v", p, err)
		}
		res = append(res, re)
	}
	n, err := New(res)
	if err != nil {
		t.Fatalf("New(%q): %v", patterns, err)
	}
	return n
}

// anchoredEnds simulates n anchored at the start of b (a whole body, no
// byte before it) and returns, for each rule, whether it can match b[:k]
// for each k: ends[r][k]. It ignores priority; it is a plain set simulation
// used to check the language of the automaton.
func anchoredEnds(n *NFA, b []byte) [][]bool {
	ends := make([][]bool, n.NumRules())
	for r := range ends {
		ends[r] = make([]bool, len(b)+1)
	}
	// The closures use the engines' Walker, with a fresh Seen per state
	// (no thread owns another's states here); the steps their State.Step.
	w := NewWalker(n)
	closure := func(set map[StateID]bool, s StateID, p int) {
		before, after := Edge, Edge
		if p > 0 {
			before = int(b[p-1])
		}
		if p < len(b) {
			after = int(b[p])
		}
		w.Reset(LookCtx{Before: before, After: after})
		w.Closure(Thread{ID: s}, nil)
		for _, t := range w.Out {
			set[t.ID] = true
			if st := n.State(t.ID); st.Kind == KindMatch {
				ends[st.Rule][p] = true
			}
		}
	}
	cur := map[StateID]bool{}
	closure(cur, n.Start(), 0)
	for p := 0; p < len(b); p++ {
		next := map[StateID]bool{}
		l, _ := UnitLen(b[p:], true)
		for s := range cur {
			if succ := n.State(s).Step(int(b[p]), IsInvalidUnit(int(b[p]), l)); succ != 0 {
				closure(next, succ, p+1)
			}
		}
		cur = next
	}
	return ends
}

// TestClassLanguage checks that a class automaton accepts exactly one
// unit of Go's decoding, and only if the decoded rune is in the class,
// against Go's regexp on random byte strings.
func TestClassLanguage(t *testing.T) {
	classes := []string{
		`.`, `(?-s:.)`, `[^a]`, `\x{FFFD}`, `[^\x{FFFD}]`, `\pL`, `\PL`, `[\x{80}-\x{7FF}]`,
		`[\x{7FF}-\x{800}]`, `[\x{D7FF}-\x{E000}]`, `[\x{FFFF}-\x{10000}]`, `[\x{10FFFF}]`,
		`(?i)k`, `(?i)ſ`, `[α-ω]`, `(?i)[α-ω]`, `\p{Han}`, `[^\x00-\x7F]`, `é`, `(?i)é`,
	}
	rng := rand.New(rand.NewPCG(1, 2))
	interesting := []byte{0x00, 'a', 'k', 'K', '\n', 0x7F, 0x80, 0xBF, 0xC0, 0xC1, 0xC2, 0xC3, 0xA9, 0xDF, 0xE0,
		0xA0, 0xED, 0x9F, 0xEF, 0xBF, 0xBD, 0xF0, 0x90, 0xF4, 0x8F, 0xF5, 0xFF, 0xE2, 0x84, 0xAA, 0xC5, 0xBF, 0xCE, 0xB1}
	for _, cl := range classes {
		n := mustNew(t, cl)
		re := regexp.MustCompile(`\A(?s:` + cl + `)`)
		for i := 0; i < 3000; i++ {
			b := make([]byte, 1+rng.IntN(5))
			for j := range b {
				if rng.IntN(3) == 0 {
					b[j] = byte(rng.IntN(256))
				} else {
					b[j] = interesting[rng.IntN(len(interesting))]
				}
			}
			ends := anchoredEnds(n, b)[0]
			want := -1
			if loc := re.FindIndex(b); loc != nil {
				want = loc[1]
			}
			for k, ok := range ends {
				if ok != (k == want) {
					t.Fatalf("class %q on %q: accepts %d = %v, Go regexp match end %d", cl, b, k, ok, want)
				}
			}
		}
		// Every rune's encoding.
		for r := rune(0); r <= utf8.MaxRune; r += 1 + rune(rng.IntN(97)) {
			b := utf8.AppendRune(nil, r)
			ends := anchoredEnds(n, b)[0]
			if got, want := ends[len(b)], re.Match(b); got != want {
				t.Fatalf("class %q on %U: accepted %v, Go regexp %v", cl, r, got, want)
			}
		}
	}
}

func TestUnitLen(t *testing.T) {
	tests := []struct {
		in    string
		atEOF bool
		n     int
		ok    bool
	}{
		{"a", false, 1, true},
		{"\xC3", false, 0, false},
		{"\xC3", true, 1, true},
		{"\xC3\xA9", false, 2, true},
		{"\xC3a", false, 1, true},
		{"\xA9", false, 1, true},
		{"\xE2\x82", false, 0, false},
		{"\xE2\x82\xAC", false, 3, true},
		{"\xED\xA0\x80", false, 1, true}, // surrogate
		{"\xC0\x80", false, 1, true},     // overlong
		{"\xF0\x90\x80", false, 0, false},
		{"\xF0\x90\x80\x80", false, 4, true},
		{"\xF5\x80\x80\x80", false, 1, true},
		{"\xFF", false, 1, true},
	}
	for _, tt := range tests {
		n, ok := UnitLen([]byte(tt.in), tt.atEOF)
		if n != tt.n || ok != tt.ok {
			t.Errorf("UnitLen(%q, %v) = %d, %v; want %d, %v", tt.in, tt.atEOF, n, ok, tt.n, tt.ok)
		}
	}
}

func TestLookHolds(t *testing.T) {
	tests := []struct {
		l             Look
		before, after int
		want          bool
	}{
		{LookStartLine, Edge, 'a', true},
		{LookStartLine, '\n', 'a', true},
		{LookStartLine, 'a', 'b', false},
		{LookEndLine, 'a', Edge, true},
		{LookEndLine, 'a', '\n', true},
		{LookEndLine, '\n', 'a', false},
		{LookStartText, Edge, Edge, true},
		{LookStartText, '\n', 'a', false},
		{LookEndText, 'a', Edge, true},
		{LookEndText, 'a', '\n', false},
		{LookWordBoundary, Edge, 'a', true},
		{LookWordBoundary, 'a', ' ', true},
		{LookWordBoundary, 'a', '_', false},
		{LookWordBoundary, 0xC3, 'a', true},
		{LookWordBoundary, Edge, Edge, false},
		{LookNoWordBoundary, Edge, Edge, true},
		{LookNoWordBoundary, 'a', '9', true},
		{LookNoWordBoundary, ' ', 'a', false},
	}
	for _, tt := range tests {
		if got := tt.l.Holds(tt.before, tt.after); got != tt.want {
			t.Errorf("%v.Holds(%d, %d) = %v, want %v", tt.l, tt.before, tt.after, got, tt.want)
		}
	}
}

func TestDump(t *testing.T) {
	tests := []struct {
		patterns []string
		want     string
	}{
		{[]string{`a`}, `
 000 fail
^001 cap(0.0) >2
 002 range 61-61 >3
 003 cap(0.1) >4
 004 match(0)
`},
		{[]string{`a+?`, `^é|\b`}, `
 000 fail
 001 cap(0.0) >2
 002 range 61-61 >3
 003 union(4,2)
 004 cap(0.1) >5
 005 match(0)
 006 cap(1.0) >11
 007 look(^) >8
 008 range c3-c3 >9
 009 range a9-a9 >12
 010 look(\b) >12
 011 union(7,10)
 012 cap(1.1) >13
 013 match(1)
^014 union(1,6)
`},
		{[]string{`(?-s:.)`}, `
 000 fail
^001 cap(0.0) >22
 002 sparse{00-09>23 0b-7f>23 c2-df>3 e0-e0>4 e1-ec>6 ed-ed>8 ee-ef>10 f0-f0>12 f1-f3>15 f4-f4>18}
 003 range 80-bf >23
 004 range a0-bf >5
 005 range 80-bf >23
 006 range 80-bf >7
 007 range 80-bf >23
 008 range 80-9f >9
 009 range 80-bf >23
 010 range 80-bf >11
 011 range 80-bf >23
 012 range 90-bf >13
 013 range 80-bf >14
 014 range 80-bf >23
 015 range 80-bf >16
 016 range 80-bf >17
 017 range 80-bf >23
 018 range 80-8f >19
 019 range 80-bf >20
 020 range 80-bf >23
 021 invalid >23
 022 union(2,21)
 023 cap(0.1) >24
 024 match(0)
`},
	}
	for _, tt := range tests {
		got := mustNew(t, tt.patterns...).String()
		want := strings.TrimPrefix(tt.want, "\n")
		if got != want {
			t.Errorf("dump of %q:\ngot:\n%swant:\n%s", tt.patterns, got, want)
		}
	}
}

func TestGroupsAndFail(t *testing.T) {
	n := mustNew(t, `(a)(?P<x>b)`, `[^\x00-\x{10FFFF}]`)
	if got := n.Rule(0).NumGroups; got != 2 {
		t.Errorf("NumGroups = %d, want 2", got)
	}
	if got := n.Rule(0).Names; len(got) != 3 || got[2] != "x" {
		t.Errorf("Names = %q", got)
	}
	if n.Rule(1).Start != 0 {
		t.Errorf("rule that cannot match has start %d, want the fail state 0", n.Rule(1).Start)
	}
	if n.Start() != n.Rule(0).Start {
		t.Errorf("Start() = %d, want rule 0's start %d", n.Start(), n.Rule(0).Start)
	}
}

// TestRandomClasses: random rune classes, with range ends near the UTF-8
// length and continuation-byte boundaries and the surrogates, compile to
// automata that accept exactly what Go's regexp accepts.
func TestRandomClasses(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	edges := []rune{0, 0x7F, 0x80, 0x7FF, 0x800, 0xFFF, 0x1000, 0xD7FF, 0xD800, 0xDFFF, 0xE000, 0xFFFD, 0xFFFF,
		0x10000, 0x3FFFF, 0x40000, 0x10FFFF, 0xBF, 0xC0, 0x13F, 0x140}
	randRune := func() rune {
		r := edges[rng.IntN(len(edges))] + rune(rng.IntN(5)) - 2
		return max(0, min(r, utf8.MaxRune))
	}
	for i := 0; i < 300; i++ {
		var b strings.Builder
		b.WriteString("[")
		if rng.IntN(4) == 0 {
			b.WriteString("^")
		}
		for n := 1 + rng.IntN(3); n > 0; n-- {
			lo, hi := randRune(), randRune()
			if lo > hi {
				lo, hi = hi, lo
			}
			if lo == hi && 0xD800 <= lo && lo <= 0xDFFF {
				// Go's regexp quirk: a one-rune surrogate literal becomes
				// the prefix "\uFFFD", so \A\x{D800} matches U+FFFD on
				// its literal-prefix path (and nowhere else). A surrogate
				// never matches here.
				hi++
			}
			fmt.Fprintf(&b, `\x{%X}-\x{%X}`, lo, hi)
		}
		b.WriteString("]")
		cl := b.String()
		n := mustNew(t, cl)
		re := regexp.MustCompile(`\A(?s:` + cl + `)`)
		for j := 0; j < 300; j++ {
			var in []byte
			if rng.IntN(2) == 0 {
				in = utf8.AppendRune(nil, randRune())
			} else {
				in = []byte{byte(rng.IntN(256)), byte(0x80 + rng.IntN(64)), byte(0x80 + rng.IntN(64)), byte(rng.IntN(256))}
			}
			in = in[:1+rng.IntN(len(in))]
			ends := anchoredEnds(n, in)[0]
			want := -1
			if loc := re.FindIndex(in); loc != nil {
				want = loc[1]
			}
			for k, ok := range ends {
				if ok != (k == want) {
					t.Fatalf("class %s on %q: accepts %d = %v, Go regexp match end %d", cl, in, k, ok, want)
				}
			}
		}
	}
}

// TestNewLimited: the limit is honoured exactly, and the rule whose states
// reached it is reported.
func TestNewLimited(t *testing.T) {
	parse := func(patterns ...string) []*syntax.Regexp {
		var res []*syntax.Regexp
		for _, p := range patterns {
			re, err := syntax.Parse(p, testFlags)
			if err != nil {
				t.Fatal(err)
			}
			res = append(res, re)
		}
		return res
	}
	res := parse("abc", "x{50}", "def")
	full, err := New(res)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := NewLimited(res, full.Len()); err != nil || n.Len() != full.Len() {
		t.Fatalf("NewLimited at exactly %d states: %v", full.Len(), err)
	}
	tests := []struct{ limit, rule int }{
		{full.Len() - 1, 2}, // the final union state
		{20, 1},
		{3, 0},
	}
	for _, tt := range tests {
		_, err := NewLimited(res, tt.limit)
		tb, ok := err.(*TooBigError)
		if !ok || tb.Rule != tt.rule || tb.Limit != tt.limit || !errors.Is(err, ErrTooBig) {
			t.Errorf("NewLimited(limit %d) = %v, want rule %d over the limit", tt.limit, err, tt.rule)
		}
	}
}
