package nfa

import "iter"

// Step returns the successor of the consuming state s over the byte c at
// some position, or 0 (the Fail state: the thread dies) when s does not
// accept c or consumes nothing. c is a byte value, or negative (Edge,
// Unknown) where there is no byte, which no state accepts. invalid reports
// that c begins an invalid unit at its position (IsInvalidUnit), which is
// all an Invalid state looks at; an engine that does not decode passes
// c >= 0x80 and so over-approximates Invalid as every such byte.
//
// Every engine steps its threads with Step, so that they agree on what a
// state accepts.
func (s *State) Step(c int, invalid bool) StateID {
	switch s.Kind {
	case KindRange:
		if int(s.Lo) <= c && c <= int(s.Hi) {
			return s.Next
		}
	case KindSparse:
		return s.stepSparse(c)
	case KindInvalid:
		if invalid {
			return s.Next
		}
	}
	return 0
}

// stepSparse is Step for a Sparse state: its edges are sorted and
// disjoint, so the first whose Hi is not below c decides. (Out of line so
// that Step inlines into the engines' loops.)
func (s *State) stepSparse(c int) StateID {
	for _, t := range s.Trans {
		if c <= int(t.Hi) {
			if int(t.Lo) <= c {
				return t.Next
			}
			break
		}
	}
	return 0
}

// IsInvalidUnit reports whether the byte c, whose unit at its position is
// unitLen bytes long (UnitLen), is an invalid unit: what an Invalid state
// consumes. ASCII bytes are one-byte units too, but valid ones.
func IsInvalidUnit(c, unitLen int) bool { return c >= 0x80 && unitLen == 1 }

// Edges yields the byte-range edges of the consuming state s, Invalid
// over-approximated as the range 80-FF; other kinds have none. It is for
// the engines' precomputations (byte classes, start sets), not for
// stepping.
func (s *State) Edges() iter.Seq[Transition] {
	return func(yield func(Transition) bool) {
		switch s.Kind {
		case KindRange:
			yield(Transition{Lo: s.Lo, Hi: s.Hi, Next: s.Next})
		case KindSparse:
			for _, t := range s.Trans {
				if !yield(t) {
					return
				}
			}
		case KindInvalid:
			yield(Transition{Lo: 0x80, Hi: 0xFF, Next: s.Next})
		}
	}
}
