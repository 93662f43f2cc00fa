package lazydfa

import (
	"bytes"
	"regexp/syntax"
	"testing"

	"github.com/streamsub/streamsub/internal/htmlgen"
	"github.com/streamsub/streamsub/matcher/internal/nfa"
)

func workloadNFA(b *testing.B, w htmlgen.Workload) *nfa.NFA {
	var res []*syntax.Regexp
	for _, r := range w.Rules {
		flags := parseFlags
		if r.IgnoreCase {
			flags |= syntax.FoldCase
		}
		if r.Literal {
			flags |= syntax.Literal
		}
		re, err := syntax.Parse(r.Pattern, flags)
		if err != nil {
			b.Fatal(err)
		}
		res = append(res, re)
	}
	n, err := nfa.New(res)
	if err != nil {
		b.Fatal(err)
	}
	return n
}

// BenchmarkScan measures the raw DFA scan over a generated page: each
// matched window is skipped one byte past its start (no exact engine).
func BenchmarkScan(b *testing.B) {
	page := htmlgen.Page(1, 1<<20)
	for _, w := range []htmlgen.Workload{htmlgen.Clone(), htmlgen.Literals(), htmlgen.Regexes()} {
		d := New(workloadNFA(b, w), Config{})
		c := d.NewCache()
		b.Run(w.Name, func(b *testing.B) {
			b.SetBytes(int64(len(page)))
			b.ReportAllocs()
			windows := 0
			for b.Loop() {
				for i := 0; i < len(page); {
					off, st := c.Scan(page[i:], 1<<20)
					if st == NoMatch || st == Open {
						break
					}
					windows++
					i += off + 1
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
	for b.Loop() {
		off, st := c.Scan(page, 1<<20)
		if st != NoMatch {
			b.Fatal(off, st)
		}
	}
	b.ReportMetric(float64(c.Stats().Syncs)/float64(b.N), "syncs/op")
}
