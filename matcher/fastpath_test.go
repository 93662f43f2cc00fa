package matcher

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/streamsub/streamsub/internal/htmlgen"
	"github.com/streamsub/streamsub/matcher/internal/lazydfa"
	"github.com/streamsub/streamsub/matcher/internal/prefilter"
)

// pieceRewrite is rewrite on the exact engine alone (rs has no fast path),
// feeding it each chunk in pieces of n bytes as the fast path does when it
// hands a chunk over.
func pieceRewrite(rs *RuleSet, chunks [][]byte, n int) ([]byte, StreamStats) {
	st := rs.NewStream()
	var out []byte
	for _, c := range chunks {
		if len(c) == 0 || st.passthrough {
			out = st.Write(out, c)
			continue
		}
		st.startChunk(len(c))
		for len(c) > 0 && !st.passthrough {
			k := min(n, len(c))
			out = st.feed(out, c[:k])
			c = c[k:]
		}
		out = append(out, c...)
	}
	out = st.Close(out)
	return out, st.Stats()
}

// checkFastPath rewrites body cut into chunks with every engine and
// requires the exact engine's output and stats. It also requires them
// of the exact engine fed the chunks in pieces: the fast path relies on
// the engine holding the same bytes at a chunk's end however it was fed.
func checkFastPath(t *testing.T, rules []Rule, opts Options, body []byte, chunkings map[string][][]byte) {
	t.Helper()
	var sets []*RuleSet
	forEachEngine(t, rules, opts, func(rs *RuleSet, _ engine) { sets = append(sets, rs) })
	for cname, chunks := range chunkings {
		want, wstats := rewrite(sets[0].NewStream(), chunks)
		for _, n := range []int{1, 3} {
			got, stats := pieceRewrite(sets[0], chunks, n)
			if !bytes.Equal(got, want) || stats.Replacements != wstats.Replacements || stats.Overflowed != wstats.Overflowed {
				t.Fatalf("rules %s cap %d\nbody %q\n%s chunks %q\nexact in pieces of %d: %q %+v\nexact: %q %+v",
					fmtRules(rules), opts.MaxBufferedBytes, body, cname, chunks, n, got, stats, want, wstats)
			}
		}
		for i := 1; i < len(sets); i++ {
			got, stats := rewrite(sets[i].NewStream(), chunks)
			if !bytes.Equal(got, want) || stats.Replacements != wstats.Replacements || stats.Overflowed != wstats.Overflowed {
				t.Fatalf("rules %s cap %d\nbody %q\n%s chunks %q\n%s: %q %+v\nexact: %q %+v",
					fmtRules(rules), opts.MaxBufferedBytes, body, cname, chunks, engines[i].name, got, stats, want, wstats)
			}
		}
	}
}

// FuzzFastPath compares the fast path (lazy DFA + anchored resolver, in
// several cache configurations) with the exact engine alone on random
// rules, bodies and chunkings, also with small hold-back caps. Arguments
// use FuzzStream's grammar; the first byte of cuts picks the cap.
func FuzzFastPath(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s.spec), []byte(s.body), []byte(s.cuts))
	}
	f.Add([]byte("g&&Ba+x0"), []byte("aaax aax ax"), []byte("\x0012"))
	f.Add([]byte("ge2&1"), []byte("ee ae e"), []byte("\x0311"))
	// Literals only: fast-rare skips to their rarest bytes.
	f.Add([]byte("l3axb1Yl2xx0k2cx1Z"), []byte("axb xx cx CX aaxbb xxx"), []byte("13251"))
	f.Fuzz(func(t *testing.T, spec, bodyIn, cuts []byte) {
		rules := fuzzRules(spec)
		if _, err := Compile(rules, Options{}); err != nil {
			return
		}
		body := fuzzBody(bodyIn)
		opts := Options{MaxBufferedBytes: fuzzMaxBuffered}
		if len(cuts) > 0 && cuts[0] < 16 {
			opts.MaxBufferedBytes = 1 + int(cuts[0])
			cuts = cuts[1:]
		}
		checkFastPath(t, rules, opts, body, map[string][][]byte{
			"whole":    {body},
			"chunked":  fuzzChunks(body, cuts),
			"bytewise": fuzzChunks(body, bytes.Repeat([]byte{'1'}, len(body))),
		})
	})
}

func htmlRules(w htmlgen.Workload) []Rule {
	rules := make([]Rule, len(w.Rules))
	for i, r := range w.Rules {
		rules[i] = Rule(r)
	}
	return rules
}

// TestFastPathWorkloads runs the benchmark workloads and the pathological
// rules over generated pages in several chunkings: the fast path must give
// the exact engine's output. With -short (make unit's -race run, where the
// race detector makes it ~30 times slower and has no shared state to watch:
// TestFastPathConcurrentStreams does) the inputs are smaller.
func TestFastPathWorkloads(t *testing.T) {
	pageSize, pathSize := 96<<10, 20<<10
	if testing.Short() {
		pageSize, pathSize = 16<<10, 4<<10
	}
	page := htmlgen.Page(5, pageSize)
	cut := func(b []byte, n int) [][]byte {
		var out [][]byte
		for len(b) > n {
			out = append(out, b[:n])
			b = b[n:]
		}
		return append(out, b)
	}
	chunkings := func(b []byte) map[string][][]byte {
		return map[string][][]byte{"whole": {b}, "16k": cut(b, 16<<10), "1000": cut(b, 1000), "7": cut(b, 7)}
	}
	for _, w := range []htmlgen.Workload{htmlgen.Clone(), htmlgen.Literals(), htmlgen.Regexes(), htmlgen.ManyLiterals(200)} {
		t.Run(w.Name, func(t *testing.T) { checkFastPath(t, htmlRules(w), Options{}, page, chunkings(page)) })
	}
	for _, p := range htmlgen.Pathologicals(pathSize) {
		t.Run(p.Name, func(t *testing.T) {
			checkFastPath(t, htmlRules(htmlgen.Workload{Rules: p.Rules}), Options{}, p.Input, chunkings(p.Input))
		})
	}
}

func TestFastPathEligibility(t *testing.T) {
	for _, tt := range []struct {
		rules []Rule
		fast  bool
	}{
		{[]Rule{{Pattern: "a"}}, true},
		{[]Rule{{Pattern: "a*"}}, false},
		{[]Rule{{Pattern: "a"}, {Pattern: `\b`}}, false},
		{[]Rule{{Pattern: "x", Literal: true}}, true},
	} {
		rs, err := Compile(tt.rules, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if (rs.fast != nil) != tt.fast {
			t.Errorf("%s: fast path %v, want %v", fmtRules(tt.rules), rs.fast != nil, tt.fast)
		}
	}
}

// TestFastPathFallbackStats checks that hand-overs to the exact engine are
// counted: a tiny cache gives up, and a window open at a chunk edge falls
// back.
func TestFastPathFallbackStats(t *testing.T) {
	rules := htmlRules(htmlgen.Regexes())
	rs, err := Compile(rules, Options{})
	if err != nil {
		t.Fatal(err)
	}
	rs.fast = newFastPath(rs.nfa, int(rs.maxSpan), lazydfa.Config{CacheBytes: 1, MaxClears: 1})
	st := rs.NewStream()
	page := htmlgen.Page(9, 64<<10)
	st.Write(nil, page)
	if s := st.Stats(); !s.CacheGaveUp || s.FastFallbacks == 0 {
		t.Errorf("tiny cache: stats %+v, want CacheGaveUp and fallbacks", s)
	}
	rs2, _ := Compile([]Rule{{Pattern: "abc", Replace: "X"}}, Options{})
	st = rs2.NewStream()
	out := st.Write(nil, []byte("xxab"))
	out = st.Write(out, []byte("cxx"))
	out = st.Close(out)
	if s := st.Stats(); string(out) != "xxXxx" || s.FastFallbacks != 1 || s.CacheGaveUp {
		t.Errorf("window at chunk edge: %q %+v", out, s)
	}
}

// TestFastPathZeroAllocs checks 0 allocations per Write in steady state
// (warm caches) for each workload with 16 KiB chunks.
func TestFastPathZeroAllocs(t *testing.T) {
	page := htmlgen.Page(3, 256<<10)
	for _, w := range []htmlgen.Workload{htmlgen.Clone(), htmlgen.Literals(), htmlgen.Regexes()} {
		rs, err := Compile(htmlRules(w), Options{})
		if err != nil {
			t.Fatal(err)
		}
		st := rs.NewStream()
		dst := make([]byte, 0, 4*len(page))
		for off := 0; off < len(page); off += 16 << 10 { // warm up the caches
			dst = st.Write(dst[:0], page[off:off+16<<10])
		}
		off := 0
		allocs := testing.AllocsPerRun(100, func() {
			dst = st.Write(dst[:0], page[off:off+16<<10])
			off = (off + 16<<10) % len(page)
		})
		if allocs != 0 {
			t.Errorf("%s: %v allocs per 16 KiB Write, want 0", w.Name, allocs)
		}
	}
}

func ExampleStream_fastPath() {
	rs, _ := Compile([]Rule{{Pattern: `([a-z]+)@example\.com`, Replace: "$1@clone.example.net"}}, Options{})
	st := rs.NewStream()
	out := st.Write(nil, []byte("mail jane@exam"))
	out = st.Write(out, []byte("ple.com or bob@example.com."))
	out = st.Close(out)
	fmt.Println(string(out))
	// Output: mail jane@clone.example.net or bob@clone.example.net.
}

// TestFastPathConcurrentStreams runs streams of one RuleSet on several
// goroutines at once (the pooled lazy DFA caches move between them); run
// with -race. Every stream must give the exact engine's output.
func TestFastPathConcurrentStreams(t *testing.T) {
	rules := htmlRules(htmlgen.Clone())
	exact, fast := compileFor(t, rules, Options{}, engines[0]), compileFor(t, rules, Options{}, engines[1])
	page := htmlgen.Page(11, 48<<10)
	want, _ := rewrite(exact.NewStream(), [][]byte{page})
	done := make(chan string)
	for g := range 4 {
		go func() {
			msg := ""
			for it := range 8 {
				n := 1000 + 997*(g+it)
				var chunks [][]byte
				for b := page; len(b) > 0; b = b[min(n, len(b)):] {
					chunks = append(chunks, b[:min(n, len(b))])
				}
				if got, _ := rewrite(fast.NewStream(), chunks); !bytes.Equal(got, want) {
					msg = fmt.Sprintf("goroutine %d iteration %d: output differs", g, it)
				}
			}
			done <- msg
		}()
	}
	for range 4 {
		if msg := <-done; msg != "" {
			t.Error(msg)
		}
	}
}

// BenchmarkCacheWarmth measures the choice of per-stream lazy DFA caches
// pooled per rule set (fastPath.caches) over caches built from scratch for
// every stream: body=SIZE pages of the clone workload, each a new Stream,
// with pool=warm (the shipped path: a returned cache keeps its states) or
// pool=cold (a new, empty pair of caches per stream: what a stream pays
// when the pool is empty, e.g. when concurrency rises). states and
// cache-bytes report what one warm stream's caches hold: the memory a
// shared cache would save per concurrent stream.
func BenchmarkCacheWarmth(b *testing.B) {
	rs, err := Compile(htmlRules(htmlgen.Clone()), Options{})
	if err != nil {
		b.Fatal(err)
	}
	fp := rs.fast
	for _, size := range []int{4 << 10, 64 << 10, 1 << 20} {
		page := htmlgen.Page(1, size)
		dst := make([]byte, 0, 2*size)
		for _, warm := range []bool{true, false} {
			name := fmt.Sprintf("body=%dKiB/pool=cold", size>>10)
			if warm {
				name = fmt.Sprintf("body=%dKiB/pool=warm", size>>10)
			}
			b.Run(name, func(b *testing.B) {
				b.SetBytes(int64(size))
				b.ReportAllocs()
				var c *fastCaches
				for b.Loop() {
					st := rs.NewStream()
					if !warm {
						st.fast.caches = &fastCaches{scan: fp.dfa.NewCache(), anch: fp.anch.NewCache(), windows: make([]lazydfa.Window, 0, fastWindows)}
					}
					dst = dst[:0]
					for off := 0; off < size; off += 16 << 10 {
						dst = st.Write(dst, page[off:min(size, off+16<<10)])
					}
					c = st.fast.caches
					dst = st.Close(dst)
				}
				scan, anch := c.scan.Stats(), c.anch.Stats()
				b.ReportMetric(float64(scan.States+anch.States), "states")
				b.ReportMetric(float64(scan.Bytes+anch.Bytes), "cache-bytes")
			})
		}
	}
}

// TestDFACacheBytesOption: Options.DFACacheBytes is the budget of the fast
// path's caches. 64 KiB of htmlgen.StateThrash fit the default budget, not
// a 4 KiB one, whose cache gives up (the body still comes out right).
func TestDFACacheBytesOption(t *testing.T) {
	body := htmlgen.StateThrash(1, 64<<10)
	for _, tt := range []struct {
		budget int
		gaveUp bool
	}{{0, false}, {DefaultDFACacheBytes, false}, {MinDFACacheBytes, true}} {
		rs, err := Compile([]Rule{{Pattern: htmlgen.StateThrashRule, Replace: "X"}}, Options{DFACacheBytes: tt.budget})
		if err != nil {
			t.Fatal(err)
		}
		st := rs.NewStream()
		var out []byte
		for off := 0; off < len(body); off += 16 << 10 {
			out = st.Write(out, body[off:min(len(body), off+16<<10)])
		}
		gaveUp := st.Stats().CacheGaveUp
		out = st.Close(out)
		if gaveUp != tt.gaveUp || !bytes.Equal(out, body) {
			t.Errorf("budget %d: gave up %v, want %v; body unchanged %v", tt.budget, gaveUp, tt.gaveUp, bytes.Equal(out, body))
		}
	}
}

// TestRarePrefilterChoice: Compile skips by rare bytes only for a rule set
// of literals whose rarest bytes are rarer than its start bytes.
func TestRarePrefilterChoice(t *testing.T) {
	lit := func(p string, fold bool) Rule { return Rule{Pattern: p, Literal: true, IgnoreCase: fold, Replace: "-"} }
	tests := []struct {
		name    string
		rules   []Rule
		needles string // "": none
	}{
		{"clone rules", []Rule{lit("https://www.example.com", false), lit("www.example.com", false), lit("UA-12345-1", false)}, "xU"},
		{"one host", []Rule{lit("www.example.com", false)}, "x"},
		{"start byte as rare", []Rule{lit("UA-1", false)}, ""},
		{"common bytes", []Rule{lit("the", false), lit("and", false)}, ""},
		{"a regex", []Rule{lit("www.example.com", false), {Pattern: "x+", Replace: "-"}}, ""},
		{"ignoring case", []Rule{lit("www.example.com", true)}, ""},
	}
	for _, tt := range tests {
		rs, err := Compile(tt.rules, Options{})
		if err != nil {
			t.Fatal(err)
		}
		p := rarePrefilter(rs.rules, rs.nfa, prefilter.RareEnough)
		switch {
		case tt.needles == "" && p != nil:
			t.Errorf("%s: needles %q, want none", tt.name, p.Needles())
		case tt.needles != "" && (p == nil || string(p.Needles()) != tt.needles):
			t.Errorf("%s: %v, want needles %q", tt.name, p, tt.needles)
		}
	}
}
