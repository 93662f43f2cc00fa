package loadreport

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

const header = "round\tpage\tsize\tchunk\tpause_us\tconns\ttarget\trequests\tseconds\trps\tp50_ms\tp99_ms\terrors\tproxy_cpu_us\tstreamsub_cpu_us\torigin_cpu_us\tbody_calls\tstreamsub_rss_kib\n"

func TestParse(t *testing.T) {
	in := header +
		"1\tbig\t16384\t0\t0\t16\tenvoy\t1000\t2.00\t500.5\t1.5\t9.25\t0\t20000\t-\t8000\t-\t-\n" +
		"\n" +
		"1\ttrickle\t262144\t1024\t100\t16\tstreamsub\t40\t2.01\t19.9\t700\t900\t3\t9000\t12000\t4000\t180.5\t40960\n" +
		"1\tstatic\t65536\t0\t0\t16\tstreamsub\t900\t2.00\t450\t1.0\t2.0\t0\t9000\t100\t4000\t-\t30000\n"
	runs, err := Parse(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 3 {
		t.Fatalf("%d runs, want 3", len(runs))
	}
	if c := runs[2]; c.Case != (Case{"static", 65536, 0, 0, 16}) || c.StreamsubCPU != 100 || !math.IsNaN(c.BodyCalls) {
		t.Errorf("run 3 = %+v", c)
	}
	a, b := runs[0], runs[1]
	if a.Case != (Case{"big", 16384, 0, 0, 16}) || a.Target != "envoy" || a.Requests != 1000 || a.RPS != 500.5 || a.P99 != 9.25 ||
		a.ProxyCPU != 20000 || !math.IsNaN(a.StreamsubCPU) || a.OriginCPU != 8000 || !math.IsNaN(a.BodyCalls) || !math.IsNaN(a.StreamsubRSS) {
		t.Errorf("run 1 = %+v", a)
	}
	if b.Case != (Case{"trickle", 262144, 1024, 100, 16}) || b.Errors != 3 || b.StreamsubCPU != 12000 || b.BodyCalls != 180.5 || b.StreamsubRSS != 40960 {
		t.Errorf("run 2 = %+v", b)
	}
}

func TestParseErrors(t *testing.T) {
	good := "1\tbig\t16384\t0\t0\t16\tenvoy\t1000\t2\t500\t1\t2\t0\t1\t-\t1\t-\t-"
	tests := []struct{ name, in, want string }{
		{"empty", "", "line 1: no header"},
		{"bad header", "round\tpage\n", "line 1: header"},
		{"fields", header + good + "\n1\tbig\n", "line 3: 2 fields, want 18"},
		{"int", header + strings.Replace(good, "1000", "1e3", 1), `line 2: column requests: "1e3"`},
		{"negative", header + strings.Replace(good, "\t16\t", "\t-16\t", 1), `line 2: column conns: "-16": negative`},
		{"dash not allowed", header + strings.Replace(good, "\t500\t", "\t-\t", 1), `line 2: column rps: "-"`},
		{"NaN", header + strings.Replace(good, "\t500\t", "\tNaN\t", 1), `line 2: column rps: "NaN": not a finite value`},
		{"page", header + strings.Replace(good, "big", "small", 1), `line 2: page "small"`},
	}
	for _, tc := range tests {
		_, err := Parse(strings.NewReader(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

func nan() float64 { return math.NaN() }

// runs3 is three rounds of two targets on one case, and one round of a
// second case without the baseline.
func runs3() []Run {
	big := Case{"big", 16384, 0, 0, 16}
	tr := Case{"trickle", 65536, 512, 0, 16}
	return []Run{
		{Round: 1, Case: big, Target: "envoy", Requests: 10, RPS: 100, P50: 1, P99: 5, ProxyCPU: 1000, StreamsubCPU: nan(), OriginCPU: 100, BodyCalls: nan(), StreamsubRSS: nan()},
		{Round: 1, Case: big, Target: "streamsub", Requests: 10, RPS: 50, P50: 2, P99: 8, ProxyCPU: 1000, StreamsubCPU: 500, OriginCPU: 100, BodyCalls: 3, Errors: 1, StreamsubRSS: 30 << 10},
		{Round: 1, Case: tr, Target: "streamsub", Requests: 4, RPS: 2, P50: 9, P99: 9, ProxyCPU: 400, StreamsubCPU: 400, OriginCPU: 40, BodyCalls: 64, StreamsubRSS: 20 << 10},
		{Round: 2, Case: big, Target: "envoy", Requests: 30, RPS: 300, P50: 3, P99: 4, ProxyCPU: 5000, StreamsubCPU: nan(), OriginCPU: 300, BodyCalls: nan(), StreamsubRSS: nan()},
		{Round: 2, Case: big, Target: "streamsub", Requests: 30, RPS: 70, P50: 4, P99: 7, ProxyCPU: 3000, StreamsubCPU: 1500, OriginCPU: 300, BodyCalls: 5, Errors: 2, StreamsubRSS: 45 << 10},
		{Round: 3, Case: big, Target: "envoy", Requests: 20, RPS: 200, P50: 2, P99: 6, ProxyCPU: 2000, StreamsubCPU: nan(), OriginCPU: 200, BodyCalls: nan(), StreamsubRSS: nan()},
		{Round: 3, Case: big, Target: "streamsub", Requests: 20, RPS: 60, P50: 3, P99: 9, ProxyCPU: 2000, StreamsubCPU: 1000, OriginCPU: 200, BodyCalls: 4, StreamsubRSS: 40 << 10},
	}
}

func TestSummarize(t *testing.T) {
	sums := Summarize(runs3())
	if len(sums) != 3 {
		t.Fatalf("%d summaries, want 3", len(sums))
	}
	near := func(a, b float64) bool { return math.IsNaN(a) && math.IsNaN(b) || math.Abs(a-b) < 1e-9 }
	tests := []struct {
		target                                   string
		page                                     string
		rounds                                   int
		rps, p50, p99, vs, proxy, ss, origin, bc float64
		rss                                      float64 // KiB
		requests, errors                         int64
	}{
		// Medians of the rounds; CPU = sum of CPU / sum of requests
		// (8000/60, not the mean of 100, 166.7, 100).
		// RSS: the largest round's.
		{"envoy", "big", 3, 200, 2, 5, 1, 8000.0 / 60, nan(), 10, nan(), nan(), 60, 0},
		{"streamsub", "big", 3, 60, 3, 8, 0.3, 6000.0 / 60, 3000.0 / 60, 10, 4, 45 << 10, 60, 3},
		{"streamsub", "trickle", 1, 2, 9, 9, nan(), 100, 100, 10, 64, 20 << 10, 4, 0},
	}
	for i, tc := range tests {
		s := sums[i]
		if s.Target != tc.target || s.Page != tc.page || s.Rounds != tc.rounds || !near(s.RPS, tc.rps) || !near(s.P50, tc.p50) ||
			!near(s.P99, tc.p99) || !near(s.VsBaseline, tc.vs) || !near(s.ProxyCPU, tc.proxy) || !near(s.StreamsubCPU, tc.ss) ||
			!near(s.OriginCPU, tc.origin) || !near(s.BodyCalls, tc.bc) || !near(s.StreamsubRSS, tc.rss) ||
			s.Requests != tc.requests || s.Errors != tc.errors {
			t.Errorf("summary %d = %+v, want %+v", i, s, tc)
		}
	}
	if got, want := sums[1].TotalCPU(), 9600.0/60; !near(got, want) {
		t.Errorf("TotalCPU = %v, want %v", got, want)
	}
	if got, want := sums[0].TotalCPU(), 8600.0/60; !near(got, want) {
		t.Errorf("TotalCPU without streamsub = %v, want %v", got, want)
	}
}

func TestMedianEven(t *testing.T) {
	runs := runs3()[:2]
	runs[1].Target = "envoy"
	s := Summarize(runs)
	if len(s) != 1 || s[0].RPS != 75 || !math.IsNaN(s[0].BodyCalls) {
		t.Errorf("Summarize = %+v, want one summary with req/s 75 and no body calls (one round has none)", s)
	}
}

func TestWriteMarkdown(t *testing.T) {
	var b bytes.Buffer
	if err := WriteMarkdown(&b, Summarize(runs3())); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 2+3 {
		t.Fatalf("%d lines, want header, rule and 3 rows:\n%s", len(lines), b.String())
	}
	for i, l := range lines {
		if n := strings.Count(l, "|"); n != 16 {
			t.Errorf("line %d has %d cells, want 15: %s", i, n-1, l)
		}
	}
	want := []string{
		"| 16 KiB | 16 | (a) Envoy | 200 | 1.00× | 2.00 | 5.00 | 133 | – | 10 | 143 | – | – | 60 | 0 |",
		"| 16 KiB | 16 | (b) Envoy + streamsub | 60 | 0.30× | 3.00 | 8.00 | 100 | 50 | 10 | 160 | 4.0 | 45 | 60 | 3 |",
		"| 64 KiB, 512 B flushes | 16 | (b) Envoy + streamsub | 2 | – | 9.00 | 9.00 | 100 | 100 | 10 | 210 | 64.0 | 20 | 4 | 0 |",
	}
	for i, w := range want {
		if lines[2+i] != w {
			t.Errorf("row %d:\n got %s\nwant %s", i, lines[2+i], w)
		}
	}
}

func TestChart(t *testing.T) {
	runs := runs3()
	c := Chart(Summarize(runs), "t", "s")
	if len(c.Series) != 2 || c.Series[0] != "(a) Envoy" || c.Series[1] != "(b) Envoy + streamsub" {
		t.Fatalf("series %q", c.Series)
	}
	if len(c.Rows) != 2 || len(c.Rows[0].Panels) != 2 || len(c.Rows[1].Panels) != 2 {
		t.Fatalf("want 2 rows of 2 panels, got %+v", c.Rows)
	}
	if p := c.Rows[0].Panels[0]; p.Title != "16 KiB" || p.Bars[0][0] != 200 || p.Bars[1][0] != 60 {
		t.Errorf("req/s panel %+v", p)
	}
	// The trickle case has no Envoy run: no bar.
	if p := c.Rows[1].Panels[1]; p.Title != "64 KiB, 512 B flushes" || p.Bars[0] != nil || p.Bars[1][1] != 100 {
		t.Errorf("CPU panel %+v", p)
	}
	// Envoy alone: no streamsub part.
	if bar := c.Rows[1].Panels[0].Bars[0]; bar[1] != 0 || math.Abs(bar[0]-8000.0/60) > 1e-9 {
		t.Errorf("Envoy CPU bar %v", bar)
	}
	if err := c.WriteSVG(&bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	// Two connection counts: panels name them.
	runs[0].Conns = 1
	if p := Chart(Summarize(runs), "", "").Rows[0].Panels[0]; p.Title != "16 KiB, c=1" {
		t.Errorf("panel title %q, want the connection count", p.Title)
	}
}

func TestLabel(t *testing.T) {
	tests := []struct {
		c    Case
		want string
	}{
		{Case{Page: "big", Size: 4 << 20}, "4 MiB"},
		{Case{Page: "trickle", Size: 256 << 10, Chunk: 1024}, "256 KiB, 1 KiB flushes"},
		{Case{Page: "trickle", Size: 256 << 10, Chunk: 100, Pause: 50}, "256 KiB, 100 B every 50 µs"},
		{Case{Page: "static", Size: 64 << 10}, "64 KiB CSS, remembered no match"},
	}
	for _, tc := range tests {
		if got := tc.c.Label(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.c, got, tc.want)
		}
	}
}

func TestBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1000: "1000 B", 1024: "1 KiB", 16384: "16 KiB", 1536: "1536 B", 4 << 20: "4 MiB", 1<<20 + 1024: "1025 KiB"} {
		if got := Bytes(n); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", n, got, want)
		}
	}
}
