package matcher

// This file holds the test oracle: a whole-body rewriter built on Go's
// regexp package that implements the semantics.md loop literally. It shares
// no code with the engine (its own rule assembly, search loop and template
// expander), so the engine can be checked against it.

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// refRewriter is the reference rewriter for one rule set.
//
// The rule set matches as the alternation (r0)|(r1)|… in declaration order
// (leftmost-first). The oracle searches each rule on its own and takes the
// leftmost start, the earlier rule on a tie: that is the same match, since
// at a given start the alternation takes r0's preferred match there if r0
// has one, else r1's, and so on. Searching rules separately keeps each
// rule's group numbers and names its own.
type refRewriter struct {
	rules []Rule
	// first[i] searches the body from offset 0: `(?sm)R` as written.
	first []*regexp.Regexp
	// later[i] searches ctx+body[p:] for p > 0: `\A(?s:.)(?s:.*?)(R)`,
	// where ctx is one synthetic byte standing in for body[p-1] (see
	// refContext).
	later  []*regexp.Regexp
	ngroup []int        // number of capture groups of rule i
	tmpl   [][]refPiece // parsed template of rule i
}

// embedRule compiles `\A(?s:.)(?s:.*?)(src)`. Embedded in a group, src
// means what it means alone, unless it ends inside \Q… (which would quote
// the closing parenthesis): then \E is added. The group count tells.
func embedRule(src string, groups int) (*regexp.Regexp, error) {
	for _, s := range []string{src, src + `\E`} {
		re, err := regexp.Compile(`\A(?s:.)(?s:.*?)(` + s + ")")
		if err == nil && re.NumSubexp() == groups+1 {
			return re, nil
		}
	}
	return nil, fmt.Errorf("%q cannot be embedded in a group", src)
}

// refPiece is one piece of a parsed template: literal text, or a group
// reference (group 0 is the whole match).
type refPiece struct {
	lit   string
	group int // -1 for literal text
}

// newRefRewriter compiles each rule: regex rules with (?sm), plus (?i) for
// IgnoreCase; literal rules quoted.
func newRefRewriter(rules []Rule) (*refRewriter, error) {
	rw := &refRewriter{rules: rules}
	for i, r := range rules {
		src := "(?sm)" + r.Pattern
		if r.Literal {
			src = regexp.QuoteMeta(r.Pattern)
		}
		if r.IgnoreCase {
			src = "(?i)" + src
		}
		first, err := regexp.Compile(src)
		if err != nil {
			return nil, fmt.Errorf("rule %d: %w", i, err)
		}
		later, err := embedRule(src, first.NumSubexp())
		if err != nil {
			return nil, fmt.Errorf("rule %d: %w", i, err)
		}
		names := map[string]int{}
		for g, name := range first.SubexpNames() {
			if _, dup := names[name]; name != "" && !dup {
				names[name] = g
			}
		}
		tmpl, err := parseRefTemplate(r.Replace, names)
		if err != nil {
			return nil, fmt.Errorf("rule %d: %w", i, err)
		}
		rw.first = append(rw.first, first)
		rw.later = append(rw.later, later)
		rw.ngroup = append(rw.ngroup, first.NumSubexp())
		rw.tmpl = append(rw.tmpl, tmpl)
	}
	return rw, nil
}

// parseRefTemplate parses a replacement template: $& and $0 (whole match),
// $N (digits read greedily), ${N}, ${name}, $$; any other $ is an error.
func parseRefTemplate(t string, names map[string]int) ([]refPiece, error) {
	var out []refPiece
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			out = append(out, refPiece{lit: lit.String(), group: -1})
			lit.Reset()
		}
	}
	for i := 0; i < len(t); i++ {
		if t[i] != '$' {
			lit.WriteByte(t[i])
			continue
		}
		if i+1 >= len(t) {
			return nil, fmt.Errorf("template %q: lone $ at the end", t)
		}
		switch c := t[i+1]; {
		case c == '$':
			lit.WriteByte('$')
			i++
		case c == '&':
			flush()
			out = append(out, refPiece{group: 0})
			i++
		case c >= '0' && c <= '9':
			j := i + 1
			for j < len(t) && t[j] >= '0' && t[j] <= '9' {
				j++
			}
			flush()
			out = append(out, refPiece{group: refGroupNumber(t[i+1 : j])})
			i = j - 1
		case c == '{':
			end := strings.IndexByte(t[i+2:], '}')
			if end < 0 {
				return nil, fmt.Errorf("template %q: unterminated ${ at %d", t, i)
			}
			ref := t[i+2 : i+2+end]
			g, ok := -1, false
			if ref != "" && strings.Trim(ref, "0123456789") == "" {
				g, ok = refGroupNumber(ref), true
			} else if n, found := names[ref]; found {
				g, ok = n, true
			}
			if !ok {
				return nil, fmt.Errorf("template %q: unknown group %q", t, ref)
			}
			flush()
			out = append(out, refPiece{group: g})
			i += 2 + end
		default:
			return nil, fmt.Errorf("template %q: $ followed by %q at %d", t, c, i)
		}
	}
	flush()
	return out, nil
}

// refGroupNumber converts a digit string to a group number; numbers too big
// to be any group become a number beyond every rule's groups.
func refGroupNumber(digits string) int {
	n, err := strconv.Atoi(digits)
	if err != nil || n > 1<<20 {
		return 1 << 20
	}
	return n
}

// refContext returns the one synthetic byte that stands in for prev in a
// search from p > 0: it has the same class as prev for every assertion Go's
// regexp evaluates there (^ after \n, \b/\B word-ness).
func refContext(prev byte) byte {
	switch {
	case prev == '\n':
		return '\n'
	case prev == '_' || '0' <= prev && prev <= '9' || 'a' <= prev && prev <= 'z' || 'A' <= prev && prev <= 'Z':
		return 'a'
	default:
		return ' '
	}
}

// find returns the leftmost-first match at or after p: the rule that
// matched and the submatch offsets (absolute, -1 when a group did not
// participate) of that rule's groups, group 0 being the whole match.
func (rw *refRewriter) find(body []byte, p int) (rule int, groups []int, ok bool) {
	var buf []byte
	if p > 0 {
		buf = make([]byte, 0, 1+len(body)-p)
		buf = append(buf, refContext(body[p-1]))
		buf = append(buf, body[p:]...)
	}
	for i := range rw.rules {
		var m []int
		if p == 0 {
			m = rw.first[i].FindSubmatchIndex(body)
		} else if m = rw.later[i].FindSubmatchIndex(buf); m != nil {
			// Drop the group of the whole search; shift to body offsets.
			m = m[2:]
			for j := range m {
				if m[j] >= 0 {
					m[j] += p - 1
				}
			}
		}
		if m != nil && (!ok || m[0] < groups[0]) {
			rule, groups, ok = i, m, true
		}
	}
	return rule, groups, ok
}

// rewrite applies the rule set to the whole body (semantics.md, "Which
// match wins" and "Once rules").
func (rw *refRewriter) rewrite(body []byte) []byte {
	var out []byte
	fired := make([]bool, len(rw.rules))
	p := 0
	for p <= len(body) {
		i, g, ok := rw.find(body, p)
		if !ok {
			out = append(out, body[p:]...)
			break
		}
		s, e := g[0], g[1]
		out = append(out, body[p:s]...)
		if rw.rules[i].Once && fired[i] {
			out = append(out, body[s:e]...)
		} else {
			out = rw.expand(out, i, body, g)
			fired[i] = true
		}
		if s < e {
			p = e
			continue
		}
		// An empty match: copy the unit at s, as Go's regexp decodes it
		// (one UTF-8 sequence, or one byte that begins none), and restart
		// after it.
		if s == len(body) {
			break
		}
		_, n := utf8.DecodeRune(body[s:])
		out = append(out, body[s:s+n]...)
		p = s + n
	}
	return out
}

// expand appends rule i's template, filled from the groups g, to out.
func (rw *refRewriter) expand(out []byte, i int, body []byte, g []int) []byte {
	for _, pc := range rw.tmpl[i] {
		switch {
		case pc.group < 0:
			out = append(out, pc.lit...)
		case 2*pc.group+1 < len(g) && g[2*pc.group] >= 0:
			out = append(out, body[g[2*pc.group]:g[2*pc.group+1]]...)
		}
	}
	return out
}

// refRewrite is a convenience for tests: compile rules and rewrite body.
func refRewrite(rules []Rule, body []byte) ([]byte, error) {
	rw, err := newRefRewriter(rules)
	if err != nil {
		return nil, err
	}
	return rw.rewrite(body), nil
}

// TestReference checks the oracle itself against expectations written by
// hand from semantics.md (not produced by running any code).
func TestReference(t *testing.T) {
	re := func(pattern, replace string) Rule { return Rule{Pattern: pattern, Replace: replace} }
	once := func(r Rule) Rule { r.Once = true; return r }
	icase := func(r Rule) Rule { r.IgnoreCase = true; return r }
	lit := func(r Rule) Rule { r.Literal = true; return r }
	tests := []struct {
		name  string
		rules []Rule
		body  string
		want  string
	}{
		// semantics.md: empty match after a non-empty one is allowed.
		{"empty after non-empty", []Rule{re(`x*`, "-")}, "axxb", "-a--b-"},
		{"empty at end after non-empty", []Rule{re(`a*`, "-")}, "baa", "-b--"},
		{"empty body, empty match", []Rule{re(`x*`, "-")}, "", "-"},
		{"empty body, no match", []Rule{re(`x`, "-")}, "", ""},
		// An empty match copies one unit: never part of a character.
		{"empty match steps a rune", []Rule{re(`x*`, "-")}, "é", "-é-"},
		{"empty match steps runes", []Rule{re(`x*`, "-")}, "aé€😀b", "-a-é-€-😀-b-"},
		{"empty match steps invalid bytes", []Rule{re(`x*`, "-")}, "\xff\xc3", "-\xff-\xc3-"},
		{"empty match steps a truncated rune bytewise", []Rule{re(`x*`, "-")}, "a\xe2\x82", "-a-\xe2-\x82-"},
		{"no match starts inside a rune", []Rule{re(`\x{FFFD}|x*`, "<$&>")}, "é\xff", "<>é<\xff><>"},
		// semantics.md: once rule keeps shadowing after it fired.
		{"once shadows", []Rule{once(re(`ab`, "X")), re(`b`, "Y")}, "abab", "Xab"},
		{"once fires once", []Rule{once(re(`a`, "X"))}, "aaa", "Xaa"},
		{"all once fired", []Rule{once(re(`a`, "A")), once(re(`b`, "B"))}, "abab", "ABab"},
		// Leftmost start wins whatever the rule order.
		{"leftmost wins over earlier rule", []Rule{re(`b`, "1"), re(`ab`, "2")}, "ab", "2"},
		// Same start: earlier rule wins even if shorter.
		{"earlier rule wins at same start", []Rule{re(`a`, "1"), re(`ab`, "2")}, "ab", "1b"},
		{"later rule longer same start", []Rule{re(`ab`, "1"), re(`a`, "2")}, "ab", "1"},
		// Within a rule: alternation order and lazy/greedy priority.
		{"alternation order", []Rule{re(`ab|abc`, "X")}, "abc", "Xc"},
		{"greedy", []Rule{re(`a+`, "X")}, "aaab", "Xb"},
		{"lazy", []Rule{re(`a+?`, "X")}, "aaab", "XXXb"},
		{"lazy span", []Rule{re(`<.*?>`, "T")}, "<a><b>", "TT"},
		{"greedy span", []Rule{re(`<.*>`, "T")}, "<a><b>", "T"},
		// Templates.
		{"whole match $&", []Rule{re(`b+`, "[$&]")}, "abbc", "a[bb]c"},
		{"whole match $0", []Rule{re(`b+`, "[$0]")}, "abbc", "a[bb]c"},
		{"groups", []Rule{re(`(a)(b)`, "$2$1")}, "xaby", "xbay"},
		{"non-participating group", []Rule{re(`(a)|(b)`, "<$1|$2>")}, "ab", "<a|><|b>"},
		{"group beyond rule", []Rule{re(`(a)`, "<$2>")}, "a", "<>"},
		{"greedy digits", []Rule{re(`(a)`, "<$10>")}, "a", "<>"},
		{"braced digits", []Rule{re(`(a)`, "<${1}0>")}, "a", "<a0>"},
		{"dollar dollar", []Rule{re(`a`, "$$1")}, "a", "$1"},
		{"backslash not special", []Rule{re(`a`, `\1\n`)}, "a", `\1\n`},
		{"named group", []Rule{re(`(?P<w>b)`, "<${w}>")}, "ab", "a<b>"},
		{"same name in two rules", []Rule{re(`(?P<n>a)x`, "1${n}"), re(`(?P<n>b)y`, "2${n}")}, "axby", "1a2b"},
		{"groups numbered per rule", []Rule{re(`(a)(b)`, "<$2>"), re(`(c)`, "<$1>")}, "abc", "<b><c>"},
		{"group in repetition is last iteration", []Rule{re(`(?:(a)|b)+`, "<$1>")}, "ab", "<a>"},
		// Flags: s and m on by default, can be turned off inline.
		{"dot matches newline", []Rule{re(`a.b`, "X")}, "a\nb", "X"},
		{"dot without s", []Rule{re(`(?-s)a.b`, "X")}, "a\nb", "a\nb"},
		{"caret at line starts", []Rule{re(`^a`, "X")}, "a\na", "X\nX"},
		{"caret without m", []Rule{re(`(?-m)^a`, "X")}, "a\na", "X\na"},
		{"dollar at line ends", []Rule{re(`a$`, "X")}, "a\na", "X\nX"},
		{"dollar without m", []Rule{re(`(?-m)a$`, "X")}, "a\na", "a\nX"},
		{"backslash A only at start", []Rule{re(`\Aa`, "X")}, "aa\na", "Xa\na"},
		{"backslash z only at end", []Rule{re(`a\z`, "X")}, "a\naa", "a\naX"},
		{"trim trailing spaces", []Rule{re(`\s+$`, "")}, "ab  \ncd \n", "ab\ncd"},
		// Assertions see the byte before the restart point.
		{"caret after consumed newline", []Rule{re(`a\n`, ""), re(`^b`, "Y")}, "a\nb", "Y"},
		{"no caret mid-line after match", []Rule{re(`a`, ""), re(`^b`, "Y")}, "ab", "b"},
		{"word boundary after match", []Rule{re(`a`, "X"), re(`\bb`, "Y")}, "ab", "Xb"},
		{"word boundary after space", []Rule{re(` `, "_"), re(`\bb`, "Y")}, " b", "_Y"},
		{"not word boundary after match", []Rule{re(`a`, "X"), re(`\B,`, "Y")}, "a,", "X,"},
		{"backslash A after match", []Rule{re(`a`, "X"), re(`\Ab`, "Y")}, "ab", "Xb"},
		{"empty word boundary matches", []Rule{re(`\b`, "|")}, "ab cd", "|ab| |cd|"},
		// Case folding and literal rules.
		{"ignore case", []Rule{icase(re(`abc`, "X"))}, "xABcx", "xXx"},
		{"case sensitive", []Rule{re(`abc`, "X")}, "ABC", "ABC"},
		{"literal", []Rule{lit(re(`a.b`, "X"))}, "a.b axb", "X axb"},
		{"literal ignore case", []Rule{icase(lit(re(`a.B`, "X")))}, "A.b", "X"},
		{"literal dollar template", []Rule{lit(re(`$`, "[$&]"))}, "a$b", "a[$]b"},
		// Rules are embedded in a group for searches from p > 0.
		{"unterminated quote", []Rule{re(`\Qa.`, "X")}, "ba.a.", "bXX"},
		{"quoted paren", []Rule{re(`x\Q)\E`, "Y")}, "ax)x)", "aYY"},
		{"alternation of anchors and letters", []Rule{icase(re(`(?:^|A)|a`, "-"))}, "bAa", "-b--"},
		// Invalid UTF-8 bytes are one unit each and can be matched by dot.
		{"invalid bytes", []Rule{re(`a.b`, "X")}, "a\xffb a\x80b", "X X"},
		{"multibyte dot", []Rule{re(`a.b`, "X")}, "a€b", "X"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := refRewrite(tt.rules, []byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, []byte(tt.want)) {
				t.Errorf("rules %+v on %q:\n got %q\nwant %q", tt.rules, tt.body, got, tt.want)
			}
		})
	}
}

// TestReferenceErrors checks that the oracle rejects what semantics.md
// calls configuration errors.
func TestReferenceErrors(t *testing.T) {
	tests := []struct {
		name string
		rule Rule
	}{
		{"bad regex", Rule{Pattern: `a(`}},
		{"backreference", Rule{Pattern: `(a)\1`}},
		{"lookahead", Rule{Pattern: `a(?=b)`}},
		{"lone dollar", Rule{Pattern: `a`, Replace: `x$`}},
		{"dollar letter", Rule{Pattern: `a`, Replace: `$foo`}},
		{"unterminated brace", Rule{Pattern: `a`, Replace: `${1`}},
		{"unknown name", Rule{Pattern: `(?P<x>a)`, Replace: `${y}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := newRefRewriter([]Rule{tt.rule}); err == nil {
				t.Errorf("rule %+v accepted", tt.rule)
			}
		})
	}
}

// TestReferenceAgainstReplaceAll cross-checks the oracle's search loop and
// its one-byte context trick against Go's own ReplaceAllFunc, which
// searches with the full body as context. The two agree by definition
// whenever no match can be empty (they differ, deliberately, only in how
// they step over empty matches), so rules that can match empty are skipped.
func TestReferenceAgainstReplaceAll(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	randBytes := func(n int) []byte {
		b := make([]byte, rng.IntN(n))
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	const iterations = 5000
	compared := 0
	for range iterations {
		rules := fuzzRules(randBytes(24))
		r := rules[0]
		if r.Literal {
			continue
		}
		r.Once, r.Replace = false, "<$&>"
		src := "(?sm)" + r.Pattern
		if r.IgnoreCase {
			src = "(?i)" + src
		}
		tree, err := syntax.Parse(src, syntax.Perl)
		if err != nil {
			t.Fatalf("%s: %v", fmtRules([]Rule{r}), err)
		}
		if minLen(tree) == 0 {
			continue
		}
		re := regexp.MustCompile(src)
		body := fuzzBody(randBytes(40))
		want := re.ReplaceAllFunc(body, func(m []byte) []byte {
			return append(append([]byte("<"), m...), '>')
		})
		compared++
		got, err := refRewrite([]Rule{r}, body)
		if err != nil {
			t.Fatalf("%s: %v", fmtRules([]Rule{r}), err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%s on %q:\n got %q\nwant %q (ReplaceAllFunc)", fmtRules([]Rule{r}), body, got, want)
		}
	}
	if compared < iterations/10 {
		t.Fatalf("only %d of %d rules cannot match empty", compared, iterations)
	}
	t.Logf("%d of %d inputs compared", compared, iterations)
}

// minLen returns a lower bound of the bytes re can match: 0 if it might
// match empty.
func minLen(re *syntax.Regexp) int {
	switch re.Op {
	case syntax.OpLiteral:
		return len(string(re.Rune))
	case syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return 1
	case syntax.OpCapture, syntax.OpPlus:
		return minLen(re.Sub[0])
	case syntax.OpRepeat:
		return re.Min * minLen(re.Sub[0])
	case syntax.OpConcat:
		n := 0
		for _, sub := range re.Sub {
			n += minLen(sub)
		}
		return n
	case syntax.OpAlternate:
		n := minLen(re.Sub[0])
		for _, sub := range re.Sub[1:] {
			n = min(n, minLen(sub))
		}
		return n
	}
	return 0 // empty match, assertions, star, quest
}
