package lazydfa

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/streamsub/streamsub/matcher/internal/nfa"
	"github.com/streamsub/streamsub/matcher/internal/nfatest"
)

// firstMatchStart returns where Go's regexp finds the leftmost match of the
// alternation of pats in body, or -1.
func firstMatchStart(pats []string, body string) int {
	re := regexp.MustCompile("(?sm)(?:" + strings.Join(pats, ")|(?:") + ")")
	if loc := re.FindStringIndex(body); loc != nil {
		return loc[0]
	}
	return -1
}

// scanFirst is ScanWindows from state s with room for one window, so that
// the scan stops right after its first match state: it returns that window
// (found), else the scan's offset and status. A tiny window buffer stands
// for the search that stops at a match, which the fast path does not use.
func scanFirst(c *Cache, b []byte, s StateID, w0, maxWindow int) (win Window, found bool, off int, st Status) {
	ws, off, st := c.ScanWindows(b, s, w0, maxWindow, make([]Window, 0, 1))
	if len(ws) > 0 {
		return ws[0], true, ws[0].Start, st
	}
	return Window{}, false, off, st
}

func TestScan(t *testing.T) {
	tests := []struct {
		pats []string
		body string
		want string // "window START-END" (the first), or "STATUS OFFSET"
	}{
		{[]string{"abc"}, "xxabxxabc", "window 6-9"},
		{[]string{"abc"}, "xxabxxab", "open 6"},
		{[]string{"abc"}, "xxabxxabd", "no_match 9"},
		{[]string{"abc"}, "", "no_match 0"},
		// [a-z]*q keeps a thread alive over letters: the window never closes.
		{[]string{"[a-z]*q"}, "ab cd ef", "open 6"},
		{[]string{"[a-z]*q"}, "ab cd ef.", "no_match 9"},
		{[]string{"[a-z]*q"}, "ab cdq ef.", "window 3-6"},
		// Assertions are taken as true: \bfoo\b "matches" inside xfoox.
		{[]string{`\bfoo\b`}, "a xfoox", "window 3-6"},
		{[]string{`(a|aa)*b`}, "aaaa", "open 0"},
		{[]string{`x`, `(?i)yz`}, "aaYZ", "window 2-4"},
		// Invalid is over-approximated as any byte >= 0x80.
		{[]string{`<[^>]{2}>`}, "<\xff\xfe>", "window 0-4"},
		{[]string{`é`}, "caf\xc3\xa9", "window 3-5"},
	}
	for _, tt := range tests {
		for _, noClasses := range []bool{false, true} {
			d := New(nfatest.New(t, tt.pats...), Config{NoClasses: noClasses})
			c := d.NewCache()
			for range 2 { // cold, then warm cache
				win, found, off, st := scanFirst(c, []byte(tt.body), Idle, 0, 1<<20)
				got := fmt.Sprintf("%v %d", st, off)
				if found {
					got = fmt.Sprintf("window %d-%d", win.Start, win.End)
				}
				if got != tt.want {
					t.Errorf("%q on %q (noClasses=%v): got %s, want %s", tt.pats, tt.body, noClasses, got, tt.want)
				}
			}
		}
	}
}

func TestCanMatchEmpty(t *testing.T) {
	for _, tt := range []struct {
		pats []string
		want bool
	}{
		{[]string{"a"}, false}, {[]string{"a*"}, true}, {[]string{"a", `\b`}, true},
		{[]string{"^$"}, true}, {[]string{"a|b?"}, true}, {[]string{"a+"}, false},
	} {
		if got := New(nfatest.New(t, tt.pats...), Config{}).CanMatchEmpty(); got != tt.want {
			t.Errorf("%q: CanMatchEmpty = %v, want %v", tt.pats, got, tt.want)
		}
	}
}

// TestScanSound checks the over-approximation on random rules and bodies:
// no real match may start before the offset a scan returns, and NoMatch means
// Go's regexp finds nothing. A tiny cache budget forces clears and give-ups.
func TestScanSound(t *testing.T) {
	atoms := []string{"a", "b", "ab", "[a-c]", "[^a]", ".", `\b`, "^", "$", "x|y", "é", "(?i)k", `\B`, "[0-9]{2}"}
	quants := []string{"", "", "*", "+", "?", "{1,3}"}
	r := rand.New(rand.NewPCG(1, 2))
	alpha := []string{"a", "b", "c", "x", "y", "k", "K", "0", "1", " ", "\n", "é", "\xff", "\xc3"}
	for iter := range 3000 {
		pats := randRules(r, atoms, quants)
		body := randText(r, alpha, 20)
		cfg := Config{}
		if iter%3 == 0 {
			cfg = Config{CacheBytes: 1, MaxClears: 1 + r.IntN(3)}
		}
		d := New(nfatest.New(t, pats...), cfg)
		if d.CanMatchEmpty() {
			continue
		}
		c := d.NewCache()
		_, _, off, st := scanFirst(c, []byte(body), Idle, 0, 1<<20)
		first := firstMatchStart(pats, body)
		if first >= 0 && first < off {
			t.Fatalf("%q on %q: real match at %d before scan offset %d (%v)", pats, body, first, off, st)
		}
		if st == NoMatch && (first >= 0 || off != len(body)) {
			t.Fatalf("%q on %q: NoMatch but match at %d", pats, body, first)
		}
	}
}

// scanSimple is ScanWindows as one checked step per byte: the window start
// tracked on every step, the window length checked after every step (the
// exact Long), no speculative chain. TestScanMatchesSimple and FuzzScan
// hold the fast loops to it.
func scanSimple(c *Cache, b []byte, s StateID, w0, maxWindow int, ws []Window) ([]Window, int, Status) {
	if c.gaveUp {
		return ws, w0, GaveUp
	}
	maxWindow = max(maxWindow, 1)
	if s != Idle && -w0 > maxWindow {
		return ws, w0, Long // the carried window is too long already
	}
	pf := c.d.pf
	n := len(b)
	w := w0
	for i := 0; i < n; i++ {
		if s == Idle {
			w = i
			if pf != nil && !pf.Set()[b[i]] {
				continue
			}
		}
		t := c.trans[s.row()+int(c.d.classes.Get(b[i]))]
		if t == Unknown {
			var ok bool
			if t, ok = c.next(s, b[i]); !ok {
				return ws, w, GaveUp
			}
		}
		if t&tagMatch != 0 {
			ws = append(ws, Window{w, i + 1})
			t &^= tagMatch
		}
		s = t
		if s != Idle && i+1-w > maxWindow {
			return ws, w, Long
		}
		if len(ws) == cap(ws) {
			c.open, c.resumeStart = s, w
			return ws, i + 1, Full
		}
	}
	if s != Idle {
		c.open = s
		return ws, w, Open
	}
	return ws, n, NoMatch
}

// TestScanMatchesSimple compares ScanWindows with scanSimple on random rules
// and bodies (long enough for the speculative chain), walking each body as
// the fast path does, with small window limits (Long), tiny caches
// (clears, give-ups) and windows carried across a cut.
func TestScanMatchesSimple(t *testing.T) {
	atoms := []string{"a", "b", "ab", "[a-c]", "[^a]", ".", `\b`, "x|y", "é", "(?i)k", "[0-9]{2}", "abc", "k[a-z]+b", " "}
	quants := []string{"", "", "*", "+", "?", "{1,3}"}
	r := rand.New(rand.NewPCG(3, 4))
	alpha := []string{"a", "b", "c", "x", "y", "k", "K", "0", "1", " ", "\n", "é", "\xff", "abc", "kab", "zz"}
	syncs := 0
	for iter := range 3000 {
		pats := randRules(r, atoms, quants)
		body := []byte(randText(r, alpha, []int{120, 600}[iter%2]))
		cfg := Config{}
		if iter%3 == 0 {
			cfg = Config{CacheBytes: 1, MaxClears: 1 + r.IntN(5)}
		}
		maxWindow := []int{1, 6, 9, 17, 40, 1 << 20}[r.IntN(6)]
		d := New(nfatest.New(t, pats...), cfg)
		if d.CanMatchEmpty() {
			continue
		}
		syncs += compareScans(t, d, pats, body, r.IntN(len(body)+1), maxWindow)
		syncs += compareWindowScans(t, d, pats, body, r.IntN(len(body)+1), maxWindow, 1+r.IntN(4))
	}
	if syncs == 0 {
		t.Error("the speculative chain never took over: the test does not exercise it")
	}
}

// compareScans walks body[:cut] and then body[cut:] scan by scan, each
// stopped at its first match window (scanFirst) — after a window or Long
// one byte past the window start, an Open window carried into the second
// piece — with ScanWindows and scanSimple on two caches of d, and fails on
// the first difference in window, status, offset or open state. It returns
// the syncs of the speculative chain.
func compareScans(t *testing.T, d *DFA, pats []string, body []byte, cut, maxWindow int) int {
	t.Helper()
	fast, simple := d.NewCache(), d.NewCache()
	pieces := [][]byte{body[:cut], body[cut:]}
	sfast, ssimple, held := Idle, Idle, 0
	for k, piece := range pieces {
		for i := 0; i <= len(piece); {
			win, found, off, st := scanFirst(fast, piece[i:], sfast, -held, maxWindow)
			ws, wantOff, wantSt := scanSimple(simple, piece[i:], ssimple, -held, maxWindow, make([]Window, 0, 1))
			var wantWin Window
			if wantFound := len(ws) > 0; wantFound {
				wantWin, wantOff = ws[0], ws[0].Start
			}
			if st == GaveUp || wantSt == GaveUp {
				// The speculative chain builds states of its own, so a
				// tiny budget runs out at other places: each result may
				// only claim bytes the other does not contradict.
				if (st == GaveUp && wantSt != GaveUp && wantOff < off) || (wantSt == GaveUp && st != GaveUp && off < wantOff) {
					t.Fatalf("%q on %q cut at %d, piece %d from %d (maxWindow %d): ScanWindows = %d %v, simple = %d %v",
						pats, body, cut, k, i, maxWindow, off, st, wantOff, wantSt)
				}
				return fast.Stats().Syncs
			}
			if off != wantOff || st != wantSt || win != wantWin ||
				(st == Open && !slices.Equal(stateSet(fast, fast.OpenState()), stateSet(simple, simple.OpenState()))) {
				t.Fatalf("%q on %q cut at %d, piece %d from %d (maxWindow %d, carried %d bytes): ScanWindows = %v %d %v, simple = %v %d %v",
					pats, body, cut, k, i, maxWindow, held, win, off, st, wantWin, wantOff, wantSt)
			}
			sfast, ssimple, held = Idle, Idle, 0
			if st == Open && k == 0 {
				sfast, ssimple, held = fast.OpenState(), simple.OpenState(), len(piece)-(i+off)
			}
			if off < 0 || (!found && st != Long) {
				break
			}
			i += off + 1
		}
	}
	checkIndex(t, fast)
	checkIndex(t, simple)
	return fast.Stats().Syncs
}

// checkIndex fails unless every key of c's index names the state it maps
// to: the match flag and the NFA set. (A clear once overwrote the flag of
// the key being inserted, and a match state was found under its
// non-match key.)
func checkIndex(t *testing.T, c *Cache) {
	t.Helper()
	for key, id := range c.index {
		want := []byte{0}
		if id&tagMatch != 0 {
			want[0] = 1
		}
		idx := id.row() / c.d.stride
		for _, q := range c.setData[c.setStart[idx]:c.setStart[idx+1]] {
			want = binary.LittleEndian.AppendUint32(want, uint32(q))
		}
		if key != string(want) {
			t.Fatalf("index key %x maps to state %x whose key is %x", key, id, want)
		}
	}
}

// compareWindowScans scans body[:cut] and then body[cut:] with ScanWindows
// and with scanSimple in windows mode (buffers of capacity room, resumed
// after Full; an Open window carried across the cut), and fails on the
// first difference in windows, status, offset or open state. It returns
// the syncs of the speculative chain.
func compareWindowScans(t *testing.T, d *DFA, pats []string, body []byte, cut, maxWindow, room int) int {
	t.Helper()
	fast, simple := d.NewCache(), d.NewCache()
	fws, sws := make([]Window, 0, room), make([]Window, 0, room)
	sfast, ssimple, w0 := Idle, Idle, 0
	for k, piece := range [][]byte{body[:cut], body[cut:]} {
		for i := 0; ; {
			var off, wantOff int
			var st, wantSt Status
			fws, off, st = fast.ScanWindows(piece[i:], sfast, w0, maxWindow, fws)
			sws, wantOff, wantSt = scanSimple(simple, piece[i:], ssimple, w0, maxWindow, sws[:0])
			if st == GaveUp || wantSt == GaveUp {
				return fast.Stats().Syncs // see compareScans
			}
			if off != wantOff || st != wantSt || !slices.Equal(fws, sws) ||
				((st == Open || st == Full) && !slices.Equal(stateSet(fast, fast.OpenState()), stateSet(simple, simple.OpenState()))) ||
				(st == Full && fast.ResumeStart() != simple.ResumeStart()) {
				t.Fatalf("%q on %q cut at %d, piece %d from %d (maxWindow %d, room %d, carried from %d): ScanWindows = %v %d %v, simple = %v %d %v",
					pats, body, cut, k, i, maxWindow, room, w0, fws, off, st, sws, wantOff, wantSt)
			}
			sfast, ssimple, w0 = Idle, Idle, 0
			switch st {
			case Full:
				sfast, ssimple, w0 = fast.OpenState(), simple.OpenState(), fast.ResumeStart()-off
				i += off
				continue
			case Open:
				if k == 0 {
					sfast, ssimple, w0 = fast.OpenState(), simple.OpenState(), off-(len(piece)-i)
				}
			case Long:
				i += max(off, 0) + 1 // as the fast path hands over: a fresh scan after the window
				if i < len(piece) {
					continue
				}
			}
			break
		}
	}
	checkIndex(t, fast)
	checkIndex(t, simple)
	return fast.Stats().Syncs
}

// stateSet returns the NFA set and match flag of state id of c: the
// identity of a state across caches that built their states in different
// orders.
func stateSet(c *Cache, id StateID) []nfa.StateID {
	idx := id.row() / c.d.stride
	set := slices.Clone(c.setData[c.setStart[idx]:c.setStart[idx+1]])
	if id&tagMatch != 0 {
		set = append(set, ^nfa.StateID(0))
	}
	return set
}

// randRules returns 1–3 random patterns, each a concatenation of 1–3
// quantified atoms.
func randRules(r *rand.Rand, atoms, quants []string) []string {
	var pats []string
	for range 1 + r.IntN(3) {
		var sb strings.Builder
		for range 1 + r.IntN(3) {
			sb.WriteString("(?:" + atoms[r.IntN(len(atoms))] + ")" + quants[r.IntN(len(quants))])
		}
		pats = append(pats, sb.String())
	}
	return pats
}

// randText concatenates fewer than maxPieces random pieces.
func randText(r *rand.Rand, pieces []string, maxPieces int) string {
	var sb strings.Builder
	for range r.IntN(maxPieces) {
		sb.WriteString(pieces[r.IntN(len(pieces))])
	}
	return sb.String()
}
