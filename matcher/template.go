package matcher

import (
	"fmt"
	"strconv"
	"strings"
)

// TemplateError reports a malformed replacement template (semantics.md
// "Templates"). Compile wraps it in a *RuleError that names the rule.
type TemplateError struct {
	Template string // the whole template
	Offset   int    // byte offset of the offending '$'
	Reason   string
}

func (e *TemplateError) Error() string {
	return fmt.Sprintf("replacement template %q: %s at offset %d", e.Template, e.Reason, e.Offset)
}

// maxGroupRef caps the group numbers a template may name; anything larger
// can never exist (regexp/syntax allows at most 1000 repeats and far fewer
// groups) and expands to "" like any group beyond the rule's.
const maxGroupRef = 1 << 20

// piece is one part of a parsed template: literal text tmpl[lo:hi] when
// group < 0, else the text of capture group group (0 = whole match).
type piece struct {
	group  int
	lo, hi int
}

// template is a parsed replacement template. Immutable after parseTemplate.
type template struct {
	src    string
	pieces []piece
	// needGroups reports whether expanding needs capture positions: some
	// piece names a group in 1..numGroups. $&, $0 and groups beyond the
	// rule's (which expand to "") do not.
	needGroups bool
}

// parseTemplate parses src for a rule whose groups are named by names
// (names[g] is group g's name or "", len(names) = groups+1).
//
// Syntax: $& and $0 the whole match; $N with digits read greedily; ${N};
// ${name} for a named group of the rule; $$ a literal $. Any other use of
// $ is an error. Backslash is not special.
func parseTemplate(src string, names []string) (*template, error) {
	t := &template{src: src}
	numGroups := len(names) - 1
	litStart := 0
	addGroup := func(g int) {
		t.pieces = append(t.pieces, piece{group: g})
		if g >= 1 && g <= numGroups {
			t.needGroups = true
		}
	}
	flushLit := func(end int) {
		if end > litStart {
			t.pieces = append(t.pieces, piece{group: -1, lo: litStart, hi: end})
		}
	}
	for i := 0; i < len(src); {
		if src[i] != '$' {
			i++
			continue
		}
		flushLit(i)
		dollar := i
		bad := func(reason string) error {
			return &TemplateError{Template: src, Offset: dollar, Reason: reason}
		}
		if i+1 >= len(src) {
			return nil, bad("'$' at the end (write $$ for a literal '$')")
		}
		switch c := src[i+1]; {
		case c == '$':
			t.pieces = append(t.pieces, piece{group: -1, lo: i + 1, hi: i + 2})
			i += 2
		case c == '&':
			addGroup(0)
			i += 2
		case isDigit(c):
			j := i + 1
			for j < len(src) && isDigit(src[j]) {
				j++
			}
			addGroup(groupNumber(src[i+1 : j]))
			i = j
		case c == '{':
			end := strings.IndexByte(src[i+2:], '}')
			if end < 0 {
				return nil, bad("unterminated '${'")
			}
			ref := src[i+2 : i+2+end]
			switch {
			case ref == "":
				return nil, bad("empty '${}'")
			case allDigits(ref):
				addGroup(groupNumber(ref))
			default:
				g := -1
				for k, n := range names {
					if n == ref {
						g = k
						break
					}
				}
				if g < 0 {
					return nil, bad(fmt.Sprintf("unknown group name %q", ref))
				}
				addGroup(g)
			}
			i += 2 + end + 1
		default:
			return nil, bad(fmt.Sprintf("'$' followed by %q (want &, 0-9, {N}, {name} or $)", c))
		}
		litStart = i
	}
	flushLit(len(src))
	return t, nil
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// groupNumber converts a digit string, saturating at maxGroupRef.
func groupNumber(digits string) int {
	n, err := strconv.Atoi(digits)
	if err != nil || n > maxGroupRef {
		return maxGroupRef
	}
	return n
}

// expand appends the replacement for a match to dst. match is the matched
// text; slots are the rule's capture slots relative to match[0] (nil when
// the template does not need groups), -1 for a group that did not
// participate.
func (t *template) expand(dst, match []byte, slots []int) []byte {
	for _, p := range t.pieces {
		switch {
		case p.group < 0:
			dst = append(dst, t.src[p.lo:p.hi]...)
		case p.group == 0:
			dst = append(dst, match...)
		case 2*p.group+1 < len(slots):
			if lo, hi := slots[2*p.group], slots[2*p.group+1]; lo >= 0 && hi >= lo {
				dst = append(dst, match[lo:hi]...)
			}
		}
	}
	return dst
}

// constant reports whether the expansion is the same for every match: the
// template names no group, not even the whole match.
func (t *template) constant() bool {
	for _, p := range t.pieces {
		if p.group >= 0 {
			return false
		}
	}
	return true
}

// String returns the template in canonical form: literal text with '$'
// doubled, groups as ${N}.
func (t *template) String() string {
	var b strings.Builder
	for _, p := range t.pieces {
		if p.group < 0 {
			b.WriteString(strings.ReplaceAll(t.src[p.lo:p.hi], "$", "$$"))
			continue
		}
		fmt.Fprintf(&b, "${%d}", p.group)
	}
	return b.String()
}
