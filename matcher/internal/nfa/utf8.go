package nfa

import "unicode/utf8"

// Whether bytes passed to UnitLen (and to the engines' searches) end at
// the body's end, named for call sites.
const (
	MoreInput = false // more body bytes may follow
	AtEOF     = true  // the bytes end at the body's end
)

// UnitLen returns the length of the unit that begins at b[0] in a decoding
// of the body like utf8.DecodeRune (Go's regexp input): 1 for an ASCII byte
// and for a byte that begins no valid UTF-8 sequence (lone continuation
// byte, C0/C1/F5-FF, truncated, overlong or surrogate sequence), else 2-4.
// atEOF reports that b holds the rest of the body. ok is false when the
// answer depends on bytes not yet seen: b is a proper prefix of a valid
// sequence and atEOF is false. b must not be empty.
func UnitLen(b []byte, atEOF bool) (n int, ok bool) {
	if b[0] < utf8.RuneSelf {
		return 1, true
	}
	if !atEOF && !utf8.FullRune(b) {
		return 0, false
	}
	_, n = utf8.DecodeRune(b)
	return n, true
}

// seq is a sequence of byte ranges matching the UTF-8 encodings of a rune
// range: byte i must be in [lo[i], hi[i]].
type seq struct {
	n      int
	lo, hi [utf8.UTFMax]byte
}

// appendSeqs appends to dst the byte-range sequences whose union is exactly
// the set of valid UTF-8 encodings of the runes in [lo, hi] (surrogates
// excluded: their 3-byte encodings are invalid UTF-8). The sequences come
// out sorted and their first ranges are equal or disjoint, so a prefix trie
// can be built by merging adjacent equal ranges.
func appendSeqs(dst []seq, lo, hi rune) []seq {
	type rr struct{ lo, hi rune }
	stack := []rr{{lo, hi}}
	for len(stack) > 0 {
		r := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if r.lo > r.hi {
			continue
		}
		// Skip surrogates.
		if r.lo <= 0xDFFF && r.hi >= 0xD800 {
			stack = append(stack, rr{0xE000, r.hi}, rr{r.lo, 0xD7FF})
			continue
		}
		// Split at encoding-length boundaries.
		split := false
		for _, max := range []rune{0x7F, 0x7FF, 0xFFFF} {
			if r.lo <= max && r.hi > max {
				stack = append(stack, rr{max + 1, r.hi}, rr{r.lo, max})
				split = true
				break
			}
		}
		if split {
			continue
		}
		if r.hi < utf8.RuneSelf {
			dst = append(dst, seq{n: 1, lo: [4]byte{byte(r.lo)}, hi: [4]byte{byte(r.hi)}})
			continue
		}
		// Split so that all continuation bytes below the first differing
		// one span their full range.
		n := utf8.RuneLen(r.lo)
		for i := 1; i < n; i++ {
			m := rune(1)<<(6*i) - 1
			if r.lo&^m != r.hi&^m {
				if r.lo&m != 0 {
					stack = append(stack, rr{(r.lo | m) + 1, r.hi}, rr{r.lo, r.lo | m})
					split = true
					break
				}
				if r.hi&m != m {
					stack = append(stack, rr{r.hi &^ m, r.hi}, rr{r.lo, (r.hi &^ m) - 1})
					split = true
					break
				}
			}
		}
		if split {
			continue
		}
		var a, b [utf8.UTFMax]byte
		utf8.EncodeRune(a[:], r.lo)
		utf8.EncodeRune(b[:], r.hi)
		s := seq{n: n}
		for i := 0; i < n; i++ {
			s.lo[i], s.hi[i] = a[i], b[i]
		}
		dst = append(dst, s)
	}
	return dst
}
