package lazydfa

import (
	"encoding/binary"
	"slices"

	"github.com/streamsub/streamsub/matcher/internal/nfa"
)

// Status is the outcome of a scan (Cache.Scan, ScanFrom, ScanWindows).
type Status uint8

const (
	// NoMatch: the whole input was scanned and the DFA ended Idle; the input
	// holds no match and no thread is left alive at its end.
	NoMatch Status = iota
	// Matched: the window that opened at the returned offset reached a match
	// state. The exact engine must resolve the input from that offset on.
	Matched
	// Open: the window that opened at the returned offset is still open at
	// the end of the input: threads from there on may still match.
	Open
	// GaveUp: the cache ran out of budget too often; the exact engine must
	// take over at the returned offset (the open window's start, or the
	// position reached if the DFA was Idle).
	GaveUp
	// Long: the window that opened at the returned offset grew longer than
	// the limit passed to Scan without reaching a match state.
	Long
	// Full: ScanWindows filled its window buffer and stopped at the
	// returned offset.
	Full
)

var statusNames = [...]string{"no_match", "matched", "open", "gave_up", "long", "full"}

func (s Status) String() string { return statusNames[s] }

// Stats describes the work of a Cache.
type Stats struct {
	States int // states currently cached (including Idle)
	Clears int // times the cache was emptied for lack of room
	Bytes  int // memory accounted to the cache
	GaveUp bool
	Syncs  int // times the speculative chain of a scan took over (scan.go)
}

// Cache is the partly built transition table of a DFA, owned by one stream
// (one goroutine) at a time. It grows until its budget is reached; then it
// is cleared and rebuilt, and after Config.MaxClears clears it gives up.
// Its zero allocation steady state: once the states a body needs exist,
// Scan allocates nothing.
type Cache struct {
	d        *DFA
	startSet [256]bool // d.StartBytes(): bytes on which Idle is left

	// Transition table: row i (entries i*stride..; state ID i*stride*4) has
	// one entry per class.
	trans []StateID
	// NFA sets: state index i owns setData[setStart[i]:setStart[i+1]].
	setData  []nfa.StateID
	setStart []int32
	ids      []StateID // the tagged ID of state index i
	index    map[string]StateID

	// Scratch for building states.
	cl     closer
	keybuf []byte

	mem     int
	clears  int
	syncs   int
	gaveUp  bool
	open    StateID // after a scan returned Open (Full): the state at the end of the input (at the stop)
	matchAt int     // after Scan returned Matched: the offset just past the byte that entered the match state
	// after ScanWindows returned Full: the window start at the stop (the
	// state is in open)
	resumeStart int
}

// MatchAt returns, after Scan returned Matched, the offset in its input
// just past the byte on which the DFA entered a match state: every match
// of the window starts before it.
func (c *Cache) MatchAt() int { return c.matchAt }

// NewCache returns an empty cache for d.
func (d *DFA) NewCache() *Cache {
	c := &Cache{d: d, startSet: *d.pf0.Set()}
	c.cl.init(d.nfa)
	c.clear()
	return c
}

// clear empties the cache, keeping only Idle.
func (c *Cache) clear() {
	c.trans = c.trans[:0]
	c.setData = c.setData[:0]
	c.setStart = append(c.setStart[:0], 0)
	c.ids = c.ids[:0]
	if c.index == nil {
		c.index = make(map[string]StateID)
	} else {
		clear(c.index)
	}
	c.mem = 0
	c.insert(idleKey, nil, false)
}

// idleKey is the index key of Idle: no match flag, empty set. (clear must
// not build it in keybuf: step clears the cache while its key for the new
// state is still in keybuf.)
var idleKey = []byte{0}

// Reset prepares the cache for a new stream: the built states stay (they
// are valid for any body), the give-up accounting starts over.
func (c *Cache) Reset() {
	if c.gaveUp {
		c.clear()
	}
	c.clears = 0
	c.gaveUp = false
}

// Stats reports the cache's size and history.
func (c *Cache) Stats() Stats {
	return Stats{States: len(c.ids), Clears: c.clears, Bytes: c.mem, GaveUp: c.gaveUp, Syncs: c.syncs}
}

// insert adds a state for set (sorted) with the given key, and returns its ID.
func (c *Cache) insert(key []byte, set []nfa.StateID, match bool) StateID {
	idx := len(c.ids)
	id := StateID(idx * c.d.stride * 4)
	if match {
		id |= tagMatch
	}
	for range c.d.stride {
		c.trans = append(c.trans, Unknown)
	}
	c.setData = append(c.setData, set...)
	c.setStart = append(c.setStart, int32(len(c.setData)))
	c.ids = append(c.ids, id)
	c.index[string(key)] = id
	c.mem += stateCost(c.d.stride, len(set))
	return id
}

// stateCost is the memory accounted to one state: its row, its set, its
// key and the map entry.
func stateCost(stride, setLen int) int {
	return 4*stride + 4*setLen + (1 + 4*setLen) + 64
}

// next computes the transition of s on byte b, building the target state
// if needed. ok is false when the cache gave up.
func (c *Cache) next(s StateID, b byte) (StateID, bool) {
	return c.step(s, b, true)
}

// step is next; with mayClear false it fails (ok false, nothing changed)
// instead of clearing the cache when the new state does not fit, so that
// the IDs other scan chains hold stay valid.
func (c *Cache) step(s StateID, b byte, mayClear bool) (StateID, bool) {
	d := c.d
	idx := s.row() / d.stride
	set := c.setData[c.setStart[idx]:c.setStart[idx+1]]
	cl := &c.cl
	cl.reset()
	for _, q := range set {
		if succ := stepOver(d.nfa.State(q), b); succ != 0 {
			cl.add(succ)
		}
	}
	for _, q := range d.start {
		if succ := stepOver(d.nfa.State(q), b); succ != 0 {
			cl.add(succ)
		}
	}
	slices.Sort(cl.consumers)
	key := c.keybuf[:0]
	if cl.match {
		key = append(key, 1)
	} else {
		key = append(key, 0)
	}
	for _, q := range cl.consumers {
		key = binary.LittleEndian.AppendUint32(key, uint32(q))
	}
	c.keybuf = key
	if t, ok := c.index[string(key)]; ok {
		c.trans[s.row()+int(d.classes.Get(b))] = t
		return t, true
	}
	if len(cl.consumers) == 0 && !cl.match {
		// Unreachable: the empty non-match set is Idle and always indexed.
		panic("lazydfa: Idle missing from index")
	}
	cost := stateCost(d.stride, len(cl.consumers))
	if c.mem+cost > d.cacheBytes || (len(c.ids)+1)*d.stride*4 > int(maxOffset) {
		if !mayClear {
			return Unknown, false
		}
		c.clears++
		if c.clears > d.maxClears {
			c.gaveUp = true
			return Unknown, false
		}
		c.clear() // s's row is gone: the transition is not recorded
		return c.insert(key, cl.consumers, cl.match), true
	}
	t := c.insert(key, cl.consumers, cl.match)
	c.trans[s.row()+int(d.classes.Get(b))] = t
	return t, true
}
