// Package backtrack computes the capture positions of the fast path's
// matches (design.md §3 layer 3): a bounded backtracker over one rule's
// NFA, anchored at the match start.
//
// The fast path already knows the match [p, end) and its rule; captures are
// needed only for templates that use $N. Exploring paths in priority order
// and stopping at the first Match reproduces the Pike VM's leftmost-first
// choice for that start, and a visited bit per (state, position) makes the
// search O(rule states × match length) — as Go's regexp backtracker
// (regexp/backtrack.go). On the short matches of real rule sets it touches
// a few states per byte, against the Pike VM capture pass's whole thread
// list per byte. Rules whose groups sit at fixed distances from the match
// edges need no search at all (affixSlots). Whenever it cannot decide from
// the bytes at hand, or the visited set would be large, the caller falls
// back to pikevm.VM.Captures.
//
// A Prog is immutable and safe for concurrent use; searches use a Searcher
// each.
package backtrack

import (
	"github.com/streamsub/streamsub/matcher/internal/nfa"
)

// maxBits bounds the visited set (states × positions) of one capture
// search; larger ones are declined (the Pike VM takes them).
const maxBits = 256 << 10

// Prog is what the capture searches of one rule set share: the NFA and a
// plan per rule.
type Prog struct {
	nfa   *nfa.NFA
	rules []plan
}

// plan is the range of StateIDs reachable from one rule's start: the rows
// of the backtracker's visited set. affix, when not nil, gives every
// capture slot of the rule at a fixed distance from the match start or end
// (affixSlots): captures then need no search.
type plan struct {
	lo, hi nfa.StateID
	affix  []int32
}

// New returns the capture searches of the rules of n.
func New(n *nfa.NFA) *Prog {
	return &Prog{nfa: n, rules: rulePlans(n)}
}

// rulePlans returns the plan of every rule of n.
func rulePlans(n *nfa.NFA) []plan {
	plans := make([]plan, n.NumRules())
	seen := make([]bool, n.Len())
	for r := range plans {
		start := n.Rule(nfa.RuleID(r)).Start
		sp := plan{lo: start, hi: start}
		clear(seen)
		stack := []nfa.StateID{start}
		for len(stack) > 0 {
			id := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if seen[id] {
				continue
			}
			seen[id] = true
			sp.lo, sp.hi = min(sp.lo, id), max(sp.hi, id)
			st := n.State(id)
			switch st.Kind {
			case nfa.KindUnion:
				stack = append(stack, st.Alts...)
			case nfa.KindRange, nfa.KindSparse, nfa.KindInvalid:
				for e := range st.Edges() {
					stack = append(stack, e.Next)
				}
			case nfa.KindMatch, nfa.KindFail:
			default:
				stack = append(stack, st.Next)
			}
		}
		sp.affix = affixSlots(n, nfa.RuleID(r), sp)
		plans[r] = sp
	}
	return plans
}

// affixSlots returns, for each capture slot of rule r, its position as a
// fixed distance from the match start (d+1) or from the match end
// (-(d+1)), or nil when some slot has no such position.
//
// A slot's position is fixed when its (unique) Capture state lies on a
// chain of linear states — one successor, consuming one byte (Range, a
// Sparse whose edges share their target) or none (Capture, Look) — that
// every accepting path must take whole and at most once: the chain from the
// rule's start while each next state has that one predecessor, or the
// chain back from the Match state while each state has one predecessor,
// which is linear. Such rules — like `([a-z0-9._%+-]+)@example\.com` —
// are common among templates using groups; the others use the backtracker.
func affixSlots(n *nfa.NFA, r nfa.RuleID, sp plan) []int32 {
	info := n.Rule(r)
	ns := 2 * (info.NumGroups + 1)
	if info.Start == 0 || ns > 64 {
		return nil
	}
	rows := int(sp.hi-sp.lo) + 1
	preds := make([]int32, rows)      // predecessor edges within the rule
	pred := make([]nfa.StateID, rows) // the last predecessor seen
	slotStates := make([]int, ns)     // Capture states per slot
	match := nfa.StateID(0)
	// Rule states are reachable only through its start (nfa.NFA's
	// invariant); within [lo, hi] take those reachable from the start.
	seen := make([]bool, rows)
	stack := []nfa.StateID{info.Start}
	edge := func(from, to nfa.StateID) {
		if to >= sp.lo && to <= sp.hi {
			preds[to-sp.lo]++
			pred[to-sp.lo] = from
		}
		if to >= sp.lo && to <= sp.hi && !seen[to-sp.lo] {
			seen[to-sp.lo] = true
			stack = append(stack, to)
		}
	}
	seen[info.Start-sp.lo] = true
	for len(stack) > 0 {
		id := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		st := n.State(id)
		switch st.Kind {
		case nfa.KindUnion:
			for _, a := range st.Alts {
				edge(id, a)
			}
		case nfa.KindSparse:
		trans:
			for j, t := range st.Trans {
				for _, u := range st.Trans[:j] {
					if u.Next == t.Next {
						continue trans // one edge per target
					}
				}
				edge(id, t.Next)
			}
		case nfa.KindMatch:
			match = id
		case nfa.KindFail:
		case nfa.KindCapture:
			if int(st.Slot) < ns {
				slotStates[st.Slot]++
			}
			edge(id, st.Next)
		default:
			edge(id, st.Next)
		}
	}
	for _, c := range slotStates {
		if c != 1 {
			return nil // a slot set by several states (or none)
		}
	}
	// linear returns the one successor of a linear state and the bytes
	// it consumes.
	linear := func(id nfa.StateID) (next nfa.StateID, width int32, ok bool) {
		st := n.State(id)
		switch st.Kind {
		case nfa.KindCapture, nfa.KindLook:
			return st.Next, 0, true
		case nfa.KindRange:
			return st.Next, 1, true
		case nfa.KindSparse:
			if len(st.Trans) == 0 {
				return 0, 0, false
			}
			for _, t := range st.Trans[1:] {
				if t.Next != st.Trans[0].Next {
					return 0, 0, false
				}
			}
			return st.Trans[0].Next, 1, true
		}
		return 0, 0, false
	}
	affix := make([]int32, ns)
	// Forward from the start, which no rule state leads back to.
	id, d := info.Start, int32(0)
	if preds[id-sp.lo] == 0 {
		for {
			next, w, ok := linear(id)
			if !ok {
				break
			}
			if st := n.State(id); st.Kind == nfa.KindCapture && int(st.Slot) < ns {
				affix[st.Slot] = d + 1
			}
			d += w
			if next < sp.lo || next > sp.hi || preds[next-sp.lo] != 1 {
				break
			}
			id = next
		}
	}
	// Backward from the Match state.
	if match != 0 {
		id, d = match, 0
		for preds[id-sp.lo] == 1 {
			p := pred[id-sp.lo]
			next, w, ok := linear(p)
			if !ok || next != id {
				break
			}
			d += w
			if st := n.State(p); st.Kind == nfa.KindCapture && int(st.Slot) < ns && affix[st.Slot] == 0 {
				affix[st.Slot] = -(d + 1)
			}
			id = p
		}
	}
	for _, a := range affix {
		if a == 0 {
			return nil
		}
	}
	return affix
}

// Searcher runs the capture searches of one Prog, with scratch reused
// across matches. It belongs to one goroutine.
type Searcher struct {
	p       *Prog
	visited []uint64
	slots   []int
	stack   []frame
}

// Searcher returns a searcher for p (its scratch grows on first use).
func (p *Prog) Searcher() Searcher { return Searcher{p: p} }

// frame is an exploration (state id at position pos) when slot < 0,
// else the undoing of a capture slot write: slots[slot] = pos. Positions
// fit in int32: a search spans at most maxBits positions.
type frame struct {
	id   nfa.StateID
	slot int32
	pos  int32
}

// Captures appends the capture slots of the match hay[0:end] of rule r to
// dst (relative to hay, -1 for groups that did not participate), like
// pikevm.VM.Captures: before is the byte before hay[0] (nfa.Edge at the
// body start), hay extends past the match as far as the fast path looked,
// not to the body's end. ok is false when the answer needs bytes beyond
// hay or the search would be too big.
func (s *Searcher) Captures(dst []int, r nfa.RuleID, hay []byte, end, before int) ([]int, bool) {
	n := s.p.nfa
	span := s.p.rules[r]
	info := n.Rule(r)
	ns := 2 * (info.NumGroups + 1)
	if span.affix != nil {
		for _, a := range span.affix {
			if a > 0 {
				dst = append(dst, int(a-1))
			} else {
				dst = append(dst, end+int(a+1))
			}
		}
		return dst, true
	}
	npos := end + 2 // positions 0..end+1 may be visited (a path may read hay[end])
	nbits := int(span.hi-span.lo+1) * npos
	if nbits > maxBits {
		return dst, false
	}
	words := (nbits + 63) / 64
	if cap(s.visited) < words {
		s.visited = make([]uint64, words)
	}
	s.visited = s.visited[:words]
	clear(s.visited)
	if cap(s.slots) < ns {
		s.slots = make([]int, ns)
	}
	slots := s.slots[:ns]
	for i := range slots {
		slots[i] = -1
	}
	at := func(p int) (int, bool) {
		if p < 0 {
			return before, true
		}
		if p < len(hay) {
			return int(hay[p]), true
		}
		return 0, false // beyond what the fast path looked at
	}
	stack := append(s.stack[:0], frame{id: info.Start, slot: -1, pos: 0})
	defer func() { s.stack = stack[:0] }()
	for len(stack) > 0 {
		f := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if f.slot >= 0 {
			slots[f.slot] = int(f.pos)
			continue
		}
		id, p := f.id, int(f.pos)
		for {
			if p >= npos {
				return dst, false
			}
			// id is in span (the rule's states) and p < npos: bit < nbits.
			bit := uint(id-span.lo)*uint(npos) + uint(p)
			w, m := &s.visited[bit/64], uint64(1)<<(bit%64)
			if *w&m != 0 {
				break
			}
			*w |= m
			st := n.State(id)
			switch st.Kind {
			case nfa.KindMatch:
				if p != end {
					return dst, false // disagrees with the fast path: let the Pike VM decide
				}
				return append(dst, slots...), true
			case nfa.KindUnion:
				for j := len(st.Alts) - 1; j > 0; j-- {
					stack = append(stack, frame{id: st.Alts[j], slot: -1, pos: int32(p)})
				}
				id = st.Alts[0]
				continue
			case nfa.KindCapture:
				if int(st.Slot) < ns {
					stack = append(stack, frame{slot: int32(st.Slot), pos: int32(slots[st.Slot])})
					slots[st.Slot] = p
				}
				id = st.Next
				continue
			case nfa.KindLook:
				b, ok1 := at(p - 1)
				if p == 0 {
					b, ok1 = before, true
				}
				a, ok2 := at(p)
				if !ok1 || !ok2 {
					return dst, false
				}
				if st.Look.Holds(b, a) {
					id = st.Next
					continue
				}
			case nfa.KindRange, nfa.KindSparse, nfa.KindInvalid:
				c, ok := at(p)
				if !ok {
					return dst, false
				}
				invalid := false
				if st.Kind == nfa.KindInvalid && c >= 0x80 {
					u, ok := nfa.UnitLen(hay[p:], nfa.MoreInput)
					if !ok {
						return dst, false
					}
					invalid = nfa.IsInvalidUnit(c, u)
				}
				if next := st.Step(c, invalid); next != 0 {
					id, p = next, p+1
					continue
				}
			}
			break // Fail, or a transition that does not apply: backtrack
		}
	}
	return dst, false
}
