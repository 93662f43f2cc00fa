// Package nfatest builds NFAs from patterns for the tests of the packages
// that run them (engines, prefilter). Only tests use it.
package nfatest

import (
	"regexp/syntax"
	"testing"

	"github.com/streamsub/streamsub/matcher/internal/nfa"
)

// Flags are the parse flags of the rewriter's regex rules (package
// matcher): Perl syntax, `.` matches '\n', ^ and $ are multi-line.
const Flags = syntax.Perl&^syntax.OneLine | syntax.DotNL

// New returns the NFA of patterns, one rule each in order, parsed with
// Flags; it fails tb on an error.
func New(tb testing.TB, patterns ...string) *nfa.NFA {
	tb.Helper()
	flags := make([]syntax.Flags, len(patterns))
	for i := range flags {
		flags[i] = Flags
	}
	return NewFlags(tb, patterns, flags)
}

// NewFlags is New with the parse flags of each pattern given.
func NewFlags(tb testing.TB, patterns []string, flags []syntax.Flags) *nfa.NFA {
	tb.Helper()
	res := make([]*syntax.Regexp, len(patterns))
	for i, p := range patterns {
		re, err := syntax.Parse(p, flags[i])
		if err != nil {
			tb.Fatalf("parse %q: %v", p, err)
		}
		res[i] = re
	}
	n, err := nfa.New(res)
	if err != nil {
		tb.Fatalf("nfa.New(%q): %v", patterns, err)
	}
	return n
}
