package config

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/streamsub/streamsub/headerrewrite"
	"github.com/streamsub/streamsub/matcher"
)

// Config is a checked and compiled configuration. Build one with New; it
// is immutable after that and safe for concurrent use.
type Config struct {
	// Source names where the configuration came from (a file name), for
	// messages; it may be empty.
	Source string
	// RuleSets in declaration order; the first is the default when Hosts
	// is empty. Never empty.
	RuleSets []*RuleSet
	// MaxBufferedBytes is the hold-back cap each rule set is compiled with
	// (matcher.Options.MaxBufferedBytes); New turns 0 into
	// matcher.DefaultMaxBufferedBytes.
	MaxBufferedBytes int
	// DFACacheBytes is the lazy DFA cache budget each rule set is compiled
	// with (matcher.Options.DFACacheBytes); New turns 0 into
	// matcher.DefaultDFACacheBytes.
	DFACacheBytes int
	// MaxHeaderValueBytes limits a rewritten header value (longer results
	// are refused, the original stays); New turns 0 into
	// headerrewrite.DefaultMaxValueBytes.
	MaxHeaderValueBytes int
	// MaxNFAStates is the size budget of each rule set's automaton
	// (matcher.Options.MaxNFAStates); New turns 0 into
	// matcher.DefaultMaxNFAStates.
	MaxNFAStates int
	// RequestHeaders and ResponseHeaders are the internal headers to strip;
	// nil for none.
	RequestHeaders, ResponseHeaders *matcher.HeaderSet
	// Hosts maps host patterns to rule set names: "host", "*.suffix" (any
	// host strictly below suffix) or "*" (every other host), in lower case
	// without a trailing dot; nil for none. Read-only.
	Hosts map[string]string
	// Shadows maps the name of a live rule set to the name of its shadow
	// rule set (see Shadow); nil for none. Read-only.
	Shadows map[string]string
	// ShadowSample is the fraction of a live rule set's responses that its
	// shadow also processes, in (0, 1]; New turns 0 into 1.
	ShadowSample float64
	// Remember configures the memory of bodies no rule matched; the zero
	// value turns it off.
	Remember Remember

	byName    map[string]*RuleSet
	exact     map[string]*RuleSet // host → rule set
	wildcards map[string]*RuleSet // ".suffix" (from "*.suffix") → rule set
	fallback  *RuleSet            // "*", or the first rule set when there are no hosts
}

// New checks c, compiles the Rules of each rule set into its Compiled with
// c's limits, and builds the lookups of RuleSet and RuleSetForHost. It
// copies the rule sets: the ones given are not changed.
//
// c must have at least one rule set; each needs a unique non-empty name and
// at least one content type; every Hosts key must be a normalised pattern
// naming one of the rule sets; every Shadows key and value must name a rule
// set, a key not its own value. A rule that does not compile is reported as
// a *matcher.RuleError with Set filled in, and Index its position in Rules
// (or, with Kind KindHeaderRule or KindRequestHeaderRule, in HeaderRules or
// RequestHeaderRules).
//
// New also builds each rule set's header rewriters: ResponseRewriter when
// ResponseHeaders is not empty (with HeaderRules, or Rules when there are
// none), RequestRewriter when RequestHeaders and RequestHeaderRules are not.
// A rule among those whose template holds CR, LF or NUL in its literal text
// is an error naming it. Every problem found is returned, joined with
// errors.Join.
func New(c Config) (*Config, error) {
	var errs []error
	if len(c.RuleSets) == 0 {
		return nil, errors.New("no rule sets")
	}
	if c.MaxBufferedBytes == 0 {
		c.MaxBufferedBytes = matcher.DefaultMaxBufferedBytes
	}
	if c.DFACacheBytes == 0 {
		c.DFACacheBytes = matcher.DefaultDFACacheBytes
	}
	errs = c.Remember.check(errs)
	if c.MaxHeaderValueBytes < 0 {
		errs = append(errs, fmt.Errorf("max header value bytes %d: must not be negative", c.MaxHeaderValueBytes))
	}
	if c.MaxHeaderValueBytes == 0 {
		c.MaxHeaderValueBytes = headerrewrite.DefaultMaxValueBytes
	}
	if c.MaxNFAStates == 0 {
		c.MaxNFAStates = matcher.DefaultMaxNFAStates
	}
	c.byName = make(map[string]*RuleSet, len(c.RuleSets))
	sets := make([]*RuleSet, len(c.RuleSets))
	for i, in := range c.RuleSets {
		rs := *in
		sets[i] = &rs
		switch _, dup := c.byName[rs.Name]; {
		case rs.Name == "":
			errs = append(errs, fmt.Errorf("rule set %d: empty name", i))
		case dup:
			errs = append(errs, fmt.Errorf("rule set %d: duplicate rule set name %q", i, rs.Name))
		default:
			c.byName[rs.Name] = &rs
		}
		if len(rs.ContentTypes) == 0 {
			errs = append(errs, fmt.Errorf("rule set %q: no content types", rs.Name))
		}
	}
	c.RuleSets = sets
	c.Hosts = maps.Clone(c.Hosts)
	for _, pattern := range slices.Sorted(maps.Keys(c.Hosts)) {
		if norm := normalizeHost(pattern); pattern != norm {
			errs = append(errs, fmt.Errorf("hosts[%q]: not normalised; want %q", pattern, norm))
		}
		if name := c.Hosts[pattern]; c.byName[name] == nil {
			errs = append(errs, fmt.Errorf("hosts[%q]: unknown rule set %q", pattern, name))
		}
	}
	errs = append(errs, c.checkShadows()...)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	opts := matcher.Options{MaxBufferedBytes: c.MaxBufferedBytes, DFACacheBytes: c.DFACacheBytes, MaxNFAStates: c.MaxNFAStates}
	for _, rs := range c.RuleSets {
		compiled, err := matcher.Compile(rs.Rules, opts)
		if err != nil {
			errs = append(errs, ruleSetError(rs.Name, err))
			continue
		}
		rs.Compiled = compiled
		for _, err := range rs.compileHeaders(compiled, opts, c.MaxHeaderValueBytes) {
			errs = append(errs, joined(err)...)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	c.buildHostIndex()
	return &c, nil
}

// joined returns the errors that errors.Join put in err, or err alone.
func joined(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// ruleSetError names the rule set in a compile error: a *matcher.RuleError
// gets its Set filled in, anything else is wrapped.
func ruleSetError(name string, err error) error {
	var re *matcher.RuleError
	if !errors.As(err, &re) {
		return fmt.Errorf("rule set %q: %w", name, err)
	}
	out := *re
	out.Set = name
	return &out
}

// RuleSet returns the rule set called name, or nil.
func (c *Config) RuleSet(name string) *RuleSet {
	return c.byName[name]
}
