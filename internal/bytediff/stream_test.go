package bytediff

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// streamCompare feeds a and b to s in the given piece sizes (cycled; the
// two sides are cut independently) and returns what Close reports.
func streamCompare(s *Stream, a, b []byte, sizesA, sizesB []int) (Diff, bool) {
	s.Reset()
	for i := 0; len(a) > 0 || len(b) > 0; i++ {
		na := min(sizesA[i%len(sizesA)], len(a))
		nb := min(sizesB[i%len(sizesB)], len(b))
		s.Write(a[:na], b[:nb])
		a, b = a[na:], b[nb:]
	}
	return s.Close()
}

// TestStream checks that a Stream finds what Compare finds, however the
// sides are cut, while it stays within its limit.
func TestStream(t *testing.T) {
	long := strings.Repeat("<p>text</p>\n", 40)
	tests := []struct{ a, b string }{
		{"", ""},
		{"abc", "abc"},
		{"abc", "abd"},
		{"abc", "ab"},
		{"", "xyz"},
		{"hello world", "hello there"},
		{long, long},
		{long + "a", long + "b"},
		{long, long + "tail"},
		{long[:200] + "X" + long[200:], long},
		{"X" + long, long},
	}
	cuts := [][]int{{1 << 20}, {1}, {3}, {7, 1, 0, 5}, {0, 64}}
	s := NewStream(6, 1<<20)
	for _, tc := range tests {
		want, wantOK := Compare([]byte(tc.a), []byte(tc.b), 6)
		for _, ca := range cuts {
			for _, cb := range cuts {
				got, ok := streamCompare(s, []byte(tc.a), []byte(tc.b), ca, cb)
				if ok != wantOK || ok && !sameDiff(got, want) {
					t.Errorf("%.30q vs %.30q cut %v / %v: %+v, %v; want %+v, %v", tc.a, tc.b, ca, cb, got, ok, want, wantOK)
				}
			}
		}
	}
}

// TestStreamLimit: a side that runs further ahead than the limit turns the
// rest into a comparison by hash, which still sees whether the sides
// differ, and the held bytes never exceed the limit.
func TestStreamLimit(t *testing.T) {
	body := strings.Repeat("0123456789", 100)
	tests := []struct {
		name      string
		a, b      string
		differ    bool
		unlocated bool
		offset    int64
	}{
		{"equal", body, body, false, false, 0},
		{"differ late", body, body[:900] + "X" + body[901:], true, true, 10},
		{"longer", body, body + "!", true, true, 10},
		{"differ early", "X" + body[1:], body, true, false, 0},
	}
	const limit = 64
	s := NewStream(8, limit)
	for _, tc := range tests {
		// A arrives whole with B's first 10 bytes, then the rest of B
		// trickles in: A runs 990 bytes ahead.
		got, ok := streamCompare(s, []byte(tc.a), []byte(tc.b), []int{1 << 20}, []int{10})
		if ok != tc.differ || got.Unlocated != tc.unlocated || got.Offset != tc.offset {
			t.Errorf("%s: %+v, %v; want differ %v, unlocated %v at %d", tc.name, got, ok, tc.differ, tc.unlocated, tc.offset)
		}
		if cap(s.ahead) > limit {
			t.Errorf("%s: held buffer grew to %d bytes, limit %d", tc.name, cap(s.ahead), limit)
		}
	}
	// B keeps up within the limit (A is 10 bytes ahead, then none):
	// located exactly.
	a, b := body, body[:900]+"X"+body[901:]
	got, ok := streamCompare(s, []byte(a), []byte(b), []int{20, 20}, []int{10, 30})
	want, _ := Compare([]byte(a), []byte(b), 8)
	if !ok || !sameDiff(got, want) {
		t.Errorf("within the limit: %+v, %v; want %+v", got, ok, want)
	}
}

// FuzzStream compares a Stream with Compare on two strings cut at random,
// with a limit small enough to be crossed.
func FuzzStream(f *testing.F) {
	f.Add([]byte("abcdef"), []byte("abcxef"), uint64(1), uint8(4))
	f.Add([]byte("aaaaaaaaaaaaaaaaaaaaaaaa"), []byte("aaaaaaaaaaaaaaaaaaaaaaaaa"), uint64(2), uint8(2))
	f.Add([]byte(""), []byte("x"), uint64(3), uint8(0))
	f.Add([]byte("é€😀"), []byte("é€😁"), uint64(4), uint8(1))
	f.Fuzz(func(t *testing.T, a, b []byte, seed uint64, limit uint8) {
		rng := rand.New(rand.NewPCG(seed, seed>>32))
		cut := func() []int {
			sizes := make([]int, 1+rng.IntN(4))
			for i := range sizes {
				sizes[i] = rng.IntN(9) // 0: an empty piece
			}
			sizes[0] = max(sizes[0], 1) // some progress each cycle
			return sizes
		}
		const n = 5
		want, wantOK := Compare(a, b, n)
		s := NewStream(n, int(limit))
		got, ok := streamCompare(s, a, b, cut(), cut())
		switch {
		case ok != wantOK:
			t.Fatalf("differ = %v, want %v", ok, wantOK)
		case ok && got.Unlocated:
			if got.Offset > want.Offset || len(got.A)+len(got.B) > 0 {
				t.Fatalf("unlocated at %d with excerpts %q/%q; the difference is at %d", got.Offset, got.A, got.B, want.Offset)
			}
		case ok && !sameDiff(got, want):
			t.Fatalf("got %+v, want %+v", got, want)
		}
		if cap(s.ahead) > int(limit) {
			t.Fatalf("held buffer of %d bytes, limit %d", cap(s.ahead), limit)
		}
	})
}
