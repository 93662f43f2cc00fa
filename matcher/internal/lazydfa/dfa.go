// Package lazydfa is the fast path of streamsub's rewriter: a lazy DFA that
// scans a body for the places where a match can possibly be, so that the
// exact engine (the Pike VM) runs only there.
//
// The DFA is built on demand from the rule set's byte-level NFA (package
// nfa), one state per set of NFA states, cached with a memory budget. It
// deliberately OVER-approximates the NFA: every Look assertion (^ $ \A \z
// \b \B) counts as satisfied, an Invalid transition accepts any byte >= 0x80,
// a thread starts at every byte (not only at UTF-8 unit boundaries) and all
// threads live on (no leftmost-first pruning). Every real Pike VM thread is
// therefore covered by the DFA's set, which gives the two facts the rewriter
// relies on:
//
//   - the DFA is Idle (no live thread) ⇒ the exact engine has no live thread;
//   - a window (bytes from leaving Idle to returning to it) in which the DFA
//     never entered a match state contains no real match, so its bytes can be
//     emitted unchanged.
//
// The DFA state is the set of live threads WITHOUT the threads that start at
// the current byte (those are added on every step), so that "Idle" really
// means "no thread started earlier is alive" — unlike a classic unanchored
// DFA whose start state can coincide with a state holding live threads
// (`[a-z]*q` after "ab").
//
// Cost: O(1) per byte once states are cached; building a state costs
// O(NFA states). A rule set that can match the empty string (under the
// over-approximation) has a match in its start set and gets no fast path
// (CanMatchEmpty).
//
// A DFA is immutable and safe for concurrent use; each stream searches with
// its own Cache (see cache.go). The design follows Russ Cox, "Regular
// Expression Matching in the Wild" (https://swtch.com/~rsc/regexp/regexp3.html)
// and Rust's regex-automata hybrid DFA.
package lazydfa

import (
	"slices"

	"github.com/streamsub/streamsub/matcher/internal/nfa"
	"github.com/streamsub/streamsub/matcher/internal/prefilter"
)

// DefaultCacheBytes is the default memory budget of one Cache: transition
// rows, NFA sets and the set index. Real HTML rule sets need a few hundred
// states (tens of KiB); the budget only bites on adversarial rule sets.
const DefaultCacheBytes = 2 << 20

// Config tunes a DFA.
type Config struct {
	// CacheBytes is the memory budget of each Cache; 0 means
	// DefaultCacheBytes. Any budget is honoured: one too small for a
	// state or two makes the caches clear at every new state and so give
	// up soon, which tests use (package matcher keeps configured budgets
	// above a floor).
	CacheBytes int
	// NoClasses turns byte classes off (one column per byte value); for tests.
	NoClasses bool
	// MaxClears is how many times a Cache may be cleared for lack of room
	// before it gives up; 0 means defaultMaxClears.
	MaxClears int
	// Rare, when set, is a prefilter of bytes that every match of the NFA
	// contains (prefilter.NewRare): the search skips with it instead of the
	// start bytes.
	Rare *prefilter.Prefilter
}

// limits returns the cache budget and clear limit cfg asks for, with the
// defaults filled in; the forward and the anchored DFA bound memory alike.
func (cfg Config) limits() (cacheBytes, maxClears int) {
	cacheBytes, maxClears = cfg.CacheBytes, cfg.MaxClears
	if cacheBytes <= 0 {
		cacheBytes = DefaultCacheBytes
	}
	if maxClears <= 0 {
		maxClears = defaultMaxClears
	}
	return cacheBytes, maxClears
}

// defaultMaxClears: after this many clears a stream's cache gives up and
// the exact engine runs alone (the DFA would be rebuilding states faster
// than it uses them).
const defaultMaxClears = 8

// DFA is the immutable part of the lazy DFA of one rule set.
type DFA struct {
	nfa        *nfa.NFA
	classes    Classes
	stride     int                  // classes.Len()
	start      []nfa.StateID        // consuming states of the start closure, sorted
	startMatch bool                 // the start closure reaches a Match
	cfg        Config               // the caches' budget
	pf0        *prefilter.Prefilter // start bytes
	pf         *prefilter.Prefilter // cfg.Rare, else pf0 when it beats the inline table loop (one byte), else nil
}

// New builds the DFA of n. It does no determinization: states are built by
// each Cache as the search needs them.
func New(n *nfa.NFA, cfg Config) *DFA {
	d := &DFA{nfa: n, cfg: cfg}
	if cfg.NoClasses {
		d.classes = identityClasses()
	} else {
		d.classes = newClasses(n)
	}
	d.stride = d.classes.Len()
	var cl closer
	cl.init(n)
	cl.reset()
	cl.add(n.Start())
	d.start = slices.Clone(cl.consumers)
	slices.Sort(d.start)
	d.startMatch = cl.match
	d.pf0 = prefilter.New(prefilter.StartBytes(n))
	if k := d.pf0.Kind(); k == prefilter.Byte || k == prefilter.Never {
		d.pf = d.pf0
	}
	if cfg.Rare != nil {
		d.pf = cfg.Rare
	}
	return d
}

// CanMatchEmpty reports whether some rule may match the empty string (with
// every assertion taken as true). Such rule sets get no fast path: the start
// state itself would be a match state.
func (d *DFA) CanMatchEmpty() bool { return d.startMatch }

// StartBytes reports, for every byte value, whether a thread can begin by
// consuming it (over-approximated): the bytes on which the DFA leaves Idle.
// Every other byte is skipped by the search without touching the DFA.
func (d *DFA) StartBytes() *[256]bool { return d.pf0.Set() }

// stepOver returns the successor of consuming state s over byte b as the
// DFA over-approximates it: an Invalid state accepts every byte >= 0x80.
func stepOver(s *nfa.State, b byte) nfa.StateID { return s.Step(int(b), b >= 0x80) }

// closer builds the NFA set of a DFA state: the union of epsilon closures
// in which every assertion holds (nfa.AllLooks).
type closer struct {
	states    []nfa.State
	w         nfa.Walker
	consumers []nfa.StateID
	match     bool
}

func (c *closer) init(n *nfa.NFA) {
	c.states = n.States()
	c.w = nfa.NewWalker(n)
}

func (c *closer) reset() {
	c.w.Reset(nfa.AllLooks)
	c.consumers = c.consumers[:0]
	c.match = false
}

// tags returns the StateID tags of the set built: tagMatch if it holds a
// Match state.
func (c *closer) tags() StateID {
	if c.match {
		return tagMatch
	}
	return 0
}

// add adds id and its epsilon closure.
func (c *closer) add(id nfa.StateID) {
	from := len(c.w.Out)
	c.w.Closure(nfa.Thread{ID: id}, nil)
	for _, t := range c.w.Out[from:] {
		if c.states[t.ID].Kind == nfa.KindMatch {
			c.match = true
		} else {
			c.consumers = append(c.consumers, t.ID)
		}
	}
}
