package lazydfa

import (
	"encoding/binary"
	"slices"
)

// Status is the outcome of a search: of a scan (Cache.ScanWindows) or of
// an anchored search (AnchoredCache.Find). Each says which it returns.
type Status uint8

const (
	// NoMatch: a scan went over its whole input and the DFA ended Idle:
	// the input holds no match and no thread is left alive at its end. An
	// anchored search: every thread died, no match starts at the position.
	NoMatch Status = iota
	// Found: an anchored search found the match ending at the returned
	// offset.
	Found
	// Open: the scan window that opened at the returned offset is still
	// open at the end of the input: threads from there on may still match.
	Open
	// GaveUp: the cache ran out of budget too often. A scan returns the
	// offset where the exact engine must take over (the open window's
	// start, or the position reached if the DFA was Idle).
	GaveUp
	// Long: the scan window that opened at the returned offset grew longer
	// than the limit without reaching a match state; or the threads of an
	// anchored search are still alive after its limit.
	Long
	// Full: a scan filled its window buffer and stopped at the returned
	// offset.
	Full
	// NeedMore: an anchored search depends on bytes beyond its input (or
	// the decoding of a byte near its end): the exact engine must decide.
	NeedMore
)

var statusNames = [...]string{"no_match", "found", "open", "gave_up", "long", "full", "need_more"}

func (s Status) String() string { return statusNames[s] }

// Stats describes the work of a Cache or an AnchoredCache.
type Stats struct {
	States int  // states currently cached (a Cache's include Idle)
	Clears int  // times the cache was emptied for lack of room
	Bytes  int  // memory accounted to the cache
	GaveUp bool // the cache gave up (see table)
	Syncs  int  // Cache: times the speculative chain of a scan took over (scan.go)
}

// Cache is the partly built transition table of a DFA (one column per
// byte class), owned by one stream (one goroutine) at a time. It grows
// until its budget is reached; then it is cleared and rebuilt, and after
// Config.MaxClears clears it gives up (see table). Its zero allocation
// steady state: once the states a body needs exist, a scan allocates
// nothing.
type Cache struct {
	d *DFA
	table
	cl closer // scratch for building states

	syncs int
	open  StateID // after a scan returned Open or Full: the state at the end of the input (at the stop)
	// after ScanWindows returned Full: the window start at the stop (the
	// state is in open)
	resumeStart int
}

// NewCache returns an empty cache for d.
func (d *DFA) NewCache() *Cache {
	c := &Cache{d: d}
	c.cl.init(d.nfa)
	c.table.init(d.stride, d.cfg)
	c.clear()
	return c
}

// clear empties the cache, keeping only Idle.
func (c *Cache) clear() {
	c.table.clear()
	c.add(idleKey, nil, 0) // Idle: no tags, at offset 0
}

// idleKey is the index key of Idle: no match flag, empty set. (clear must
// not build it in keybuf: step clears the cache while its key for the new
// state is still in keybuf.)
var idleKey = []byte{0}

// Reset prepares the cache for a new stream: the built states stay (they
// are valid for any body), the give-up accounting starts over.
func (c *Cache) Reset() {
	if c.restart() {
		c.clear()
	}
}

// Stats reports the cache's size and history.
func (c *Cache) Stats() Stats {
	s := c.stats()
	s.Syncs = c.syncs
	return s
}

// What Cache.step does when a new state does not fit.
const (
	clearIfFull = true  // clear the cache (every older ID dies)
	failIfFull  = false // fail, changing nothing: the IDs other scan chains hold stay valid
)

// next computes the transition of s on byte b, building the target state
// if needed. ok is false when the cache gave up.
func (c *Cache) next(s StateID, b byte) (StateID, bool) {
	return c.step(s, b, clearIfFull)
}

// step is next; with clearOK false (failIfFull) it fails (ok false,
// nothing changed) instead of clearing the cache when the new state does
// not fit.
func (c *Cache) step(s StateID, b byte, clearOK bool) (StateID, bool) {
	d := c.d
	set := c.set(s.row())
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
	if !c.fits(len(cl.consumers)) {
		if !clearOK || !c.spendClear() {
			return Unknown, false
		}
		c.clear() // s's row is gone: the transition is not recorded
		return c.add(key, cl.consumers, cl.tags()), true
	}
	t := c.add(key, cl.consumers, cl.tags())
	c.trans[s.row()+int(d.classes.Get(b))] = t
	return t, true
}
