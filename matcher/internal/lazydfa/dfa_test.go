package lazydfa

import (
	"encoding/binary"
	"math/rand/v2"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"testing"

	"github.com/streamsub/streamsub/matcher/internal/nfa"
)

const parseFlags = (syntax.Perl | syntax.DotNL) &^ syntax.OneLine

func mustNFA(t testing.TB, pats ...string) *nfa.NFA {
	t.Helper()
	res := make([]*syntax.Regexp, len(pats))
	for i, p := range pats {
		re, err := syntax.Parse(p, parseFlags)
		if err != nil {
			t.Fatalf("%q: %v", p, err)
		}
		res[i] = re
	}
	n, err := nfa.New(res)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// firstMatchStart returns where Go's regexp finds the leftmost match of the
// alternation of pats in body, or -1.
func firstMatchStart(pats []string, body string) int {
	re := regexp.MustCompile("(?sm)(?:" + strings.Join(pats, ")|(?:") + ")")
	if loc := re.FindStringIndex(body); loc != nil {
		return loc[0]
	}
	return -1
}

func TestScan(t *testing.T) {
	tests := []struct {
		pats   []string
		body   string
		off    int
		status Status
	}{
		{[]string{"abc"}, "xxabxxabc", 6, Matched},
		{[]string{"abc"}, "xxabxxab", 6, Open},
		{[]string{"abc"}, "xxabxxabd", 9, NoMatch},
		{[]string{"abc"}, "", 0, NoMatch},
		// [a-z]*q keeps a thread alive over letters: the window never closes.
		{[]string{"[a-z]*q"}, "ab cd ef", 6, Open},
		{[]string{"[a-z]*q"}, "ab cd ef.", 9, NoMatch},
		{[]string{"[a-z]*q"}, "ab cdq ef.", 3, Matched},
		// Assertions are taken as true: \bfoo\b "matches" inside xfoox.
		{[]string{`\bfoo\b`}, "a xfoox", 3, Matched},
		{[]string{`(a|aa)*b`}, "aaaa", 0, Open},
		{[]string{`x`, `(?i)yz`}, "aaYZ", 2, Matched},
		// Invalid is over-approximated as any byte >= 0x80.
		{[]string{`<[^>]{2}>`}, "<\xff\xfe>", 0, Matched},
		{[]string{`é`}, "caf\xc3\xa9", 3, Matched},
	}
	for _, tt := range tests {
		for _, noClasses := range []bool{false, true} {
			d := New(mustNFA(t, tt.pats...), Config{NoClasses: noClasses})
			c := d.NewCache()
			for range 2 { // cold, then warm cache
				off, st := c.Scan([]byte(tt.body), 1<<20)
				if off != tt.off || st != tt.status {
					t.Errorf("%q on %q (noClasses=%v): got %d %v, want %d %v", tt.pats, tt.body, noClasses, off, st, tt.off, tt.status)
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
		if got := New(mustNFA(t, tt.pats...), Config{}).CanMatchEmpty(); got != tt.want {
			t.Errorf("%q: CanMatchEmpty = %v, want %v", tt.pats, got, tt.want)
		}
	}
}

// TestScanSound checks the over-approximation on random rules and bodies:
// no real match may start before the offset Scan returns, and NoMatch means
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
		d := New(mustNFA(t, pats...), cfg)
		if d.CanMatchEmpty() {
			continue
		}
		c := d.NewCache()
		off, st := c.Scan([]byte(body), 1<<20)
		first := firstMatchStart(pats, body)
		if first >= 0 && first < off {
			t.Fatalf("%q on %q: real match at %d before Scan offset %d (%v)", pats, body, first, off, st)
		}
		if st == NoMatch && (first >= 0 || off != len(body)) {
			t.Fatalf("%q on %q: NoMatch but match at %d", pats, body, first)
		}
	}
}

// scanSimple is ScanFrom (ws == nil) and ScanWindows (ws != nil) as one
// checked step per byte: the window start tracked on every step, the
// window length checked after every step (the exact Long), no speculative
// chain. TestScanMatchesSimple and FuzzScan hold the fast loops to it.
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
			if ws == nil {
				c.matchAt = i + 1
				return ws, w, Matched
			}
			ws = append(ws, Window{w, i + 1})
			t &^= tagMatch
		}
		s = t
		if s != Idle && i+1-w > maxWindow {
			return ws, w, Long
		}
		if len(ws) == cap(ws) && ws != nil {
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

// TestScanMatchesSimple compares ScanFrom with scanSimple on random rules
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
		d := New(mustNFA(t, pats...), cfg)
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

// compareScans walks body[:cut] and then body[cut:] as the fast path does —
// after Matched or Long one byte past the window start, an Open window
// carried into the second piece with ScanFrom — with ScanFrom and
// scanSimple on two caches of d, and fails on the first difference in
// status, offset, match position or open state. It returns the syncs of the
// speculative chain.
func compareScans(t *testing.T, d *DFA, pats []string, body []byte, cut, maxWindow int) int {
	t.Helper()
	fast, simple := d.NewCache(), d.NewCache()
	pieces := [][]byte{body[:cut], body[cut:]}
	sfast, ssimple, held := Idle, Idle, 0
	for k, piece := range pieces {
		for i := 0; i <= len(piece); {
			off, st := fast.ScanFrom(piece[i:], sfast, -held, maxWindow)
			_, wantOff, wantSt := scanSimple(simple, piece[i:], ssimple, -held, maxWindow, nil)
			if st == GaveUp || wantSt == GaveUp {
				// The speculative chain builds states of its own, so a
				// tiny budget runs out at other places: each result may
				// only claim bytes the other does not contradict.
				if (st == GaveUp && wantSt != GaveUp && wantOff < off) || (wantSt == GaveUp && st != GaveUp && off < wantOff) {
					t.Fatalf("%q on %q cut at %d, piece %d from %d (maxWindow %d): ScanFrom = %d %v, simple = %d %v",
						pats, body, cut, k, i, maxWindow, off, st, wantOff, wantSt)
				}
				return fast.Stats().Syncs
			}
			if off != wantOff || st != wantSt || (st == Matched && fast.MatchAt() != simple.MatchAt()) ||
				(st == Open && !slices.Equal(stateSet(fast, fast.OpenState()), stateSet(simple, simple.OpenState()))) {
				t.Fatalf("%q on %q cut at %d, piece %d from %d (maxWindow %d, carried %d bytes): ScanFrom = %d %v (matchAt %d), simple = %d %v (matchAt %d)",
					pats, body, cut, k, i, maxWindow, held, off, st, fast.MatchAt(), wantOff, wantSt, simple.MatchAt())
			}
			sfast, ssimple, held = Idle, Idle, 0
			if st == Open && k == 0 {
				sfast, ssimple, held = fast.OpenState(), simple.OpenState(), len(piece)-(i+off)
			}
			if off < 0 || (st != Matched && st != Long) {
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
		if id.IsMatch() {
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
	if id.IsMatch() {
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
