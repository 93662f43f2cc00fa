package nfa

import "strings"

// Look is an empty-width assertion, or a set of them (a bit set).
// Each is decided at a position p from the byte before p and the byte at p,
// with Go's regexp definitions: line terminator '\n' only, word characters
// ASCII [0-9A-Za-z_] (so bytes >= 0x80 are never word bytes, as no
// non-ASCII rune is a word character in Go's \b).
type Look uint8

// Assertions.
const (
	LookStartLine      Look = 1 << iota // ^ with m: at body start or after '\n'
	LookEndLine                         // $ with m: at body end or before '\n'
	LookStartText                       // \A (and ^ with -m): at body start
	LookEndText                         // \z (and $ with -m): at body end
	LookWordBoundary                    // \b: word byte on exactly one side
	LookNoWordBoundary                  // \B: not \b
)

// Edge is passed as before or after to Holds at the body's start or end.
const Edge = -1

// Holds reports whether every assertion in l holds at a position whose
// preceding byte is before and following byte is after (Edge at the body's
// start or end).
func (l Look) Holds(before, after int) bool {
	if l&LookStartLine != 0 && before != Edge && before != '\n' {
		return false
	}
	if l&LookEndLine != 0 && after != Edge && after != '\n' {
		return false
	}
	if l&LookStartText != 0 && before != Edge {
		return false
	}
	if l&LookEndText != 0 && after != Edge {
		return false
	}
	if l&(LookWordBoundary|LookNoWordBoundary) != 0 {
		wb := IsWordByte(before) != IsWordByte(after)
		if l&LookWordBoundary != 0 && !wb {
			return false
		}
		if l&LookNoWordBoundary != 0 && wb {
			return false
		}
	}
	return true
}

// IsWordByte reports whether c (a byte, or Edge) is an ASCII word
// character [0-9A-Za-z_].
func IsWordByte(c int) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
}

var lookNames = []struct {
	l    Look
	name string
}{
	{LookStartLine, "^"}, {LookEndLine, "$"}, {LookStartText, `\A`},
	{LookEndText, `\z`}, {LookWordBoundary, `\b`}, {LookNoWordBoundary, `\B`},
}

func (l Look) String() string {
	var parts []string
	for _, ln := range lookNames {
		if l&ln.l != 0 {
			parts = append(parts, ln.name)
		}
	}
	return strings.Join(parts, "|")
}
