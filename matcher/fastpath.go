package matcher

// The fast path of the streaming rewriter (design.md §3 layer 2).
//
// While the exact engine (the Pike VM) has no live thread and holds
// nothing, a Stream does not run it. Instead:
//
//  1. lazydfa.Cache.ScanWindows runs an over-approximating forward lazy
//     DFA over the chunk (prefilter skip loop while Idle, or two scan
//     chains in lockstep) and reports every window — the bytes from leaving
//     Idle — in which it entered a match state, scanning on through them.
//     Bytes outside those windows provably take part in no match and are
//     written out unchanged.
//  2. In each window, lazydfa.AnchoredCache.Find — an exact anchored
//     leftmost-first lazy DFA — tries the positions that can start a match,
//     leftmost first, from the window start (or the end of the last
//     replaced match, if later). Found: the replacement is written
//     (Stream.replacement, shared with the exact engine's Stream.replace)
//     and the search goes on at the match end. The scan did not restart
//     there, but its state then holds a superset of the threads a restart
//     would have, so its later windows still cover every match.
//  3. A window still open at the chunk's end is carried to the next Write
//     in the DFA (fastStream.carry) while the exact engine would hold no
//     more than the cap there; its bytes stay held as the hand-over below
//     leaves them, and are written unchanged if the window closes without
//     a match.
//  4. Whenever the fast path cannot decide within the chunk — a carried
//     window that matches or stays open, a window or match longer than the
//     hold-back cap allows, a lazy DFA cache that gave up, a decoding that
//     needs the next chunk, too much work on failed attempts — it hands the
//     stream to the exact engine at a position where the engine provably has
//     no live thread (toExact), and takes it back once the engine is idle
//     again with nothing held.
//
// Soundness rests on lazydfa's over-approximation (its package doc) and on
// one fact about UTF-8 decoding: a byte that is ASCII or >= 0xC0 always
// begins a unit, so unit boundaries (where the Pike VM may start a thread)
// are a property of the body, computable from the 4 bytes before a position
// and 3 after it (boundaryAfter). Every Restart of the engine uses such a
// boundary, exactly as the engine's own restarts at match ends do. Rule sets
// that can match the empty string get no fast path (lazydfa.CanMatchEmpty),
// so the engine never restarts after an empty match (RestartAfterEmpty)
// while the fast path runs.
//
// Output is byte-identical to the exact engine's for every chunking, and so
// is the hold-back cap: windows and matches that could approach the cap are
// left to the exact engine (maxFastSpan).

import (
	"sync"

	"github.com/streamsub/streamsub/matcher/internal/backtrack"
	"github.com/streamsub/streamsub/matcher/internal/lazydfa"
	"github.com/streamsub/streamsub/matcher/internal/nfa"
	"github.com/streamsub/streamsub/matcher/internal/pikevm"
)

// fastPath is the immutable fast path of a RuleSet; nil when the rule set
// is not eligible.
type fastPath struct {
	dfa     *lazydfa.DFA
	anch    *lazydfa.Anchored
	maxSpan int             // longest window / match the fast path decides itself
	bt      *backtrack.Prog // capture positions of its matches
	caches  sync.Pool       // *fastCaches: warm caches shared over time by streams
}

// fastCaches are the per-stream lazy DFA caches, pooled per rule set so
// that a new stream starts with the states earlier streams built.
type fastCaches struct {
	scan    *lazydfa.Cache
	anch    *lazydfa.AnchoredCache
	windows []lazydfa.Window // fastScan's buffer for lazydfa.ScanWindows
}

// fastStream is a Stream's fast-path state.
type fastStream struct {
	fp     *fastPath
	caches *fastCaches // taken from fp.caches on first use, returned by Close
	// hist holds the last nhist (<= 8) body bytes before the current chunk:
	// the assertion context and the unit-boundary context of its start
	// (boundaryAfter looks 4 bytes back, toExact one more).
	hist  [8]byte
	nhist int
	bt    backtrack.Searcher // capture positions of its matches
	// carry: a window was open at the end of the last chunk and is kept in
	// the DFA (state, opened held bytes before the chunk end) instead of
	// being handed to the exact engine. Its bytes are held in Stream.buf
	// exactly as toExact leaves them, with the engine restarted at the
	// window but not run yet: if the window closes without a match they are
	// written unchanged; otherwise (and at Close) the engine runs over them.
	carry bool
	state lazydfa.StateID
	held  int
}

// maxFastSpanMargin keeps fast-path windows clear of the exact engine's
// in-chunk span limit (RuleSet.maxSpan): the engine overflows when live
// threads span more than that, so any window or match the fast path
// resolves stays below it and longer ones go to the engine. (The hold-back
// cap proper is checked at chunk ends, where the fast path is either idle,
// holding nothing, or has handed the stream to the engine.)
const maxFastSpanMargin = 16

// newFastPath returns the fast path for n, or nil when n can match the
// empty string. maxSpan is the exact engine's in-chunk span limit.
func newFastPath(n *nfa.NFA, maxSpan int, cfg lazydfa.Config) *fastPath {
	d := lazydfa.New(n, cfg)
	if d.CanMatchEmpty() || maxSpan <= 2*maxFastSpanMargin {
		return nil
	}
	return &fastPath{dfa: d, anch: lazydfa.NewAnchored(n, cfg), maxSpan: maxSpan - maxFastSpanMargin, bt: backtrack.New(n)}
}

func (fp *fastPath) getCaches() *fastCaches {
	if c, ok := fp.caches.Get().(*fastCaches); ok {
		c.scan.Reset()
		c.anch.Reset()
		return c
	}
	return &fastCaches{scan: fp.dfa.NewCache(), anch: fp.anch.NewCache(), windows: make([]lazydfa.Window, 0, fastWindows)}
}

// newFastStream returns the fast-path state of a new stream of rs, or nil.
func (rs *RuleSet) newFastStream() *fastStream {
	if rs.fast == nil {
		return nil
	}
	return &fastStream{fp: rs.fast, bt: rs.fast.bt.Searcher()}
}

// fastScan's start: a fresh scan from Idle, or the continuation of the
// window carried from the last chunk (fastStream.carry).
const (
	freshScan     = false
	resumeCarried = true
)

// fastWindows is how many match windows one lazydfa.ScanWindows call may
// report before fastScan resolves them and resumes the scan.
const fastWindows = 32

// fastReset forgets the body (Stream.Reset).
func (st *Stream) fastReset() {
	if f := st.fast; f != nil {
		f.nhist = 0
		f.carry = false
	}
}

// fastRelease returns the stream's caches to the pool (Stream.Close).
func (st *Stream) fastRelease() {
	if f := st.fast; f != nil && f.caches != nil {
		f.carry = false
		f.fp.caches.Put(f.caches)
		f.caches = nil
	}
}

// exactIdle reports whether the exact engine has no live thread and
// nothing is held: its state is that of a fresh Restart at the end of the
// body so far.
func (st *Stream) exactIdle() bool {
	return st.vm.Idle() && st.emitted == st.base+int64(len(st.buf))
}

// writeFast is Write when the rule set has a fast path.
func (st *Stream) writeFast(dst, chunk []byte) []byte {
	f := st.fast
	if f.caches == nil {
		f.caches = f.fp.getCaches()
	}
	abs0 := st.base + int64(len(st.buf)) // body offset of chunk[0]
	i := 0
	handedOver := false // the fast path just gave up at i: the engine must make progress
	if f.carry && len(chunk) > 0 {
		f.carry = false
		dst, i = st.fastScan(dst, chunk, abs0, 0, resumeCarried)
		handedOver = true
	}
	for i < len(chunk) {
		if !handedOver && st.exactIdle() {
			dst, i = st.fastScan(dst, chunk, abs0, i, freshScan)
			handedOver = true
			continue
		}
		handedOver = false
		// The exact engine owns the stream until it is idle. Feed it
		// pieces that end after a byte that starts no thread (the engine
		// can only be idle there), so that it gives the stream back soon
		// after the window closes; pieces grow after many tries to bound
		// the per-call overhead.
		start := f.fp.dfa.StartBytes()
		for tries := 0; i < len(chunk) && (tries == 0 || !st.exactIdle()); tries++ {
			k := i + 1
			if tries >= 32 {
				k = min(len(chunk), i+(64<<min(tries-32, 8)))
			}
			for k < len(chunk) && start[chunk[k-1]] {
				k++
			}
			dst = st.feed(dst, chunk[i:k])
			i = k
			if st.passthrough {
				f.remember(chunk)
				return append(dst, chunk[i:]...)
			}
		}
	}
	f.remember(chunk)
	return dst
}

// remember keeps the last bytes of the body for the next chunk's context.
func (f *fastStream) remember(chunk []byte) {
	if len(chunk) >= len(f.hist) {
		copy(f.hist[:], chunk[len(chunk)-len(f.hist):])
		f.nhist = len(f.hist)
		return
	}
	keep := min(f.nhist, len(f.hist)-len(chunk))
	copy(f.hist[:], f.hist[f.nhist-keep:f.nhist])
	copy(f.hist[keep:], chunk)
	f.nhist = keep + len(chunk)
}

// at returns the body byte at chunk index k, for k >= -nhist (negative:
// the bytes before the chunk).
func (f *fastStream) at(chunk []byte, k int) byte {
	if k >= 0 {
		return chunk[k]
	}
	return f.hist[f.nhist+k]
}

// unitLenAt is nfa.UnitLen at chunk index k (k >= -nhist), not at EOF.
func (f *fastStream) unitLenAt(chunk []byte, k int) (int, bool) {
	if k >= 0 {
		return nfa.UnitLen(chunk[k:], nfa.MoreInput)
	}
	var tmp [8]byte
	n := copy(tmp[:], f.hist[f.nhist+k:f.nhist])
	n += copy(tmp[n:], chunk)
	return nfa.UnitLen(tmp[:n], nfa.MoreInput)
}

// boundaryAfter returns the first unit boundary at or after chunk index
// q, and a boundary lead <= q from which it was derived; ok is false when
// that needs bytes after the chunk. abs0 is the body offset of chunk[0].
//
// A byte that is ASCII or >= 0xC0 always begins a unit; a byte in 80-BF
// begins one unless a valid sequence begun by the nearest such byte among
// the three before covers it. If the four bytes before q are all 80-BF,
// q-1 is a one-byte unit and q a boundary.
func (f *fastStream) boundaryAfter(chunk []byte, abs0 int64, q int) (next, lead int, ok bool) {
	lo := max(-f.nhist, q-4) // nhist < 4 only near the body start
	j, found := q, false
	for k := q - 1; k >= lo; k-- {
		if c := f.at(chunk, k); c < 0x80 || c >= 0xC0 {
			j, found = k, true
			break
		}
	}
	if !found {
		if abs0+int64(lo) != 0 {
			return q, q, true // four continuation bytes: q-1 is a one-byte unit
		}
		j = lo // the body start is a boundary
	}
	p := j
	for p < q {
		n, ok := f.unitLenAt(chunk, p)
		if !ok {
			return 0, p, false
		}
		if p+n > q {
			return p + n, p, true
		}
		p += n
	}
	return q, q, true
}

// toExact hands the stream to the exact engine at chunk index q: it writes
// chunk[emit:q] (final: no match touches it, no thread of the engine is
// alive at q) and restarts the engine at q; writeFast feeds it the rest. When the unit boundary after q
// depends on the next chunk (q is inside a multi-byte sequence that the
// chunk truncates), the engine restarts at that sequence's first byte
// instead, and the bytes from there stay held: no match can end inside the
// sequence, so none is found twice, and emitted never passes the engine's
// earliest live start (Stream's invariant).
func (st *Stream) toExact(dst, chunk []byte, abs0 int64, emit, q int) []byte {
	f := st.fast
	at, first := q, q
	if next, lead, ok := f.boundaryAfter(chunk, abs0, q); ok {
		first = next
	} else {
		at = max(lead, emit)
		first = at
	}
	dst = append(dst, chunk[emit:at]...)
	// buf keeps the byte before at (assertion context), as Stream.compact.
	from := at
	before := pikevm.Edge
	if abs0+int64(at) > 0 {
		from = at - 1
		before = int(f.at(chunk, from))
	}
	st.buf = st.buf[:0]
	st.base = abs0 + int64(from)
	for k := from; k < 0; k++ {
		st.buf = append(st.buf, f.at(chunk, k))
	}
	st.buf = append(st.buf, chunk[max(from, 0):q]...)
	st.emitted = abs0 + int64(at)
	st.vm.Restart(abs0+int64(at), before, abs0+int64(first))
	return dst
}

// fastScan rewrites chunk[i:] on the fast path; the exact engine is idle at
// chunk index i with everything before it written. It returns dst and the
// chunk index up to which it consumed the chunk: len(chunk), or where it
// handed the stream to the exact engine (toExact). With resume
// (resumeCarried, i == 0), the window carried from the last chunk
// (fastStream.carry) continues.
//
// One lazydfa.ScanWindows pass covers the chunk (resumed when its window
// buffer fills): the scan goes on through match states, and the windows it
// reports are resolved in order, each clipped to next — the first position
// not yet resolved (tried as a match start, or inside a replaced match) —
// since a restart after a match would only have seen threads from there on.
func (st *Stream) fastScan(dst, chunk []byte, abs0 int64, i int, resume bool) ([]byte, int) {
	f := st.fast
	fp := f.fp
	scan, anch := f.caches.scan, f.caches.anch
	start := fp.dfa.StartBytes()
	emit := i            // chunk[emit:] is not written yet
	next := i            // every match start before next is resolved
	budget := len(chunk) // bytes failed anchored attempts may examine
	pos := i             // the scan's position in chunk
	s, w0 := lazydfa.Idle, 0
	if resume {
		s, w0 = f.state, -f.held
	}
	for {
		ws, off, status := scan.ScanWindows(chunk[pos:], s, w0, fp.maxSpan, f.caches.windows)
		f.caches.windows = ws
		if resume {
			resume = false
			if (len(ws) > 0 && ws[0].Start < 0) || (off < 0 && status != lazydfa.Full) {
				// The carried window decides (matched, still open, too
				// long, gave up): the exact engine, restarted at it with
				// its bytes in buf, resolves it.
				st.countFallback(status)
				return dst, 0
			}
			// It closed without a match: its bytes are final.
			dst = st.emitUpTo(dst, st.base+int64(len(st.buf)))
		}
		for _, win := range ws {
			// Every match ending at mEnd starts in [max(wStart, next), mEnd):
			// try each position that can start one, leftmost first.
			mEnd := pos + win.End
			for p := max(pos+win.Start, next); p < mEnd; p++ {
				if !start[chunk[p]] {
					continue
				}
				if chunk[p] >= 0x80 {
					q, _, ok := f.boundaryAfter(chunk, abs0, p)
					if !ok {
						st.countFallback(lazydfa.NeedMore) // the unit boundary depends on the next chunk
						return st.toExact(dst, chunk, abs0, emit, p), p
					}
					if q != p {
						continue // inside a multi-byte unit: no thread starts here
					}
				}
				before := pikevm.Edge
				if abs0+int64(p) > 0 {
					before = int(f.at(chunk, p-1))
				}
				end, rule, res := anch.Find(chunk, p, before, nfa.MoreInput, fp.maxSpan)
				switch res {
				case lazydfa.Found:
					dst = append(dst, chunk[emit:p]...)
					dst = st.replacement(dst, found{hay: chunk[p:], n: end - p, rule: rule, before: before, fast: true})
					if st.passthrough {
						return append(dst, chunk[end:]...), len(chunk)
					}
					budget += end - p
					emit, next = end, end
					p = end - 1 // matches do not overlap: go on at end
				case lazydfa.NoMatch:
					// No match starts at p: its threads die by end, within
					// the span limit, without a match.
					if budget -= end - p; budget < 0 {
						st.countFallback(res)
						return st.toExact(dst, chunk, abs0, emit, p), p
					}
				default: // NeedMore, Long, GaveUp
					st.countFallback(res)
					return st.toExact(dst, chunk, abs0, emit, p), p
				}
			}
			next = max(next, mEnd) // a window with no real match: its match state was spurious (assertions, UTF-8)
		}
		switch status {
		case lazydfa.Full:
			s, w0 = scan.OpenState(), scan.ResumeStart()-off
			pos += off
		case lazydfa.NoMatch:
			// Leave the engine as if it had processed the chunk without a match.
			return st.toExact(dst, chunk, abs0, emit, len(chunk)), len(chunk)
		case lazydfa.Open:
			// Keep the window in the DFA across the chunk end when the
			// exact engine would hold no more than the cap allows here (it
			// restarts at or before w, so it holds at most what follows):
			// then it would not overflow at this chunk end either.
			w := max(pos+off, next)
			dst = st.toExact(dst, chunk, abs0, emit, w)
			if abs0+int64(len(chunk))-st.emitted <= int64(st.rs.maxBuffer) {
				st.buf = append(st.buf, chunk[w:]...)
				f.carry, f.state, f.held = true, scan.OpenState(), len(chunk)-w
				return dst, len(chunk)
			}
			st.countFallback(status)
			return dst, w
		default: // Long, GaveUp
			st.countFallback(status)
			w := max(pos+off, next)
			return st.toExact(dst, chunk, abs0, emit, w), w
		}
	}
}

// countFallback counts a hand-over to the exact engine, for the reason
// why: the outcome of the scan or anchored search that did not decide
// (lazydfa.GaveUp: a lazy DFA cache gave up).
func (st *Stream) countFallback(why lazydfa.Status) {
	st.stats.FastFallbacks++
	if why == lazydfa.GaveUp {
		st.stats.CacheGaveUp = true
	}
}
