package nfa

// StateSet is a set of StateIDs of one NFA with O(1) insert, membership
// and clear (Briggs & Torczon's sparse set). Invariant: x is in the set iff
// sparse[x] < len(dense) and dense[sparse[x]] == x. The zero value is an
// empty set of capacity 0; NewStateSet sizes one to an NFA.
type StateSet struct {
	sparse []uint32
	dense  []StateID
}

// NewStateSet returns an empty set for the StateIDs [0, n).
func NewStateSet(n int) StateSet {
	return StateSet{sparse: make([]uint32, n), dense: make([]StateID, 0, n)}
}

// Clear empties the set.
func (s *StateSet) Clear() { s.dense = s.dense[:0] }

// Contains reports whether x is in the set.
func (s *StateSet) Contains(x StateID) bool {
	i := s.sparse[x]
	return int(i) < len(s.dense) && s.dense[i] == x
}

// Insert adds x and reports whether it was not in the set already.
func (s *StateSet) Insert(x StateID) bool {
	i := s.sparse[x]
	if int(i) < len(s.dense) && s.dense[i] == x {
		return false
	}
	s.sparse[x] = uint32(len(s.dense))
	s.dense = append(s.dense, x)
	return true
}
