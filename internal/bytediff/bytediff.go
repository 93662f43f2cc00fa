// Package bytediff finds where two byte strings first differ and shows
// that place: its offset and a short excerpt of each side around it, with
// bytes that are not printable escaped.
//
// Compare does it for two whole strings (a rule self-test's expected and
// actual output). A Stream does it for two strings that arrive in pieces,
// side by side (the outputs of a live and a shadow rule set for the same
// body), in memory bounded by its limit whatever their length.
package bytediff

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Diff is the first difference between two byte strings, A and B.
type Diff struct {
	// Offset is the first offset at which A and B differ, or at which
	// one of them ends and the other does not.
	Offset int64
	// Before holds up to the excerpt length of the bytes just before
	// Offset, which A and B share.
	Before []byte
	// A and B hold up to the excerpt length of each side's bytes from
	// Offset on.
	A, B []byte
	// AEnd (BEnd) reports that A (B) ends where its excerpt ends.
	AEnd, BEnd bool
	// Unlocated is set by a Stream whose sides drifted more than its
	// limit apart before they differed: they differ at Offset or later,
	// where exactly is not known, and A and B are empty.
	Unlocated bool
}

// Compare returns the first difference between a and b, with excerpts of
// up to n bytes, and whether there is one.
func Compare(a, b []byte, n int) (Diff, bool) {
	i := Index(a, b)
	if i < 0 {
		return Diff{}, false
	}
	return Diff{
		Offset: int64(i),
		Before: a[max(0, i-n):i],
		A:      a[i:min(len(a), i+n)],
		B:      b[i:min(len(b), i+n)],
		AEnd:   len(a) <= i+n,
		BEnd:   len(b) <= i+n,
	}, true
}

// Index returns the first offset at which a and b differ (a shorter one
// differs where it ends), or -1 when they are equal.
func Index(a, b []byte) int {
	n := min(len(a), len(b))
	equalLen := len(a) == len(b)
	a, b = a[:n:n], b[:n:n]
	// Eight bytes at a time while they agree: a long equal prefix is the
	// common case.
	i := 0
	for ; i+8 <= n && string(a[i:i+8]) == string(b[i:i+8]); i += 8 {
	}
	for ; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	if equalLen {
		return -1
	}
	return n
}

// Excerpts returns each side's excerpt as a Go-quoted string: the shared
// bytes before the difference, then the side's own. "…" marks text cut
// off before or after; a side that ends in its excerpt has no trailing
// "…". It also returns the column, counted in runes, of the first
// differing character within each string.
func (d Diff) Excerpts() (a, b string, col int) {
	if d.Unlocated {
		return "", "", 0
	}
	// Show a character cut by the difference whole on both sides.
	split := len(d.Before)
	for i := len(d.Before) - 1; i >= 0 && i >= len(d.Before)-utf8.UTFMax+1; i-- {
		if utf8.RuneStart(d.Before[i]) {
			if !utf8.FullRune(d.Before[i:]) {
				split = i
			}
			break
		}
	}
	prefix, cut := d.Before[:split], ""
	if d.Offset > int64(len(d.Before)) { // Before does not start the strings
		prefix, cut = runeStart(prefix), "…"
	}
	q := strconv.Quote(string(prefix))
	col = utf8.RuneCountInString(cut) + utf8.RuneCountInString(q) - 1 // before the closing quote
	side := func(own []byte, end bool) string {
		rest := append(append([]byte(nil), d.Before[split:]...), own...)
		tail := "…"
		if end {
			tail = ""
		} else {
			rest = runeEnd(rest)
		}
		return cut + strconv.Quote(string(prefix)+string(rest)) + tail
	}
	return side(d.A, d.AEnd), side(d.B, d.BEnd), col
}

// Format describes d in two aligned lines named nameA and nameB, and a
// caret under the first differing character:
//
//	first difference at offset 17:
//	  want: …"//clone.example.net/x\">"…
//	  got:  …"//www.example.com/x\">Hom"…
//	                ^
func (d Diff) Format(nameA, nameB string) string {
	var sb strings.Builder
	if d.Unlocated {
		sb.WriteString("they differ at offset " + strconv.FormatInt(d.Offset, 10) +
			" or later (not located: one side ran too far ahead of the other)")
		return sb.String()
	}
	sb.WriteString("first difference at offset " + strconv.FormatInt(d.Offset, 10) + ":\n")
	a, b, col := d.Excerpts()
	w := max(len(nameA), len(nameB)) + 1
	pad := func(name string) string { return name + ":" + strings.Repeat(" ", w-len(name)) }
	sb.WriteString("  " + pad(nameA) + a + "\n")
	sb.WriteString("  " + pad(nameB) + b + "\n")
	sb.WriteString(strings.Repeat(" ", 2+w+1+col) + "^")
	return sb.String()
}

// runeStart drops leading bytes of b that continue a character begun
// before b (at most three).
func runeStart(b []byte) []byte {
	for i := 0; i < len(b) && i < utf8.UTFMax-1; i++ {
		if utf8.RuneStart(b[i]) {
			return b[i:]
		}
	}
	if len(b) >= utf8.UTFMax-1 {
		return b[utf8.UTFMax-1:]
	}
	return nil
}

// runeEnd drops a character that b cuts at its end.
func runeEnd(b []byte) []byte {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax+1; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			break
		}
	}
	return b
}
