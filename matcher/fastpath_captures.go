package matcher

// Capture positions for the fast path (design.md §3 layer 3): a bounded
// backtracker over one rule's NFA, anchored at the match start.
//
// The fast path already knows the match [p, end) and its rule; captures are
// needed only for templates that use $N. Exploring paths in priority order
// and stopping at the first Match reproduces the Pike VM's leftmost-first
// choice for that start, and a visited bit per (state, position) makes the
// search O(rule states × match length) — as Go's regexp backtracker
// (regexp/backtrack.go). On the short matches of real rule sets it touches
// a few states per byte, against the Pike VM capture pass's whole thread
// list per byte. Whenever it cannot decide from the bytes at hand, or the
// visited set would be large, the caller falls back to pikevm.VM.Captures.

import (
	"github.com/streamsub/streamsub/matcher/internal/nfa"
)

// maxBacktrackBits bounds the visited set (states × positions) of one
// capture search; larger ones use the Pike VM.
const maxBacktrackBits = 256 << 10

// stateSpan is the range of StateIDs reachable from one rule's start: the
// rows of the backtracker's visited set.
type stateSpan struct{ lo, hi nfa.StateID }

// ruleSpans returns the state span of every rule of n.
func ruleSpans(n *nfa.NFA) []stateSpan {
	spans := make([]stateSpan, n.NumRules())
	seen := make([]bool, n.Len())
	for r := range spans {
		start := n.Rule(nfa.RuleID(r)).Start
		sp := stateSpan{start, start}
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
			case nfa.KindSparse:
				for _, t := range st.Trans {
					stack = append(stack, t.Next)
				}
			case nfa.KindMatch, nfa.KindFail:
			default:
				stack = append(stack, st.Next)
			}
		}
		spans[r] = sp
	}
	return spans
}

// backtracker is per-stream scratch, reused across matches.
type backtracker struct {
	visited []uint64
	slots   []int
	stack   []btFrame
}

// btFrame is an exploration (state id at position pos) when slot < 0,
// else the undoing of a capture slot write: slots[slot] = pos. Positions
// fit in int32: a search spans at most maxBacktrackBits positions.
type btFrame struct {
	id   nfa.StateID
	slot int32
	pos  int32
}

// captures appends the capture slots of the match hay[0:end] of rule r to
// dst (relative to hay, -1 for groups that did not participate), like
// pikevm.VM.Captures: before is the byte before hay[0], hay extends past
// the match as far as the fast path looked, not to the body's end. ok is
// false when the answer needs bytes beyond hay or the search would be too
// big.
func (bt *backtracker) captures(dst []int, n *nfa.NFA, span stateSpan, r nfa.RuleID, hay []byte, end, before int) ([]int, bool) {
	info := n.Rule(r)
	ns := 2 * (info.NumGroups + 1)
	npos := end + 2 // positions 0..end+1 may be visited (a path may read hay[end])
	nbits := int(span.hi-span.lo+1) * npos
	if nbits > maxBacktrackBits {
		return dst, false
	}
	words := (nbits + 63) / 64
	if cap(bt.visited) < words {
		bt.visited = make([]uint64, words)
	}
	bt.visited = bt.visited[:words]
	clear(bt.visited)
	if cap(bt.slots) < ns {
		bt.slots = make([]int, ns)
	}
	slots := bt.slots[:ns]
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
	stack := append(bt.stack[:0], btFrame{id: info.Start, slot: -1, pos: 0})
	defer func() { bt.stack = stack[:0] }()
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
			w, m := &bt.visited[bit/64], uint64(1)<<(bit%64)
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
					stack = append(stack, btFrame{id: st.Alts[j], slot: -1, pos: int32(p)})
				}
				id = st.Alts[0]
				continue
			case nfa.KindCapture:
				if int(st.Slot) < ns {
					stack = append(stack, btFrame{slot: int32(st.Slot), pos: int32(slots[st.Slot])})
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
			case nfa.KindRange:
				c, ok := at(p)
				if !ok {
					return dst, false
				}
				if int(st.Lo) <= c && c <= int(st.Hi) {
					id, p = st.Next, p+1
					continue
				}
			case nfa.KindSparse:
				c, ok := at(p)
				if !ok {
					return dst, false
				}
				next := nfa.StateID(0)
				for _, tr := range st.Trans {
					if c <= int(tr.Hi) {
						if int(tr.Lo) <= c {
							next = tr.Next
						}
						break
					}
				}
				if next != 0 {
					id, p = next, p+1
					continue
				}
			case nfa.KindInvalid:
				c, ok := at(p)
				if !ok {
					return dst, false
				}
				if c >= 0x80 {
					u, ok := nfa.UnitLen(hay[p:], false)
					if !ok {
						return dst, false
					}
					if u == 1 {
						id, p = st.Next, p+1
						continue
					}
				}
			}
			break // Fail, or a transition that does not apply: backtrack
		}
	}
	return dst, false
}
