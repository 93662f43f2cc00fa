package lazydfa

import "github.com/streamsub/streamsub/matcher/internal/nfa"

// table is the state table a Cache and an AnchoredCache build: a row of
// transitions per state (stride entries, Unknown until computed), the NFA
// set of each state, an index from a state's key (its identity: set and
// flags) to its ID, and the memory budget. When a new state does not fit,
// the owner may spend one of maxClears clears (spendClear) and empty the
// table; past them the table gives up, for good until restart: the search
// must leave the rest to the exact engine.
//
// A state's ID is its row's byte offset in trans, with tag bits (see
// StateID), so that a transition is one load at trans + 4×column + ID.
type table struct {
	stride    int // entries per row
	budget    int // bytes
	maxClears int

	trans    []StateID
	setData  []nfa.StateID // state i's set is setData[setStart[i]:setStart[i+1]]
	setStart []int32
	index    map[string]StateID
	keybuf   []byte // scratch for building keys

	mem    int // bytes accounted to the states
	clears int
	gaveUp bool
}

// init sizes an empty table; its owner clears it before use.
func (t *table) init(stride int, cfg Config) {
	t.stride = stride
	t.budget, t.maxClears = cfg.limits()
	t.index = make(map[string]StateID)
}

// clear empties the table.
func (t *table) clear() {
	t.trans = t.trans[:0]
	t.setData = t.setData[:0]
	t.setStart = append(t.setStart[:0], 0)
	clear(t.index)
	t.mem = 0
}

// len returns the number of states.
func (t *table) len() int { return len(t.setStart) - 1 }

// set returns the NFA set of the state whose row is at index row of trans.
func (t *table) set(row int) []nfa.StateID {
	i := row / t.stride
	return t.setData[t.setStart[i]:t.setStart[i+1]]
}

// fits reports whether a state with setLen NFA states fits the budget
// (and the IDs below the tags).
func (t *table) fits(setLen int) bool {
	return t.mem+stateCost(t.stride, setLen) <= t.budget && (t.len()+1)*t.stride*4 <= int(maxOffset)
}

// spendClear records that the owner clears the table for lack of room and
// reports whether it may: past maxClears clears the table gives up
// instead.
func (t *table) spendClear() bool {
	t.clears++
	if t.clears > t.maxClears {
		t.gaveUp = true
		return false
	}
	return true
}

// restart starts the clear accounting over (a new stream: the states stay
// valid) and reports whether the table gave up, and so must be cleared.
func (t *table) restart() (gaveUp bool) {
	gaveUp = t.gaveUp
	t.clears, t.gaveUp = 0, false
	return gaveUp
}

// add appends a state with the given NFA set, indexed by key, and returns
// its ID with tags set. The caller checked fits.
func (t *table) add(key []byte, set []nfa.StateID, tags StateID) StateID {
	id := StateID(t.len()*t.stride*4) | tags
	for range t.stride {
		t.trans = append(t.trans, Unknown)
	}
	t.setData = append(t.setData, set...)
	t.setStart = append(t.setStart, int32(len(t.setData)))
	t.index[string(key)] = id
	t.mem += stateCost(t.stride, len(set))
	return id
}

// stateCost is the memory accounted to one state: its row, its set, its
// key and the map entry.
func stateCost(stride, setLen int) int {
	return 4*stride + 4*setLen + (1 + 4*setLen) + 64
}

// stats reports the table's size and history.
func (t *table) stats() Stats {
	return Stats{States: t.len(), Clears: t.clears, Bytes: t.mem, GaveUp: t.gaveUp}
}
