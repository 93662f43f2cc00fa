package nginximport

import (
	"strings"
	"testing"

	"github.com/streamsub/streamsub/nginxparse"
)

func TestPerlOnly(t *testing.T) {
	tests := []struct {
		re  string
		why string // substring of the reason; "" = translatable
		dot bool
	}{
		{`\d+\s\w\b[a-z]`, "", false},
		{`a.b`, "", true},
		{`[.]\.`, "", false},
		{`\Q.\E`, "", false},
		{`(\w+) \1`, "backreference `\\1`", false},
		{`\g{1}`, "backreference `\\g`", false},
		{`\k<n>`, "backreference `\\k`", false},
		{`(?P=n)`, "backreference `(?P=name)`", false},
		{`[\1]`, "", false}, // octal in Perl; RE2's parser has the last word
		{`a\12`, "", false}, // octal in Perl and RE2 (fewer than 12 groups)
		{`a(?=b)`, "look-ahead", false},
		{`a(?!b)`, "negative look-ahead", false},
		{`(?<=a)b`, "look-behind", false},
		{`(?<!a)b`, "negative look-behind", false},
		{`(?<name>a)(?P<x>b)(?:c)(?i)d`, "", false},
		{`(?>a+)`, "atomic group", false},
		{`a++`, "possessive", false},
		{`a*+`, "possessive", false},
		{`a?+`, "possessive", false},
		{`a{2,3}+`, "possessive", false},
		{`a+?b*?c??d{2}?`, "", false},
		{`a{,2}+`, "", false}, // no repetition in RE2 or sregex: literal text
		{`\h`, "`\\h` (horizontal space)", false},
		{`\H`, "`\\H`", false},
		{`\v`, "in RE2 a vertical tab", false},
		{`\V`, "`\\V`", false},
		{`\N`, "`\\N` (not a line feed)", false},
		{`\R`, "`\\R`", false},
		{`\e`, "`\\e` (the escape character)", false},
		{`\cA`, "`\\c` (a control character)", false},
		{`\o{101}`, "`\\o{...}`", false},
		{`\K\G\Z`, "`\\K`", false},
		{`\Z`, "`\\Z` (the end, or before a final line feed)", false},
		{`[\b]`, "backspace in brackets", false},
		{`\xD`, "`\\x` with 1 hex digit", false},
		{`\xDDa\x{1F600}`, "", false},
		{`[[:alpha:]]]`, "", false},
		{`[]a]`, "", false},
		{`[^]\h]`, "`\\h`", false},
		{`(?#note)`, "comment group", false},
		{`(?(1)a|b)`, "conditional", false},
		{`(?R)`, "recursion", false},
		{`(?1)`, "subroutine call", false},
		{`(?-1)`, "subroutine call", false},
		{`(?-i:a)`, "", false},
		{`(*UTF8)a`, "PCRE verb", false},
	}
	for _, tc := range tests {
		why, dot := perlOnly(tc.re)
		if tc.why == "" && why != "" || tc.why != "" && !strings.Contains(why, tc.why) || dot != tc.dot {
			t.Errorf("perlOnly(%q) = %q, %v; want %q, %v", tc.re, why, dot, tc.why, tc.dot)
		}
	}
}

func TestReplaceFilterTemplate(t *testing.T) {
	tests := []struct{ in, want, problem string }{
		{`[$&]($1)${2}$10$$x$0`, `[$&]($1)${2}$10$$x$0`, ""},
		{`plain text`, `plain text`, ""},
		{`https://$host/`, "", "nginx variable $host"},
		{`${uri}`, "", "nginx variable ${uri}"},
		{`a$`, "", "a lone $ at the end"},
		{`a$-`, "", `$ followed by '-'`},
	}
	for _, tc := range tests {
		got, problem := replaceFilterTemplate(tc.in)
		if got != tc.want || !strings.Contains(problem, tc.problem) || tc.problem == "" && problem != "" {
			t.Errorf("replaceFilterTemplate(%q) = %q, %q; want %q, %q", tc.in, got, problem, tc.want, tc.problem)
		}
	}
}

func TestScriptTemplate(t *testing.T) {
	tests := []struct {
		in       string
		captures bool
		want     string
		problem  string
	}{
		{`$1-$2.x`, true, `$1-$2.x`, ""},
		{`$12`, true, `${1}2`, ""}, // nginx reads one digit
		{`a{b}c`, false, `a{b}c`, ""},
		{`$1`, false, "", "fixed-string rule"},
		{`$host`, true, "", "nginx variable $host"},
		{`${host}s`, true, "", "nginx variable ${host}"},
		{`$0`, true, "", "nginx variable $0"},
		{`cost $`, true, "", "starts no variable"},
	}
	for _, tc := range tests {
		got, problem := scriptTemplate(tc.in, tc.captures)
		if got != tc.want || !strings.Contains(problem, tc.problem) || tc.problem == "" && problem != "" {
			t.Errorf("scriptTemplate(%q, %v) = %q, %q; want %q, %q", tc.in, tc.captures, got, problem, tc.want, tc.problem)
		}
	}
}

func dir(name string, args ...string) *nginxparse.Directive {
	return &nginxparse.Directive{Name: name, Args: args, Pos: nginxparse.Pos{File: "t.conf", Line: 1}}
}

func TestTranslateRules(t *testing.T) {
	tests := []struct {
		name string
		r    *rule
		want rule // dir not compared
		warn string
	}{
		{"replace_filter once", translateReplaceFilter(dir("replace_filter", `\d+`, "N")), rule{pattern: `\d+`, replace: "N", once: true}, ""},
		{"replace_filter gi", translateReplaceFilter(dir("replace_filter", `a`, "$&", "ig")), rule{pattern: "a", replace: "$&", ignoreCase: true}, ""},
		{"replace_filter RE2 rejects", translateReplaceFilter(dir("replace_filter", `(a`, "b")),
			rule{pattern: "(a", replace: "b", once: true, problem: "error parsing regexp: missing closing ): `(a`"}, ""},
		{"sub_filter", translateSubFilter(dir("sub_filter", "A.b", "c"), true), rule{pattern: "A.b", literal: true, replace: "c", ignoreCase: true, once: true}, ""},
		{"sub_filter_once off", translateSubFilter(dir("sub_filter", "a", "b"), false), rule{pattern: "a", literal: true, replace: "b", ignoreCase: true}, ""},
		{"sub_filter variable", translateSubFilter(dir("sub_filter", "a", "$uri"), false),
			rule{pattern: "a", literal: true, ignoreCase: true, problem: "nginx variable $uri"}, ""},
	}
	for _, subs := range []struct {
		args []string
		want rule
		warn string
	}{
		{[]string{"a.b", "c"}, rule{pattern: "a.b", literal: true, replace: "c"}, ""},
		{[]string{"a", "b", "o"}, rule{pattern: "a", literal: true, replace: "b", once: true}, ""},
		{[]string{"ab", "c", "i"}, rule{pattern: "ab", literal: true, replace: "c", ignoreCase: true}, ""},
		{[]string{"a.b", "c", "i"}, rule{pattern: "(?-s:a.b)", replace: "c", ignoreCase: true}, "compiles \"a.b\" as a regular expression"},
		{[]string{"(a).", "$1", "gr"}, rule{pattern: "(?-s:(a).)", replace: "$1"}, ""},
		{[]string{`\s+`, "", "r"}, rule{pattern: `\s+`}, ""},
		{[]string{"a", "b", "x"}, rule{pattern: "a", literal: true, replace: "b"}, "flag 'x' ignored"},
		{[]string{"", "b"}, rule{literal: true, problem: "empty source string"}, ""},
	} {
		r, warnings := translateSubsFilter(dir("subs_filter", subs.args...))
		tests = append(tests, struct {
			name string
			r    *rule
			want rule
			warn string
		}{"subs_filter " + strings.Join(subs.args, " "), r, subs.want, strings.Join(warnings, "; ") + "|" + subs.warn})
	}
	for _, tc := range tests {
		got := *tc.r
		got.dir = nil
		if !strings.Contains(got.problem, tc.want.problem) || tc.want.problem == "" && got.problem != "" {
			t.Errorf("%s: problem %q, want %q", tc.name, got.problem, tc.want.problem)
		}
		got.problem, tc.want.problem = "", ""
		if got != tc.want {
			t.Errorf("%s: got %+v, want %+v", tc.name, got, tc.want)
		}
		if warnings, want, ok := strings.Cut(tc.warn, "|"); ok && (want == "" && warnings != "" || !strings.Contains(warnings, want)) {
			t.Errorf("%s: warnings %q, want %q", tc.name, warnings, want)
		}
	}
}

func TestCanMatchNewline(t *testing.T) {
	tests := []struct {
		r    rule
		want bool
	}{
		{rule{pattern: `\s+</p>`}, true},
		{rule{pattern: `[^a]`}, true},
		{rule{pattern: `(?-s:a.b)`}, false},
		{rule{pattern: `a.b`}, true},
		{rule{pattern: `[ \t]+$`}, false},
		{rule{pattern: "a\nb", literal: true}, true},
		{rule{pattern: "a.b", literal: true}, false},
	}
	for _, tc := range tests {
		if got := canMatchNewline(&tc.r); got != tc.want {
			t.Errorf("canMatchNewline(%+v) = %v, want %v", tc.r, got, tc.want)
		}
	}
}

func TestFoldsBeyondASCII(t *testing.T) {
	tests := []struct {
		s    string
		want bool
	}{
		{"</head>", false},
		{"Example Corporation", false},
		{"kiss", true}, // K (U+212A), ſ (U+017F)
		{"BOOK", true},
		{"café", true},
		{"123-€", false},
	}
	for _, tc := range tests {
		if got := foldsBeyondASCII(tc.s); got != tc.want {
			t.Errorf("foldsBeyondASCII(%q) = %v, want %v", tc.s, got, tc.want)
		}
	}
}

func TestOverlap(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"abc", "cde", true},
		{"cde", "abc", true},
		{"example", "an example here", true},
		{"abc", "xyz", false},
		{"abc", "bcx", true},
		{"aa", "b", false},
	}
	for _, tc := range tests {
		if got := overlap(tc.a, tc.b); got != tc.want {
			t.Errorf("overlap(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestParseSize(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"512", 512, true},
		{"8k", 8 << 10, true},
		{"16K", 16 << 10, true},
		{"1m", 1 << 20, true},
		{"0", 0, true},
		{"", 0, false},
		{"k", 0, false},
		{"-1", 0, false},
		{"+1", 0, false},
		{"1.5k", 0, false},
		{"99999999999g", 0, false},
	}
	for _, tc := range tests {
		got, err := parseSize(tc.in)
		if got != tc.want || (err == nil) != tc.ok {
			t.Errorf("parseSize(%q) = %d, %v; want %d, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func TestHostPatterns(t *testing.T) {
	tests := []struct {
		in   string
		want string // patterns joined by space
		why  string
	}{
		{"Example.COM.", "example.com", ""},
		{".example.com", "example.com *.example.com", ""},
		{"*.example.com", "*.example.com", ""},
		{"[::1]", "[::1]", ""},
		{"_", "", ""},
		{"", "", ""},
		{"www.example.*", "", "a wildcard at the end"},
		{"~^www\\d+\\.example\\.com$", "", "a regular expression"},
		{"$hostname", "", "a variable"},
		{"a..b", "", "not a host name"},
		{"a b", "", "not a host name"},
		{"*.", "", "not a host name"},
	}
	for _, tc := range tests {
		got, why := hostPatterns(tc.in)
		if strings.Join(got, " ") != tc.want || why != tc.why {
			t.Errorf("hostPatterns(%q) = %q, %q; want %q, %q", tc.in, got, why, tc.want, tc.why)
		}
	}
}

func TestMeet(t *testing.T) {
	lit := func(pattern, replace string) *rule { return &rule{pattern: pattern, replace: replace, literal: true} }
	tests := []struct {
		first, second *rule
		want          int
	}{
		{lit("http://a.example", "https://a.example"), lit("cdn.example", "cdn.clone"), meetNever},
		{lit("abc", "x"), lit("bcd", "y"), meetMatches}, // "abcd"
		{lit("abc", "x"), lit("b", "y"), meetMatches},   // contained
		{lit("ABC", "x"), lit("cde", "y"), meetMatches}, // case is ignored
		{lit("a", "bc"), lit("cd", "y"), meetOutput},    // "a" + "d" → "bcd"
		{lit("a", "Xb"), lit("xbz", "y"), meetOutput},   // contains a replacement's end
		{lit("b", ""), lit("ac", "y"), meetOutput},      // "abc" → "ac"
		{lit("a", "b"), lit("c", "d"), meetNever},
		{lit("http", "https"), lit("tps", "x"), meetMatches}, // "https" has both
		{lit("http", "https"), lit("s:/", "x"), meetOutput},
	}
	for _, tc := range tests {
		if got := meet(tc.first, tc.second); got != tc.want {
			t.Errorf("meet(%q→%q, %q→%q) = %d, want %d", tc.first.pattern, tc.first.replace, tc.second.pattern, tc.second.replace, got, tc.want)
		}
	}
}
