// Package goregexp is the "Go regexp" baseline that streamsub's rewriter is
// measured against: a whole-body rewriter that compiles a rule set into ONE
// Go regexp, the alternation (r0)|(r1)|… in declaration order, and replaces
// with a single FindAllSubmatchIndex pass (what ReplaceAllFunc does inside).
//
// It follows semantics.md as far as Go allows: leftmost-first across rules,
// flags s and m on, once-rules that keep shadowing, $-templates. Empty
// matches follow Go's FindAll rules (no empty match right after a match),
// which differ from semantics.md; the benchmark workloads have none.
package goregexp

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/streamsub/streamsub/matcher"
)

// Rewriter is a compiled baseline rule set. It is safe for concurrent use.
type Rewriter struct {
	re    *regexp.Regexp
	rules []rule
}

type rule struct {
	group    int    // index of the rule's outer group in the combined regexp
	template string // Replace rewritten for Expand on the combined regexp
	once     bool
}

// Compile builds the combined regexp for rules.
func Compile(rules []matcher.Rule) (*Rewriter, error) {
	var sb strings.Builder
	rw := &Rewriter{}
	group := 1
	for i, r := range rules {
		pat := r.Pattern
		if r.Literal {
			pat = regexp.QuoteMeta(pat)
		}
		flags := "(?sm"
		if r.IgnoreCase {
			flags += "i"
		}
		flags += ":"
		sub, err := regexp.Compile(flags + pat + ")")
		if err != nil {
			return nil, fmt.Errorf("rule %d: %w", i, err)
		}
		tmpl, err := convertTemplate(r.Replace, group, sub.NumSubexp(), sub.SubexpNames())
		if err != nil {
			return nil, fmt.Errorf("rule %d: %w", i, err)
		}
		if i > 0 {
			sb.WriteByte('|')
		}
		sb.WriteString("(" + flags + pat + "))")
		rw.rules = append(rw.rules, rule{group: group, template: tmpl, once: r.Once})
		group += 1 + sub.NumSubexp()
	}
	re, err := regexp.Compile(sb.String())
	if err != nil {
		return nil, fmt.Errorf("combined rule set: %w", err)
	}
	rw.re = re
	return rw, nil
}

// convertTemplate rewrites a streamsub template ($& $0 $N ${N} ${name} $$)
// into an Expand template over the combined regexp, whose groups of this
// rule start at base.
func convertTemplate(t string, base, ngroups int, names []string) (string, error) {
	var sb strings.Builder
	ref := func(n int) {
		if n <= ngroups {
			sb.WriteString("${" + strconv.Itoa(base+n) + "}")
		}
	}
	for i := 0; i < len(t); i++ {
		c := t[i]
		if c != '$' {
			sb.WriteByte(c)
			continue
		}
		if i+1 >= len(t) {
			return "", fmt.Errorf("template %q: trailing $", t)
		}
		i++
		switch c = t[i]; {
		case c == '$':
			sb.WriteString("$$")
		case c == '&':
			ref(0)
		case c >= '0' && c <= '9':
			j := i
			for j < len(t) && t[j] >= '0' && t[j] <= '9' {
				j++
			}
			n, _ := strconv.Atoi(t[i:j])
			ref(n)
			i = j - 1
		case c == '{':
			j := strings.IndexByte(t[i:], '}')
			if j < 0 {
				return "", fmt.Errorf("template %q: unclosed ${", t)
			}
			name := t[i+1 : i+j]
			if n, err := strconv.Atoi(name); err == nil {
				ref(n)
			} else {
				for k, nm := range names {
					if nm == name && nm != "" {
						ref(k)
					}
				}
			}
			i += j
		default:
			return "", fmt.Errorf("template %q: bad $ escape", t)
		}
	}
	return sb.String(), nil
}

// Rewrite appends the rewritten body to dst and returns it.
func (rw *Rewriter) Rewrite(dst, body []byte) []byte {
	fired := make([]bool, len(rw.rules))
	last := 0
	for _, m := range rw.re.FindAllSubmatchIndex(body, -1) {
		ri := 0
		for ri < len(rw.rules) && m[2*rw.rules[ri].group] < 0 {
			ri++
		}
		r := rw.rules[ri]
		dst = append(dst, body[last:m[0]]...)
		if r.once && fired[ri] {
			dst = append(dst, body[m[0]:m[1]]...)
		} else {
			fired[ri] = true
			dst = rw.re.Expand(dst, []byte(r.template), body, m)
		}
		last = m[1]
	}
	return append(dst, body[last:]...)
}
