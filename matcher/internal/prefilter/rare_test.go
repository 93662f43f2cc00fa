package prefilter

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"
)

func lits(fold bool, ss ...string) []Literal {
	out := make([]Literal, len(ss))
	for i, s := range ss {
		out[i] = Literal{Bytes: []byte(s), Fold: fold}
	}
	return out
}

func TestNewRare(t *testing.T) {
	tests := []struct {
		name    string
		lits    []Literal
		maxRank int
		needles string // "" : no prefilter
		back    int
	}{
		{"clone rules", lits(false, "https://www.example.com", "www.example.com", "UA-12345-1"), RareEnough, "xU", 13},
		{"first of equals", lits(false, "zqzq"), RareEnough, "z", 0},
		{"common bytes only", lits(false, "the one"), RareEnough, "", 0},
		{"any rank", lits(false, "the one"), math.MaxInt, "t", 0},
		{"rarest inside", lits(false, "the 1x"), math.MaxInt, "x", 5},
		{"four needles", lits(false, "x", "j", "q", "z"), RareEnough, "", 0},
		{"three needles", lits(false, "ax", "bj", "cq", "dx"), RareEnough, "xjq", 1},
		// Ignoring case: no letter, no byte after a non-ASCII one; the
		// needle's offset counts 3 bytes per byte before it.
		{"fold", lits(true, "sk-9"), math.MaxInt, "9", 9},
		{"fold letters only", lits(true, "xjqz"), math.MaxInt, "", 0},
		{"fold after non-ASCII", lits(true, "é-"), math.MaxInt, "", 0},
		{"control byte", lits(false, "a\x01b"), RareEnough, "\x01", 1},
		{"none", nil, RareEnough, "", 0},
	}
	for _, tt := range tests {
		p := NewRare(tt.lits, tt.maxRank)
		switch {
		case tt.needles == "" && p != nil:
			t.Errorf("%s: needles %q, want no prefilter", tt.name, p.Needles())
		case tt.needles != "" && (p == nil || string(p.Needles()) != tt.needles || p.Back() != tt.back || p.Kind() != Rare):
			t.Errorf("%s: %+v, want needles %q back %d", tt.name, p, tt.needles, tt.back)
		}
	}
}

func TestRarer(t *testing.T) {
	clone := NewRare(lits(false, "https://www.example.com", "www.example.com", "UA-12345-1"), RareEnough)
	one := func(c byte) *Prefilter { var s [256]bool; s[c] = true; return New(s) }
	table := New([256]bool{'h': true, 'w': true, 'U': true})
	for _, tt := range []struct {
		name  string
		start *Prefilter
		want  bool
	}{
		{"no start prefilter", nil, true},
		{"several start bytes", table, true},
		{"common start byte", one('h'), true},
		{"start byte as rare", one('U'), false},
		{"nothing starts a match", New([256]bool{}), false},
	} {
		if got := clone.Rarer(tt.start); got != tt.want {
			t.Errorf("%s: Rarer = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestSkip: from every i, no match of any literal may start in [i, q),
// counting a match that runs past the end of the buffer (its needle may be
// in the next chunk); r is q's needle, or len(b) when there is none; one
// Cursor serves a scan whose i only grows.
func TestSkip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	sets := [][]string{
		{"https://www.example.com", "www.example.com", "UA-12345-1"},
		{"ax", "xb", "x"},
		{"abcx", "jab", "bbq"},
	}
	const alphabet = "abcxjqwU.:/-12345hpst "
	for _, set := range sets {
		p := NewRare(lits(false, set...), math.MaxInt)
		if p == nil {
			t.Fatalf("%q: no prefilter", set)
		}
		for range 200 {
			b := make([]byte, rng.IntN(80))
			for k := range b {
				b[k] = alphabet[rng.IntN(len(alphabet))]
			}
			if rng.IntN(2) == 0 && len(b) > 0 {
				lit := set[rng.IntN(len(set))]
				at := rng.IntN(len(b))
				copy(b[at:], lit)
			}
			var c Cursor
			for i := 0; i <= len(b); i += 1 + rng.IntN(3) {
				q, r := p.Skip(b, i, &c)
				if q < i || q > r || r > len(b) || (r < len(b) && bytes.IndexByte(p.Needles(), b[r]) < 0) {
					t.Fatalf("%q in %q from %d: q %d r %d", set, b, i, q, r)
				}
				for s := i; s < q; s++ {
					for _, lit := range set {
						m := min(len(lit), len(b)-s)
						if bytes.Equal(b[s:s+m], []byte(lit[:m])) {
							t.Fatalf("%q in %q from %d: skipped to %d past a match of %q at %d", set, b, i, q, lit, s)
						}
					}
				}
			}
		}
	}
}
