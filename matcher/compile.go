package matcher

import (
	"errors"
	"fmt"
	"regexp/syntax"
	"sync"

	"github.com/streamsub/streamsub/matcher/internal/lazydfa"
	"github.com/streamsub/streamsub/matcher/internal/nfa"
	"github.com/streamsub/streamsub/matcher/internal/pikevm"
	"github.com/streamsub/streamsub/matcher/internal/prefilter"
)

// Parse flags (semantics.md "Rules"): Perl syntax with `.` matching '\n'
// (s) and multi-line ^ $ (m); \A \z are the body's edges. Inline (?-s)
// and (?-m) still work.
const (
	regexFlags   = syntax.Perl&^syntax.OneLine | syntax.DotNL
	literalFlags = syntax.Literal
)

// errEmptyLiteral rejects a literal rule with no bytes: it would match the
// empty string everywhere, which is never what a literal rule means.
var errEmptyLiteral = errors.New("empty literal pattern")

// RuleSet is a compiled, ordered rule set. It is immutable after Compile and
// safe for concurrent use by any number of Streams.
type RuleSet struct {
	rules     []Rule
	tmpls     []*template
	nfa       *nfa.NFA
	prog      *pikevm.Prog // exact engine, shared by the streams
	maxBuffer int          // resolved Options.MaxBufferedBytes
	maxSpan   int64        // bytes a pending match may span within one chunk (see maxSpanFor)
	allOnce   bool         // every rule is a once rule (then all fired = pass-through)

	fast *fastPath // lazy-DFA fast path (fastpath.go); nil if not eligible

	values sync.Pool // *Stream for RewriteValue (value.go)
}

// Compile compiles rules, in declaration order, into a RuleSet. A rule that
// cannot be compiled (bad syntax, bad template, empty literal) is reported
// as a *RuleError naming it; its Err is the *syntax.Error (which names the
// offending expression) or a *TemplateError.
func Compile(rules []Rule, opts Options) (*RuleSet, error) {
	rs := &RuleSet{
		rules:     append([]Rule(nil), rules...),
		tmpls:     make([]*template, len(rules)),
		maxBuffer: opts.MaxBufferedBytes,
		allOnce:   true,
	}
	if rs.maxBuffer <= 0 {
		rs.maxBuffer = DefaultMaxBufferedBytes
	}
	rs.maxSpan = maxSpanFor(rs.maxBuffer)
	for _, r := range rules {
		rs.allOnce = rs.allOnce && r.Once
	}
	n, err := compileNFA(rules, rs.tmpls, opts.maxNFAStates())
	if err != nil {
		return nil, err
	}
	rs.nfa = n
	rs.prog = pikevm.NewProg(n)
	cacheBytes := opts.DFACacheBytes
	if cacheBytes > 0 {
		cacheBytes = max(cacheBytes, MinDFACacheBytes)
	}
	rs.fast = newFastPath(n, int(rs.maxSpan), lazydfa.Config{CacheBytes: cacheBytes, Rare: rarePrefilter(rules, n, prefilter.RareEnough)})
	return rs, nil
}

// rarePrefilter returns the rare-byte prefilter of rules (prefilter.NewRare
// with maxRank) when every rule is a literal and it skips more than the
// start bytes of n would; else nil.
func rarePrefilter(rules []Rule, n *nfa.NFA, maxRank int) *prefilter.Prefilter {
	lits, ok := literalsOf(rules)
	if !ok {
		return nil
	}
	p := prefilter.NewRare(lits, maxRank)
	if p == nil || !p.Rarer(prefilter.New(prefilter.StartBytes(n))) {
		return nil
	}
	return p
}

// literalsOf returns the literals of rules, for prefilter.NewRare; false
// when some rule is not a literal.
func literalsOf(rules []Rule) ([]prefilter.Literal, bool) {
	lits := make([]prefilter.Literal, len(rules))
	for i, r := range rules {
		if !r.Literal {
			return nil, false
		}
		lits[i] = prefilter.Literal{Bytes: []byte(r.Pattern), Fold: r.IgnoreCase}
	}
	return lits, true
}

// Check reports what Compile with opts would reject in rules — the same
// errors — without building the matching engines: a cheap way to validate
// rules one at a time (the configuration loader does, to name each bad
// rule). Of opts, only MaxNFAStates matters.
func Check(rules []Rule, opts Options) error {
	_, err := compileNFA(rules, make([]*template, len(rules)), opts.maxNFAStates())
	return err
}

// compileNFA parses rules and their templates (into tmpls) and builds the
// rule set's NFA of at most maxStates states.
func compileNFA(rules []Rule, tmpls []*template, maxStates int) (*nfa.NFA, error) {
	res := make([]*syntax.Regexp, len(rules))
	for i, r := range rules {
		re, err := parseRule(r)
		if err == nil {
			tmpls[i], err = parseTemplate(r.Replace, re.CapNames())
		}
		if err != nil {
			return nil, &RuleError{Index: i, Name: r.Name, Err: err}
		}
		res[i] = re
	}
	n, err := nfa.NewLimited(res, maxStates)
	if tb, ok := err.(*nfa.TooBigError); ok {
		return nil, &RuleError{Index: tb.Rule, Name: rules[tb.Rule].Name,
			Err: fmt.Errorf("%w: more than %d states (max_nfa_states) with this rule", ErrTooBig, tb.Limit)}
	}
	if err != nil {
		return nil, fmt.Errorf("matcher: compiling %d rules: %w", len(rules), err)
	}
	return n, nil
}

// NumStates returns the number of states of rs's automaton, the size that
// Options.MaxNFAStates bounds.
func (rs *RuleSet) NumStates() int { return rs.nfa.Len() }

func parseRule(r Rule) (*syntax.Regexp, error) {
	flags := syntax.Flags(regexFlags)
	if r.Literal {
		if r.Pattern == "" {
			return nil, errEmptyLiteral
		}
		flags = literalFlags
	}
	if r.IgnoreCase {
		flags |= syntax.FoldCase
	}
	return syntax.Parse(r.Pattern, flags)
}

// maxSpanFor returns how many bytes live threads may span at any position
// for a hold-back cap: the cap itself is checked at the end of each chunk
// (what stays held), as replace_filter does, so a match may be longer than
// the cap when it is decided inside one chunk. This second limit keeps the
// re-scan after a match bounded (semantics.md "Streaming": linear time).
func maxSpanFor(maxBuffer int) int64 {
	return int64(max(2*maxBuffer, DefaultMaxBufferedBytes))
}
