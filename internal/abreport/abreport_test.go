package abreport

import (
	"math"
	"strings"
	"testing"
)

const header = "round\ttarget\tconns\tsize\trequests\trps\tp50_ms\tp99_ms\terrors\tproxy_us\tstreamsub_us\torigin_us\tstreamsub_rss_kib\n"

// Three rounds of a base variant A, a variant B and nginx (sub).
const results = header +
	"1\tA\t32\t262144\t1000\t100\t10\t20\t0\t400\t500\t100\t40960\n" +
	"1\tB\t32\t262144\t1200\t120\t8\t20\t0\t400\t300\t100\t30720\n" +
	"1\tsub\t32\t262144\t2000\t200\t5\t10\t1\t600\t0\t100\t0\n" +
	"2\tB\t32\t262144\t1500\t150\t8\t18\t0\t360\t300\t90\t31744\n" +
	"2\tA\t32\t262144\t1000\t100\t10\t20\t0\t400\t500\t100\t51200\n" +
	"2\tsub\t32\t262144\t2000\t180\t5\t10\t0\t600\t0\t100\t0\n" +
	"3\tA\t32\t262144\t500\t50\t20\t40\t0\t800\t1000\t200\t40960\n" +
	"3\tB\t32\t262144\t500\t50\t20\t40\t0\t800\t1000\t200\t30720\n" +
	"3\tsub\t32\t262144\t500\t100\t10\t20\t0\t600\t0\t100\t0\n"

func TestSummarizeAndRatios(t *testing.T) {
	runs, err := Parse(strings.NewReader(results))
	if err != nil {
		t.Fatal(err)
	}
	rows := Summarize(runs)
	if len(rows) != 3 || rows[0].Target != "A" || rows[1].Target != "B" || rows[2].Target != "sub" {
		t.Fatalf("rows %+v, want A, B, sub", rows)
	}
	a := rows[0]
	if a.RPS != (Spread{100, 50, 100}) || a.Total != (Spread{1000, 1000, 2000}) || a.PeakRSSKiB != 51200 || a.Requests != 2500 {
		t.Errorf("A: %+v", a)
	}
	if rows[2].Errors != 1 {
		t.Errorf("sub: %d errors, want 1", rows[2].Errors)
	}
	ratios := Ratios(runs, "A")
	if len(ratios) != 2 {
		t.Fatalf("%d ratio rows, want 2 (B, sub)", len(ratios))
	}
	b := ratios[0]
	// B over A, by round: req/s 1.2, 1.5, 1.0; total CPU 0.8, 0.75, 1.0.
	if b.Target != "B" || b.Rounds != 3 || b.RPS != (Spread{1.2, 1, 1.5}) || b.Total != (Spread{0.8, 0.75, 1}) {
		t.Errorf("B/A: %+v", b)
	}
	if s := ratios[1]; s.Target != "sub" || !math.IsNaN(s.Streamsub.Median) {
		t.Errorf("sub/A: %+v, want no streamsub ratio", s)
	}
	var out strings.Builder
	if err := Write(&out, runs, "A"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"1.200 (1.000-1.500)", "ratios to A", "50.0", "  -  "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"header", "round\ttarget\n", "header"},
		{"fields", header + "1\tA\t32\n", "line 2: 3 fields"},
		{"number", header + "1\tA\t32\t262144\tmany\t100\t10\t20\t0\t400\t500\t100\t1\n", `line 2: requests "many"`},
	}
	for _, tt := range tests {
		if _, err := Parse(strings.NewReader(tt.in)); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want one containing %q", tt.name, err, tt.want)
		}
	}
}
