// Package loadreport turns the raw results of the through-proxy benchmark
// (scripts/load.sh: one TSV line per wrk run) into its report: one summary
// per case and target over the rounds, a markdown table and a chart.
package loadreport

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/streamsub/streamsub/internal/svgchart"
)

// Columns is the header line of the results file, in order.
var Columns = []string{
	"round", "page", "size", "chunk", "pause_us", "conns", "target", "requests", "seconds", "rps",
	"p50_ms", "p99_ms", "errors", "proxy_cpu_us", "streamsub_cpu_us", "origin_cpu_us", "body_calls",
	"streamsub_rss_kib",
}

// Run is one wrk run: one target, one case, one round.
type Run struct {
	Round int
	Case
	Target   string
	Requests int64
	Seconds  float64
	// RPS is requests per second, P50 and P99 latencies in milliseconds.
	RPS, P50, P99 float64
	// Errors counts socket errors and non-2xx responses.
	Errors int64
	// ProxyCPU, StreamsubCPU and OriginCPU are the CPU microseconds
	// (user + system) each process used during the run; NaN where the
	// process is not in the target's path (written "-").
	ProxyCPU, StreamsubCPU, OriginCPU float64
	// BodyCalls is the mean number of ext_proc body calls per request;
	// NaN where there is no ext_proc.
	BodyCalls float64
	// StreamsubRSS is streamsub's largest resident set during the run, in
	// KiB (sampled); NaN where streamsub is not in the path.
	StreamsubRSS float64
}

// Case is what a run requests: a page and a connection count.
type Case struct {
	// Page is "big" (flushed every 32 KiB), "trickle" (flushed every
	// Chunk bytes, Pause µs apart) or "static" (a file no rule matches,
	// which streamsub remembers and skips).
	Page         string
	Size         int64
	Chunk, Pause int
	Conns        int
}

// Label names the case's page: "256 KiB", "256 KiB, 1 KiB flushes",
// "256 KiB, 1 KiB every 100 µs" or "64 KiB CSS, remembered no match".
func (c Case) Label() string {
	switch {
	case c.Page == "static":
		return Bytes(c.Size) + " CSS, remembered no match"
	case c.Page != "trickle":
		return Bytes(c.Size)
	case c.Pause > 0:
		return fmt.Sprintf("%s, %s every %d µs", Bytes(c.Size), Bytes(int64(c.Chunk)), c.Pause)
	}
	return fmt.Sprintf("%s, %s flushes", Bytes(c.Size), Bytes(int64(c.Chunk)))
}

// Bytes formats n as "16 KiB", "4 MiB" or "1000 B".
func Bytes(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d B", n)
}

// Baseline is the target the others' req/s are compared with.
const Baseline = "envoy"

// TargetLabel names a target in tables and charts.
func TargetLabel(target string) string {
	switch target {
	case "envoy":
		return "(a) Envoy"
	case "streamsub":
		return "(b) Envoy + streamsub"
	case "sub_filter":
		return "(c) nginx sub_filter"
	case "subs_filter":
		return "(d) nginx subs_filter"
	case "passthrough":
		return "(e) Envoy + streamsub, no rule matches"
	}
	return target
}

// Parse reads a results file: the Columns header, then one run per line.
// Errors name the line and column.
func Parse(r io.Reader) ([]Run, error) {
	sc := bufio.NewScanner(r)
	if !sc.Scan() {
		if err := sc.Err(); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("line 1: no header")
	}
	if got := strings.Split(sc.Text(), "\t"); !slices.Equal(got, Columns) {
		return nil, fmt.Errorf("line 1: header %q, want %q", got, Columns)
	}
	var runs []Run
	for line := 2; sc.Scan(); line++ {
		if sc.Text() == "" {
			continue
		}
		f := strings.Split(sc.Text(), "\t")
		if len(f) != len(Columns) {
			return nil, fmt.Errorf("line %d: %d fields, want %d", line, len(f), len(Columns))
		}
		p := fieldParser{f: f}
		run := Run{
			Round:        int(p.int(0)),
			Case:         Case{Page: f[1], Size: p.int(2), Chunk: int(p.int(3)), Pause: int(p.int(4)), Conns: int(p.int(5))},
			Target:       f[6],
			Requests:     p.int(7),
			Seconds:      p.float(8, false),
			RPS:          p.float(9, false),
			P50:          p.float(10, false),
			P99:          p.float(11, false),
			Errors:       p.int(12),
			ProxyCPU:     p.float(13, true),
			StreamsubCPU: p.float(14, true),
			OriginCPU:    p.float(15, true),
			BodyCalls:    p.float(16, true),
			StreamsubRSS: p.float(17, true),
		}
		if p.err != nil {
			return nil, fmt.Errorf("line %d: %w", line, p.err)
		}
		if run.Page != "big" && run.Page != "trickle" && run.Page != "static" {
			return nil, fmt.Errorf("line %d: page %q, want big, trickle or static", line, run.Page)
		}
		runs = append(runs, run)
	}
	return runs, sc.Err()
}

// fieldParser parses the fields of one line and keeps the first error.
type fieldParser struct {
	f   []string
	err error
}

func (p *fieldParser) int(i int) int64 {
	v, err := strconv.ParseInt(p.f[i], 10, 64)
	if err == nil && v < 0 {
		err = fmt.Errorf("negative")
	}
	p.fail(i, err)
	return v
}

// float parses field i; "-" is NaN where dash is allowed.
func (p *fieldParser) float(i int, dash bool) float64 {
	if dash && p.f[i] == "-" {
		return math.NaN()
	}
	v, err := strconv.ParseFloat(p.f[i], 64)
	if err == nil && !(v >= 0 && !math.IsInf(v, 0)) {
		err = fmt.Errorf("not a finite value ≥ 0")
	}
	p.fail(i, err)
	return v
}

func (p *fieldParser) fail(i int, err error) {
	if err != nil && p.err == nil {
		p.err = fmt.Errorf("column %s: %q: %w", Columns[i], p.f[i], err)
	}
}

// Summary is one target in one case over all rounds.
type Summary struct {
	Case
	Target string
	Rounds int
	// RPS, P50 and P99 are medians over the rounds.
	RPS, P50, P99 float64
	// VsBaseline is RPS over the Baseline target's in the same case (NaN
	// without one).
	VsBaseline float64
	// ProxyCPU, StreamsubCPU and OriginCPU are CPU microseconds per
	// request: all rounds' CPU time over all their requests (NaN where
	// the process is not in the path).
	ProxyCPU, StreamsubCPU, OriginCPU float64
	// BodyCalls is the median of the rounds' ext_proc body calls per
	// request (NaN without ext_proc).
	BodyCalls float64
	// StreamsubRSS is the largest of the rounds' streamsub peak RSS, in
	// KiB (NaN without streamsub).
	StreamsubRSS float64
	// Requests completed and Errors, over all rounds.
	Requests, Errors int64
}

// TotalCPU is the CPU microseconds per request of all processes in the path.
func (s Summary) TotalCPU() float64 {
	t := 0.0
	for _, v := range []float64{s.ProxyCPU, s.StreamsubCPU, s.OriginCPU} {
		if !math.IsNaN(v) {
			t += v
		}
	}
	return t
}

// Summarize groups runs by case and target, in the order they first
// appear.
func Summarize(runs []Run) []Summary {
	type key struct {
		Case
		target string
	}
	var order []key
	groups := map[key][]Run{}
	for _, r := range runs {
		k := key{r.Case, r.Target}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], r)
	}
	out := make([]Summary, 0, len(order))
	for _, k := range order {
		g := groups[k]
		s := Summary{Case: k.Case, Target: k.target, Rounds: len(g)}
		s.RPS = median(g, func(r Run) float64 { return r.RPS })
		s.P50 = median(g, func(r Run) float64 { return r.P50 })
		s.P99 = median(g, func(r Run) float64 { return r.P99 })
		s.BodyCalls = median(g, func(r Run) float64 { return r.BodyCalls })
		s.StreamsubRSS = largest(g, func(r Run) float64 { return r.StreamsubRSS })
		for _, r := range g {
			s.Requests += r.Requests
			s.Errors += r.Errors
		}
		req := s.Requests
		perRequest := func(cpu func(Run) float64) float64 {
			if req == 0 {
				return math.NaN()
			}
			t := 0.0
			for _, r := range g {
				t += cpu(r) // NaN if any round lacks it
			}
			return t / float64(req)
		}
		s.ProxyCPU = perRequest(func(r Run) float64 { return r.ProxyCPU })
		s.StreamsubCPU = perRequest(func(r Run) float64 { return r.StreamsubCPU })
		s.OriginCPU = perRequest(func(r Run) float64 { return r.OriginCPU })
		out = append(out, s)
	}
	for i := range out {
		out[i].VsBaseline = math.NaN()
		for _, b := range out {
			if b.Case == out[i].Case && b.Target == Baseline && b.RPS > 0 {
				out[i].VsBaseline = out[i].RPS / b.RPS
			}
		}
	}
	return out
}

// largest of f over g; NaN when any value is NaN.
func largest(g []Run, f func(Run) float64) float64 {
	m := math.Inf(-1)
	for _, r := range g {
		v := f(r)
		if math.IsNaN(v) {
			return v
		}
		m = max(m, v)
	}
	return m
}

// median of f over g; NaN when any value is NaN.
func median(g []Run, f func(Run) float64) float64 {
	v := make([]float64, len(g))
	for i, r := range g {
		if v[i] = f(r); math.IsNaN(v[i]) {
			return math.NaN()
		}
	}
	slices.Sort(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

// WriteMarkdown writes the summaries as one markdown table.
func WriteMarkdown(w io.Writer, sums []Summary) error {
	b := bufio.NewWriter(w)
	fmt.Fprintln(b, "| page | conns | target | req/s | vs (a) | p50 ms | p99 ms | proxy µs/req | streamsub µs/req | origin µs/req | total µs/req | body calls/req | streamsub RSS MiB | requests | errors |")
	fmt.Fprintln(b, "|---|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
	for _, s := range sums {
		fmt.Fprintf(b, "| %s | %d | %s | %.0f | %s | %.2f | %.2f | %s | %s | %s | %.0f | %s | %s | %d | %d |\n",
			s.Label(), s.Conns, TargetLabel(s.Target), s.RPS, num(s.VsBaseline, "%.2f×"), s.P50, s.P99,
			num(s.ProxyCPU, "%.0f"), num(s.StreamsubCPU, "%.0f"), num(s.OriginCPU, "%.0f"), s.TotalCPU(),
			num(s.BodyCalls, "%.1f"), num(s.StreamsubRSS/1024, "%.0f"), s.Requests, s.Errors)
	}
	return b.Flush()
}

// num formats v, or "–" for NaN.
func num(v float64, format string) string {
	if math.IsNaN(v) {
		return "–"
	}
	return fmt.Sprintf(format, v)
}

// Chart draws req/s and CPU per request (stacked by process) of every
// target, one panel per case.
func Chart(sums []Summary, title, subtitle string) *svgchart.Chart {
	var cases []Case
	var targets []string
	conns := map[int]bool{}
	for _, s := range sums {
		if !slices.Contains(cases, s.Case) {
			cases = append(cases, s.Case)
		}
		if !slices.Contains(targets, s.Target) {
			targets = append(targets, s.Target)
		}
		conns[s.Conns] = true
	}
	c := &svgchart.Chart{Title: title, Subtitle: subtitle}
	for _, t := range targets {
		c.Series = append(c.Series, TargetLabel(t))
	}
	rps := svgchart.Row{Title: "req/s (higher is better)"}
	cpu := svgchart.Row{Title: "CPU µs per request (lower is better)", Parts: []string{"proxy", "streamsub", "origin"}}
	for _, k := range cases {
		name := k.Label()
		if len(conns) > 1 {
			name += fmt.Sprintf(", c=%d", k.Conns)
		}
		rp := svgchart.Panel{Title: name, Bars: make([][]float64, len(targets))}
		cp := svgchart.Panel{Title: name, Bars: make([][]float64, len(targets))}
		for _, s := range sums {
			if s.Case != k {
				continue
			}
			i := slices.Index(targets, s.Target)
			rp.Bars[i] = []float64{s.RPS}
			cp.Bars[i] = []float64{zero(s.ProxyCPU), zero(s.StreamsubCPU), zero(s.OriginCPU)}
		}
		rps.Panels = append(rps.Panels, rp)
		cpu.Panels = append(cpu.Panels, cp)
	}
	c.Rows = []svgchart.Row{rps, cpu}
	return c
}

func zero(v float64) float64 {
	if math.IsNaN(v) {
		return 0
	}
	return v
}
