package matcher

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"regexp/syntax"
	"slices"
	"strings"
	"testing"

	"github.com/streamsub/streamsub/matcher/internal/lazydfa"
	"github.com/streamsub/streamsub/matcher/internal/prefilter"
	"github.com/streamsub/streamsub/matcher/internal/regexgen"
)

// streamCase is one row of the rewrite table: each is checked whole, at
// every uniform cut size 1..n, with random chunkings including empty
// chunks, and on a reused (Reset) stream.
type streamCase struct {
	rules []Rule
	body  string
	want  string
}

func re(pattern, replace string) Rule { return Rule{Pattern: pattern, Replace: replace} }

var streamCases = []streamCase{
	// Which match wins (semantics.md).
	{[]Rule{re("b", "1"), re("ab", "2")}, "ab", "2"},                   // leftmost start wins
	{[]Rule{re("a", "1"), re("ab", "2")}, "ab", "1b"},                  // same start: earlier rule, even if shorter
	{[]Rule{re("bc", "1"), re("abcd", "2")}, "abcd", "2"},              // longer overlapping earlier start
	{[]Rule{re("bc", "1"), re("abcd", "2")}, "abce", "a1e"},            // ... unless it fails
	{[]Rule{re("a|ab", "X")}, "ab", "Xb"},                              // alternation order inside a rule
	{[]Rule{re("a+?", "X")}, "aaa", "XXX"},                             // lazy
	{[]Rule{re("a+", "X")}, "aaa baa", "X bX"},                         // greedy
	{[]Rule{re("abcabd", "X")}, "abcabcabde", "abcXe"},                 // restart inside held bytes
	{[]Rule{re("abce|b", "X")}, "abcd", "aXcd"},                        // pending match beaten by nothing
	{[]Rule{re("abcdef|b|cdf|c", "X")}, "abcdeg", "aXXdeg"},            // nested re-scans
	{[]Rule{re("abcdefgh|b|cdeg|d", "X")}, "abcdefgi", "aXcXefgi"},     // re-scan after a match inside held bytes
	{[]Rule{re(`/\*.*?\*/|//[^\n]*`, "")}, "a/* x */b//c\nd", "ab\nd"}, // comments
	// Empty matches.
	{[]Rule{re("x*", "-")}, "axxb", "-a--b-"},
	{[]Rule{re("a*", "-")}, "baaac", "-b--c-"},
	{[]Rule{re("x*", "-")}, "", "-"},
	// ... step over a whole unit: never split a character (cut inside it
	// by the chunkings); invalid and truncated bytes are one unit each.
	{[]Rule{re("x*", "-")}, "é", "-é-"},
	{[]Rule{re("x*", "-")}, "aé€😀b", "-a-é-€-😀-b-"},
	{[]Rule{re("x*", "-")}, "\xff\xc3", "-\xff-\xc3-"},
	{[]Rule{re("x*", "-")}, "a\xf0\x9f\x98", "-a-\xf0-\x9f-\x98-"},                     // truncated at EOF
	{[]Rule{re("x*", "-")}, "\xed\xa0\x80", "-\xed-\xa0-\x80-"},                        // a surrogate is three invalid bytes
	{[]Rule{re("x*", "-")}, "é\xffa\xe2\x82€\x80xé", "-é-\xff-a-\xe2-\x82-€-\x80--é-"}, // mixed
	{[]Rule{re(`\x{FFFD}|x*`, "<$&>")}, "é\xff€", "<>é<\xff><>€<>"},                    // no match starts inside a rune
	{[]Rule{re(`\B`, "|")}, "éé", "|é|é|"},
	{[]Rule{re("(?:é|x)*", "-")}, "aééb€", "-a--b-€-"},
	{[]Rule{re("^", ">")}, "a\nb", ">a\n>b"},
	{[]Rule{re("^", ">")}, "", ">"},
	{[]Rule{re("$", "<")}, "a\nb\n", "a<\nb<\n<"},
	{[]Rule{re(`\b`, "|")}, "ab cd", "|ab| |cd|"},
	// Once rules.
	{[]Rule{{Pattern: "ab", Replace: "X", Once: true}, re("b", "Y")}, "abab", "Xab"},
	{[]Rule{{Pattern: "a", Replace: "1", Once: true}, re("a", "2")}, "aaa", "1aa"},
	{[]Rule{{Pattern: "a", Replace: "1", Once: true}, {Pattern: "b", Replace: "2", Once: true}}, "abab", "12ab"},
	{[]Rule{{Pattern: "b", Replace: "X", Once: true}}, "abcabc", "aXcabc"},
	{[]Rule{{Pattern: "x*", Replace: "-", Once: true}}, "ab", "-ab"},
	// Templates and captures.
	{[]Rule{re(`(\w+)@(\w+)`, "$2 at $1")}, "joe@host x", "host at joe x"},
	{[]Rule{re(`(?P<y>\d{4})-(?P<m>\d\d)`, "${m}/${y}")}, "on 2024-05!", "on 05/2024!"},
	{[]Rule{re(`(a)`, "[$10]")}, "a", "[]"},
	{[]Rule{re(`(a)`, "${1}0")}, "a", "a0"},
	{[]Rule{re(`(a)|(b)`, "[$1|$2]")}, "ab", "[a|][|b]"},
	{[]Rule{re(`a`, "$$")}, "a", "$"},
	{[]Rule{re(`a`, `\$&`)}, "a", `\a`},
	{[]Rule{re(`(a)+`, "<$1>")}, "aaa", "<a>"},
	{[]Rule{re(`(a|ab)(c|bcd)(d*)`, "[$1,$2,$3]")}, "abcd", "[a,bcd,]"},
	{[]Rule{re(`x(\n)y`, "[$1]")}, "x\ny", "[\n]"},
	{[]Rule{re(`(é)(.)`, "$2$1")}, "éa\xff", "aé\xff"},
	{[]Rule{re(`(.)\b(.)`, "$2$1")}, "ab c", "a bc"},
	// Assertions (checked across every chunk edge by the cuts).
	{[]Rule{re(`\Aa`, "X")}, "aa\na", "Xa\na"},
	{[]Rule{re(`a\z`, "X")}, "aa", "aX"},
	{[]Rule{re(`a\z`, "X")}, "a\n", "a\n"},
	{[]Rule{re(`(?-m)^a`, "X")}, "a\na", "X\na"},
	{[]Rule{re(`(?-m)a$`, "X")}, "a\na", "a\nX"},
	{[]Rule{re(`a$`, "X")}, "a\na", "X\nX"},
	{[]Rule{re(`^a`, "X")}, "a\naa", "X\nXa"},
	{[]Rule{re(`\bfoo\b`, "bar")}, "foo food foo", "bar food bar"},
	{[]Rule{re(`\Bo`, "0")}, "foo o", "f00 o"},
	{[]Rule{re(`\bb|a`, "X")}, "ab\n", "Xb\n"},
	{[]Rule{re(`a\n^b`, "X")}, "a\nb\n", "X\n"},
	{[]Rule{re(`^\s+|\s+$`, "")}, "  hello  \n  world\n", "hello\nworld"},
	{[]Rule{re(`(?-s:.)`, "_")}, "a\nb", "_\n_"},
	{[]Rule{re(`.`, "_")}, "a\n", "__"},
	// Invalid UTF-8 and multi-byte text.
	{[]Rule{re(`\x{FFFD}`, "?")}, "é\xff\xc3", "é??"},
	{[]Rule{re(`\x{FFFD}`, "?")}, "é", "é"}, // no match inside a rune
	{[]Rule{re(`\x{FFFD}`, "?")}, "\xef\xbf\xbd", "?"},
	{[]Rule{re(`[^a]`, "_")}, "a\xe2\x82\xac\xe2\x82b", "a____"},
	{[]Rule{re(`.`, "_")}, "\xed\xa0\x80", "___"}, // a surrogate is three invalid bytes
	{[]Rule{re(`.`, "_")}, "\xf0\x9f\x98\x80\xf0\x9f\x98", "____"},
	{[]Rule{re(`é+`, "E")}, "éééa\xc3", "Ea\xc3"},
	{[]Rule{re(`\pL+`, "L")}, "ab1 αβ\xffγ", "L1 L\xffL"},
	{[]Rule{re(`\xff`, "X")}, "\xff\xc3\xbf", "\xffX"}, // \xff is U+00FF
	// Case folding (Go's (?i)).
	{[]Rule{{Pattern: "Hello", Literal: true, IgnoreCase: true, Replace: "hi"}}, "HELLO hello hElLo", "hi hi hi"},
	{[]Rule{{Pattern: "k", IgnoreCase: true, Replace: "X"}}, "kK\u212a", "XXX"},
	{[]Rule{{Pattern: "é", IgnoreCase: true, Replace: "X"}}, "éÉ", "XX"},
	// Literal rules.
	{[]Rule{{Pattern: "a.b", Literal: true, Replace: "X"}}, "a.b axb", "X axb"},
	{[]Rule{{Pattern: "$1", Literal: true, Replace: "[$&]"}}, "a$1", "a[$1]"},
	// Literals skipped to by their rare bytes (the x of example, the U of
	// UA-; prefilter.NewRare): the URL rule wins over the host rule inside
	// it, a match starts up to 13 bytes before its needle, and needles
	// without a match (examplx, a cut URL) are passed over.
	{[]Rule{
		{Pattern: "https://www.example.com", Literal: true, Replace: "https://clone.example.net"},
		{Pattern: "www.example.com", Literal: true, Replace: "clone.example.net"},
		{Pattern: "UA-12345-1", Literal: true, Replace: "UA-99999-9"},
	}, "x https://www.example.com/a www.example.com wwww.example.comx www.examplx.com UA-12345-1x https://www.exampl",
		"x https://clone.example.net/a clone.example.net wclone.example.netx www.examplx.com UA-99999-9x https://www.exampl"},
	{[]Rule{{Pattern: "www.example.com", Literal: true, Replace: "W"}}, "www.example.comwww.example.com", "WW"},
	// Ignoring case, a letter before the needle may match as a longer rune
	// (ſ for s, the Kelvin sign for k): the needle lies further in.
	{[]Rule{{Pattern: "sk-9", Literal: true, IgnoreCase: true, Replace: "<>"}}, "SK-9 ſK-9 sK-9 s-9 sk9", "<> <> <> s-9 sk9"},
	// Nothing to do.
	{[]Rule{re("a", "X")}, "", ""},
	{nil, "abc", "abc"},
	{[]Rule{re("[^\\x00-\\x{10FFFF}]", "X")}, "abc", "abc"},
}

// rewrite runs a stream over chunks and returns its output and stats.
func rewrite(st *Stream, chunks [][]byte) ([]byte, StreamStats) {
	var out []byte
	for _, c := range chunks {
		out = st.Write(out, c)
	}
	out = st.Close(out)
	return out, st.Stats()
}

func cutEvery(body []byte, n int) [][]byte {
	var chunks [][]byte
	for len(body) > n {
		chunks = append(chunks, body[:n])
		body = body[n:]
	}
	return append(chunks, body)
}

func cutRandom(rng *rand.Rand, body []byte) [][]byte {
	var chunks [][]byte
	for len(body) > 0 {
		n := min(rng.IntN(5), len(body)) // 0: an empty chunk
		chunks = append(chunks, body[:n])
		body = body[n:]
	}
	return append(chunks, nil)
}

// engine is one configuration of the rewriter's engines. The streaming
// tests run every one of engines and want the same output and stats.
type engine struct {
	name  string
	exact bool            // the exact engine alone
	cfg   *lazydfa.Config // else the fast path with this config; nil: as Compile builds it
	// rare: the fast path skipping by the literals' rarest bytes whatever
	// their rank, whenever every rule is a literal (prefilter.NewRare).
	rare bool
}

// engines are the configurations the streaming tests run; the first, the
// exact engine alone, is the reference of the others. The start-byte
// prefilter is on whenever one byte starts every match; the rare-byte one
// as Compile chooses it, and forced on every literal rule set by fast-rare
// (with a tiny cache, so that it also meets give-ups and clears).
var engines = []engine{
	{name: "exact", exact: true},
	{name: "fast"},
	{name: "fast-tinycache", cfg: &lazydfa.Config{CacheBytes: 1, MaxClears: 2}}, // clears at every new state, gives up on the third
	{name: "fast-noclasses", cfg: &lazydfa.Config{NoClasses: true}},
	{name: "fast-rare", cfg: &lazydfa.Config{CacheBytes: 1 << 10, MaxClears: 4}, rare: true},
}

// compileFor compiles rules as Compile does, then sets up engine e.
func compileFor(t testing.TB, rules []Rule, opts Options, e engine) *RuleSet {
	t.Helper()
	rs, err := Compile(rules, opts)
	if err != nil {
		t.Fatalf("rules %s: %v", fmtRules(rules), err)
	}
	switch {
	case e.exact:
		rs.fast = nil
	case e.cfg != nil:
		cfg := *e.cfg
		if e.rare {
			cfg.Rare = forcedRare(rules)
		}
		rs.fast = newFastPath(rs.nfa, int(rs.maxSpan), cfg)
	}
	return rs
}

// forEachEngine calls f with rules compiled for each of engines, in order.
func forEachEngine(t testing.TB, rules []Rule, opts Options, f func(rs *RuleSet, e engine)) {
	t.Helper()
	for _, e := range engines {
		f(compileFor(t, rules, opts, e), e)
	}
}

func TestStreamTable(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, tc := range streamCases {
		t.Run(fmt.Sprintf("%q/%q", rulesString(tc.rules), tc.body), func(t *testing.T) {
			forEachEngine(t, tc.rules, Options{}, func(rs *RuleSet, e engine) {
				checkStreamCase(t, rng, rs, tc, e.name)
			})
		})
	}
}

func checkStreamCase(t *testing.T, rng *rand.Rand, rs *RuleSet, tc streamCase, engine string) {
	body := []byte(tc.body)
	check := func(name string, st *Stream, chunks [][]byte) {
		t.Helper()
		got, stats := rewrite(st, chunks)
		if string(got) != tc.want {
			t.Errorf("%s %q (engine %s): got %q, want %q", name, chunks, engine, got, tc.want)
		}
		if stats.Overflowed || stats.Buffered != 0 {
			t.Errorf("%s: stats after Close %+v", name, stats)
		}
		sum := 0
		for _, n := range st.RuleReplacements() {
			sum += n
		}
		if sum != stats.Replacements {
			t.Errorf("%s: RuleReplacements %v add up to %d, Replacements = %d", name, st.RuleReplacements(), sum, stats.Replacements)
		}
	}
	check("whole", rs.NewStream(), [][]byte{body})
	reused := rs.NewStream()
	for n := 1; n <= len(body); n++ {
		check(fmt.Sprintf("cut %d", n), rs.NewStream(), cutEvery(body, n))
		reused.Reset()
		check(fmt.Sprintf("reused, cut %d", n), reused, cutEvery(body, n))
	}
	for range 20 {
		check("random", rs.NewStream(), cutRandom(rng, body))
	}
}

func rulesString(rules []Rule) string {
	var parts []string
	for _, r := range rules {
		s := r.Pattern + "→" + r.Replace
		if r.Once {
			s += "/once"
		}
		if r.IgnoreCase {
			s += "/i"
		}
		if r.Literal {
			s += "/lit"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ",")
}

// TestReplacementsCount checks the counts of Stats and RuleReplacements on
// both engines, whole and byte by byte, and after Reset.
func TestReplacementsCount(t *testing.T) {
	tests := []struct {
		rules   []Rule
		body    string
		perRule []int
	}{
		// X, then "ab" shadowed by the fired once rule (not counted), then Y.
		{[]Rule{{Pattern: "ab", Replace: "X", Once: true}, re("b", "Y")}, "ababb", []int{1, 1}},
		{[]Rule{re("a", "1"), re("b", "2"), re("c", "3")}, "abcbcc", []int{1, 2, 3}},
		{[]Rule{re("a", "1"), re("ab", "2")}, "ab ab", []int{2, 0}}, // the earlier rule wins
		{[]Rule{re("x*", "-")}, "ab", []int{3}},
		{[]Rule{re("a", "1")}, "", []int{0}},
	}
	for _, tc := range tests {
		forEachEngine(t, tc.rules, Options{}, func(rs *RuleSet, e engine) {
			st := rs.NewStream()
			for _, chunks := range [][][]byte{{[]byte(tc.body)}, cutEvery([]byte(tc.body), 1)} {
				st.Reset()
				_, stats := rewrite(st, chunks)
				got := st.RuleReplacements()
				total := 0
				for _, n := range tc.perRule {
					total += n
				}
				if !slices.Equal(got, tc.perRule) || stats.Replacements != total {
					t.Errorf("%s on %q in %d chunk(s) (engine %s): per rule %v, total %d; want %v, %d",
						rulesString(tc.rules), tc.body, len(chunks), e.name, got, stats.Replacements, tc.perRule, total)
				}
			}
		})
	}
}

// TestHoldBack checks that every byte is emitted as soon as no match can
// include it.
func TestHoldBack(t *testing.T) {
	tests := []struct {
		rules    []Rule
		chunk    string
		out      string // output of Write(chunk)
		buffered int
	}{
		{[]Rule{re("abc", "X")}, "xxxab", "xxx", 2},
		{[]Rule{re("abc", "X")}, "xyz", "xyz", 0},
		{[]Rule{re("abc", "X")}, "abcab", "X", 2},
		{[]Rule{re("a$", "X")}, "xa", "x", 1},
		{[]Rule{re("ab", "X")}, "xab", "xX", 0},   // decided without the next byte
		{[]Rule{re(`ab\b`, "X")}, "xab", "x", 2},  // \b needs the next byte
		{[]Rule{re("a+", "X")}, "baa", "b", 2},    // a longer match may follow
		{[]Rule{re("x*", "-")}, "ab", "-a-b", 0},  // empty match at the end waits for EOF: nothing held
		{[]Rule{re("é", "E")}, "ab\xc3", "ab", 1}, // partial rune
		{[]Rule{re("(?i)k", "X")}, "a\xe2\x84", "a", 2},
		{[]Rule{re("[a-c]x+", "")}, "zax\xe2", "z", 1},   // the cut rune ends the match: only it is held
		{[]Rule{re("x*", "-")}, "aé\xe2\x82", "-a-é", 2}, // an empty match before a cut rune waits for its length
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q/%q", rulesString(tt.rules), tt.chunk), func(t *testing.T) {
			forEachEngine(t, tt.rules, Options{}, func(rs *RuleSet, e engine) {
				st := rs.NewStream()
				out := st.Write(nil, []byte(tt.chunk))
				if string(out) != tt.out {
					t.Errorf("engine %s: Write = %q, want %q", e.name, out, tt.out)
				}
				if got := st.Stats().Buffered; got != tt.buffered {
					t.Errorf("engine %s: Buffered = %d, want %d", e.name, got, tt.buffered)
				}
			})
		})
	}
}

func TestCap(t *testing.T) {
	tests := []struct {
		name       string
		rules      []Rule
		cap        int
		chunks     []string
		want       string
		overflowed bool
	}{
		{"overflow flushes unchanged and passes the rest through", []Rule{re("a[^z]*z", "X"), re("q", "Q")}, 4,
			[]string{"xx", "ab", "cd", "ef", "z q", "az"}, "xxabcdefz qaz", true},
		{"match of exactly the cap at a chunk end", []Rule{re(`abcd\b`, "X")}, 4,
			[]string{"xx", "a", "b", "c", "d", " ", "abcd"}, "xxX X", false},
		{"match decided at the chunk end needs no hold", []Rule{re("abcd", "X")}, 3,
			[]string{"a", "b", "c", "d", "e"}, "Xe", false},
		{"held beyond the cap at a chunk end", []Rule{re("abcd", "X")}, 2,
			[]string{"a", "b", "c", "d", "abcd"}, "abcdabcd", true},
		{"inside one chunk a match may exceed the cap", []Rule{re("abcd", "X")}, 2,
			[]string{"xabcdx"}, "xXx", false},
		{"pending match with a constant template does not count", []Rule{re("abce|b", "X")}, 2,
			[]string{"ab", "c", "d"}, "aXcd", false},
		{"a rune cut by the chunk end ends a match", []Rule{re("[a-c]x+", "")}, 1,
			[]string{"ax\xe2", "\x82\xac"}, "€", false},
		{"a pending match waiting at a cut rune does not count", []Rule{re("(?:€)+", "")}, 1,
			[]string{"€\xe2\x82"}, "\xe2\x82", false},
		{"nor when the engine is fed the chunk in pieces", []Rule{re("(?:€)+", "")}, 1,
			[]string{"€", "\xe2\x82"}, "\xe2\x82", false},
		{"a rune cut by the chunk end after empty matches does not count", []Rule{re("x*", "-")}, 1,
			[]string{"a\xe2\x82", "", "\xac\xf0\x9f", "\x98\x80"}, "-a-€-😀-", false},
		{"pending match whose text is used counts", []Rule{re("abce|b", "[$&]")}, 2,
			[]string{"ab", "c", "d"}, "abcd", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var chunks [][]byte
			for _, c := range tt.chunks {
				chunks = append(chunks, []byte(c))
			}
			forEachEngine(t, tt.rules, Options{MaxBufferedBytes: tt.cap}, func(rs *RuleSet, e engine) {
				got, stats := rewrite(rs.NewStream(), chunks)
				if string(got) != tt.want || stats.Overflowed != tt.overflowed {
					t.Errorf("engine %s: got %q (overflowed %v), want %q (overflowed %v)",
						e.name, got, stats.Overflowed, tt.want, tt.overflowed)
				}
			})
		})
	}
}

// TestSpanLimit: inside one chunk a pending match may span at most
// max(2*cap, 64 KiB) bytes.
func TestSpanLimit(t *testing.T) {
	rs, err := Compile([]Rule{re("a+b", "X")}, Options{MaxBufferedBytes: 40000})
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(strings.Repeat("a", 100000) + "b")
	got, stats := rewrite(rs.NewStream(), [][]byte{body})
	if !bytes.Equal(got, body) || !stats.Overflowed {
		t.Errorf("got %d bytes (equal %v), overflowed %v; want the body unchanged and an overflow", len(got), bytes.Equal(got, body), stats.Overflowed)
	}
	body = body[100000-79999:] // 79,999 a's and b: fits in 2*cap
	got, stats = rewrite(rs.NewStream(), [][]byte{body})
	if string(got) != "X" || stats.Overflowed {
		t.Errorf("got %.10q..., overflowed %v; want X", got, stats.Overflowed)
	}
}

// TestPathological: patterns that make backtracking engines exponential
// run in time linear in the body (the test would time out otherwise).
func TestPathological(t *testing.T) {
	n := 200000
	tests := []struct {
		rule Rule
		body string
		want string
	}{
		{re("(a|aa)*b", "X"), strings.Repeat("a", n) + "b", "X"},
		{re("(x+x+)+y", "X"), strings.Repeat("x", n) + "y", "X"},
		{re("(x+x+)+y", "X"), strings.Repeat("x", n), strings.Repeat("x", n)},
		{re("(a*)*b", "X"), strings.Repeat("a", n) + "c", strings.Repeat("a", n) + "c"},
	}
	for _, tt := range tests {
		rs, err := Compile([]Rule{tt.rule}, Options{MaxBufferedBytes: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		got, _ := rewrite(rs.NewStream(), cutEvery([]byte(tt.body), 16<<10))
		if string(got) != tt.want {
			t.Errorf("%q on %d bytes: got %d bytes %.20q", tt.rule.Pattern, len(tt.body), len(got), got)
		}
	}
}

func TestCompileErrors(t *testing.T) {
	tests := []struct {
		rule Rule
		want string // substring of the error
	}{
		{Rule{Name: "paren", Pattern: "a(b"}, "missing closing ): `a(b`"},
		{Rule{Pattern: `(a)\1`}, "invalid escape sequence: `\\1`"},
		{Rule{Pattern: `(?=a)`}, "invalid or unsupported Perl syntax: `(?=`"},
		{Rule{Pattern: `(?<!a)b`}, "`(?<!a)b`"},
		{Rule{Pattern: `\h`}, "invalid escape sequence"},
		{Rule{Literal: true}, "empty literal"},
		{Rule{Name: "tmpl", Pattern: "a", Replace: "$x"}, `'$' followed by 'x'`},
		{Rule{Pattern: "(?P<n>a)", Replace: "${m}"}, `unknown group name "m"`},
	}
	for i, tt := range tests {
		rules := []Rule{re("ok", "fine"), tt.rule}
		_, err := Compile(rules, Options{})
		var rerr *RuleError
		if !errors.As(err, &rerr) {
			t.Errorf("case %d: error %v is not a *RuleError", i, err)
			continue
		}
		if rerr.Index != 1 || rerr.Name != tt.rule.Name || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("case %d: error %q (index %d, name %q), want index 1, name %q, containing %q", i, err, rerr.Index, rerr.Name, tt.rule.Name, tt.want)
		}
		if tt.rule.Name != "" && !strings.Contains(err.Error(), fmt.Sprintf("%q", tt.rule.Name)) {
			t.Errorf("case %d: error %q does not name the rule", i, err)
		}
		if cerr := Check(rules, Options{}); cerr == nil || cerr.Error() != err.Error() {
			t.Errorf("case %d: Check = %v, want Compile's error %q", i, cerr, err)
		}
	}
	if err := Check([]Rule{re("ok", "fine"), {Pattern: "(a)", Replace: "$1"}}, Options{}); err != nil {
		t.Errorf("Check of valid rules: %v", err)
	}
	var serr *syntax.Error
	_, err := Compile([]Rule{re("a(b", "")}, Options{})
	if !errors.As(err, &serr) {
		t.Errorf("error %v does not wrap a *syntax.Error", err)
	}
}

// benchRules and benchBody are a small HTML-ish workload.
var benchRules = []Rule{
	{Pattern: `https?://(?:www\.)?example\.com`, Replace: "https://clone.example.net", IgnoreCase: true},
	{Pattern: "UA-12345-1", Literal: true, Replace: "UA-99999-9"},
	{Pattern: `<script[^>]*>`, Replace: "<script nonce=\"x\">"},
	{Pattern: `\bcolou?r\b`, Replace: "hue"},
	{Pattern: `(\d{4})-(\d\d)-(\d\d)`, Replace: "$3/$2/$1"},
}

func benchBody(n int) []byte {
	const para = `<p class="c">Visit <a href="http://www.example.com/x?y=1">us</a> on 2024-05-17, colour é ✓ <script src="a.js"></script> UA-12345-1</p>` + "\n"
	return []byte(strings.Repeat(para, n/len(para)+1)[:n])
}

func TestStreamAllocs(t *testing.T) {
	// The second rule set can match the empty string everywhere, so the
	// exact engine runs every byte.
	t.Run("default", func(t *testing.T) { checkStreamAllocs(t, benchRules, false) })
	t.Run("exact", func(t *testing.T) {
		checkStreamAllocs(t, append(benchRules[:len(benchRules):len(benchRules)], Rule{Pattern: "(?:zz)?"}), true)
	})
}

// checkStreamAllocs checks that Write allocates nothing per chunk in
// steady state (one endless body) and, with wholeBodies, that neither do
// Reset and Close over whole bodies (the fast path's pooled caches are
// left out there: sync.Pool may drop them, notably under -race).
func checkStreamAllocs(t *testing.T, rules []Rule, wholeBodies bool) {
	rs, err := Compile(rules, Options{})
	if err != nil {
		t.Fatal(err)
	}
	st := rs.NewStream()
	chunks := cutEvery(benchBody(64<<10), 4<<10)
	out := make([]byte, 0, 256<<10)
	i := 0
	write := func() {
		out = st.Write(out[:0], chunks[i%len(chunks)])
		i++
	}
	for range 2 * len(chunks) {
		write() // warm up: buffers grow to their steady-state size
	}
	if allocs := testing.AllocsPerRun(100, write); allocs != 0 {
		t.Errorf("allocs per Write = %v, want 0", allocs)
	}
	if st.Stats().Replacements == 0 {
		t.Errorf("workload made no replacements")
	}
	if !wholeBodies {
		return
	}
	body := func() {
		st.Reset()
		out = out[:0]
		for _, c := range chunks {
			out = st.Write(out, c)
		}
		out = st.Close(out)
	}
	body()
	if allocs := testing.AllocsPerRun(20, body); allocs != 0 {
		t.Errorf("allocs per body = %v, want 0", allocs)
	}
}

// BenchmarkStream: the stream on the HTML-ish workload in 16 KiB chunks,
// as compiled ("default": fast path where eligible) and with the exact
// engine alone.
func BenchmarkStream(b *testing.B) {
	for _, exact := range []bool{false, true} {
		name := "default"
		if exact {
			name = "exact"
		}
		b.Run(name, func(b *testing.B) { benchStream(b, exact) })
	}
}

func benchStream(b *testing.B, exact bool) {
	rs, err := Compile(benchRules, Options{})
	if err != nil {
		b.Fatal(err)
	}
	if exact {
		rs.fast = nil
	}
	body := benchBody(256 << 10)
	chunks := cutEvery(body, 16<<10)
	st := rs.NewStream()
	out := make([]byte, 0, 2*len(body))
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		st.Reset()
		out = out[:0]
		for _, c := range chunks {
			out = st.Write(out, c)
		}
		out = st.Close(out)
	}
}

// TestSmallCapsAgainstReference: with small hold-back caps and random
// chunkings, a body that did not overflow is rewritten exactly as the
// whole-body reference rewrites it: the cap may cause a pass-through,
// never a different rewrite.
func TestSmallCapsAgainstReference(t *testing.T) {
	patterns := []Rule{
		re("abac", "X"), re("a.+?c", "<$&>"), re(`\bb\w*`, "[$0]"), re("(a)(b)?c", "$2$1"),
		re("x*", "-"), re(`^\s+|\s+$`, ""), re(`é|\x{FFFD}`, "?"), re("ab|abcd", "Y"),
		{Pattern: "ca", Replace: "Z", Once: true}, re(`(?i)AB\z`, "E"),
	}
	alphabet := []string{"a", "b", "c", "d", "x", " ", "\n", "é", "\xff"}
	rng := rand.New(rand.NewPCG(5, 6))
	exactRuns, overflows := 0, 0
	for i := 0; i < 3000; i++ {
		var rules []Rule
		for n := 1 + rng.IntN(3); n > 0; n-- {
			rules = append(rules, patterns[rng.IntN(len(patterns))])
		}
		var body []byte
		for n := rng.IntN(30); n > 0; n-- {
			body = append(body, alphabet[rng.IntN(len(alphabet))]...)
		}
		want, err := refRewrite(rules, body)
		if err != nil {
			t.Fatal(err)
		}
		e := engines[rng.IntN(len(engines))]
		rs := compileFor(t, rules, Options{MaxBufferedBytes: 1 + rng.IntN(8)}, e)
		chunks := cutRandom(rng, body)
		got, stats := rewrite(rs.NewStream(), chunks)
		if stats.Overflowed {
			overflows++
			continue
		}
		exactRuns++
		if !bytes.Equal(got, want) {
			t.Fatalf("rules %q cap %d chunks %q (engine %s): got %q, reference %q",
				rulesString(rules), rs.maxBuffer, chunks, e.name, got, want)
		}
	}
	if exactRuns == 0 || overflows == 0 {
		t.Errorf("runs without overflow %d, with %d: want both", exactRuns, overflows)
	}
}

func ExampleRuleSet_NewStream() {
	rs, err := Compile([]Rule{
		{Name: "host", Pattern: `https?://(www\.)?example\.com`, Replace: "https://clone.example.net", IgnoreCase: true},
		{Name: "date", Pattern: `(\d{4})-(\d\d)-(\d\d)`, Replace: "$3/$2/$1"},
		{Name: "id", Pattern: "UA-1", Literal: true, Replace: "UA-9", Once: true},
	}, Options{})
	if err != nil {
		panic(err)
	}
	st := rs.NewStream()
	var out []byte
	for _, chunk := range []string{"<a href=\"HTTP://www.exam", "ple.com/\">2024-05", "-17 UA-1 UA-1</a>"} {
		out = st.Write(out, []byte(chunk))
		fmt.Printf("%q (holding %d)\n", out, st.Stats().Buffered)
	}
	out = st.Close(out)
	fmt.Printf("%q, %d replacements\n", out, st.Stats().Replacements)
	// Output:
	// "<a href=\"" (holding 15)
	// "<a href=\"https://clone.example.net/\">" (holding 7)
	// "<a href=\"https://clone.example.net/\">17/05/2024 UA-9 UA-1</a>" (holding 0)
	// "<a href=\"https://clone.example.net/\">17/05/2024 UA-9 UA-1</a>", 3 replacements
}

// randTmpl are the templates of random rules.
var randTmpl = []string{"", "-", "[$&]", "<$1>", "$2$1", "$$", "${1}0"}

// TestRandomAgainstReference: random rule sets (regexes with assertions,
// invalid-UTF-8-matching classes, empty matches, captures, once rules)
// over random bodies in random chunkings, the exact engine alone and as
// compiled, give the whole-body reference's output.
func TestRandomAgainstReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 13))
	iters := 1000
	if testing.Short() {
		iters = 100
	}
	for i := 0; i < iters; i++ {
		var rules []Rule
		for n := 1 + rng.IntN(3); n > 0; n-- {
			rules = append(rules, Rule{
				Pattern: regexgen.Pattern(rng, 3),
				Replace: randTmpl[rng.IntN(len(randTmpl))],
				Once:    rng.IntN(4) == 0,
			})
		}
		e := engines[rng.IntN(len(engines))]
		rs := compileFor(t, rules, Options{}, e)
		for j := 0; j < 5; j++ {
			body := regexgen.Body(nil, rng, 16)
			want, err := refRewrite(rules, body)
			if err != nil {
				t.Fatal(err)
			}
			chunks := cutRandom(rng, body)
			got, stats := rewrite(rs.NewStream(), chunks)
			if !bytes.Equal(got, want) || stats.Overflowed {
				t.Fatalf("rules %q chunks %q (engine %s): got %q, reference %q",
					rulesString(rules), chunks, e.name, got, want)
			}
		}
	}
}

// TestMaxNFAStates: a rule set whose automaton outgrows the budget does not
// compile; the error names the rule that took it past the budget, Check
// says the same, and a larger budget lets it compile.
func TestMaxNFAStates(t *testing.T) {
	rules := []Rule{
		{Name: "small", Pattern: "abc", Replace: "x"},
		{Name: "costly", Pattern: `(?s)t.{0,500}Z`, Replace: "y"},
		{Name: "after", Pattern: "def", Replace: "z"},
	}
	ok, err := Compile(rules, Options{})
	if err != nil {
		t.Fatal(err)
	}
	states := ok.NumStates()
	if states < 10_000 || states > DefaultMaxNFAStates {
		t.Fatalf("%d states: the test needs a rule set between 10,000 and the default budget", states)
	}
	for _, limit := range []int{states, states + 1, MaxNFAStates + 1} {
		if _, err := Compile(rules, Options{MaxNFAStates: limit}); err != nil {
			t.Errorf("limit %d (%d states needed): %v", limit, states, err)
		}
	}
	for _, limit := range []int{states - 1, 5_000, 20} {
		_, err := Compile(rules, Options{MaxNFAStates: limit})
		var rerr *RuleError
		want := 1 // "small" fits in 20 states; "costly" does not
		if !errors.As(err, &rerr) || !errors.Is(err, ErrTooBig) {
			t.Fatalf("limit %d: error %v, want a *RuleError wrapping ErrTooBig", limit, err)
		}
		if limit == states-1 {
			want = 2 // the last rule's states (or the final union) tip it over
		}
		if rerr.Index != want || rerr.Name != rules[want].Name || !strings.Contains(err.Error(), fmt.Sprint(limit)) {
			t.Errorf("limit %d: %q (rule %d), want rule %d %q and the limit named", limit, err, rerr.Index, want, rules[want].Name)
		}
		if cerr := Check(rules, Options{MaxNFAStates: limit}); cerr == nil || cerr.Error() != err.Error() {
			t.Errorf("limit %d: Check = %v, want Compile's error %q", limit, cerr, err)
		}
	}
}

// forcedRare is the rare-byte prefilter of rules whatever the rank of
// their rarest bytes, used whether or not it beats the start bytes; nil
// unless every rule is a literal (and they have at most three needles).
func forcedRare(rules []Rule) *prefilter.Prefilter {
	lits, ok := literalsOf(rules)
	if !ok {
		return nil
	}
	return prefilter.NewRare(lits, math.MaxInt)
}
