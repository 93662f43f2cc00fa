package nginximport

import (
	"errors"
	"fmt"
	"regexp/syntax"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/streamsub/streamsub/matcher"
	"github.com/streamsub/streamsub/nginxparse"
)

// module is one of the three nginx body-rewriting modules.
type module int

const (
	replaceFilter module = iota // OpenResty's replace-filter-nginx-module (sregex)
	subsFilter                  // ngx_http_substitutions_filter_module
	subFilter                   // nginx's ngx_http_sub_module
	numModules
)

func (m module) String() string {
	return [numModules]string{"replace_filter", "subs_filter", "sub_filter"}[m]
}

// rule is one rule directive translated to a streamsub rule, or the reason
// it cannot be.
type rule struct {
	dir        *nginxparse.Directive
	pattern    string
	literal    bool
	replace    string
	ignoreCase bool
	once       bool
	// problem says why the directive cannot be translated; "" when it can.
	problem string
}

func (r *rule) matcherRule() matcher.Rule {
	return matcher.Rule{Pattern: r.pattern, Literal: r.literal, Replace: r.replace, IgnoreCase: r.ignoreCase, Once: r.once}
}

// finish checks the translated rule the way the configuration loader will
// (matcher.Check, with the default automaton budget: the generated file
// sets no max_nfa_states) and records why it fails, if it does.
func (r *rule) finish() *rule {
	if r.problem != "" {
		return r
	}
	if !utf8.ValidString(r.pattern) || !utf8.ValidString(r.replace) {
		r.problem = "not valid UTF-8: streamsub configuration files are UTF-8 text"
		return r
	}
	if err := matcher.Check([]matcher.Rule{r.matcherRule()}, matcher.Options{}); err != nil {
		var re *matcher.RuleError
		if errors.As(err, &re) {
			err = re.Err
		}
		r.problem = err.Error()
	}
	return r
}

// translateReplaceFilter translates `replace_filter REGEX REPLACE [FLAGS]`:
// sregex's dialect is Perl's, with the flags s and m on as in streamsub;
// without g only the first match is replaced, i ignores case. The
// directive was checked by moduleDirective.
func translateReplaceFilter(d *nginxparse.Directive) *rule {
	r := &rule{dir: d, pattern: d.Args[0], once: true}
	if len(d.Args) == 3 {
		r.once = !strings.Contains(d.Args[2], "g")
		r.ignoreCase = strings.Contains(d.Args[2], "i")
	}
	if why, _ := perlOnly(r.pattern); why != "" {
		r.problem = why
		return r
	}
	r.replace, r.problem = replaceFilterTemplate(d.Args[1])
	return r.finish()
}

// translateSubsFilter translates `subs_filter SOURCE DEST [FLAGS]`: g (the
// default) every match, o the first only, i ignore case, r a PCRE regex
// (else a fixed string). The module compiles an i rule without r as a
// regex too, and matches `.` without line feeds (PCRE's default). Unknown
// flags are ignored, as the module does; they and the i-without-r case
// come back as warnings.
func translateSubsFilter(d *nginxparse.Directive) (r *rule, warnings []string) {
	r = &rule{dir: d}
	src := d.Args[0]
	isRegex := false
	if len(d.Args) >= 3 {
		for _, f := range []byte(d.Args[2]) {
			switch f {
			case 'g':
			case 'o':
				r.once = true
			case 'i':
				r.ignoreCase = true
			case 'r':
				isRegex = true
			default:
				warnings = append(warnings, fmt.Sprintf("subs_filter flag %q ignored (the module ignores it)", f))
			}
		}
	}
	if r.ignoreCase && !isRegex && strings.ContainsAny(src, `\.+*?()|[]{}^$`) {
		isRegex = true
		warnings = append(warnings, fmt.Sprintf("subs_filter with i but without r: the module compiles %q as a regular expression, and so is it translated", src))
	}
	switch {
	case !isRegex:
		r.pattern, r.literal = src, true
		if src == "" {
			r.problem = "empty source string"
			return r, warnings
		}
	default:
		why, dot := perlOnly(src)
		if why != "" {
			r.problem = why
			return r, warnings
		}
		r.pattern = src
		if dot { // PCRE's `.` stops at a line feed; streamsub's (flag s) does not
			r.pattern = "(?-s:" + src + ")"
		}
	}
	r.replace, r.problem = scriptTemplate(d.Args[1], isRegex)
	return r.finish(), warnings
}

// translateSubFilter translates `sub_filter STRING REPLACEMENT`: a fixed
// string matched ASCII case-insensitively, replaced once or everywhere as
// sub_filter_once says.
func translateSubFilter(d *nginxparse.Directive, once bool) *rule {
	r := &rule{dir: d, pattern: d.Args[0], literal: true, ignoreCase: true, once: once}
	if i := strings.IndexByte(r.pattern, '$'); i >= 0 {
		r.problem = fmt.Sprintf("nginx variable %s in the search string: streamsub matches fixed text", varName(r.pattern[i:]))
		return r
	}
	r.replace, r.problem = scriptTemplate(d.Args[1], false)
	return r.finish()
}

// replaceFilterTemplate checks a replace_filter replacement: $& $N ${N} $$
// mean in streamsub what they mean in replace_filter and are kept as they
// are; an nginx variable ($host, ${uri}) has no counterpart.
func replaceFilterTemplate(s string) (tmpl, problem string) {
	for i := 0; i < len(s); i++ {
		if s[i] != '$' {
			continue
		}
		rest := s[i+1:]
		switch {
		case rest == "":
			return "", "a lone $ at the end of the replacement (write $$ for a dollar sign)"
		case rest[0] == '$' || rest[0] == '&':
			i++
		case isDigit(rest[0]):
			for i+1 < len(s) && isDigit(s[i+1]) {
				i++
			}
		case rest[0] == '{':
			end := strings.IndexByte(rest, '}')
			if end < 0 || !allDigits(rest[1:end]) {
				return "", variableProblem(rest)
			}
			i += 1 + end
		case isNameByte(rest[0]):
			return "", variableProblem(rest)
		default:
			return "", fmt.Sprintf("$ followed by %q in the replacement", rest[0])
		}
	}
	return s, ""
}

// scriptTemplate translates an nginx complex value, the replacement of
// subs_filter and sub_filter: text, $1..$9 (one digit, as nginx reads it)
// for a regex rule's captures, and variables, which streamsub has not.
// nginx has no way to write a literal $, so the text needs no escaping.
func scriptTemplate(s string, captures bool) (tmpl, problem string) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' {
			b.WriteByte(s[i])
			continue
		}
		rest := s[i+1:]
		switch {
		case rest != "" && '1' <= rest[0] && rest[0] <= '9':
			if !captures {
				return "", fmt.Sprintf("$%c in the replacement of a fixed-string rule: nginx fills it from another regex (location, rewrite), streamsub cannot", rest[0])
			}
			if len(rest) > 1 && isDigit(rest[1]) {
				fmt.Fprintf(&b, "${%c}", rest[0])
			} else {
				fmt.Fprintf(&b, "$%c", rest[0])
			}
			i++
		case rest != "" && (rest[0] == '{' || isNameByte(rest[0])):
			return "", variableProblem(rest)
		default:
			return "", "a $ that starts no variable (nginx rejects it)"
		}
	}
	return b.String(), ""
}

// variableProblem explains an nginx variable at the start of rest (after
// its $).
func variableProblem(rest string) string {
	return fmt.Sprintf("nginx variable %s in the replacement: streamsub replacements are fixed text and captures", varName("$"+rest))
}

// varName returns the variable at the start of s ("$host", "${uri}").
func varName(s string) string {
	if strings.HasPrefix(s, "${") {
		if end := strings.IndexByte(s, '}'); end >= 0 {
			return s[:end+1]
		}
		return s
	}
	end := 1
	for end < len(s) && isNameByte(s[end]) {
		end++
	}
	return s[:end]
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isNameByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || isDigit(c) || c == '_'
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return s != ""
}

// perlOnly finds syntax that sregex or PCRE accept but RE2 cannot express,
// or reads otherwise, and says why; "" when there is none (RE2's own
// parser, through matcher.Check, has the last word). It also reports
// whether the regex has a `.` outside brackets.
func perlOnly(re string) (why string, dot bool) {
	inClass := false
	classStart := 0 // index of the first member of the current class
	quant := false  // the previous token was a quantifier
	for i := 0; i < len(re); i++ {
		c := re[i]
		wasQuant := quant
		quant = false
		if c == '\\' {
			if i+1 == len(re) {
				return "", dot
			}
			if why := escapeWhy(re[i:], inClass); why != "" {
				return why, dot
			}
			if re[i+1] == 'Q' { // \Q...\E quotes everything up to \E
				end := strings.Index(re[i+2:], `\E`)
				if end < 0 {
					return "", dot
				}
				i += 2 + end + 1
				continue
			}
			i++
			continue
		}
		if inClass {
			switch {
			case c == ']' && i > classStart:
				inClass = false
			case c == '[' && strings.HasPrefix(re[i:], "[:"):
				if end := strings.Index(re[i:], ":]"); end >= 0 {
					i += end + 1
				}
			}
			continue
		}
		switch c {
		case '[':
			inClass = true
			classStart = i + 1
			if classStart < len(re) && re[classStart] == '^' {
				classStart++
			}
		case '.':
			dot = true
		case '(':
			if why := groupWhy(re[i:]); why != "" {
				return why, dot
			}
			if strings.HasPrefix(re[i:], "(?") {
				i++
			}
		case '*', '+', '?':
			switch {
			case c == '+' && wasQuant:
				return "possessive quantifier (a quantifier followed by +): RE2 has none", dot
			case c == '?' && wasQuant: // the lazy mark
			default:
				quant = true
			}
		case '{':
			if end := repeatEnd(re[i:]); end > 0 {
				i += end
				quant = true
			}
		}
	}
	return "", dot
}

// perlEscapes are the escapes of sregex and PCRE that RE2 has not (or
// reads otherwise), with what they mean.
var perlEscapes = map[byte]string{
	'h': "horizontal space",
	'H': "not horizontal space",
	'v': "vertical space; in RE2 a vertical tab",
	'V': "not vertical space",
	'N': "not a line feed",
	'R': "any line break",
	'e': "the escape character",
	'c': "a control character",
	'K': "resetting the match start",
	'G': "where the previous match ended",
	'Z': "the end, or before a final line feed",
	'X': "an extended grapheme cluster",
}

// escapeWhy explains why the escape at the start of s cannot be
// translated, or returns "".
func escapeWhy(s string, inClass bool) string {
	e := s[1]
	if what, ok := perlEscapes[e]; ok {
		return fmt.Sprintf("`\\%c` (%s) is not RE2 syntax", e, what)
	}
	switch {
	case '1' <= e && e <= '9' && !inClass && (len(s) == 2 || !isDigit(s[2])):
		// \12 is octal in Perl and RE2 alike unless the regex has 12
		// groups; a single digit is a backreference.
		return fmt.Sprintf("backreference `\\%c`: RE2 has no backreferences", e)
	case (e == 'g' || e == 'k') && !inClass:
		return fmt.Sprintf("backreference `\\%c`: RE2 has no backreferences", e)
	case e == 'b' && inClass:
		return "`[\\b]` (a backspace in brackets) is not RE2 syntax"
	case e == 'o' && strings.HasPrefix(s[2:], "{"):
		return "`\\o{...}` (an octal escape) is not RE2 syntax"
	case e == 'x' && !strings.HasPrefix(s[2:], "{"):
		n := 0
		for n < 2 && 2+n < len(s) && isHex(s[2+n]) {
			n++
		}
		if n < 2 {
			return fmt.Sprintf("`\\x` with %d hex digit(s): RE2 wants two, or \\x{...}", n)
		}
	}
	return ""
}

func isHex(c byte) bool { return isDigit(c) || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

// groupWhy explains why the group opening at the start of s cannot be
// translated, or returns "".
func groupWhy(s string) string {
	for _, g := range []struct{ prefix, why string }{
		{"(?=", "look-ahead `(?=...)`: RE2 has no look-around"},
		{"(?!", "negative look-ahead `(?!...)`: RE2 has no look-around"},
		{"(?<=", "look-behind `(?<=...)`: RE2 has no look-around"},
		{"(?<!", "negative look-behind `(?<!...)`: RE2 has no look-around"},
		{"(?>", "atomic group `(?>...)`: RE2 has none"},
		{"(?|", "branch reset group `(?|...)`: RE2 has none"},
		{"(?#", "comment group `(?#...)`: RE2 has none"},
		{"(?(", "conditional group `(?(...)...)`: RE2 has none"},
		{"(?R", "recursion `(?R)`: RE2 has none"},
		{"(?&", "subroutine call `(?&name)`: RE2 has none"},
		{"(?P>", "subroutine call `(?P>name)`: RE2 has none"},
		{"(?P=", "backreference `(?P=name)`: RE2 has no backreferences"},
		{"(*", "PCRE verb `(*...)`: RE2 has none"},
	} {
		if strings.HasPrefix(s, g.prefix) {
			return g.why
		}
	}
	if len(s) > 2 && s[1] == '?' && (isDigit(s[2]) || (s[2] == '+' || s[2] == '-') && len(s) > 3 && isDigit(s[3])) {
		return "subroutine call `(?N)`: RE2 has none"
	}
	return ""
}

// repeatEnd returns the index of the } closing a counted repetition
// {n}, {n,} or {n,m} at the start of s, or 0 when s starts no repetition.
func repeatEnd(s string) int {
	i := 1
	digits := func() int {
		start := i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		return i - start
	}
	if digits() == 0 {
		return 0
	}
	if i < len(s) && s[i] == ',' {
		i++
		digits()
	}
	if i < len(s) && s[i] == '}' {
		return i
	}
	return 0
}

// canMatchNewline reports whether a translated rule could match text with
// a line feed in it (which subs_filter, working line by line, never sees).
func canMatchNewline(r *rule) bool {
	if r.literal {
		return strings.Contains(r.pattern, "\n")
	}
	re, err := syntax.Parse(r.pattern, syntax.Perl&^syntax.OneLine|syntax.DotNL)
	if err != nil {
		return false
	}
	var walk func(*syntax.Regexp) bool
	walk = func(re *syntax.Regexp) bool {
		switch re.Op {
		case syntax.OpAnyChar:
			return true
		case syntax.OpLiteral:
			for _, c := range re.Rune {
				if c == '\n' {
					return true
				}
			}
		case syntax.OpCharClass:
			for i := 0; i+1 < len(re.Rune); i += 2 {
				if re.Rune[i] <= '\n' && '\n' <= re.Rune[i+1] {
					return true
				}
			}
		}
		for _, sub := range re.Sub {
			if walk(sub) {
				return true
			}
		}
		return false
	}
	return walk(re)
}

// foldsBeyondASCII reports whether case-insensitive matching as Go does it
// (simple Unicode folding: k also matches the Kelvin sign, s the long s,
// é matches É) could match something ASCII-only folding, nginx's, does not.
func foldsBeyondASCII(s string) bool {
	for _, c := range s {
		if c >= utf8.RuneSelf {
			if unicode.SimpleFold(c) != c {
				return true
			}
			continue
		}
		for f := unicode.SimpleFold(c); f != c; f = unicode.SimpleFold(f) {
			if f >= utf8.RuneSelf {
				return true
			}
		}
	}
	return false
}
