package pikevm

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/streamsub/streamsub/matcher/internal/nfa"
	"github.com/streamsub/streamsub/matcher/internal/nfatest"
	"github.com/streamsub/streamsub/matcher/internal/regexgen"
)

// firstMatch runs one search from offset 0, feeding body in pieces of
// size step (0 = whole), and returns the first final match.
func firstMatch(vm *VM, body []byte, step int) (Match, bool) {
	vm.Restart(0, Edge, 0)
	if step == 0 {
		step = len(body) + 1
	}
	for k := 0; ; k += step {
		end := min(k+step, len(body))
		eof := end == len(body)
		switch vm.Advance(body[:end], 0, eof, 1<<40) {
		case Found:
			return vm.Match(), true
		case Done:
			return Match{}, false
		case Overflow:
			panic("overflow")
		case NeedInput:
			if eof {
				panic("NeedInput at eof")
			}
		}
	}
}

// TestAgainstGoRegexp checks the first leftmost-first match and its
// captures against Go's regexp, for random patterns and bodies fed whole
// and one byte at a time.
func TestAgainstGoRegexp(t *testing.T) {
	iters := 3000
	if testing.Short() {
		iters = 300
	}
	checkAgainstGoRegexp(t, rand.New(rand.NewPCG(7, 11)), iters)
}

// TestUnindexedStarts: the same with start closures too big to index by
// byte (forced).
func TestUnindexedStarts(t *testing.T) {
	defer func(old int) { maxStartIndex = old }(maxStartIndex)
	maxStartIndex = 0
	checkAgainstGoRegexp(t, rand.New(rand.NewPCG(17, 11)), 300)
}

func checkAgainstGoRegexp(t *testing.T, rng *rand.Rand, iters int) {
	for i := 0; i < iters; i++ {
		nrules := 1 + rng.IntN(3)
		var pats []string
		for range nrules {
			pats = append(pats, regexgen.Pattern(rng, 3))
		}
		n := nfatest.New(t, pats...)
		vm := New(n)
		var alt []string
		for _, p := range pats {
			alt = append(alt, "(?:"+p+")")
		}
		re := regexp.MustCompile("(?sm)" + strings.Join(alt, "|"))
		var single *regexp.Regexp
		if nrules == 1 {
			single = regexp.MustCompile("(?sm)" + pats[0])
		}
		for j := 0; j < 10; j++ {
			body := regexgen.Body(nil, rng, 12)
			want := re.FindIndex(body)
			for _, step := range []int{0, 1, 2} {
				got, ok := firstMatch(vm, body, step)
				if ok != (want != nil) || ok && (int(got.Start) != want[0] || int(got.End) != want[1]) {
					t.Fatalf("rules %q on %q (step %d): got %v %v, Go regexp %v", pats, body, step, got, ok, want)
				}
			}
			if single == nil || want == nil {
				continue
			}
			m, _ := firstMatch(vm, body, 0)
			before := Edge
			if m.Start > 0 {
				before = int(body[m.Start-1])
			}
			got := vm.Captures(nil, 0, body[m.Start:], int(m.End-m.Start), before, true)
			wantCaps := single.FindSubmatchIndex(body)
			for k := range wantCaps {
				if wantCaps[k] >= 0 {
					wantCaps[k] -= int(m.Start)
				}
			}
			if !slices.Equal(got, wantCaps) {
				t.Fatalf("rule %q on %q: captures %v, Go regexp %v", pats[0], body, got, wantCaps)
			}
		}
	}
}

// allMatches runs the search loop of a stream, restarting after each
// match (RestartAfterEmpty after an empty one), feeding body in pieces of
// size step, and returns the matches as [start end] pairs. It fails t if
// a match starts before the Earliest reported when the VM last needed input.
func allMatches(t *testing.T, vm *VM, body []byte, step int) [][2]int64 {
	t.Helper()
	var got [][2]int64
	vm.Restart(0, Edge, 0)
	held := int64(0) // Earliest at the last NeedInput
	for end := min(step, len(body)); ; end = min(end+step, len(body)) {
		eof := end == len(body)
		st := vm.Advance(body[:end], 0, eof, 1<<40)
		for ; st == Found; st = vm.Advance(body[:end], 0, eof, 1<<40) {
			m := vm.Match()
			if m.Start < held {
				t.Fatalf("step %d: match %v starts before Earliest %d", step, m, held)
			}
			got = append(got, [2]int64{m.Start, m.End})
			before := Edge
			if m.End > 0 {
				before = int(body[m.End-1])
			}
			if m.End > m.Start {
				vm.Restart(m.End, before, m.End)
			} else {
				vm.RestartAfterEmpty(m.End, before)
			}
		}
		if eof {
			return got
		}
		held = vm.Earliest()
	}
}

// TestRestartAfterEmpty: after an empty match the next match starts after
// the whole unit at its position, however the body is cut, even where a
// cut falls inside that unit.
func TestRestartAfterEmpty(t *testing.T) {
	tests := []struct {
		pattern string
		body    string
		want    [][2]int64
	}{
		{"x*", "é", [][2]int64{{0, 0}, {2, 2}}},
		{"x*", "a€", [][2]int64{{0, 0}, {1, 1}, {4, 4}}},
		{"x*", "xé", [][2]int64{{0, 1}, {1, 1}, {3, 3}}},
		{"x*", "\xff\xc3", [][2]int64{{0, 0}, {1, 1}, {2, 2}}},
		{"x*", "\xf0\x9f\x98", [][2]int64{{0, 0}, {1, 1}, {2, 2}, {3, 3}}}, // truncated at EOF: three invalid bytes
		{`\x{FFFD}|x*`, "é\xff", [][2]int64{{0, 0}, {2, 3}, {3, 3}}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q/%q", tt.pattern, tt.body), func(t *testing.T) {
			vm := New(nfatest.New(t, tt.pattern))
			body := []byte(tt.body)
			for step := 1; step <= len(body); step++ {
				if got := allMatches(t, vm, body, step); !slices.Equal(got, tt.want) {
					t.Errorf("step %d: matches %v, want %v", step, got, tt.want)
				}
			}
		})
	}
}

// TestEarliest checks the hold-back bookkeeping: the earliest live start.
func TestEarliest(t *testing.T) {
	tests := []struct {
		pattern string
		input   string
		want    int64 // Earliest after feeding input without EOF
	}{
		{"abc", "xxxab", 3},
		{"abc", "xxxyz", 5},
		{"a$", "xa", 1},
		{"ab|a", "xa", 1},
		// The unit at 2 is cut by the end of the input, but its first byte
		// is known: the thread from 0 needs 'z' there and is dead; the
		// one for "zz€" lives on.
		{"zzz", "zz\xe2\x82", 2},
		{"zz€", "zz\xe2\x82", 0},
		{`\x{20AC}`, "ab\xe2\x82", 2},
		{"q", "ab\xe2\x82", 2}, // the unit at 2 is undecided: nothing at 2 is processed yet
		// Threads that die at the end of the input whatever comes next
		// hold nothing.
		{"€^", "€\xe2", 3},
		{"€^", "€", 3},
		{"ab$|abc", "xab", 1}, // $ needs the next byte
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q/%q", tt.pattern, tt.input), func(t *testing.T) {
			vm := New(nfatest.New(t, tt.pattern))
			vm.Restart(0, Edge, 0)
			if st := vm.Advance([]byte(tt.input), 0, false, 1<<40); st != NeedInput {
				t.Fatalf("Advance = %v, want NeedInput", st)
			}
			if got := vm.Earliest(); got != tt.want {
				t.Errorf("Earliest = %d, want %d", got, tt.want)
			}
		})
	}
}

// TestPeek checks that a match is decided at the end of the input when no
// assertion needs the next byte, and not otherwise.
func TestPeek(t *testing.T) {
	tests := []struct {
		pattern string
		input   string
		found   bool
	}{
		{"abac", "ababac", true},
		{"ab|abc", "ab", true},  // ab is preferred: abc cannot beat it
		{"abc|ab", "ab", false}, // abc is preferred and may still match
		{`ab\b`, "ab", false},
		{`ab$`, "ab", false},
		{`\nab`, "\nab", true},
		{`a+`, "aa", false},
		{`a+?`, "aa", true},
		// A multi-byte unit cut by the end: its lead byte is known, so
		// the threads that cannot take it are dead.
		{`ax+`, "ax\xe2", true},
		{`ax+|a`, "ax\xe2", true},
		{`ax(?:€)?`, "ax\xe2", false}, // € may still follow
		{`ax+`, "ax\xe2\x82", true},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q/%q", tt.pattern, tt.input), func(t *testing.T) {
			vm := New(nfatest.New(t, tt.pattern))
			vm.Restart(0, Edge, 0)
			st := vm.Advance([]byte(tt.input), 0, false, 1<<40)
			if got := st == Found; got != tt.found {
				t.Errorf("Advance = %v, want found=%v", st, tt.found)
			}
		})
	}
}

func TestOverflow(t *testing.T) {
	vm := New(nfatest.New(t, "a[^z]*z"))
	vm.Restart(0, Edge, 0)
	if st := vm.Advance([]byte("xxabcdefgh"), 0, false, 5); st != Overflow {
		t.Fatalf("Advance = %v, want Overflow", st)
	}
	if got := vm.Pos() - vm.Earliest(); got != 6 {
		t.Errorf("span at overflow = %d, want 6 (first span over 5)", got)
	}
}

func TestAllocs(t *testing.T) {
	n := nfatest.New(t, `(a|b)+c`, `\bfoo\b`, `(?i)hello`, `x*`)
	vm := New(n)
	body := []byte(strings.Repeat("aabc foo Hello xx é\xff ", 20))
	slots := make([]int, 0, 16)
	allocs := testing.AllocsPerRun(50, func() {
		vm.Restart(0, Edge, 0)
		for {
			st := vm.Advance(body, 0, true, 1<<40)
			if st != Found {
				break
			}
			m := vm.Match()
			if m.Rule == 0 {
				slots = vm.Captures(slots[:0], 0, body[m.Start:], int(m.End-m.Start), Edge, true)
			}
			if m.End == m.Start {
				vm.RestartAfterEmpty(m.End, int(body[m.End-1]))
			} else {
				vm.Restart(m.End, int(body[m.End-1]), m.End)
			}
		}
	})
	if allocs != 0 {
		t.Errorf("allocs per search = %v, want 0", allocs)
	}
}

// BenchmarkSearch runs every leftmost-first search over an HTML-ish body,
// as the stream does, with the exact engine alone.
func BenchmarkSearch(b *testing.B) {
	n := nfatest.New(b, `https?://(?:www\.)?example\.com`, `UA-12345-1`, `<script[^>]*>`, `\bcolou?r\b`, `(\d{4})-(\d\d)-(\d\d)`)
	const para = `<p class="c">Visit <a href="http://www.example.com/x?y=1">us</a> on 2024-05-17, colour é ✓ <script src="a.js"></script> UA-12345-1</p>` + "\n"
	body := []byte(strings.Repeat(para, 512))
	vm := New(n)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		vm.Restart(0, Edge, 0)
		for vm.Advance(body, 0, true, 1<<40) == Found {
			m := vm.Match()
			vm.Restart(m.End, int(body[m.End-1]), m.End)
		}
	}
}

// TestPooledScratch: VMs of a large NFA borrow their scratch from the
// Prog's pool; a released VM restarts and searches exactly as before.
func TestPooledScratch(t *testing.T) {
	var pats []string
	for i := 0; i < 150; i++ {
		pats = append(pats, fmt.Sprintf("w%dx", i))
	}
	pats = append(pats, `(\d+)-(\d+)`)
	n := nfatest.New(t, pats...)
	if n.Len() < poolMinStates {
		t.Fatalf("NFA has %d states, want at least %d for this test", n.Len(), poolMinStates)
	}
	p := NewProg(n)
	body := []byte("a w12x b 10-20 w149x w150x")
	re := regexp.MustCompile("(?sm)" + strings.Join(pats, "|"))
	want := re.FindAllIndex(body, -1)
	vm := p.NewVM()
	for round := 0; round < 3; round++ {
		var got [][]int
		vm.Restart(0, Edge, 0)
		for vm.Advance(body, 0, true, 1<<40) == Found {
			m := vm.Match()
			got = append(got, []int{int(m.Start), int(m.End)})
			if int(m.Rule) == len(pats)-1 {
				slots := vm.Captures(nil, m.Rule, body[m.Start:], int(m.End-m.Start), int(body[m.Start-1]), true)
				if g := string(body[m.Start:][slots[4]:slots[5]]); g != "20" {
					t.Errorf("round %d: group 2 = %q, want 20", round, g)
				}
			}
			vm.Restart(m.End, int(body[m.End-1]), m.End)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("round %d: matches %v, Go regexp %v", round, got, want)
		}
		vm.Release()
		if vm.scr != nil {
			t.Fatalf("round %d: Release kept the scratch", round)
		}
	}
}

// TestStartIndexPerByte checks the per-byte start lists (built once per
// run of bytes between range edges) against filtering the start closure
// byte by byte: the states that step over c or match, in order, up to the
// first match state.
func TestStartIndexPerByte(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 5))
	for range 300 {
		var pats []string
		for range 1 + rng.IntN(4) {
			pats = append(pats, regexgen.Pattern(rng, 3))
		}
		p := NewProg(nfatest.New(t, pats...))
		for ctx := range p.starts {
			sc := &p.starts[ctx]
			if len(sc.lists) == 1 && len(sc.lists[0]) == len(sc.states) {
				continue // not indexed
			}
			for c := range 256 {
				var want []nfa.StateID
				for _, id := range sc.states {
					st := &p.states[id]
					ok := st.Kind == nfa.KindMatch || st.Kind == nfa.KindInvalid && c >= 0x80 ||
						st.Kind == nfa.KindRange && int(st.Lo) <= c && c <= int(st.Hi)
					for _, tr := range st.Trans {
						ok = ok || st.Kind == nfa.KindSparse && int(tr.Lo) <= c && c <= int(tr.Hi)
					}
					if ok {
						want = append(want, id)
					}
					if st.Kind == nfa.KindMatch {
						break
					}
				}
				if got := sc.lists[sc.byByte[c]]; !slices.Equal(got, want) {
					t.Fatalf("%q ctx %d byte %#x: list %v, want %v", pats, ctx, c, got, want)
				}
			}
		}
	}
}
