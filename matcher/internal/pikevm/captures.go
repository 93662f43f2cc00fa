package pikevm

import (
	"fmt"

	"github.com/streamsub/streamsub/matcher/internal/nfa"
)

// capScratch is the scratch of the capture pass, allocated on first use
// and grown (rarely) for a rule with more groups; then reused. Its
// closures use the VM's walker.
type capScratch struct {
	nslots    int
	cur       []thread // threads at the current position; the next ones go to the walker's Out
	curSlots  []int    // thread i of cur owns curSlots[i*nslots:(i+1)*nslots]
	nextSlots []int
	scratch   []int
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
	m.walk.Reset(nfa.LookCtx{Before: before, After: at(0)})
	cs.curSlots = m.capClosure(cs, cs.curSlots[:0], info.Start, 0)
	cs.cur, m.walk.Out = m.walk.Out, cs.cur[:0]
	for p := 0; ; p++ {
		if p == end {
			for i, t := range cs.cur {
				if m.p.states[t.ID].Kind == nfa.KindMatch {
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
		invalid := nfa.IsInvalidUnit(c, unit)
		m.walk.Reset(nfa.LookCtx{Before: c, After: at(p + 1)})
		cs.nextSlots = cs.nextSlots[:0]
		for i, t := range cs.cur {
			st := &m.p.states[t.ID]
			if st.Kind == nfa.KindMatch {
				break // cut lower-priority threads
			}
			if next := st.Step(c, invalid); next != 0 {
				copy(cs.scratch[:ns], cs.curSlots[i*ns:(i+1)*ns])
				cs.nextSlots = m.capClosure(cs, cs.nextSlots, next, p+1)
			}
		}
		cs.cur, m.walk.Out = m.walk.Out, cs.cur[:0]
		cs.curSlots, cs.nextSlots = cs.nextSlots, cs.curSlots
	}
}

func (m *VM) capScratchFor(ns int) *capScratch {
	if m.caps != nil && m.caps.nslots >= ns && len(m.caps.scratch) >= ns {
		return m.caps
	}
	n := m.p.nfa.Len()
	m.caps = &capScratch{
		nslots:    ns,
		cur:       make([]thread, 0, n),
		curSlots:  make([]int, 0, n*ns),
		nextSlots: make([]int, 0, n*ns),
		scratch:   make([]int, ns),
	}
	return m.caps
}

// capClosure appends to the walker's Out the closure of id at position p
// (the walker's) with capture slots: cs.scratch holds the slots of the
// thread being followed; each consuming or match state reached gets a copy
// of them appended to slots.
func (m *VM) capClosure(cs *capScratch, slots []int, id nfa.StateID, p int) []int {
	caps := nfa.Slots{Cur: cs.scratch[:cs.nslots], Pos: p, Out: slots}
	m.walk.Closure(thread{ID: id}, &caps)
	return caps.Out
}
