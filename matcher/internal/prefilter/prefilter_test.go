package prefilter

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/streamsub/streamsub/matcher/internal/nfatest"
)

func setString(set [256]bool) string {
	var b []byte
	for c, in := range set {
		if in {
			b = append(b, byte(c))
		}
	}
	return fmt.Sprintf("%q", b)
}

func TestStartBytes(t *testing.T) {
	tests := []struct {
		pats []string
		want string
		kind Kind
	}{
		{[]string{"abc"}, `"a"`, Byte},
		{[]string{"abc", "(?i)x"}, `"Xax"`, Table},
		{[]string{`\bfoo`, `^bar`, `(?:)z`}, `"bfz"`, Table},
		{[]string{"[0-2]+|q"}, `"012q"`, Table},
		{[]string{"(a|b)?c"}, `"abc"`, Table},
		{[]string{"[^a]"}, "", None}, // every byte but 'a', invalid bytes included: checked below
		{[]string{"é"}, `"\xc3"`, Byte},
	}
	for _, tt := range tests {
		set := StartBytes(nfatest.New(t, tt.pats...))
		if tt.want != "" {
			if got := setString(set); got != tt.want {
				t.Errorf("%q: start bytes %s, want %s", tt.pats, got, tt.want)
			}
			if k := New(set).Kind(); k != tt.kind {
				t.Errorf("%q: kind %v, want %v", tt.pats, k, tt.kind)
			}
		}
	}
	set := StartBytes(nfatest.New(t, "[^a]"))
	for c := range 256 {
		if set[c] != (c != 'a') {
			t.Fatalf("[^a]: byte %#x in set = %v", c, set[c])
		}
	}
}

func TestNext(t *testing.T) {
	body := []byte("hello, world: find the X and the y")
	for _, chars := range []string{"X", "Xy", ":", "", "hello, wrdfitXy:an"} {
		var set [256]bool
		for i := range len(chars) {
			set[chars[i]] = true
		}
		p := New(set)
		for i := 0; i <= len(body); i++ {
			want := len(body)
			if j := bytes.IndexAny(body[i:], chars); j >= 0 {
				want = i + j
			}
			if chars == "" {
				want = len(body)
			}
			if got := p.Next(body, i); got != want {
				t.Fatalf("set %q from %d: got %d, want %d", chars, i, got, want)
			}
		}
	}
}

// BenchmarkSkip compares the two skip loops on a one-byte set over text
// where the byte is rare (one per 4 KiB) — the choice New makes.
func BenchmarkSkip(b *testing.B) {
	body := bytes.Repeat([]byte("lorem ipsum dolor sit amet, consectetur adipiscing "), 1<<16/50)
	for i := 4096; i < len(body); i += 4096 {
		body[i] = '@'
	}
	var set [256]bool
	set['@'] = true
	run := func(b *testing.B, next func([]byte, int) int) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			for i := next(body, 0); i < len(body); i = next(body, i+1) {
			}
		}
	}
	b.Run("indexbyte", func(b *testing.B) { run(b, New(set).Next) })
	b.Run("table", func(b *testing.B) { run(b, func(s []byte, i int) int { return tableNext(&set, s, i) }) })
	set['#'], set['!'] = true, true
	b.Run("table3", func(b *testing.B) { run(b, New(set).Next) })
}
