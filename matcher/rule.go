package matcher

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/streamsub/streamsub/matcher/internal/lazydfa"
	"github.com/streamsub/streamsub/matcher/internal/nfa"
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

// DefaultMaxNFAStates is the default size budget of a rule set's automaton
// (Options.MaxNFAStates), as RE2's max_mem is of a regex: compiling costs
// time and memory in proportion to it, and so can rewriting a body when the
// fast path cannot take it. The repository's largest rule set (an e2e test's
// deliberately costly one) has about 18,000 states; 10,000 literal rules
// about 99,000. MaxNFAStates is the most a configuration may ask for.
const (
	DefaultMaxNFAStates = 200_000
	MaxNFAStates        = nfa.MaxStates
)

// ErrTooBig is the error a *RuleError wraps when a rule set's automaton
// would exceed Options.MaxNFAStates; the RuleError names the rule that took
// it past the budget.
var ErrTooBig = errors.New("the rule set's automaton is too big")

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
	// MaxNFAStates caps the states of the rule set's automaton (the
	// alternation of all its rules); 0 means DefaultMaxNFAStates, and more
	// than MaxNFAStates is MaxNFAStates. A rule set over it does not
	// compile: ErrTooBig, in a *RuleError naming the rule that reached it.
	MaxNFAStates int
}

// maxNFAStates resolves o.MaxNFAStates.
func (o Options) maxNFAStates() int {
	if o.MaxNFAStates <= 0 {
		return DefaultMaxNFAStates
	}
	return min(o.MaxNFAStates, MaxNFAStates)
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
