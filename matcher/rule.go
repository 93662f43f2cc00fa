package matcher

import (
	"fmt"
	"strconv"

	"github.com/streamsub/streamsub/matcher/internal/lazydfa"
)

// DefaultMaxBufferedBytes is the default cap on bytes a Stream may hold back
// while a match is pending (semantics.md "Streaming").
const DefaultMaxBufferedBytes = 64 << 10

// DefaultDFACacheBytes is the default memory budget of each lazy DFA cache
// (Options.DFACacheBytes); MinDFACacheBytes and MaxDFACacheBytes bound the
// budgets a configuration may ask for. MinDFACacheBytes is room for a few
// states; Compile raises smaller budgets to it.
const (
	DefaultDFACacheBytes = lazydfa.DefaultCacheBytes
	MinDFACacheBytes     = 4 << 10
	MaxDFACacheBytes     = 256 << 20
)

// Rule is one find-and-replace rule of a rule set.
type Rule struct {
	// Name is used in errors, logs and metrics; when empty the rule's index is used.
	Name string
	// Pattern is a regular expression in RE2 syntax (flags s and m on by
	// default), or the bytes to match exactly when Literal is set.
	Pattern string
	Literal bool
	// Replace is the replacement template ($& $0 $N ${N} ${name} $$).
	Replace string
	// IgnoreCase matches case-insensitively, as Go's (?i).
	IgnoreCase bool
	// Once replaces only the first match of this rule in a body; later
	// matches are copied through unchanged but still shadow other rules.
	Once bool
}

// Options tune a compiled RuleSet.
type Options struct {
	// MaxBufferedBytes caps the bytes a Stream holds back; 0 means
	// DefaultMaxBufferedBytes.
	MaxBufferedBytes int
	// DFACacheBytes is the memory budget of each lazy DFA cache of the fast
	// path (a Stream uses two); 0 means DefaultDFACacheBytes, and a budget
	// below MinDFACacheBytes is raised to it.
	DFACacheBytes int
}

// RuleError reports a rule that cannot be compiled. It names the culprit.
type RuleError struct {
	Set   string // rule set name, filled in by callers that know it
	Kind  string // what the rule is for messages ("header rule"); "rule" when empty. Filled in by callers
	Index int    // position of the rule in its set
	Name  string // the rule's name, if any
	Err   error  // e.g. a *syntax.Error or a template error
}

func (e *RuleError) Error() string {
	kind := e.Kind
	if kind == "" {
		kind = "rule"
	}
	who := kind + " " + strconv.Itoa(e.Index)
	if e.Name != "" {
		who += fmt.Sprintf(" (%q)", e.Name)
	}
	if e.Set != "" {
		who = fmt.Sprintf("rule set %q: %s", e.Set, who)
	}
	return who + ": " + e.Err.Error()
}

func (e *RuleError) Unwrap() error { return e.Err }
