package matcher

// FuzzStream is the differential fuzz target of the streaming rewriter:
// random rules × random body × random chunking must give the reference
// rewriter's output, whole, streamed and one byte at a time, and
// RuleSet.RewriteValue must give it too, with the stream's replacement count.
//
// The three fuzz arguments are decoded by small grammars in which every byte
// string is valid and the printable characters read naturally, so seeds can
// be written by hand (see the table in FuzzStream):
//
//	spec: rule+ (at most fuzzMaxRules); rule = flags node-or-literal template
//	  flags: 'g' every match, 'o' once, 'i' ignore case, 'I' once + ignore
//	    case, 'l' literal, 'L' literal once, 'k' literal ignore case;
//	    other bytes: bit 0 once, bit 1 ignore case, bit 2 literal.
//	  node (prefix notation, depth ≤ fuzzMaxDepth):
//	    atoms  a b c d x A ' ' '\n' e=é E=€ F=😀 . D=\d w=\w s=\s W=\W
//	           [=[a-c] ]=[^x] ^ $ <=\A >=\z B=\b K=\B !=(?-s:.) M=(?-m:^) m=(?-m:$)
//	    binary &=concatenation |=alternation
//	    unary  * + ?  S=*? T=+? Q=??  {={m,n} }={m,n}? (then two bytes: m, n-m, each 0-2)
//	           (=capture P=named capture
//	  literal: a count byte (1-4) and that many body tokens.
//	  template: a count byte (0-4), then pieces: &=$& 0=$0 1 2 3=$N
//	    n=${N} (next byte: N, a digit or by value) N=${name} (next byte picks the name) $=$$;
//	    other printable ASCII is literal text.
//	body: a b c d x A ' ' . '\n' stand for themselves, e=é E=€ F=😀,
//	  0xff and 0x80 for themselves, T=0xe2 0x82 (a truncated €).
//	cuts: chunk sizes '0'-'8' (0 = an empty chunk); the rest of the body
//	  is the last chunk.

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

const (
	fuzzMaxRules    = 5
	fuzzMaxDepth    = 4
	fuzzMaxBody     = 200     // bytes; keeps each exec fast
	fuzzMaxBuffered = 1 << 20 // far above any body: never overflows
)

// fuzzDecoder hands out the bytes of one fuzz argument; past the end it
// returns 0.
type fuzzDecoder struct{ b []byte }

func (d *fuzzDecoder) more() bool { return len(d.b) > 0 }

func (d *fuzzDecoder) next() byte {
	if len(d.b) == 0 {
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

// count reads a count in 0..max: a digit from zero up stands for itself,
// any other byte counts by its value.
func (d *fuzzDecoder) count(zero byte, max int) int {
	c := d.next()
	if c >= zero && int(c-zero) <= max {
		return int(c - zero)
	}
	return int(c) % (max + 1)
}

// pick maps c to one of the keys of table: itself if it is one, else by
// its value.
func pick(c byte, table string) byte {
	if strings.IndexByte(table, c) >= 0 {
		return c
	}
	return table[int(c)%len(table)]
}

const (
	fuzzAtoms = "abcdxA \neEF.DwsW[]^$<>BK!Mm"
	fuzzOps   = fuzzAtoms + "&|*+?{STQ}(P"
)

var fuzzAtomText = map[byte]string{
	'e': "é", 'E': "€", 'F': "😀", '.': ".", 'D': `\d`, 'w': `\w`, 's': `\s`, 'W': `\W`,
	'[': "[a-c]", ']': "[^x]", '^': "^", '$': "$", '<': `\A`, '>': `\z`, 'B': `\b`, 'K': `\B`,
	'!': "(?-s:.)", 'M': "(?-m:^)", 'm': "(?-m:$)", '\n': `\n`,
}

// fuzzRuleGen decodes one rule's regex, counting its groups.
type fuzzRuleGen struct {
	d      *fuzzDecoder
	groups int
	names  []string
}

func (g *fuzzRuleGen) node(depth int) string {
	c := g.d.next()
	op := pick(c, fuzzOps)
	if depth >= fuzzMaxDepth {
		op = pick(c, fuzzAtoms)
	}
	if s, ok := fuzzAtomText[op]; ok {
		return s
	}
	switch op {
	case '&':
		return g.node(depth+1) + g.node(depth+1)
	case '|':
		return "(?:" + g.node(depth+1) + "|" + g.node(depth+1) + ")"
	case '*', '+', '?':
		return "(?:" + g.node(depth+1) + ")" + string(op)
	case 'S', 'T', 'Q':
		return "(?:" + g.node(depth+1) + ")" + map[byte]string{'S': "*?", 'T': "+?", 'Q': "??"}[op]
	case '{', '}':
		sub := g.node(depth + 1)
		m := int(g.d.next()) % 3
		n := m + int(g.d.next())%3
		rep := fmt.Sprintf("(?:%s){%d,%d}", sub, m, n)
		if op == '}' {
			rep += "?"
		}
		return rep
	case '(':
		g.groups++
		return "(" + g.node(depth+1) + ")"
	case 'P':
		g.groups++
		name := "n" + strconv.Itoa(g.groups)
		g.names = append(g.names, name)
		return "(?P<" + name + ">" + g.node(depth+1) + ")"
	}
	return string(op) // a b c d x A ' '
}

// fuzzTokens are the body (and literal rule) alphabet.
var fuzzTokens = map[byte]string{
	'e': "é", 'E': "€", 'F': "😀", 'T': "\xe2\x82",
}

const fuzzTokenKeys = "abcdxA .\neEFT\xff\x80"

func fuzzToken(c byte) string {
	k := pick(c, fuzzTokenKeys)
	if s, ok := fuzzTokens[k]; ok {
		return s
	}
	return string([]byte{k})
}

// fuzzTemplate decodes a template for a rule with the given groups.
func fuzzTemplate(d *fuzzDecoder, groups int, names []string) string {
	var t strings.Builder
	n := d.count('0', 4)
	for range n {
		switch c := d.next(); c {
		case '&':
			t.WriteString("$&")
		case '0', '1', '2', '3':
			t.WriteString("$" + string(c))
		case 'n':
			g := d.next()
			n := int(g - '0')
			if g < '0' || g > '9' {
				n = int(g) % (groups + 2)
			}
			t.WriteString("${" + strconv.Itoa(n) + "}")
		case 'N':
			if len(names) == 0 {
				t.WriteString("$&")
			} else {
				t.WriteString("${" + names[int(d.next())%len(names)] + "}")
			}
		case '$':
			t.WriteString("$$")
		default:
			if c < ' ' || c > '~' {
				c = "-<>x5_"[int(c)%6]
			}
			t.WriteByte(c)
		}
	}
	return t.String()
}

// fuzzRules decodes spec into 1..fuzzMaxRules rules.
func fuzzRules(spec []byte) []Rule {
	d := &fuzzDecoder{b: spec}
	var rules []Rule
	for len(rules) == 0 || (d.more() && len(rules) < fuzzMaxRules) {
		var r Rule
		switch c := d.next(); c {
		case 'g':
		case 'o':
			r.Once = true
		case 'i':
			r.IgnoreCase = true
		case 'I':
			r.Once, r.IgnoreCase = true, true
		case 'l':
			r.Literal = true
		case 'L':
			r.Literal, r.Once = true, true
		case 'k':
			r.Literal, r.IgnoreCase = true, true
		default:
			r.Once, r.IgnoreCase, r.Literal = c&1 != 0, c&2 != 0, c&4 != 0 && c%3 == 0
		}
		if r.Literal {
			n := 1 + d.count('1', 3)
			var lit strings.Builder
			for range n {
				tok := fuzzToken(d.next())
				if !isValidUTF8(tok) {
					tok = "x" // Go's regexp cannot express an invalid byte
				}
				lit.WriteString(tok)
			}
			r.Pattern = lit.String()
			r.Replace = fuzzTemplate(d, 0, nil)
		} else {
			g := &fuzzRuleGen{d: d}
			r.Pattern = g.node(0)
			r.Replace = fuzzTemplate(d, g.groups, g.names)
		}
		rules = append(rules, r)
	}
	return rules
}

func isValidUTF8(s string) bool { return strings.ToValidUTF8(s, "\x00") == s }

// fuzzBody decodes the body: one token per byte, at most fuzzMaxBody bytes.
func fuzzBody(b []byte) []byte {
	var body []byte
	for _, c := range b {
		tok := fuzzToken(c)
		if len(body)+len(tok) > fuzzMaxBody {
			break
		}
		body = append(body, tok...)
	}
	return body
}

// fuzzChunks cuts body by the sizes in cuts; the rest is the last chunk.
func fuzzChunks(body, cuts []byte) [][]byte {
	var chunks [][]byte
	for _, c := range cuts {
		n := int(c) % 9
		if c >= '0' && c <= '8' {
			n = int(c - '0')
		}
		n = min(n, len(body))
		chunks = append(chunks, body[:n])
		body = body[n:]
	}
	return append(chunks, body)
}

// fuzzSeeds are hand-written (spec, body, cuts) seeds covering the shapes
// of the grammar; testdata/fuzz/FuzzStream holds more.
var fuzzSeeds = []struct{ spec, body, cuts string }{
	{"g*x1-", "axxb", "1111"},                        // x* → -: empty matches around a non-empty one
	{"o&ab1Xgb1Y", "abab", "131"},                    // once shadows: ab → X once, b → Y
	{"ga1[g&ab1<", "ab", "01"},                       // same start: the earlier (shorter) rule wins
	{"gb1[g&ab1<", "ab", "1"},                        // the leftmost start wins
	{"g&^+s0", "  a \n  b\n", "2222"},                // trim leading spaces
	{"g&+s$0", "a  \nb \n  ", "3131"},                // trim trailing spaces
	{"g|&^+s&+s$0", "a \n\n \nb\n \n", "1111111111"}, // ^\s+|\s+$
	{"g&Bb1Xga1Y", "ab b", "11"},                     // \b after a match
	{"g&Kb1X", "ab b", ""},                           // \B
	{"g&<a1Xg&a>1Y", "aaa", "1"},                     // \A and \z
	{"g(a4&12$", "aa", "1"},                          // $&, $1, group beyond the rule, $$
	{"g&(a(b4n2n1n95", "abab", "12"},                 // ${N}, ${9} out of range, literal digit
	{"gPa2N0&g&Pb[2N1&", "ab", "1"},                  // named groups, same name in two rules
	{"gS.1-", "aeEF", "1111111"},                     // lazy star, multi-byte runes
	{"g*x1-", "aeEFT\xff\x80xe", "1212121"},          // empty matches step whole runes, cuts inside them
	{"g{.121<", "abcdef", "3"},                       // {1,3}
	{"g}.221<", "abcdef", "23"},                      // lazy {2,3}
	{"i&ab1X", "Ab ab aA", "1"},                      // ignore case
	{"l2e.1L", "e.exe.", "1111"},                     // literal with a multi-byte rune and a dot
	{"k2ab1<", "Ab ab", "11"},                        // literal ignore case
	{"g.1_", "a\xff\x80TE", "1111111"},               // invalid bytes and a truncated rune
	{"g]1_", "eET\xffx", "1111111"},                  // [^x] against runes and invalid bytes
	{"g!1_", "a\nb", "1"},                            // (?-s:.)
	{"gM1_gm1;", "a\nb\n", "11"},                     // (?-m:^), (?-m:$)
	{"g?a1-", "ba", "0000"},                          // empty chunks
	{"oa1Xob1Yoc1Z", "cbacba", "1"},                  // all once rules fire, the rest passes through
	{"g&&abc1Xgb1Y", "abab abc", "1111"},             // a pending match that fails falls back to b
	{"g|&a+b&a+c1<", "aaaaaaaac aaab", "5"},          // long pending alternatives
	{"gT&a?b2&0", "aab", "111"},                      // lazy plus with captures of the whole match
}

func FuzzStream(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s.spec), []byte(s.body), []byte(s.cuts))
	}
	f.Fuzz(func(t *testing.T, spec, bodyIn, cuts []byte) {
		rules := fuzzRules(spec)
		body := fuzzBody(bodyIn)
		chunks := fuzzChunks(body, cuts)
		ref, refErr := newRefRewriter(rules)
		rs, err := Compile(rules, Options{MaxBufferedBytes: fuzzMaxBuffered})
		if (refErr == nil) != (err == nil) {
			t.Fatalf("rules %q: Compile error %v, reference error %v", fmtRules(rules), err, refErr)
		}
		if err != nil {
			return
		}
		want := ref.rewrite(body)
		for _, run := range []struct {
			name   string
			chunks [][]byte
		}{
			{"whole", [][]byte{body}},
			{"chunked", chunks},
			{"bytewise", fuzzChunks(body, bytes.Repeat([]byte{'1'}, len(body)))},
		} {
			got, stats := rewrite(rs.NewStream(), run.chunks)
			if stats.Overflowed {
				t.Fatalf("rules %s body %q %s: overflowed with MaxBufferedBytes %d", fmtRules(rules), body, run.name, fuzzMaxBuffered)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("rules %s\nbody %q\n%s chunks %q\n got %q\nwant %q (reference)", fmtRules(rules), body, run.name, run.chunks, got, want)
			}
		}
		_, stats := rewrite(rs.NewStream(), [][]byte{body})
		if got, n := rs.RewriteValue([]byte("<"), body); string(got) != "<"+string(want) || n != stats.Replacements {
			t.Fatalf("rules %s\nvalue %q\nRewriteValue got %q, %d replacements; want %q, %d", fmtRules(rules), body, got[1:], n, want, stats.Replacements)
		}
	})
}

// fmtRules prints rules compactly for failure messages.
func fmtRules(rules []Rule) string {
	var parts []string
	for _, r := range rules {
		flags := ""
		for _, f := range []struct {
			on bool
			s  string
		}{{r.Literal, "literal"}, {r.Once, "once"}, {r.IgnoreCase, "icase"}} {
			if f.on {
				flags += " " + f.s
			}
		}
		parts = append(parts, fmt.Sprintf("{%q → %q%s}", r.Pattern, r.Replace, flags))
	}
	return strings.Join(parts, " ")
}

// TestFuzzStreamDecode pins the fuzz input grammar documented above, so
// that the hand-written seeds mean what their comments say.
func TestFuzzStreamDecode(t *testing.T) {
	tests := []struct {
		spec string
		want []Rule
	}{
		{"g*x1-", []Rule{{Pattern: "(?:x)*", Replace: "-"}}},
		{"o&ab1Xgb1Y", []Rule{{Pattern: "ab", Replace: "X", Once: true}, {Pattern: "b", Replace: "Y"}}},
		{"g|&^+s&+s$0", []Rule{{Pattern: `(?:^(?:\s)+|(?:\s)+$)`}}},
		{"g&(a(b4n2n1n95", []Rule{{Pattern: "(a)(b)", Replace: "${2}${1}${9}5"}}},
		{"gPa2N0&g&Pb[2N1&", []Rule{{Pattern: "(?P<n1>a)", Replace: "${n1}$&"}, {Pattern: "(?P<n1>b)[a-c]", Replace: "${n1}$&"}}},
		{"g}.221<", []Rule{{Pattern: "(?:.){2,4}?", Replace: "<"}}},
		{"g(a4&12$", []Rule{{Pattern: "(a)", Replace: "$&$1$2$$"}}},
		{"l2e.1L", []Rule{{Pattern: "é.", Replace: "L", Literal: true}}},
		{"k2ab1<", []Rule{{Pattern: "ab", Replace: "<", Literal: true, IgnoreCase: true}}},
		{"I!0", []Rule{{Pattern: "(?-s:.)", Once: true, IgnoreCase: true}}},
		{"", []Rule{{Pattern: "a"}}}, // no bytes: flags 0, atom fuzzOps[0], no template
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q", tt.spec), func(t *testing.T) {
			got := fuzzRules([]byte(tt.spec))
			if fmtRules(got) != fmtRules(tt.want) {
				t.Errorf("got  %s\nwant %s", fmtRules(got), fmtRules(tt.want))
			}
		})
	}
	if got, want := fuzzBody([]byte("aeEFT\xff.x")), "aé€😀\xe2\x82\xff.x"; string(got) != want {
		t.Errorf("body: got %q, want %q", got, want)
	}
	if got, want := fmt.Sprintf("%q", fuzzChunks([]byte("abcdef"), []byte("0215"))), `["" "ab" "c" "def" ""]`; got != want {
		t.Errorf("chunks: got %s, want %s", got, want)
	}
}
