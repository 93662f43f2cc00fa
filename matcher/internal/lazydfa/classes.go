package lazydfa

import "github.com/streamsub/streamsub/matcher/internal/nfa"

// Classes maps every byte to its equivalence class: two bytes are in the
// same class when no transition of the NFA (as the DFA over-approximates it)
// tells them apart. The DFA's transition table has one column per class
// instead of 256, which shrinks each state from 1 KiB to a few dozen bytes.
type Classes struct {
	m [256]uint8
	n int // number of classes, 1..256
}

// Get returns the class of b.
func (c *Classes) Get(b byte) uint8 { return c.m[b] }

// Len returns the number of classes.
func (c *Classes) Len() int { return c.n }

// Representative returns a byte of class cl.
func (c *Classes) Representative(cl uint8) byte {
	for b := range 256 {
		if c.m[b] == cl {
			return byte(b)
		}
	}
	panic("lazydfa: no byte in class")
}

// identityClasses puts every byte in its own class (byte classes off).
func identityClasses() Classes {
	var c Classes
	for b := range 256 {
		c.m[b] = uint8(b)
	}
	c.n = 256
	return c
}

// newClasses computes the classes of n: a class boundary before every
// range's Lo and after every range's Hi. Invalid states are
// over-approximated as the range 80-FF.
func newClasses(n *nfa.NFA) Classes {
	var cut [257]bool // cut[b]: a new class starts at byte b
	mark := func(lo, hi byte) {
		cut[lo] = true
		cut[int(hi)+1] = true
	}
	for id := range n.Len() {
		for e := range n.State(nfa.StateID(id)).Edges() {
			mark(e.Lo, e.Hi)
		}
	}
	var c Classes
	cl := 0
	for b := range 256 {
		if b > 0 && cut[b] {
			cl++
		}
		c.m[b] = uint8(cl)
	}
	c.n = cl + 1
	return c
}
