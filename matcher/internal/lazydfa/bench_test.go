package lazydfa

import (
	"bytes"
	"regexp/syntax"
	"testing"

	"github.com/streamsub/streamsub/internal/htmlgen"
	"github.com/streamsub/streamsub/matcher/internal/nfa"
	"github.com/streamsub/streamsub/matcher/internal/nfatest"
)

func workloadNFA(b *testing.B, w htmlgen.Workload) *nfa.NFA {
	patterns := make([]string, len(w.Rules))
	flags := make([]syntax.Flags, len(w.Rules))
	for i, r := range w.Rules {
		patterns[i], flags[i] = r.Pattern, nfatest.Flags
		if r.IgnoreCase {
			flags[i] |= syntax.FoldCase
		}
		if r.Literal {
			flags[i] |= syntax.Literal
		}
	}
	return nfatest.NewFlags(b, patterns, flags)
}

// BenchmarkScan measures the raw DFA scan over a generated page as the
// fast path runs it (ScanWindows with room for 32 windows, resumed when
// full), without resolving the windows.
func BenchmarkScan(b *testing.B) {
	page := htmlgen.Page(1, 1<<20)
	for _, w := range []htmlgen.Workload{htmlgen.Clone(), htmlgen.Literals(), htmlgen.Regexes()} {
		d := New(workloadNFA(b, w), Config{})
		c := d.NewCache()
		b.Run(w.Name, func(b *testing.B) {
			b.SetBytes(int64(len(page)))
			b.ReportAllocs()
			ws := make([]Window, 0, 32)
			windows := 0
			for b.Loop() {
				s, w0 := Idle, 0
				for i := 0; i < len(page); {
					var off int
					var st Status
					ws, off, st = c.ScanWindows(page[i:], s, w0, 1<<20, ws)
					windows += len(ws)
					if st != Full {
						break
					}
					s, w0 = c.OpenState(), c.ResumeStart()-off
					i += off
				}
			}
			b.ReportMetric(float64(windows)/float64(b.N), "matchwindows/op")
			b.ReportMetric(float64(c.Stats().States), "states")
		})
	}
}

// BenchmarkScanProse measures the scan loop alone on 1 MiB of words that
// hold no match of the clone rules: the DFA leaves Idle at most letters
// (the e-mail rule's [a-z0-9._%+-]+), so no prefilter applies and the loop
// runs at its latency bound; syncs/op counts how often the speculative
// chain took over (scan.go).
func BenchmarkScanProse(b *testing.B) {
	words := []string{"lorem", "ipsum", "dolor", "sit", "amet", "quality", "fast", "simple", "version", "<p>", "team", "more", "you", "are"}
	var buf bytes.Buffer
	for i := 0; buf.Len() < 1<<20; i++ {
		buf.WriteString(words[(i*7+i/3)%len(words)])
		buf.WriteByte(" ,. "[i%4])
	}
	page := buf.Bytes()
	d := New(workloadNFA(b, htmlgen.Clone()), Config{})
	c := d.NewCache()
	b.SetBytes(int64(len(page)))
	ws := make([]Window, 0, 32)
	for b.Loop() {
		var off int
		var st Status
		if ws, off, st = c.ScanWindows(page, Idle, 0, 1<<20, ws); st != NoMatch || len(ws) > 0 {
			b.Fatal(off, st, ws)
		}
	}
	b.ReportMetric(float64(c.Stats().Syncs)/float64(b.N), "syncs/op")
}
