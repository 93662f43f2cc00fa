package bytediff

import (
	"bytes"
	"strings"
	"testing"
)

func TestIndex(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", -1},
		{"abc", "abc", -1},
		{"abc", "abd", 2},
		{"abc", "ab", 2},
		{"", "x", 0},
		{"xbc", "abc", 0},
		{strings.Repeat("a", 20) + "b", strings.Repeat("a", 20) + "c", 20}, // past the 8-byte steps
		{strings.Repeat("a", 16), strings.Repeat("a", 17), 16},
		{strings.Repeat("a", 8) + "x" + strings.Repeat("a", 7), strings.Repeat("a", 16), 8},
	}
	for _, tc := range tests {
		if got := Index([]byte(tc.a), []byte(tc.b)); got != tc.want {
			t.Errorf("Index(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestCompare(t *testing.T) {
	tests := []struct {
		a, b string
		n    int
		want Diff // byte slices compared as strings
	}{
		{"hello world", "hello there", 4, Diff{Offset: 6, Before: []byte("llo "), A: []byte("worl"), B: []byte("ther")}},
		{"hello", "hello!", 4, Diff{Offset: 5, Before: []byte("ello"), A: []byte{}, B: []byte("!"), AEnd: true, BEnd: true}},
		{"ab", "xb", 4, Diff{Offset: 0, Before: []byte{}, A: []byte("ab"), B: []byte("xb"), AEnd: true, BEnd: true}},
		{"abcdef", "abXdef", 2, Diff{Offset: 2, Before: []byte("ab"), A: []byte("cd"), B: []byte("Xd")}},
	}
	for _, tc := range tests {
		got, ok := Compare([]byte(tc.a), []byte(tc.b), tc.n)
		if !ok || !sameDiff(got, tc.want) {
			t.Errorf("Compare(%q, %q, %d) = %+v, %v; want %+v", tc.a, tc.b, tc.n, got, ok, tc.want)
		}
	}
	if d, ok := Compare([]byte("same"), []byte("same"), 4); ok {
		t.Errorf("Compare of equal strings = %+v, true", d)
	}
}

// caret is a line with "^" in column col.
func caret(col int) string { return strings.Repeat(" ", col) + "^" }

func sameDiff(a, b Diff) bool {
	return a.Offset == b.Offset && bytes.Equal(a.Before, b.Before) && bytes.Equal(a.A, b.A) &&
		bytes.Equal(a.B, b.B) && a.AEnd == b.AEnd && a.BEnd == b.BEnd && a.Unlocated == b.Unlocated
}

// TestFormat checks the escaping, the "…" marks and the caret column.
func TestFormat(t *testing.T) {
	tests := []struct {
		name string
		a, b string
		n    int
		want string
	}{
		{"cut on both ends", `<a href="https://clone.example.net/x">Home</a>`, `<a href="https://www.example.com/x">Home</a>`, 8,
			"first difference at offset 17:\n" +
				`  want: …"https://clone.ex"…` + "\n" +
				`  got:  …"https://www.exam"…` + "\n" +
				caret(18)},
		{"start and end of both", "a\tb\x00", "a\tc", 8,
			"first difference at offset 2:\n" +
				`  want: "a\tb\x00"` + "\n" +
				`  got:  "a\tc"` + "\n" +
				caret(12)},
		{"one side ends", "abc", "abcdef", 8,
			"first difference at offset 3:\n" +
				`  want: "abc"` + "\n" +
				`  got:  "abcdef"` + "\n" +
				caret(12)},
		// é (c3 a9) and è (c3 a8) differ in their second byte: the caret
		// stands under the whole character.
		{"inside a character", "café au lait", "cafè au lait", 3,
			"first difference at offset 4:\n" +
				`  want: …"afé a"…` + "\n" +
				`  got:  …"afè a"…` + "\n" +
				caret(12)},
		// A character cut at the start of the excerpt (Before is "\xa9é")
		// or at its end ("X\xc3") is left out.
		{"cut at the start", "ééXéé", "ééYéé", 3,
			"first difference at offset 4:\n" +
				`  want: …"éXé"…` + "\n" +
				`  got:  …"éYé"…` + "\n" +
				caret(11)},
		{"cut at the end", "ééXéé", "ééYéé", 2,
			"first difference at offset 4:\n" +
				`  want: …"éX"…` + "\n" +
				`  got:  …"éY"…` + "\n" +
				caret(11)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, ok := Compare([]byte(tc.a), []byte(tc.b), tc.n)
			if !ok {
				t.Fatal("no difference")
			}
			if got := d.Format("want", "got"); got != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
	un := Diff{Offset: 42, Unlocated: true}
	if got := un.Format("live", "shadow"); !strings.Contains(got, "offset 42 or later (not located") {
		t.Errorf("unlocated: %q", got)
	}
}
