// Package headerrewrite rewrites HTTP header values with a rule set, each
// value whole (matcher.RuleSet.RewriteValue: the body semantics of
// semantics.md, a once rule firing at most once per value), and refuses a
// result that is not safe to send: one that carries CR, LF or NUL (which
// would split or end the header block) or is longer than a limit.
//
// It knows header names and values, nothing of Envoy, gRPC or the
// configuration file: the config package builds Rewriters, the processor
// applies them to ext_proc header lists and `streamsub apply -header` to the
// command line. A Rewriter is immutable and safe for concurrent use.
package headerrewrite

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/streamsub/streamsub/matcher"
)

// DefaultResponseHeaders are the response headers whose values a rule set
// rewrites when it names none: the ones that carry the origin's URLs and
// host.
var DefaultResponseHeaders = []string{
	"location", "content-location", "refresh", "link", "set-cookie",
	"content-security-policy", "content-security-policy-report-only",
	"access-control-allow-origin",
}

// DefaultRequestHeaders are the request headers a rule set's request-header
// rules rewrite when it names none: the ones an origin checks against its
// own host (CSRF, referer checks).
var DefaultRequestHeaders = []string{"referer", "origin"}

// DefaultMaxValueBytes is the default limit on a rewritten header value.
const DefaultMaxValueBytes = 8 << 10

// forbidden are the bytes a header value may never carry: CR and LF end
// the field (or inject another), NUL ends it in C implementations.
const forbidden = "\r\n\x00"

// Reject says why a rewritten value is not used; Accepted ("") when it is.
// The values are metric label tokens
// (streamsub_header_rewrites_rejected_total{reason}).
type Reject string

const (
	Accepted      Reject = ""
	ForbiddenByte Reject = "forbidden_byte" // the result carries CR, LF or NUL
	TooLong       Reject = "too_long"       // the result is longer than the limit
)

// Rejects lists every Reject but Accepted, for metric labels.
var Rejects = []Reject{ForbiddenByte, TooLong}

// Rewriter rewrites the values of a set of header names with one rule set.
type Rewriter struct {
	names    []string // lower case, in the order given, without duplicates
	set      *matcher.HeaderSet
	rules    *matcher.RuleSet
	maxValue int
}

// New returns a Rewriter of the values of the headers called names (any
// case) with rules; maxValueBytes limits a rewritten value (0 means
// DefaultMaxValueBytes).
func New(names []string, rules *matcher.RuleSet, maxValueBytes int) *Rewriter {
	rw := &Rewriter{rules: rules, maxValue: maxValueBytes}
	if rw.maxValue <= 0 {
		rw.maxValue = DefaultMaxValueBytes
	}
	for _, n := range names {
		n = strings.ToLower(n)
		if !contains(rw.names, n) {
			rw.names = append(rw.names, n)
		}
	}
	rw.set = matcher.NewHeaderSet(rw.names, nil)
	return rw
}

func contains(names []string, n string) bool {
	for _, m := range names {
		if m == n {
			return true
		}
	}
	return false
}

// Names returns the lower-case header names rw rewrites.
func (rw *Rewriter) Names() []string { return append([]string(nil), rw.names...) }

// Rules returns the rule set rw rewrites with.
func (rw *Rewriter) Rules() *matcher.RuleSet { return rw.rules }

// MaxValueBytes returns the limit on a rewritten value.
func (rw *Rewriter) MaxValueBytes() int { return rw.maxValue }

// Applies reports whether rw rewrites the header called name (any case).
func (rw *Rewriter) Applies(name string) bool { return rw.set.Contains(name) }

// Rewrite rewrites one value of a header that rw applies to. When rules
// replaced something and the result is safe, it appends the result to dst
// and returns it with the number of replacements n > 0 and Accepted.
// Otherwise dst is returned as it was: with n == 0 nothing matched; with a
// Reject the result (of n replacements) is refused and the original value
// must stay.
func (rw *Rewriter) Rewrite(dst, value []byte) (out []byte, n int, reject Reject) {
	start := len(dst)
	out, n = rw.rules.RewriteValue(dst, value)
	switch v := out[start:]; {
	case n == 0:
	case bytes.IndexAny(v, forbidden) >= 0:
		reject = ForbiddenByte
	case len(v) > rw.maxValue:
		reject = TooLong
	default:
		return out, n, Accepted
	}
	return out[:start], n, reject
}

// CheckTemplate reports a replacement template whose literal text holds a
// byte that a header value may never carry (CR, LF, NUL): such a rule would
// produce it from every match. (Bytes a template copies from the match come
// from the value itself; Rewrite refuses those results at run time.) The
// configuration loader wraps the error in a matcher.RuleError naming the
// rule.
func CheckTemplate(replace string) error {
	if i := strings.IndexAny(replace, forbidden); i >= 0 {
		return fmt.Errorf("replacement template %q: byte %q at offset %d is not allowed in a header value", replace, replace[i], i)
	}
	return nil
}
