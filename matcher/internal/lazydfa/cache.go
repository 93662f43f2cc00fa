package lazydfa

import (
	"encoding/binary"
	"slices"
	"unsafe"

	"github.com/streamsub/streamsub/matcher/internal/nfa"
)

// Status is the outcome of Cache.Scan.
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
)

var statusNames = [...]string{"no_match", "matched", "open", "gave_up", "long"}

func (s Status) String() string { return statusNames[s] }

// Stats describes the work of a Cache.
type Stats struct {
	States int // states currently cached (including Idle)
	Clears int // times the cache was emptied for lack of room
	Bytes  int // memory accounted to the cache
	GaveUp bool
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
	gaveUp  bool
	open    StateID // after Scan returned Open: the state at the end of the input
	matchAt int     // after Scan returned Matched: the offset just past the byte that entered the match state
}

// MatchAt returns, after Scan returned Matched, the offset in its input
// just past the byte on which the DFA entered a match state: every match
// of the window starts before it.
func (c *Cache) MatchAt() int { return c.matchAt }

// NewCache returns an empty cache for d.
func (d *DFA) NewCache() *Cache {
	c := &Cache{d: d, startSet: *d.pf0.Set()}
	c.cl.init(d.nfa.Len())
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
	c.keybuf = append(c.keybuf[:0], 0) // Idle: no match flag, empty set
	c.insert(c.keybuf, nil, false)
}

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
	return Stats{States: len(c.ids), Clears: c.clears, Bytes: c.mem, GaveUp: c.gaveUp}
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
	d := c.d
	idx := s.row() / d.stride
	set := c.setData[c.setStart[idx]:c.setStart[idx+1]]
	cl := &c.cl
	cl.reset()
	for _, q := range set {
		if succ, ok := step(d.nfa.State(q), b); ok {
			cl.add(d.nfa, succ)
		}
	}
	for _, q := range d.start {
		if succ, ok := step(d.nfa.State(q), b); ok {
			cl.add(d.nfa, succ)
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

// Scan runs the DFA over b, starting Idle (no live thread before b[0]).
// It returns NoMatch with len(b) when b holds no match and leaves no thread
// alive; otherwise the offset in b where the decisive window opened, with
// Matched, Open, Long (a window longer than maxWindow bytes, detected at
// most maxWindow/2 bytes late) or GaveUp (see Status). Bytes before the
// returned offset provably take part in no match.
//
// The hot loop treats Idle as an ordinary state, so that windows opening
// and closing every few bytes (word-shaped rules over text) cost nothing,
// and is unrolled eight times with unchecked loads: only a tagged
// transition (match or not yet computed) leaves it. The window start is
// tracked with conditional moves, so that Idle implies w == i between
// steps and no group head has to test for it. When a single byte can start
// a match, Idle skips ahead with bytes.IndexByte (the prefilter).
func (c *Cache) Scan(b []byte, maxWindow int) (int, Status) {
	return c.ScanFrom(b, Idle, 0, maxWindow)
}

// OpenState returns, after Scan or ScanFrom returned Open, the state the
// DFA was in at the end of the input: ScanFrom continues the open window
// from it over the next input. It stays valid until the next scan.
func (c *Cache) OpenState() StateID { return c.open }

// ScanFrom is Scan continuing a window: the DFA starts in state s (Idle, or
// the OpenState of the previous scan), and w0 is the offset in b where the
// window open in s started (<= 0: before b; 0 when s is Idle). Returned
// offsets below 0 name that carried window; an offset >= 0 (or NoMatch)
// means the carried window closed without reaching a match state.
func (c *Cache) ScanFrom(b []byte, s StateID, w0, maxWindow int) (int, Status) {
	if c.gaveUp {
		return w0, GaveUp
	}
	trans := c.trans
	cls := &c.d.classes.m
	pf := c.d.pf
	block := max(maxWindow/2, 4)
	n := len(b)
	bp := unsafe.Pointer(unsafe.SliceData(b))
	// w: where the current window opened (the byte after the last Idle
	// state); invariant between steps: s == Idle implies w == i.
	w, i := w0, 0
	for i < n {
		if s == Idle && pf != nil {
			if i = pf.Next(b, i); i >= n {
				break
			}
			w = i
		}
		end := min(n, i+block)
		for i < end {
			tp := unsafe.Pointer(unsafe.SliceData(trans))
			for i+8 <= end {
				if pf != nil && s == Idle {
					break // back to the IndexByte skip (below)
				}
				t0 := load(tp, s, cls[*(*byte)(unsafe.Add(bp, i))])
				if t0 >= tagMatch {
					break
				}
				w = sel(t0 == Idle, i+1, w)
				t1 := load(tp, t0, cls[*(*byte)(unsafe.Add(bp, i+1))])
				if t1 >= tagMatch {
					s, i = t0, i+1
					break
				}
				w = sel(t1 == Idle, i+2, w)
				t2 := load(tp, t1, cls[*(*byte)(unsafe.Add(bp, i+2))])
				if t2 >= tagMatch {
					s, i = t1, i+2
					break
				}
				w = sel(t2 == Idle, i+3, w)
				t3 := load(tp, t2, cls[*(*byte)(unsafe.Add(bp, i+3))])
				if t3 >= tagMatch {
					s, i = t2, i+3
					break
				}
				w = sel(t3 == Idle, i+4, w)
				t4 := load(tp, t3, cls[*(*byte)(unsafe.Add(bp, i+4))])
				if t4 >= tagMatch {
					s, i = t3, i+4
					break
				}
				w = sel(t4 == Idle, i+5, w)
				t5 := load(tp, t4, cls[*(*byte)(unsafe.Add(bp, i+5))])
				if t5 >= tagMatch {
					s, i = t4, i+5
					break
				}
				w = sel(t5 == Idle, i+6, w)
				t6 := load(tp, t5, cls[*(*byte)(unsafe.Add(bp, i+6))])
				if t6 >= tagMatch {
					s, i = t5, i+6
					break
				}
				w = sel(t6 == Idle, i+7, w)
				t7 := load(tp, t6, cls[*(*byte)(unsafe.Add(bp, i+7))])
				if t7 >= tagMatch {
					s, i = t6, i+7
					break
				}
				w = sel(t7 == Idle, i+8, w)
				s, i = t7, i+8
			}
			if i >= end {
				break
			}
			if s == Idle && pf != nil && !pf.Set()[b[i]] {
				break // back to the IndexByte skip
			}
			// One careful step: the byte whose transition is tagged, or
			// the tail of the block.
			t := trans[s.row()+int(cls[b[i]])]
			if t >= tagMatch {
				if t == Unknown {
					var ok bool
					if t, ok = c.next(s, b[i]); !ok {
						return w, GaveUp
					}
					trans = c.trans
				}
				if t&tagMatch != 0 {
					c.matchAt = i + 1
					return w, Matched
				}
			}
			s = t
			i++
			if s == Idle {
				w = i
			}
		}
		if s != Idle && i-w > maxWindow {
			return w, Long
		}
	}
	if s != Idle {
		c.open = s
		return w, Open
	}
	return n, NoMatch
}

// sel returns a if c, else b; written so that the compiler emits a
// conditional move (window starts change at every word edge: a branch there
// mispredicts).
func sel(c bool, a, b int) int {
	if c {
		return a
	}
	return b
}

// load returns the transition of untagged state s on class cl from the
// table at tp. PERF: unchecked (unsafe) because the table always has a full
// row for every state an untagged ID names — the invariant of insert — and
// the bounds check cost ~20% of the scan loop (callgrind, BenchmarkRewrite).
// The ID is the row's byte offset, so the address tp + 4*cl + s is one
// addressing mode whose only input on the state chain is s: the chain of
// dependent steps is a load per byte, without an add.
func load(tp unsafe.Pointer, s StateID, cl uint8) StateID {
	return *(*StateID)(unsafe.Add(unsafe.Add(tp, uintptr(cl)*4), uintptr(s)))
}
