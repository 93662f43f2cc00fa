package lazydfa

// StateID identifies a DFA state in one Cache or AnchoredCache. It is the
// byte offset of the state's row in the cache's transition table (4 ×
// index × row length), so a transition is one load at table + 4×column +
// id (see load). The top bits are tags that the search loops test with a
// single comparison:
//
//   - Idle (0) is the state with no live thread: the DFA "start state" of an
//     unanchored search (Cache only). It is untagged and always at offset 0.
//   - tagMatch marks a state reached by completing a match: in a Cache,
//     some (over-approximated) thread has completed a match on the byte that
//     led here, and ScanWindows records the window and scans on (the
//     window's matches are resolved by the anchored DFA); in an
//     AnchoredCache, the transition found a match ending before its input.
//   - tagDead marks an AnchoredCache state with no thread left.
//   - Unknown is stored in transitions not computed yet.
//
// Hence `t >= tagMatch` is true exactly for the Unknown and match-tagged
// states of a Cache, and `t >= tagDead` for the dead ones too in an
// AnchoredCache: the only ones that need attention.
type StateID uint32

const (
	// Idle is the state with no live thread.
	Idle StateID = 0
	// Unknown marks a transition that has not been computed yet.
	Unknown StateID = 1 << 31
	// tagMatch marks a state reached by completing a match.
	tagMatch StateID = 1 << 30
	// tagDead marks an anchored state with no thread left.
	tagDead StateID = 1 << 29
	// maxOffset bounds the row offsets (IDs) a cache may hand out.
	maxOffset = tagDead - 1
)

// row returns the index in its cache's transition table of the row of s
// (its ID is the row's byte offset).
func (s StateID) row() int { return int(s&^(tagMatch|tagDead)) >> 2 }
