// Package regexgen generates random regular expressions and bodies for the
// matcher's differential tests (engine vs Go regexp, stream vs reference).
// The atoms and body pieces are chosen to hit the hard cases: assertions,
// inline flags, multi-byte runes and invalid UTF-8. Only tests use it.
package regexgen

import "math/rand/v2"

// Atoms are the leaves of generated patterns.
var Atoms = []string{"a", "b", "é", ".", "[a-c]", "[^a]", `\x{FFFD}`, "^", "$", `\b`, `\B`, `\A`, `\z`,
	"(?-s:.)", `\pL`, `\n`, "(?i)a", "(?-m:$)", "(?-m:^)", `[^\n]`, "x", " "}

// BodyPieces are the pieces generated bodies are made of: ASCII, a
// newline, a valid two- and three-byte rune, and invalid or truncated UTF-8.
var BodyPieces = []string{"a", "b", "c", "x", "\n", " ", "é", "\xff", "\xc3", "\xa9", "\xe2\x82", "\xe2\x82\xac", "A"}

// Pattern returns a random pattern of nesting depth at most depth built
// from Atoms with concatenation, alternation, greedy and lazy repetition,
// counted repetition and capture groups.
func Pattern(rng *rand.Rand, depth int) string {
	if depth == 0 || rng.IntN(3) == 0 {
		return Atoms[rng.IntN(len(Atoms))]
	}
	a := Pattern(rng, depth-1)
	switch rng.IntN(10) {
	case 0, 1:
		return a + Pattern(rng, depth-1)
	case 2:
		return a + "|" + Pattern(rng, depth-1)
	case 3:
		return "(?:" + a + ")*"
	case 4:
		return "(?:" + a + ")+"
	case 5:
		return "(?:" + a + ")?"
	case 6:
		return "(?:" + a + ")*?"
	case 7:
		return "(?:" + a + "){1,2}"
	case 8:
		return "(" + a + ")"
	default:
		return "(?:" + a + ")??"
	}
}

// Body appends up to maxPieces random BodyPieces to dst.
func Body(dst []byte, rng *rand.Rand, maxPieces int) []byte {
	for n := rng.IntN(maxPieces); n > 0; n-- {
		dst = append(dst, BodyPieces[rng.IntN(len(BodyPieces))]...)
	}
	return dst
}
