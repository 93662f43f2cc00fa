// Package abreport summarises an interleaved A/B run through Envoy
// (scripts/ab.sh: one TSV line per wrk run): per case and target, the
// medians over the rounds; and per target, its ratios to a base variant
// in each round, reported as median (min-max), so that the spread caused
// by the machine's other load shows.
package abreport

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Columns is the header line of the results file, in order.
var Columns = []string{"round", "target", "conns", "size", "requests", "rps", "p50_ms", "p99_ms", "errors",
	"proxy_us", "streamsub_us", "origin_us", "streamsub_rss_kib"}

// Run is one wrk run.
type Run struct {
	Round         int
	Target        string
	Conns         int
	Size          int64
	Requests      int64
	RPS, P50, P99 float64 // requests per second; latencies in ms
	Errors        int64
	// CPU µs per request of Envoy or nginx (Proxy), streamsub and the
	// origin; Streamsub is 0 for targets without it.
	Proxy, Streamsub, Origin float64
	RSSKiB                   int64 // streamsub's peak resident memory during the run
}

// Total is the CPU µs per request of all three processes.
func (r Run) Total() float64 { return r.Proxy + r.Streamsub + r.Origin }

// Case is a page size and a connection count.
type Case struct {
	Size  int64
	Conns int
}

// Parse reads the results file.
func Parse(r io.Reader) ([]Run, error) {
	sc := bufio.NewScanner(r)
	var runs []Run
	for line := 1; sc.Scan(); line++ {
		f := strings.Split(sc.Text(), "\t")
		if line == 1 {
			if !slices.Equal(f, Columns) {
				return nil, fmt.Errorf("line 1: header %q, want %q", f, Columns)
			}
			continue
		}
		if len(f) != len(Columns) {
			return nil, fmt.Errorf("line %d: %d fields, want %d", line, len(f), len(Columns))
		}
		var run Run
		var err error
		num := func(i int) float64 {
			v, e := strconv.ParseFloat(f[i], 64)
			if e != nil && err == nil {
				err = fmt.Errorf("line %d: %s %q: %w", line, Columns[i], f[i], e)
			}
			return v
		}
		run.Round, run.Target, run.Conns, run.Size = int(num(0)), f[1], int(num(2)), int64(num(3))
		run.Requests, run.RPS, run.P50, run.P99, run.Errors = int64(num(4)), num(5), num(6), num(7), int64(num(8))
		run.Proxy, run.Streamsub, run.Origin, run.RSSKiB = num(9), num(10), num(11), int64(num(12))
		if err != nil {
			return nil, err
		}
		runs = append(runs, run)
	}
	return runs, sc.Err()
}

// Spread is a median with the smallest and largest values.
type Spread struct{ Median, Min, Max float64 }

func (s Spread) String() string {
	if math.IsNaN(s.Median) {
		return "-"
	}
	return fmt.Sprintf("%s (%s-%s)", fmtNum(s.Median), fmtNum(s.Min), fmtNum(s.Max))
}

func fmtNum(v float64) string {
	if math.Abs(v) < 10 {
		return strconv.FormatFloat(v, 'f', 3, 64)
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

// spread returns the median, min and max of vs (NaN for none).
func spread(vs []float64) Spread {
	if len(vs) == 0 {
		return Spread{math.NaN(), math.NaN(), math.NaN()}
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return Spread{m, s[0], s[len(s)-1]}
}

// Row is one target's figures in one case, over the rounds.
type Row struct {
	Case
	Target                   string
	RPS, P50, P99            Spread
	Proxy, Streamsub, Origin Spread // CPU µs per request
	Total                    Spread
	PeakRSSKiB               int64 // the largest of the rounds
	Errors, Requests         int64 // summed over the rounds
}

// Summarize returns a row per case and target, cases in order of size and
// connections, targets in order of appearance.
func Summarize(runs []Run) []Row {
	type key struct {
		Case
		target string
	}
	var keys []key
	by := map[key][]Run{}
	for _, r := range runs {
		k := key{Case{r.Size, r.Conns}, r.Target}
		if _, ok := by[k]; !ok {
			keys = append(keys, k)
		}
		by[k] = append(by[k], r)
	}
	slices.SortStableFunc(keys, func(a, b key) int {
		if a.Size != b.Size {
			return int(a.Size - b.Size)
		}
		return a.Conns - b.Conns
	})
	rows := make([]Row, 0, len(keys))
	for _, k := range keys {
		rs := by[k]
		col := func(f func(Run) float64) Spread {
			vs := make([]float64, len(rs))
			for i, r := range rs {
				vs[i] = f(r)
			}
			return spread(vs)
		}
		row := Row{Case: k.Case, Target: k.target,
			RPS: col(func(r Run) float64 { return r.RPS }), P50: col(func(r Run) float64 { return r.P50 }),
			P99: col(func(r Run) float64 { return r.P99 }), Proxy: col(func(r Run) float64 { return r.Proxy }),
			Streamsub: col(func(r Run) float64 { return r.Streamsub }), Origin: col(func(r Run) float64 { return r.Origin }),
			Total: col(Run.Total)}
		for _, r := range rs {
			row.PeakRSSKiB = max(row.PeakRSSKiB, r.RSSKiB)
			row.Errors += r.Errors
			row.Requests += r.Requests
		}
		rows = append(rows, row)
	}
	return rows
}

// Ratio is one target's figures over the base target's, round by round,
// in one case.
type Ratio struct {
	Case
	Target                                 string
	Rounds                                 int
	RPS, Total, Proxy, Streamsub, P50, P99 Spread
}

// Ratios compares every target with base in each round where both ran;
// the streamsub ratio is NaN for targets without streamsub.
func Ratios(runs []Run, base string) []Ratio {
	type key struct {
		Case
		round int
	}
	baseOf := map[key]Run{}
	for _, r := range runs {
		if r.Target == base {
			baseOf[key{Case{r.Size, r.Conns}, r.Round}] = r
		}
	}
	var out []Ratio
	for _, row := range Summarize(runs) {
		if row.Target == base {
			continue
		}
		var rps, total, proxy, ss, p50, p99 []float64
		for _, r := range runs {
			b, ok := baseOf[key{Case{r.Size, r.Conns}, r.Round}]
			if !ok || r.Target != row.Target || r.Size != row.Size || r.Conns != row.Conns {
				continue
			}
			rps = append(rps, r.RPS/b.RPS)
			total = append(total, r.Total()/b.Total())
			proxy = append(proxy, r.Proxy/b.Proxy)
			if r.Streamsub > 0 && b.Streamsub > 0 {
				ss = append(ss, r.Streamsub/b.Streamsub)
			}
			p50 = append(p50, r.P50/b.P50)
			p99 = append(p99, r.P99/b.P99)
		}
		if len(rps) == 0 {
			continue
		}
		out = append(out, Ratio{Case: row.Case, Target: row.Target, Rounds: len(rps), RPS: spread(rps), Total: spread(total),
			Proxy: spread(proxy), Streamsub: spread(ss), P50: spread(p50), P99: spread(p99)})
	}
	return out
}

// Write prints the summary and the ratios to base as two tab-aligned
// tables.
func Write(w io.Writer, runs []Run, base string) error {
	var b strings.Builder
	b.WriteString("size\tconns\ttarget\treq/s\tp50 ms\tp99 ms\tproxy µs/req\tstreamsub µs/req\torigin µs/req\ttotal µs/req\tpeak RSS MiB\trequests\terrors\n")
	for _, r := range Summarize(runs) {
		fmt.Fprintf(&b, "%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.1f\t%d\t%d\n", r.Size, r.Conns, r.Target, r.RPS, r.P50, r.P99,
			r.Proxy, r.Streamsub, r.Origin, r.Total, float64(r.PeakRSSKiB)/1024, r.Requests, r.Errors)
	}
	var c strings.Builder
	c.WriteString("size\tconns\ttarget\trounds\treq/s\ttotal CPU\tproxy CPU\tstreamsub CPU\tp50\tp99\n")
	for _, r := range Ratios(runs, base) {
		fmt.Fprintf(&c, "%d\t%d\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Size, r.Conns, r.Target, r.Rounds, r.RPS, r.Total,
			r.Proxy, r.Streamsub, r.P50, r.P99)
	}
	_, err := fmt.Fprintf(w, "%s\nratios to %s, per round: median (min-max)\n%s", tabulate(b.String()), base, tabulate(c.String()))
	return err
}

// tabulate aligns the tab-separated columns of lines.
func tabulate(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	var width []int
	for _, l := range lines {
		for j, c := range strings.Split(l, "\t") {
			if j >= len(width) {
				width = append(width, 0)
			}
			width[j] = max(width[j], len([]rune(c)))
		}
	}
	var out strings.Builder
	for _, l := range lines {
		cells := strings.Split(l, "\t")
		for j, c := range cells {
			out.WriteString(c)
			if j < len(cells)-1 {
				out.WriteString(strings.Repeat(" ", width[j]-len([]rune(c))+2))
			}
		}
		out.WriteString("\n")
	}
	return out.String()
}
