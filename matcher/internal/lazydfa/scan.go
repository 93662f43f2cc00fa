package lazydfa

import (
	"math"
	"unsafe"

	"github.com/streamsub/streamsub/matcher/internal/prefilter"
)

// The search loop of a Cache.
//
// A table-driven DFA step is one load whose address depends on the previous
// load: the loop runs at the latency of that chain (~4 cycles per byte
// here), not at the CPU's width. A scan therefore runs a second,
// speculative chain when it can: B starts Idle specGap bytes ahead of the
// true scan A and the two step in lockstep, so that both loads are in
// flight at once. B is right from the first position p >= its start where
// A is Idle: B's NFA set is always a subset of A's (it holds only the
// threads that started at or after B's start, and a step is monotone in the
// set), so A Idle at p means B Idle at p, and from p on the two runs are
// the same run — including the window start, since both were Idle at p. A
// then jumps to B's position and state (the "sync"), and a new B starts
// ahead. B stops where its own window would outgrow maxWindow (so the
// windows A jumps over were checked). It goes through its first match state
// (A adopts that window if it syncs before reaching it: B's window start is
// exact after the sync point) and stalls on any other; it
// builds a missing state only when that needs no cache clear, since a
// clear would kill A's state ID; a clear by A drops B. Results are those of
// the one-chain loop (TestScanMatchesSimple, FuzzScan); only the order in
// which states are built, and so where a tiny cache gives up, may differ.

const (
	// specGap is how far ahead of A the speculative chain starts: long
	// enough that A usually closes the window it is in soon after reaching
	// B's start (each sync gains specGap bytes), short enough that little of
	// B's work is lost when the scan stops first. Measured on the clone
	// page (BenchmarkMatchCost, CPU time, 6 interleaved runs): 32 is 7–20 %
	// slower than 64, 128 is 3–10 % faster, 256 no faster than 128.
	specGap = 128
	// noSpec is the start of a speculative chain that does not exist.
	noSpec = math.MaxInt
)

// spec is the speculative chain B of a scan: started Idle at start (noSpec:
// there is no chain), it is in state s before b[i], in a window that opened
// at w. It is live while it can still step.
type spec struct {
	start, i, w int
	s           StateID
	live        bool
	// matchEnd > 0: B went through a match state at matchEnd, in the
	// window that opened at matchStart (once per chain): A adopts that
	// window if it syncs before passing matchEnd.
	matchEnd, matchStart int
}

// ScanWindows runs the DFA over b from state s (Idle, or the OpenState of
// the previous scan), where w0 is the offset in b at which the window open
// in s started (<= 0: before b; 0 when s is Idle). It appends a Window to
// ws for every transition into a match state and scans on, so that one
// call covers many matches (and the speculative chain survives them). It
// returns ws and NoMatch with len(b) when the rest of b holds no match and
// leaves no thread alive; otherwise the offset in b where the decisive
// window opened, with Open, Long (the window grew longer than maxWindow
// bytes before reaching a match state; detected exactly, on the byte that
// made it maxWindow+1 long) or GaveUp (see Status); or Full with the
// offset where it stopped when ws reached its capacity:
// ScanWindows(b[off:], OpenState(), ResumeStart()-off, ...) goes on from
// there. Bytes outside the windows and before the returned offset
// provably take part in no match; returned offsets below 0 name the
// carried window.
//
// Continuing through a match over-approximates no less than restarting
// after it: the state holds the threads that started inside the match as
// well, a superset, so a caller that resolves a window's match and moves on
// to its end may use the later windows, clipped to that end.
//
// The hot loops treat Idle as an ordinary state, so that windows opening
// and closing every few bytes (word-shaped rules over text) cost nothing,
// and are unrolled with unchecked loads: only a tagged transition (match
// or not yet computed) leaves them. The window start is tracked with
// conditional moves, so that Idle implies w == i between steps and no group
// head has to test for it. When a single byte can start a match, Idle skips
// ahead with bytes.IndexByte (the prefilter), or, for literals, to a little
// before the next of their rare bytes (Config.Rare); otherwise a long input
// is scanned with two chains (see the top of this file).
func (c *Cache) ScanWindows(b []byte, s StateID, w0, maxWindow int, ws []Window) ([]Window, int, Status) {
	if cap(ws) == 0 {
		ws = make([]Window, 0, 16)
	}
	return c.scan(b, s, w0, maxWindow, ws[:0])
}

// scan is ScanWindows with a window buffer. (Apart, the loop compiles to
// 3 % fewer instructions: callgrind, BenchmarkMatchCost body=defused.)
func (c *Cache) scan(b []byte, s StateID, w0, maxWindow int, ws []Window) ([]Window, int, Status) {
	if c.gaveUp {
		return ws, w0, GaveUp
	}
	maxWindow = max(maxWindow, 1)
	trans := c.trans
	cls := &c.d.classes.m
	pf := c.d.pf
	n := len(b)
	bp := unsafe.Pointer(unsafe.SliceData(b))
	// A, the true scan: state s before b[i]; w is where the current window
	// opened (the byte after the last Idle state); invariant between
	// steps: s == Idle implies w == i.
	w, i := w0, 0
	// B, the speculative chain (pf == nil only: with a prefilter, Idle
	// skips instead).
	speculate := pf == nil && n >= 4*specGap
	sp := spec{start: noSpec}
	clears := c.clears
	// With a prefilter, Idle at or after until skips ahead (pf.Skip);
	// before it the automaton runs on: the bytes from a rare prefilter's
	// landing point up to its needle must be scanned.
	until := 0
	var cur prefilter.Cursor
	for i < n {
		if s == Idle && pf != nil && i >= until {
			q, r := pf.Skip(b, i, &cur)
			if i = q; i >= n {
				break
			}
			until = r + 1
			w = i
		}
		// lim: where the loops below must stop to catch a window growing
		// past maxWindow exactly — the current window's limit, and one
		// window length ahead for windows opening on the way.
		lim := n
		if maxWindow < n-i {
			lim = i + maxWindow
		}
		if s != Idle && w+maxWindow+1 < lim {
			lim = w + maxWindow + 1
		}
		if speculate && sp.start == noSpec && n-i >= 2*specGap {
			sp = spec{start: i + specGap, i: i + specGap, w: i + specGap, s: Idle, live: true, matchEnd: -1}
		}
		tp := unsafe.Pointer(unsafe.SliceData(trans))
		careful := true
		limB := n
		if sp.live {
			// B stops where its own window would grow past maxWindow, as
			// A does at lim: after a sync its windows are the true ones.
			if maxWindow < n-sp.i {
				limB = sp.i + maxWindow
			}
			if sp.s != Idle && sp.w+maxWindow+1 < limB {
				limB = sp.w + maxWindow + 1
			}
			if min(lim, limB-(sp.i-i))-i < 4 {
				sp.live = false // B stalls: at the end, or its window is too long
			}
		}
		if sp.live {
			// Lockstep: A over b[i:], B over b[sp.i:], sp.i-i fixed, so
			// B's bytes are at bq+i and its window start is tracked
			// relative to i (wr); both conditional moves share the offset
			// i+k. B's state is in sb, its start in mb.
			d := sp.i - i
			bq := unsafe.Add(bp, d)
			wr := sp.w - d
			sb, mb := sp.s, sp.start
			limA := min(lim, limB-d)
			for i+4 <= limA {
				a0 := load(tp, s, cls[*(*byte)(unsafe.Add(bp, i))])
				b0 := load(tp, sb, cls[*(*byte)(unsafe.Add(bq, i))])
				if a0 >= tagMatch || b0 >= tagMatch {
					break
				}
				w = sel(a0 == Idle, i+1, w)
				wr = sel(b0 == Idle, i+1, wr)
				a1 := load(tp, a0, cls[*(*byte)(unsafe.Add(bp, i+1))])
				b1 := load(tp, b0, cls[*(*byte)(unsafe.Add(bq, i+1))])
				if a1 >= tagMatch || b1 >= tagMatch {
					s, sb, i = a0, b0, i+1
					break
				}
				w = sel(a1 == Idle, i+2, w)
				wr = sel(b1 == Idle, i+2, wr)
				a2 := load(tp, a1, cls[*(*byte)(unsafe.Add(bp, i+2))])
				b2 := load(tp, b1, cls[*(*byte)(unsafe.Add(bq, i+2))])
				if a2 >= tagMatch || b2 >= tagMatch {
					s, sb, i = a1, b1, i+2
					break
				}
				w = sel(a2 == Idle, i+3, w)
				wr = sel(b2 == Idle, i+3, wr)
				a3 := load(tp, a2, cls[*(*byte)(unsafe.Add(bp, i+3))])
				b3 := load(tp, b2, cls[*(*byte)(unsafe.Add(bq, i+3))])
				if a3 >= tagMatch || b3 >= tagMatch {
					s, sb, i = a2, b2, i+3
					break
				}
				w = sel(a3 == Idle, i+4, w)
				wr = sel(b3 == Idle, i+4, wr)
				s, sb, i = a3, b3, i+4
				if w >= mb {
					break // A was Idle at or after B's start: sync below
				}
			}
			sp.i, sp.w, sp.s = i+d, wr+d, sb
			if w < mb && i+4 <= lim && trans[s.row()+int(cls[b[i]])] < tagMatch {
				// A is free to go on: B stopped, on its limit (the next
				// round sets a new one or stalls it) or on its tagged
				// transition. B builds a missing state itself unless
				// that needs a cache clear (A's state would die with
				// it): B's subset states are often ones A never
				// visits. On a match state, or without room, B stalls.
				careful = false
				if i+4 <= limA {
					t := trans[sp.s.row()+int(cls[b[sp.i]])]
					if t == Unknown {
						t, _ = c.step(sp.s, b[sp.i], failIfFull)
						trans = c.trans
					}
					if t&tagMatch != 0 && sp.matchEnd < 0 {
						sp.matchEnd, sp.matchStart = sp.i+1, sp.w // B goes through its first match state
						sp.s, sp.i = t&^tagMatch, sp.i+1
					} else if t >= tagMatch {
						sp.live = false
					}
				}
			}
		} else {
			// A alone, up to B's position if B stalled.
			end := lim
			mb := sp.start
			if mb != noSpec {
				end = min(lim, sp.i)
			}
			for i+8 <= end {
				if pf != nil && s == Idle && i >= until {
					break // back to the IndexByte skip (above)
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
				if w >= mb {
					break // sync below
				}
			}
		}
		if sp.start != noSpec {
			if w >= sp.start {
				// Sync: A's run from w on is B's, with B's match window
				// if A has not reached it (unless it would fill ws: then
				// A goes on alone, so that Full stops right after it).
				if i <= sp.i && (sp.matchEnd <= i || len(ws)+1 < cap(ws)) {
					if sp.matchEnd > i {
						ws = append(ws, Window{sp.matchStart, sp.matchEnd})
					}
					s, i, w = sp.s, sp.i, sp.w
					c.syncs++
				}
				sp = spec{start: noSpec}
				if s != Idle && i-w > maxWindow {
					return ws, w, Long
				}
				continue
			}
			if i >= sp.i { // A caught up with a stalled B
				sp = spec{start: noSpec}
			}
		}
		if s != Idle && i-w > maxWindow {
			return ws, w, Long
		}
		if i >= lim || !careful {
			continue
		}
		if s == Idle && pf != nil && i >= until && !pf.Set()[b[i]] {
			continue // back to the IndexByte skip
		}
		// One careful step: the byte whose transition is tagged, or the
		// tail before lim.
		t := trans[s.row()+int(cls[b[i]])]
		if t >= tagMatch {
			if t == Unknown {
				var ok bool
				if t, ok = c.next(s, b[i]); !ok {
					return ws, w, GaveUp
				}
				trans = c.trans
				if c.clears != clears { // B's state died with the cache
					clears = c.clears
					sp = spec{start: noSpec}
				}
			}
			if t&tagMatch != 0 {
				ws = append(ws, Window{w, i + 1})
				t &^= tagMatch // the same row: scan on from it
			}
		}
		s = t
		i++
		if s == Idle {
			w = i
		}
		if s != Idle && i-w > maxWindow {
			return ws, w, Long
		}
		if len(ws) == cap(ws) {
			c.open, c.resumeStart = s, w
			return ws, i, Full
		}
	}
	if s != Idle {
		c.open = s
		return ws, w, Open
	}
	return ws, n, NoMatch
}

// OpenState returns, after a scan returned Open or Full, the state the
// DFA was in at the end of the input (at the stop): the next scan
// continues the open window from it. It stays valid until the next scan.
func (c *Cache) OpenState() StateID { return c.open }

// Window is a window of a scan that reached a match state: every match
// that ends at End starts in [Start, End) (offsets in the scanned input;
// Start < 0 for a window carried into it).
type Window struct{ Start, End int }

// ResumeStart returns, after ScanWindows returned Full, the offset in its
// input where the window open at the stop started.
func (c *Cache) ResumeStart() int { return c.resumeStart }

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
