package htmlgen

import (
	"bytes"
	"regexp"
	"testing"
)

func TestPageDeterministicAndSized(t *testing.T) {
	for _, size := range []int{0, 1, 1000, 64 << 10} {
		a, b := Page(42, size), Page(42, size)
		if len(a) != size || !bytes.Equal(a, b) {
			t.Fatalf("size %d: len %d, deterministic %v", size, len(a), bytes.Equal(a, b))
		}
	}
	if bytes.Equal(Page(1, 4096), Page(2, 4096)) {
		t.Fatal("different seeds gave the same page")
	}
}

// TestWorkloadsHit checks that every workload finds its frequent rules in a
// generated page, so the benchmarks measure rewriting, not just scanning.
func TestWorkloadsHit(t *testing.T) {
	page := Page(1, 256<<10)
	for _, w := range []Workload{Clone(), Literals(), Regexes()} {
		hits := 0
		for _, r := range w.Rules {
			pat := r.Pattern
			if r.Literal {
				pat = regexp.QuoteMeta(pat)
			}
			if r.IgnoreCase {
				pat = "(?i)" + pat
			}
			re, err := regexp.Compile(pat)
			if err != nil {
				t.Fatalf("%s/%s: %v", w.Name, r.Name, err)
			}
			if re.Match(page) {
				hits++
			}
		}
		if min := len(w.Rules) * 2 / 5; hits < min {
			t.Errorf("%s: %d of %d rules match a page, want >= %d", w.Name, hits, len(w.Rules), min)
		}
	}
}

func TestLettersHasNoQ(t *testing.T) {
	if l := Letters(3, 1<<16); bytes.IndexByte(l, 'q') >= 0 || len(l) != 1<<16 {
		t.Fatal("Letters must be n letters without q")
	}
}
