// Package pikevm owns streamsub's exact matching engine: a streaming Pike
// VM over the byte-level NFA of package nfa.
//
// Algorithm (Thompson 1968, Pike's submatch VM; see Russ Cox, "Regular
// Expression Matching: the Virtual Machine Approach"): the VM keeps the
// list of live threads, each an NFA state plus the absolute offset where
// its match started, in leftmost-first priority order. At each position p
// it takes the epsilon closure of the threads waiting at p (assertions
// decided with byte p-1 and byte p), appends a new start thread at the
// lowest priority if p is an allowed start and no match is pending, and
// steps every thread over byte p. When a thread reaches a Match state, the
// match [start, p) is recorded and every lower-priority thread is cut; the
// match is final once no higher-priority thread is alive. This is exactly
// the leftmost-first semantics of Go's regexp (and of semantics.md "Which
// match wins").
//
// Streaming: the VM is fed the body incrementally. Position p is processed
// once byte p is available (or EOF is known) and, when byte p >= 0x80 must
// be decoded (a start position, the unit stepped over after an empty
// match, or an Invalid transition), once enough following bytes are
// available for nfa.UnitLen. Matches are thus delayed by one byte, except
// that at the end of the input a match is decided early when no assertion
// needs the missing byte (peek). Threads
// are ordered by non-decreasing start, so the earliest live start (the
// first waiting thread, else the pending match, else the next position)
// says how many bytes a caller must hold back.
//
// Cost: O(len(NFA)) per byte, so O(body × NFA) for a search; no
// backtracking. While no thread is live, positions whose byte no start
// state accepts are skipped in O(1) (start closures are precomputed per
// assertion context in Prog). All scratch is allocated by NewVM, sized to
// the NFA: a search allocates nothing. Captures re-runs one rule anchored
// over a final match's bytes with capture slots, O(match × rule NFA).
//
// A VM belongs to one goroutine; the NFA it runs may be shared.
package pikevm

import (
	"encoding/binary"
	"slices"
	"sync"

	"github.com/streamsub/streamsub/matcher/internal/nfa"
)

// Edge is the byte value of a position at the body's start or end.
const Edge = nfa.Edge

// Match is a match of rule Rule at absolute offsets [Start, End).
type Match struct {
	Rule       nfa.RuleID
	Start, End int64
}

// Status says why Advance returned.
type Status uint8

const (
	// NeedInput: every position that the available bytes allow was
	// processed; call Advance again with more bytes or with eof.
	NeedInput Status = iota
	// Found: a final match is in Match(); call Restart before Advance.
	Found
	// Overflow: live threads span more than the allowed bytes.
	Overflow
	// Done: EOF was processed and no match is left.
	Done
)

// thread is a live thread: an NFA state and its match's start offset.
type thread = nfa.Thread

// Prog is what every VM of one NFA shares: the NFA and the precomputed
// start closures. It is immutable and safe for concurrent use.
type Prog struct {
	nfa        *nfa.NFA
	states     []nfa.State // nfa.States()
	start      nfa.StateID
	hasInvalid bool
	pool       sync.Pool // *scratch of released VMs (large NFAs only)
	// starts is the closure of the start state for each assertion context
	// (see ctxOf).
	starts [numCtx]startClosure
}

// NewProg precomputes the shared part of the VMs for n.
func NewProg(n *nfa.NFA) *Prog {
	p := &Prog{nfa: n, states: n.States(), start: n.Start(), hasInvalid: n.HasInvalid()}
	p.initStarts()
	return p
}

// poolMinStates is the NFA size (states) from which VMs share their
// scratch (about 50 bytes per state) through Prog's pool instead of owning
// it: a stream of a large rule set then costs memory only while its VM
// runs (see VM.Release).
const poolMinStates = 512

// scratch is a VM's search scratch, sized to the NFA.
type scratch struct {
	seeds []thread
	walk  nfa.Walker
	caps  *capScratch
}

func (p *Prog) newScratch() *scratch {
	n := p.nfa.Len()
	return &scratch{
		seeds: make([]thread, 0, n),
		walk:  nfa.NewWalker(p.nfa),
	}
}

// NewVM returns a VM for p. Its scratch is preallocated, or, for an NFA of
// poolMinStates or more, taken from p's pool when the VM first runs.
func (p *Prog) NewVM() *VM {
	m := &VM{p: p}
	if p.nfa.Len() < poolMinStates {
		m.load(p.newScratch())
	}
	return m
}

// load makes s the VM's scratch.
func (m *VM) load(s *scratch) {
	m.scr = s
	m.seeds, m.walk, m.caps = s.seeds[:0], &s.walk, s.caps
}

// acquire gives the VM scratch if it has none.
func (m *VM) acquire() {
	if m.scr != nil {
		return
	}
	s, _ := m.p.pool.Get().(*scratch)
	if s == nil {
		s = m.p.newScratch()
	}
	m.load(s)
}

// Release returns a pooled VM's scratch to its Prog (a no-op for small
// NFAs). The search state is lost: call Restart before Advance.
func (m *VM) Release() {
	if m.scr == nil || m.p.nfa.Len() < poolMinStates {
		return
	}
	s := m.scr
	s.seeds, s.caps = m.seeds[:0], m.caps
	m.scr = nil
	m.seeds, m.walk, m.caps = nil, nil, nil
	m.matched = false
	m.p.pool.Put(s)
}

// New returns a VM for n with its own Prog (NewProg(n).NewVM()).
func New(n *nfa.NFA) *VM { return NewProg(n).NewVM() }

// VM is a streaming leftmost-first search over an NFA. Create it with New
// or Prog.NewVM, position it with Restart, feed it with Advance.
type VM struct {
	p *Prog // immutable, shared

	// Search state.
	pos       int64    // next position to process
	before    int      // byte at pos-1, or Edge at the body start
	nextStart int64    // next position where a match may start (unit boundary)
	skipUnit  bool     // no start at nextStart: step over its unit first (RestartAfterEmpty)
	seeds     []thread // threads waiting at pos before their closure, in priority order
	matched   bool     // a match is pending; no more start threads
	match     Match
	// peeked: peek found the match state that Advance will record at pos
	// (it waits among the seeds); Pending reports it. Cleared when pos is
	// processed.
	peeked    Match
	hasPeeked bool
	done      bool // EOF processed

	// Scratch, sized to the NFA (scr holds it while the VM owns it; the
	// fields below are its working copies).
	scr *scratch
	// walk takes the closures; at the current position, its Out holds the
	// closed threads in priority order, its Seen the states visited.
	walk *nfa.Walker
	caps *capScratch // allocated on the first Captures call
}

// numCtx is the number of assertion contexts of a position: the
// nfa.Context of the byte before it and of the byte after it.
const numCtx = int(nfa.NumContexts * nfa.NumContexts)

// ctxOf returns the assertion context of a position from the bytes around it.
func ctxOf(before, after int) int {
	return int(nfa.ContextOf(before))*int(nfa.NumContexts) + int(nfa.ContextOf(after))
}

// startClosure is the epsilon closure of the start state in one assertion
// context: its consuming and match states in priority order, whether one
// is a match state, and the bytes some consuming state may accept
// (Invalid counts as every byte >= 0x80).
type startClosure struct {
	states   []nfa.StateID
	hasMatch bool
	accept   [256 / 64]uint64
	// byByte[c] indexes lists: the states of states that can step over
	// byte c or are match states, in order, up to the first match state
	// (which cuts the rest). Only these matter when the start thread
	// steps over c.
	byByte [256]uint16
	lists  [][]nfa.StateID
}

func (sc *startClosure) accepts(c int) bool { return sc.accept[c>>6]&(1<<(c&63)) != 0 }

func (sc *startClosure) addRange(lo, hi byte) {
	for c := int(lo); c <= int(hi); c++ {
		sc.accept[c>>6] |= 1 << (c & 63)
	}
}

// accepts reports whether the consuming state st can step over byte c
// (for an Invalid transition: c may begin an invalid unit).
func accepts(st *nfa.State, c int) bool { return st.Step(c, c >= 0x80) != 0 }

// index builds byByte and lists from the closure's states.
func (sc *startClosure) index(states []nfa.State, closure []thread) {
	// Membership only changes at range edges: compute each list once per
	// run of bytes between edges (a few dozen runs instead of 256 bytes).
	var edge [257]bool
	edge[0], edge[0x80] = true, true
	for _, t := range closure {
		for e := range states[t.ID].Edges() {
			edge[e.Lo], edge[int(e.Hi)+1] = true, true
		}
	}
	seen := map[string]uint16{}
	total := 0
	var list []nfa.StateID
	var key []byte
	var i uint16
	for c := 0; c < 256; c++ {
		if !edge[c] {
			sc.byByte[c] = i // same run as c-1
			continue
		}
		list = list[:0]
		key = key[:0]
		for _, t := range closure {
			st := &states[t.ID]
			if st.Kind == nfa.KindMatch || accepts(st, c) {
				list = append(list, t.ID)
				key = binary.LittleEndian.AppendUint32(key, uint32(t.ID))
			}
			if st.Kind == nfa.KindMatch {
				break
			}
		}
		var found bool
		i, found = seen[string(key)]
		if !found {
			i = uint16(len(sc.lists))
			seen[string(key)] = i
			sc.lists = append(sc.lists, slices.Clone(list))
			total += len(list)
		}
		sc.byByte[c] = i
	}
	if total > maxStartIndex {
		// Too big to index per byte: one list, filtered while stepping.
		list = list[:0]
		for _, t := range closure {
			list = append(list, t.ID)
			if states[t.ID].Kind == nfa.KindMatch {
				break
			}
		}
		sc.lists = [][]nfa.StateID{slices.Clone(list)}
		sc.byByte = [256]uint16{}
	}
}

// maxStartIndex bounds the state IDs (4 bytes each) that one start
// closure's per-byte lists may hold in total. A variable for tests.
var maxStartIndex = 1 << 16

// initStarts precomputes the start closures. Adding the precomputed list
// (less the states already present) after the waiting threads' closure
// gives the same threads in the same order as a closure from the start
// state: a state already visited at this position had its whole epsilon
// subtree visited too.
func (p *Prog) initStarts() {
	w := nfa.NewWalker(p.nfa)
	for ctx := range p.starts {
		at := nfa.LookCtx{
			Before: nfa.Context(ctx / int(nfa.NumContexts)).Byte(),
			After:  nfa.Context(ctx % int(nfa.NumContexts)).Byte(),
		}
		w.Reset(at)
		w.Closure(thread{ID: p.start}, nil)
		sc := &p.starts[ctx]
		sc.index(p.states, w.Out)
		for _, t := range w.Out {
			sc.states = append(sc.states, t.ID)
			st := &p.states[t.ID]
			if st.Kind == nfa.KindMatch {
				sc.hasMatch = true
			}
			for e := range st.Edges() {
				sc.addRange(e.Lo, e.Hi)
			}
		}
	}
}

// Restart starts a new search at absolute offset at, where the body's
// byte before at is before (Edge at the body start). A match may start at
// firstStart (at, or, when at is inside a unit, that unit's end) and at
// the unit boundaries of the decoding from there.
func (m *VM) Restart(at int64, before int, firstStart int64) {
	m.pos = at
	m.before = before
	m.nextStart = firstStart
	m.skipUnit = false
	m.seeds = m.seeds[:0]
	m.matched = false
	m.hasPeeked = false
	m.done = false
}

// RestartAfterEmpty restarts the search after an empty match at the unit
// boundary at (before as for Restart): the unit at at — one valid UTF-8
// sequence, or one byte that begins none — is stepped over, so the next
// match starts at the boundary after it at the earliest and an empty match
// never splits a character (semantics.md "Which match wins"). The unit's
// length is decoded as Advance decodes start positions: when a chunk ends
// inside it, Advance waits for the next bytes (Pos and Earliest stay at
// at), and at EOF a truncated sequence is one invalid byte.
func (m *VM) RestartAfterEmpty(at int64, before int) {
	m.Restart(at, before, at)
	m.skipUnit = true
}

// Pos returns the next position to process.
func (m *VM) Pos() int64 { return m.pos }

// Match returns the final match after Advance returned Found.
func (m *VM) Match() Match { return m.match }

// Earliest returns the smallest offset that a match found from now on may
// include: the start of the highest-priority live thread, else of the
// pending match, else Pos. Bytes before it can be emitted.
func (m *VM) Earliest() int64 {
	if len(m.seeds) > 0 {
		return m.seeds[0].Start
	}
	if m.matched {
		return m.match.Start
	}
	return m.pos
}

// Pending returns the match found so far that is not final yet, if any:
// a higher-priority thread may still replace it. At a position peek
// could not process it includes the match Advance will record there.
func (m *VM) Pending() (Match, bool) {
	if m.hasPeeked {
		return m.peeked, true
	}
	return m.match, m.matched
}

// Idle reports whether no thread is live and no match is pending: the
// search state is that of a fresh Restart at Pos.
func (m *VM) Idle() bool { return len(m.seeds) == 0 && !m.matched && !m.skipUnit }

// Advance processes positions from Pos on. hay holds the body bytes from
// absolute offset base on (base <= Pos); eof reports that hay ends at the
// body's end. It returns Found when a match became final, Overflow when,
// after some position, the live threads span more than maxSpan bytes
// (Pos - Earliest > maxSpan), NeedInput when it needs bytes beyond hay,
// and Done after EOF when no match is left.
func (m *VM) Advance(hay []byte, base int64, eof bool, maxSpan int64) Status {
	if m.done {
		return Done
	}
	m.acquire()
	for {
		i := int(m.pos - base)
		c := Edge
		if i < len(hay) {
			c = int(hay[i])
		} else if !eof {
			return m.peek(nfa.Unknown)
		}
		addStart := !m.matched && m.pos == m.nextStart && !m.skipUnit
		if len(m.seeds) == 0 && !m.matched && c != Edge {
			// Idle: skip positions where no thread can start or live
			// (with skipUnit, the unit at nextStart starts none).
			if !addStart && !m.skipUnit {
				m.before = c
				m.pos++
				continue
			}
			if sc := &m.p.starts[ctxOf(m.before, c)]; m.skipUnit || !sc.hasMatch && !sc.accepts(c) {
				unit := 1
				if c >= 0x80 {
					n, ok := nfa.UnitLen(hay[i:], eof)
					if !ok {
						return NeedInput
					}
					unit = n
				}
				m.nextStart = m.pos + int64(unit)
				m.skipUnit = false
				m.before = c
				m.pos++
				continue
			}
		}
		unit := 1
		if c >= 0x80 && (addStart || m.p.hasInvalid) {
			n, ok := nfa.UnitLen(hay[i:], eof)
			if !ok {
				return m.peek(c)
			}
			unit = n
		}

		// Close the waiting threads at pos and step them over byte c, in
		// priority order; a match cuts every thread after it.
		m.hasPeeked = false
		m.startClosures(c)
		for _, t := range m.seeds {
			m.walk.Closure(t, nil)
		}
		m.seeds = m.seeds[:0]
		invalid := nfa.IsInvalidUnit(c, unit)
		cut := false
		for _, t := range m.walk.Out {
			if m.step(t.ID, t.Start, c, invalid) {
				cut = true
				break
			}
		}
		// Then the start thread, at the lowest priority: its closure is
		// precomputed and stepped directly, as nothing at pos comes after
		// it (states the waiting threads own are skipped).
		if addStart {
			if !cut {
				sc := &m.p.starts[ctxOf(m.before, c)]
				for _, id := range sc.lists[sc.byByte[c&0xFF]] {
					if !m.walk.Seen.Contains(id) && m.step(id, m.pos, c, invalid) {
						break
					}
				}
			}
			m.nextStart = m.pos + int64(unit)
		}

		if c == Edge {
			m.done = true
			if m.matched {
				return Found
			}
			return Done
		}
		m.before = c
		m.pos++
		if len(m.seeds) == 0 {
			if m.matched {
				return Found
			}
		} else if m.pos-m.seeds[0].Start > maxSpan {
			return Overflow
		}
	}
}

// step steps the thread (id, start) at pos over byte c (Edge at EOF),
// an invalid unit if invalid, adding its successor to seeds. It reports
// whether id is a match state: the match is recorded and the caller cuts
// every lower-priority thread.
func (m *VM) step(id nfa.StateID, start int64, c int, invalid bool) bool {
	st := &m.p.states[id]
	if st.Kind == nfa.KindMatch {
		m.matched = true
		m.match = Match{Rule: st.Rule, Start: start, End: m.pos}
		return true
	}
	if next := st.Step(c, invalid); next != 0 {
		m.seeds = append(m.seeds, thread{ID: next, Start: start})
	}
	return false
}

// peek is called when position pos cannot be processed yet (the byte at
// pos, after, may be unknown), to hold back no more than needed at a
// chunk's end. When the closure of the waiting threads at pos needs no
// assertion on the byte at pos, the closure's states up to its first
// match state (the ones Advance will step at pos, in priority order) wait
// at pos in place of the seeds; when after is known (only its unit's
// length is not: a multi-byte sequence cut by the chunk end), the
// consuming states that cannot step over it are dead already and are
// dropped. The match state, if any, is then final when it comes first
// (peek returns Found without waiting for the byte after it, as sregex
// does), else pending (Pending reports it). Search state Advance depends
// on is left as is, so the engine takes the same steps and stops at the
// same positions however the body is cut into pieces.
func (m *VM) peek(after int) Status {
	m.hasPeeked = false
	if len(m.seeds) == 0 {
		return NeedInput
	}
	m.startClosures(after)
	for _, t := range m.seeds {
		if !m.walk.Closure(t, nil) {
			return NeedInput
		}
	}
	m.seeds = m.seeds[:0]
	for _, t := range m.walk.Out {
		st := &m.p.states[t.ID]
		if st.Kind == nfa.KindMatch {
			if len(m.seeds) == 0 {
				m.matched = true
				m.match = Match{Rule: st.Rule, Start: t.Start, End: m.pos}
				return Found
			}
			m.seeds = append(m.seeds, t)
			m.peeked = Match{Rule: st.Rule, Start: t.Start, End: m.pos}
			m.hasPeeked = true
			break
		}
		if after == nfa.Unknown || accepts(st, after) {
			m.seeds = append(m.seeds, t)
		}
	}
	if len(m.seeds) == 0 && m.matched {
		return Found
	}
	return NeedInput
}

// startClosures resets the walker for the closures of the waiting threads
// at the current position, whose following byte is after: they add to
// m.walk.Out, in priority order, the consuming and match states reachable
// by epsilon transitions. States already visited at this position are
// skipped: a higher-priority thread owns them. A closure stops, leaving
// Out incomplete, if after is unknown and an assertion depends on it.
func (m *VM) startClosures(after int) {
	m.walk.Reset(nfa.LookCtx{Before: m.before, After: after})
}
