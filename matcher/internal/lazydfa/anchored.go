package lazydfa

import (
	"encoding/binary"
	"unsafe"

	"github.com/streamsub/streamsub/matcher/internal/nfa"
)

// Anchored is the exact half of the fast path: a lazy DFA that runs an
// anchored leftmost-first search from one start position and reports the
// match the Pike VM would report for a thread started there — rule and end
// — or that there is none. The over-approximating forward DFA (Cache.ScanWindows) says
// where a match may be; Anchored resolves it without the Pike VM.
//
// A state is the ORDERED list of NFA states waiting at a position (before
// their epsilon closure), in Pike VM priority order, plus what the look
// assertions need to know of the byte before the position (body start,
// '\n', word byte, other). Because assertions depend on the byte after the
// position too, the closure is taken on the transition, when that byte is
// known: all matches are delayed by one byte, and the end of the body is
// one more input symbol (EOI). During the closure, reaching a Match state
// cuts every lower-priority thread (leftmost-first), exactly as the Pike VM
// does. Invalid transitions are decided with nfa.UnitLen on the actual
// bytes: each byte >= 0x80 that is a one-byte (invalid) unit is fed as a
// distinct input symbol.
//
// Cost: O(1) per byte with a warm cache; O(NFA) to build a state.
// An Anchored is immutable and safe for concurrent use; searches use an
// AnchoredCache each.
type Anchored struct {
	nfa        *nfa.NFA
	classes    Classes
	nc         int // number of byte classes
	stride     int // inputs per state: nc byte classes, nc invalid-unit variants, EOI
	hasInvalid bool
	cfg        Config // the caches' budget
}

// NewAnchored builds the anchored resolver of n.
func NewAnchored(n *nfa.NFA, cfg Config) *Anchored {
	a := &Anchored{nfa: n, hasInvalid: n.HasInvalid(), cfg: cfg}
	if cfg.NoClasses {
		a.classes = identityClasses()
	} else {
		a.classes = lookClasses(n)
	}
	a.nc = a.classes.Len()
	a.stride = 2*a.nc + 1
	return a
}

// lookClasses are the NFA's byte classes refined so that '\n', word bytes
// and bytes >= 0x80 never share a class with other bytes: a class then
// tells the assertions all they need about the byte after a position.
func lookClasses(n *nfa.NFA) Classes {
	c := newClasses(n)
	var key [256]uint32
	for b := range 256 {
		k := uint32(c.m[b]) << 3
		switch {
		case b == '\n':
			k |= 1
		case nfa.IsWordByte(b):
			k |= 2
		case b >= 0x80:
			k |= 4
		}
		key[b] = k
	}
	var out Classes
	ids := map[uint32]uint8{}
	for b := range 256 {
		id, ok := ids[key[b]]
		if !ok {
			id = uint8(len(ids))
			ids[key[b]] = id
		}
		out.m[b] = id
	}
	out.n = len(ids)
	return out
}

// AnchoredCache is the per-stream cache of an Anchored: a state table
// (see table) whose rows have a column per input symbol.
type AnchoredCache struct {
	a *Anchored
	table
	ctx    []nfa.Context            // the look-behind context of state i: what assertions know of the byte before
	rule   []nfa.RuleID             // match rule of state i (valid if tagged)
	starts [nfa.NumContexts]StateID // Unknown until built

	// Scratch.
	walk  nfa.Walker
	set2  nfa.StateSet
	seeds []nfa.StateID
}

// NewCache returns an empty cache for a.
func (a *Anchored) NewCache() *AnchoredCache {
	c := &AnchoredCache{a: a, walk: nfa.NewWalker(a.nfa), set2: nfa.NewStateSet(a.nfa.Len())}
	c.table.init(a.stride, a.cfg)
	c.clear()
	return c
}

// clear empties the cache.
func (c *AnchoredCache) clear() {
	c.table.clear()
	c.ctx = c.ctx[:0]
	c.rule = c.rule[:0]
	for i := range c.starts {
		c.starts[i] = Unknown
	}
}

// Reset prepares the cache for a new stream (states are kept).
func (c *AnchoredCache) Reset() {
	if c.restart() {
		c.clear()
	}
}

// Stats reports the cache's size and history.
func (c *AnchoredCache) Stats() Stats { return c.stats() }

func (c *AnchoredCache) key(match int, ctx nfa.Context, seeds []nfa.StateID) []byte {
	k := binary.LittleEndian.AppendUint32(c.keybuf[:0], uint32(match+1))
	k = append(k, byte(ctx))
	for _, q := range seeds {
		k = binary.LittleEndian.AppendUint32(k, uint32(q))
	}
	c.keybuf = k
	return k
}

// state returns the ID of the state (match, ctx, seeds), building it if
// needed; ok is false when the cache gave up. cleared reports that the
// cache was emptied to make room (every older ID is invalid).
func (c *AnchoredCache) state(match int, ctx nfa.Context, seeds []nfa.StateID) (id StateID, cleared, ok bool) {
	k := c.key(match, ctx, seeds)
	if id, ok := c.index[string(k)]; ok {
		return id, false, true
	}
	if !c.fits(len(seeds)) {
		if !c.spendClear() {
			return Unknown, false, false
		}
		c.clear()
		cleared = true
	}
	var tags StateID
	r := nfa.RuleID(0)
	if match >= 0 {
		tags, r = tagMatch, nfa.RuleID(match)
	}
	if len(seeds) == 0 {
		tags |= tagDead
	}
	c.ctx = append(c.ctx, ctx)
	c.rule = append(c.rule, r)
	return c.add(k, seeds, tags), cleared, true
}

// next computes the transition of s on input symbol x (a class, a class
// + nc for an invalid unit, or 2nc for EOI).
func (c *AnchoredCache) next(s StateID, x int) (StateID, bool) {
	a := c.a
	n := a.nfa
	seeds := c.set(s.row())
	before := c.ctx[s.row()/a.stride].Byte()
	after := nfa.Edge
	invalid := false
	if x < 2*a.nc {
		cl := x
		if cl >= a.nc {
			cl -= a.nc
			invalid = true
		}
		after = int(a.classes.Representative(uint8(cl)))
	}
	// Closure in priority order; a Match cuts the rest.
	c.walk.Reset(nfa.LookCtx{Before: before, After: after})
	match := -1
closure:
	for _, seed := range seeds {
		from := len(c.walk.Out)
		c.walk.Closure(nfa.Thread{ID: seed}, nil)
		for i, t := range c.walk.Out[from:] {
			if st := n.State(t.ID); st.Kind == nfa.KindMatch {
				match = int(st.Rule)
				c.walk.Out = c.walk.Out[:from+i]
				break closure
			}
		}
	}
	// Step the surviving threads over the byte.
	c.seeds = c.seeds[:0]
	ctx := nfa.CtxEdge
	if x < 2*a.nc {
		ctx = nfa.ContextOf(after)
		c.set2.Clear()
		for _, t := range c.walk.Out {
			if succ := n.State(t.ID).Step(after, invalid); succ != 0 && c.set2.Insert(succ) {
				c.seeds = append(c.seeds, succ)
			}
		}
	}
	t, cleared, ok := c.state(match, ctx, c.seeds)
	if !ok {
		return Unknown, false
	}
	if !cleared {
		c.trans[s.row()+x] = t
	}
	return t, true
}

// tagged handles the transition t of live state s on input symbol x at
// hay index i when it is tagged (or not tagged, for EOI): it computes it if
// Unknown, records a match ending at i, and returns the untagged target and
// whether it is dead. ok is false when the cache gave up.
func (c *AnchoredCache) tagged(s, t StateID, x, i int, lastEnd *int, lastRule *nfa.RuleID) (next StateID, dead, ok bool) {
	if t == Unknown {
		if t, ok = c.next(s, x); !ok {
			return Unknown, false, false
		}
	}
	if t&tagMatch != 0 {
		*lastEnd, *lastRule = i, c.rule[t.row()/c.a.stride]
	}
	return t &^ tagMatch, t&tagDead != 0, true
}

// Find searches for the leftmost-first match starting exactly at hay[p],
// where before is the byte before p (nfa.Edge at the body start) and eof
// reports that hay ends at the body's end. p must be a position where the
// Pike VM would start a thread (a unit boundary). It returns the match end
// and rule with Found; NoMatch with the offset where the last thread
// died; or NeedMore, Long or GaveUp when it cannot decide within hay,
// within limit bytes after p, or within its budget. The answer looks at bytes up to the match end + 1 (+3 for
// decoding) and never past p+limit+4.
func (c *AnchoredCache) Find(hay []byte, p int, before int, eof bool, limit int) (end int, rule nfa.RuleID, res Status) {
	if c.gaveUp {
		return 0, 0, GaveUp
	}
	a := c.a
	ctx := nfa.ContextOf(before)
	s := c.starts[ctx]
	if s == Unknown {
		var ok bool
		// A start state is only ever looked up, never a transition
		// target of its own, so a clear here loses nothing.
		s, _, ok = c.state(-1, ctx, []nfa.StateID{a.nfa.Start()})
		if !ok {
			return 0, 0, GaveUp
		}
		c.starts[ctx] = s
	}
	cls := &a.classes.m
	nc := a.nc
	tp := unsafe.Pointer(unsafe.SliceData(c.trans))
	lastEnd := -1
	var lastRule nfa.RuleID
	h := hay[:min(len(hay), p+limit)]
	i := p
	for ; i < len(h); i++ {
		bt := h[i]
		x := int(cls[bt])
		if bt >= 0x80 && a.hasInvalid {
			n, ok := nfa.UnitLen(hay[i:], eof)
			if !ok {
				return 0, 0, NeedMore
			}
			if n == 1 {
				x += nc // an invalid unit: the class's second column
			}
		}
		// s is untagged (a live state): it is its row's byte offset, and
		// its row is complete (x < stride), so the load is unchecked as
		// in a scan (see load).
		t := *(*StateID)(unsafe.Add(unsafe.Add(tp, uintptr(x)*4), uintptr(s)))
		if t >= tagDead { // dead, match-tagged or Unknown: the rare cases
			var dead, ok bool
			if t, dead, ok = c.tagged(s, t, x, i, &lastEnd, &lastRule); !ok {
				return 0, 0, GaveUp
			}
			if dead {
				break
			}
			tp = unsafe.Pointer(unsafe.SliceData(c.trans))
		}
		s = t
	}
	if i == len(h) {
		switch {
		case i == len(hay) && eof:
			if _, _, ok := c.tagged(s, c.trans[s.row()+2*nc], 2*nc, i, &lastEnd, &lastRule); !ok {
				return 0, 0, GaveUp
			}
		case i >= len(hay):
			return 0, 0, NeedMore
		default:
			return 0, 0, Long
		}
	}
	if lastEnd >= 0 {
		return lastEnd, lastRule, Found
	}
	return i, 0, NoMatch
}
