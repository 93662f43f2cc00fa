package pikevm

import (
	"fmt"

	"github.com/streamsub/streamsub/matcher/internal/nfa"
)

// capScratch is the scratch of the capture pass, allocated on first use
// and grown (rarely) for a rule with more groups; then reused.
type capScratch struct {
	nslots    int
	set       sparseSet
	cur, next []nfa.StateID
	curSlots  []int // thread i of cur owns curSlots[i*nslots:(i+1)*nslots]
	nextSlots []int
	scratch   []int
	stack     []capFrame
}

// capFrame is a closure DFS frame: explore id, or restore a slot's old
// value once the subtree below a Capture state is done.
type capFrame struct {
	id      nfa.StateID
	restore bool
	slot    uint32
	val     int
}

// Captures computes the capture groups of a final match of rule r. hay
// holds the body from the match start on (so hay[0] is the first byte of
// the match), end is the match length, before is the byte preceding the
// match (Edge at the body start) and atEOF reports that hay ends at the
// body's end. hay must include every byte the search looked at to find the
// match (at least through hay[end] unless atEOF, and the bytes needed to
// decode invalid UTF-8 inside the match).
//
// It re-runs rule r alone, anchored at 0, with capture slots; its
// preferred match must end at end (leftmost-first makes the search's match
// that rule's preferred one at that start). It appends 2*(groups+1) slots
// to dst, relative to hay: slot 2g and 2g+1 bound group g, -1 when the
// group did not participate.
func (m *VM) Captures(dst []int, r nfa.RuleID, hay []byte, end int, before int, atEOF bool) []int {
	m.acquire()
	info := m.p.nfa.Rule(r)
	ns := 2 * (info.NumGroups + 1)
	cs := m.capScratchFor(ns)
	cs.nslots = ns

	at := func(p int) int {
		if p < len(hay) {
			return int(hay[p])
		}
		return Edge
	}
	for i := range cs.scratch[:ns] {
		cs.scratch[i] = -1
	}
	cs.set.clear()
	cs.cur = cs.cur[:0]
	cs.curSlots = cs.curSlots[:0]
	m.capClosure(cs, &cs.cur, &cs.curSlots, info.Start, 0, before, at(0))
	for p := 0; ; p++ {
		if p == end {
			for i, id := range cs.cur {
				if m.p.states[id].Kind == nfa.KindMatch {
					return append(dst, cs.curSlots[i*ns:(i+1)*ns]...)
				}
			}
			panic(fmt.Sprintf("pikevm: rule %d has no match of length %d for its captures", r, end))
		}
		if p >= len(hay) {
			panic(fmt.Sprintf("pikevm: captures of rule %d: match end %d beyond %d bytes", r, end, len(hay)))
		}
		c := int(hay[p])
		unit := 1
		if c >= 0x80 && m.p.hasInvalid {
			unit, _ = nfa.UnitLen(hay[p:], atEOF)
		}
		cs.set.clear()
		cs.next = cs.next[:0]
		cs.nextSlots = cs.nextSlots[:0]
	step:
		for i, id := range cs.cur {
			st := &m.p.states[id]
			next := nfa.StateID(0)
			switch st.Kind {
			case nfa.KindMatch:
				break step // cut lower-priority threads
			case nfa.KindRange:
				if int(st.Lo) <= c && c <= int(st.Hi) {
					next = st.Next
				}
			case nfa.KindSparse:
				for _, tr := range st.Trans {
					if c <= int(tr.Hi) {
						if int(tr.Lo) <= c {
							next = tr.Next
						}
						break
					}
				}
			case nfa.KindInvalid:
				if c >= 0x80 && unit == 1 {
					next = st.Next
				}
			}
			if next != 0 {
				copy(cs.scratch[:ns], cs.curSlots[i*ns:(i+1)*ns])
				m.capClosure(cs, &cs.next, &cs.nextSlots, next, p+1, c, at(p+1))
			}
		}
		cs.cur, cs.next = cs.next, cs.cur
		cs.curSlots, cs.nextSlots = cs.nextSlots, cs.curSlots
	}
}

func (m *VM) capScratchFor(ns int) *capScratch {
	if m.caps != nil && m.caps.nslots >= ns && len(m.caps.scratch) >= ns {
		return m.caps
	}
	n := m.p.nfa.Len()
	edges := 1
	for i := 0; i < n; i++ {
		edges += len(m.p.states[i].Alts) + 2
	}
	m.caps = &capScratch{
		nslots:    ns,
		set:       newSparseSet(n),
		cur:       make([]nfa.StateID, 0, n),
		next:      make([]nfa.StateID, 0, n),
		curSlots:  make([]int, 0, n*ns),
		nextSlots: make([]int, 0, n*ns),
		scratch:   make([]int, ns),
		stack:     make([]capFrame, 0, edges),
	}
	return m.caps
}

// capClosure is closure with capture slots: cs.scratch holds the slots of
// the thread being followed; each consuming or match state reached gets a
// copy of them.
func (m *VM) capClosure(cs *capScratch, list *[]nfa.StateID, slots *[]int, id nfa.StateID, p int, before, after int) {
	ns := cs.nslots
	stack := append(cs.stack[:0], capFrame{id: id})
	for len(stack) > 0 {
		f := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if f.restore {
			cs.scratch[f.slot] = f.val
			continue
		}
		id := f.id
		for {
			if !cs.set.insert(id) {
				break
			}
			st := &m.p.states[id]
			switch st.Kind {
			case nfa.KindUnion:
				for j := len(st.Alts) - 1; j > 0; j-- {
					stack = append(stack, capFrame{id: st.Alts[j]})
				}
				id = st.Alts[0]
				continue
			case nfa.KindCapture:
				if int(st.Slot) < ns {
					stack = append(stack, capFrame{restore: true, slot: st.Slot, val: cs.scratch[st.Slot]})
					cs.scratch[st.Slot] = p
				}
				id = st.Next
				continue
			case nfa.KindLook:
				if st.Look.Holds(before, after) {
					id = st.Next
					continue
				}
			case nfa.KindFail:
			default:
				*list = append(*list, id)
				*slots = append(*slots, cs.scratch[:ns]...)
			}
			break
		}
	}
	cs.stack = stack
}
