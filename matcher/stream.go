package matcher

// The streaming rewriter (semantics.md "Which match wins", "Streaming").
//
// Algorithm: a Stream keeps the bytes it has not emitted yet in buf and
// runs the exact engine (internal/pikevm) over them. The engine reports
// the next final leftmost-first match [s,e) of the alternation of all
// rules; the Stream writes the bytes before s, then the expanded
// replacement (or, for a once rule that already fired, the matched text
// unchanged), and restarts the search at e, re-scanning the held bytes
// after e. An empty match at p writes the replacement, then the unit at p
// (a whole UTF-8 sequence, or one invalid byte: an empty match never
// splits a character) is copied and the search restarts after it; the
// engine holds the unit's bytes until it knows its length. Whenever the
// engine needs more input, every byte before its earliest live thread
// start is final and is written out; only the rest stays held.
//
// Hold-back cap (semantics.md "Streaming"): what stays held at the end of
// a chunk is counted as replace_filter counts it (heldAtChunkEnd); above
// MaxBufferedBytes the held bytes are flushed unchanged and the rest of the
// body passes through (StreamStats.Overflowed). Within one chunk live
// threads may span up to RuleSet.maxSpan = max(2*cap, 64 KiB) bytes.
//
// Cost: O(NFA) per byte scanned. Bytes after a match end may be scanned
// again, but only bytes that were held, so at most maxSpan per match.
// Memory: the held bytes plus scratch sized to the NFA, allocated by
// NewStream (capture scratch on the first capture); Write allocates
// nothing in steady state.

import (
	"github.com/streamsub/streamsub/matcher/internal/nfa"
	"github.com/streamsub/streamsub/matcher/internal/pikevm"
)

// Stream rewrites one body. It belongs to one goroutine.
type Stream struct {
	// Immutable after NewStream.
	rs   *RuleSet
	vm   *pikevm.VM
	fast *fastStream // lazy-DFA fast path (fastpath.go); nil without one

	// Per-body state.
	//
	// Invariants: buf holds the body bytes [base, base+len(buf)); base <=
	// emitted-1 whenever emitted > 0, so the byte before every position
	// still to be scanned is available (for ^ $ \b); emitted <=
	// vm.Earliest(). Bytes before emitted have been written out or
	// replaced.
	buf         []byte
	base        int64
	emitted     int64
	chunkEnd    int64  // body offset of the end of the chunk being written
	fired       []bool // once rules that have replaced a match
	perRule     []int  // replacements by rule (RuleReplacements)
	numFired    int
	passthrough bool // copy the rest unchanged: overflow, or all once rules fired
	closed      bool
	stats       StreamStats
	slots       []int // capture slots scratch
}

// StreamStats describes what a Stream has done so far.
type StreamStats struct {
	Replacements int  // matches replaced (once-rule shadow matches not counted)
	Overflowed   bool // the hold-back cap was exceeded; the rest passed through unchanged
	Buffered     int  // bytes currently held back
	// FastFallbacks counts hand-overs from the fast path to the exact
	// engine (window open at a chunk edge, too long, or a cache that gave
	// up); CacheGaveUp reports that a lazy DFA cache gave up (thrashing).
	FastFallbacks int
	CacheGaveUp   bool
}

// NewStream returns a Stream that rewrites one body with rs.
func (rs *RuleSet) NewStream() *Stream {
	st := &Stream{
		rs:    rs,
		vm:    rs.prog.NewVM(),
		fired: make([]bool, len(rs.rules)),
		fast:  rs.newFastStream(),
	}
	st.perRule = make([]int, len(rs.rules))
	st.Reset()
	return st
}

// Reset prepares st for a new body, keeping its allocated buffers.
func (st *Stream) Reset() {
	st.buf = st.buf[:0]
	st.base = 0
	st.emitted = 0
	clear(st.fired)
	clear(st.perRule)
	st.numFired = 0
	st.passthrough = len(st.rs.rules) == 0
	st.closed = false
	st.stats = StreamStats{}
	st.vm.Restart(0, pikevm.Edge, 0)
	st.fastReset()
}

// Write rewrites chunk, appends the output that is final to dst and returns it.
// chunk may be empty; it is not retained.
func (st *Stream) Write(dst, chunk []byte) []byte {
	if st.passthrough || st.closed {
		return append(dst, chunk...)
	}
	st.startChunk(len(chunk))
	if st.fast != nil {
		return st.writeFast(dst, chunk)
	}
	return st.feed(dst, chunk)
}

// startChunk records where the chunk of n bytes being written ends: the
// hold-back cap is checked there.
func (st *Stream) startChunk(n int) {
	st.chunkEnd = st.base + int64(len(st.buf)) + int64(n)
}

// feed hands the next bytes of the current chunk (all of it, or a piece)
// to the exact engine and appends what became final to dst. How a chunk is
// cut into pieces changes nothing: the engine holds the same bytes at the
// chunk's end.
func (st *Stream) feed(dst, piece []byte) []byte {
	st.buf = append(st.buf, piece...)
	dst = st.run(dst, nfa.MoreInput)
	st.compact()
	return dst
}

// Close ends the body, appends the held-back tail to dst and returns it.
// Call Reset to reuse st for another body.
func (st *Stream) Close(dst []byte) []byte {
	if st.closed {
		return dst
	}
	if !st.passthrough {
		dst = st.run(dst, nfa.AtEOF)
	}
	dst = st.flush(dst)
	st.closed = true
	st.vm.Release()
	st.fastRelease()
	return dst
}

// Stats reports what the stream has done so far.
func (st *Stream) Stats() StreamStats {
	s := st.stats
	s.Buffered = len(st.buf) - int(st.emitted-st.base)
	return s
}

// RuleReplacements returns how many matches each rule has replaced so
// far, indexed as the rules given to Compile; they add up to
// Stats().Replacements. The slice belongs to st: read it, do not keep it
// past the next Write, Close or Reset.
func (st *Stream) RuleReplacements() []int { return st.perRule }

// run drives the engine over the held bytes until it needs more input
// (or, with eof, until the body is done), writing out what is final.
func (st *Stream) run(dst []byte, eof bool) []byte {
	for {
		switch st.vm.Advance(st.buf, st.base, eof, st.rs.maxSpan) {
		case pikevm.Found:
			dst = st.replace(dst, st.vm.Match(), eof)
			if st.passthrough {
				return st.flush(dst)
			}
		case pikevm.Overflow:
			// semantics.md: flush what is held unchanged and stop
			// rewriting this body.
			st.stats.Overflowed = true
			st.passthrough = true
			return st.flush(dst)
		case pikevm.NeedInput:
			// The cap applies to what stays held at the end of a chunk
			// (a caller may feed one chunk in pieces).
			if st.base+int64(len(st.buf)) >= st.chunkEnd && st.heldAtChunkEnd() > int64(st.rs.maxBuffer) {
				st.stats.Overflowed = true
				st.passthrough = true
				return st.flush(dst)
			}
			return st.emitUpTo(dst, st.vm.Earliest())
		case pikevm.Done:
			return st.flush(dst)
		}
	}
}

// heldAtChunkEnd returns the bytes that count against the hold-back cap
// when the engine waits for the next chunk: the bytes from the earliest
// live thread start to the scan position, less those of a pending match
// whose replacement does not use its text (the text need not be kept).
// This is replace_filter's accounting, so a rule set that fits its
// replace_filter_max_buffered_size fits here too.
func (st *Stream) heldAtChunkEnd() int64 {
	held := st.vm.Pos() - st.vm.Earliest()
	if m, ok := st.vm.Pending(); ok && st.rs.tmpls[m.Rule].constant() && !(st.rs.rules[m.Rule].Once && st.fired[m.Rule]) {
		held -= m.End - m.Start
	}
	return held
}

// replace writes the bytes before match m, then its replacement, and
// restarts the search after it.
func (st *Stream) replace(dst []byte, m pikevm.Match, eof bool) []byte {
	dst = st.emitUpTo(dst, m.Start)
	dst = st.replacement(dst, found{hay: st.buf[m.Start-st.base:], n: int(m.End - m.Start), rule: m.Rule, before: st.byteBefore(m.Start), eof: eof})
	st.emitted = m.End
	if m.End > m.Start {
		st.vm.Restart(m.End, st.byteBefore(m.End), m.End)
	} else {
		// Empty match at p: the unit at p (a whole UTF-8 sequence, or one
		// invalid byte) is copied (it is emitted once nothing holds it)
		// and the next match starts after it at the earliest.
		st.vm.RestartAfterEmpty(m.Start, st.byteBefore(m.Start))
	}
	return dst
}

// found is a match to replace, as either engine found it.
type found struct {
	hay    []byte // the body from the match start on, as far as the engine looked
	n      int    // the match is hay[:n]
	rule   nfa.RuleID
	before int  // the body byte before the match, or pikevm.Edge at the body start
	eof    bool // hay ends at the body's end
	fast   bool // found by the fast path (hay ends at the chunk end, not the body end)
}

// replacement appends what replaces match m: the expanded template, or,
// for a once rule that already fired, the matched text unchanged. It does
// the once and stats bookkeeping of both engines (the exact engine's
// replace and the fast path's fastScan). Capture groups are computed only
// when the template uses them: by the fast path's backtracker when m.fast,
// else or when it declines by the Pike VM over m.hay.
func (st *Stream) replacement(dst []byte, m found) []byte {
	r := m.rule
	text := m.hay[:m.n]
	once := st.rs.rules[r].Once
	if once && st.fired[r] {
		// A fired once rule still consumes its match (and so shadows
		// other rules) but leaves it unchanged.
		return append(dst, text...)
	}
	t := st.rs.tmpls[r]
	var slots []int
	if t.needGroups {
		slots = st.captures(m)
	}
	dst = t.expand(dst, text, slots)
	st.stats.Replacements++
	st.perRule[r]++
	if once {
		st.fired[r] = true
		st.numFired++
		if st.rs.allOnce && st.numFired == len(st.rs.rules) {
			st.passthrough = true
		}
	}
	return dst
}

// captures returns the capture slots of match m (see replacement).
func (st *Stream) captures(m found) []int {
	if m.fast {
		var ok bool
		if st.slots, ok = st.fast.bt.Captures(st.slots[:0], m.rule, m.hay, m.n, m.before); ok {
			return st.slots
		}
	}
	st.slots = st.vm.Captures(st.slots[:0], m.rule, m.hay, m.n, m.before, m.eof)
	return st.slots
}

// byteBefore returns the body byte at p-1, or Edge at the body start.
func (st *Stream) byteBefore(p int64) int {
	if p == 0 {
		return pikevm.Edge
	}
	return int(st.buf[p-1-st.base])
}

// emitUpTo writes the held bytes before absolute offset p.
func (st *Stream) emitUpTo(dst []byte, p int64) []byte {
	if p > st.emitted {
		dst = append(dst, st.buf[st.emitted-st.base:p-st.base]...)
		st.emitted = p
	}
	return dst
}

// flush writes every held byte.
func (st *Stream) flush(dst []byte) []byte {
	dst = st.emitUpTo(dst, st.base+int64(len(st.buf)))
	st.compact()
	return dst
}

// compact drops emitted bytes from buf, keeping the byte before emitted
// and before the engine's earliest live start (assertion context). It
// moves bytes only when that frees at least half of buf, so the copying is
// amortized O(1) per byte.
func (st *Stream) compact() {
	keep := min(st.emitted, st.vm.Earliest()) - 1
	if keep <= st.base {
		return
	}
	drop := int(keep - st.base)
	if drop < len(st.buf)-drop {
		return
	}
	n := copy(st.buf, st.buf[drop:])
	st.buf = st.buf[:n]
	st.base = keep
}
