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

// Unknown stands for a byte that is not known yet (the byte after a
// position at the end of the input so far), where a closure may take it
// (LookCtx.After).
const Unknown = -2

// lookNeedsAfter are the assertions that depend on the byte after the
// position.
const lookNeedsAfter = LookEndLine | LookEndText | LookWordBoundary | LookNoWordBoundary

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

// Context is all the assertions see of a byte next to a position: every
// byte of one context gives Holds the same answer. Engines that precompute
// per position (start closures, DFA states) key on it.
type Context uint8

// Contexts.
const (
	CtxEdge    Context = iota // no byte: the body's start or end
	CtxNewline                // '\n'
	CtxWord                   // [0-9A-Za-z_]
	CtxOther                  // any other byte
	NumContexts
)

// contextOf is the context of each byte value.
var contextOf = func() (t [256]Context) {
	for c := range t {
		switch {
		case c == '\n':
			t[c] = CtxNewline
		case IsWordByte(c):
			t[c] = CtxWord
		default:
			t[c] = CtxOther
		}
	}
	return t
}()

// ContextOf returns the context of c, a byte value or Edge.
func ContextOf(c int) Context {
	if c < 0 {
		return CtxEdge
	}
	return contextOf[c&0xFF]
}

// contextBytes holds a byte of each context.
var contextBytes = [NumContexts]int{Edge, '\n', 'a', ' '}

// Byte returns a byte of context x (Edge for CtxEdge), to pass to Holds.
func (x Context) Byte() int { return contextBytes[x%NumContexts] }

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
