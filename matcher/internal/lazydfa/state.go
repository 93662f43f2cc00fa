package lazydfa

// StateID identifies a DFA state in one Cache. It is the byte offset of the
// state's row in the cache's transition table (4 × index × number of
// classes), so a transition is one load at table + 4×class + id (see load).
// (An AnchoredCache's IDs are byte offsets too, with one more tag.)
// The top bits are tags that the
// search loop tests with a single comparison:
//
//   - Idle (0) is the state with no live thread: the DFA "start state" of an
//     unanchored search. It is untagged and always at offset 0.
//   - tagMatch marks a state whose NFA set contains a Match state: some
//     (over-approximated) thread has completed a match on the byte that led
//     here. ScanFrom stops on it; ScanWindows records the window and scans
//     on; the window's matches are resolved by the anchored DFA.
//   - Unknown is stored in transitions not computed yet.
//
// Hence in the loop `t-1 >= tagMatch-1` (unsigned) is true exactly for
// Idle, Unknown and match-tagged states — the only ones that need attention.
type StateID uint32

const (
	// Idle is the state with no live thread.
	Idle StateID = 0
	// Unknown marks a transition that has not been computed yet.
	Unknown StateID = 1 << 31
	// tagMatch marks a state reached by completing a match.
	tagMatch StateID = 1 << 30
	// maxOffset bounds the row offsets (IDs) a cache may hand out.
	maxOffset = tagMatch - 1
)

// IsMatch reports whether s is a match state.
func (s StateID) IsMatch() bool { return s&tagMatch != 0 && s != Unknown }

// row returns the index in a Cache's table of the row of s (its ID is the
// row's byte offset).
func (s StateID) row() int { return int(s&^tagMatch) >> 2 }
