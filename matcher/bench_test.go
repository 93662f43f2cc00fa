package matcher_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/streamsub/streamsub/internal/demoorigin"
	"github.com/streamsub/streamsub/internal/goregexp"
	"github.com/streamsub/streamsub/internal/htmlgen"
	"github.com/streamsub/streamsub/matcher"
	"github.com/streamsub/streamsub/matcher/internal/cputime"
)

// benchPageSize is the body size of the rewriter benchmarks: big enough that
// per-body setup is noise, small enough to stay in L2/L3-ish territory.
const benchPageSize = 1 << 20

// benchChunk is the chunk size Envoy typically streams bodies in.
const benchChunk = 16 << 10

func toRules(rs []htmlgen.Rule) []matcher.Rule {
	out := make([]matcher.Rule, len(rs))
	for i, r := range rs {
		out[i] = matcher.Rule(r)
	}
	return out
}

// BenchmarkRewrite runs the three workloads of the rewriter-speed issue over
// the same generated page: streamsub streaming in 16 KiB chunks, streamsub
// whole-body (one Write), and the Go regexp baseline, side by side.
func BenchmarkRewrite(b *testing.B) {
	page := htmlgen.Page(1, benchPageSize)
	for _, w := range []htmlgen.Workload{htmlgen.Clone(), htmlgen.Literals(), htmlgen.Regexes()} {
		rules := toRules(w.Rules)
		rs, err := matcher.Compile(rules, matcher.Options{})
		if err != nil {
			b.Fatal(err)
		}
		// Names are key=value so that benchstat can pivot: -col /engine.
		b.Run("work="+w.Name+"/engine=stream16k", func(b *testing.B) { benchStream(b, rs, page, benchChunk) })
		b.Run("work="+w.Name+"/engine=whole", func(b *testing.B) { benchStream(b, rs, page, len(page)) })
		b.Run("work="+w.Name+"/engine=goregexp", func(b *testing.B) {
			rw, err := goregexp.Compile(rules)
			if err != nil {
				b.Fatal(err)
			}
			dst := make([]byte, 0, 2*len(page))
			b.SetBytes(int64(len(page)))
			b.ReportAllocs()
			cpu := cputime.Start(cputime.Process)
			for b.Loop() {
				dst = rw.Rewrite(dst[:0], page)
			}
			cpu.Report(b, len(page))
		})
	}
}

// BenchmarkLoadLiterals streams the through-Envoy benchmark's rule set
// (scripts/load.yaml: three literals, which the rare-byte prefilter skips
// to by x and U) over its page, the demo origin's /big (a match every ~156
// bytes), and over the generated page of BenchmarkRewrite (markup and
// text, a few matches), in 16 KiB chunks.
func BenchmarkLoadLiterals(b *testing.B) {
	rs, err := matcher.Compile([]matcher.Rule{
		{Pattern: "https://www.example.com", Literal: true, Replace: "https://clone.example.net"},
		{Pattern: "www.example.com", Literal: true, Replace: "clone.example.net"},
		{Pattern: "UA-12345-1", Literal: true, Replace: "UA-99999-9"},
	}, matcher.Options{})
	if err != nil {
		b.Fatal(err)
	}
	var big bytes.Buffer
	if err := demoorigin.Big(&big, benchPageSize, func() {}); err != nil {
		b.Fatal(err)
	}
	for _, body := range []struct {
		name string
		b    []byte
	}{{"big", big.Bytes()}, {"page", htmlgen.Page(1, benchPageSize)}} {
		b.Run("body="+body.name, func(b *testing.B) { benchStream(b, rs, body.b, benchChunk) })
	}
}

func benchStream(b *testing.B, rs *matcher.RuleSet, body []byte, chunk int) {
	dst := make([]byte, 0, 2*len(body))
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	cpu := cputime.Start(cputime.Process)
	defer cpu.Report(b, len(body))
	for b.Loop() {
		dst = streamBody(dst[:0], rs, body, chunk)
	}
}

// streamBody appends body rewritten by a new stream of rs, fed in chunks
// of chunk bytes, to dst.
func streamBody(dst []byte, rs *matcher.RuleSet, body []byte, chunk int) []byte {
	st := rs.NewStream()
	for off := 0; off < len(body); off += chunk {
		dst = st.Write(dst, body[off:min(off+chunk, len(body))])
	}
	return st.Close(dst)
}

// BenchmarkPathological runs the adversarial rules over 1 MiB each: the time
// per byte must stay flat (no backtracking) and memory bounded.
func BenchmarkPathological(b *testing.B) {
	for _, p := range htmlgen.Pathologicals(benchPageSize) {
		rs, err := matcher.Compile(toRules(p.Rules), matcher.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(p.Name, func(b *testing.B) { benchStream(b, rs, p.Input, benchChunk) })
	}
}

// BenchmarkRewriteSizes shows that throughput does not depend on the body
// size (linear time) for the clone workload.
func BenchmarkRewriteSizes(b *testing.B) {
	rs, err := matcher.Compile(toRules(htmlgen.Clone().Rules), matcher.Options{})
	if err != nil {
		b.Fatal(err)
	}
	for _, size := range []int{16 << 10, 256 << 10, 4 << 20} {
		page := htmlgen.Page(2, size)
		b.Run(fmt.Sprintf("clone/%dKiB", size>>10), func(b *testing.B) { benchStream(b, rs, page, benchChunk) })
	}
}

// BenchmarkMatchCost splits the clone workload's time between scanning and
// matches: the same page as BenchmarkRewrite (body=page), and that page
// with every match defused (body=defused: "example" → "exampla", "UA-" →
// "QA-", …; the same bytes otherwise, no replacement). The difference per
// replacement is what a match costs (resolving it, the replacement, the
// scan's stops around it).
func BenchmarkMatchCost(b *testing.B) {
	page := htmlgen.Page(1, benchPageSize)
	defused := page
	for _, r := range [][2]string{
		{"example", "exampla"}, {"EXAMPLE", "EXAMPLA"}, {"Example", "Exampla"},
		{"UA-", "QA-"}, {"G-", "Q-"}, {"AIza", "QIza"}, {"GTM-", "QTM-"}, {"fbq(", "qbq("},
	} {
		defused = bytes.ReplaceAll(defused, []byte(r[0]), []byte(r[1]))
	}
	rs, err := matcher.Compile(toRules(htmlgen.Clone().Rules), matcher.Options{})
	if err != nil {
		b.Fatal(err)
	}
	for _, body := range []struct {
		name string
		data []byte
	}{{"page", page}, {"defused", defused}} {
		b.Run("work=clone/body="+body.name, func(b *testing.B) {
			benchStream(b, rs, body.data, len(body.data))
			st := rs.NewStream()
			st.Close(st.Write(nil, body.data))
			b.ReportMetric(float64(st.Stats().Replacements), "replacements")
		})
	}
}
