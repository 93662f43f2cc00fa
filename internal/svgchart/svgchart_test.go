package svgchart

import (
	"bytes"
	"encoding/xml"
	"io"
	"math"
	"strconv"
	"strings"
	"testing"
)

func TestTicks(t *testing.T) {
	tests := []struct{ peak, step, top float64 }{
		{0, 0.25, 1},
		{7, 2, 8},
		{10, 2, 10},
		{100, 20, 100},
		{101, 50, 150},
		{12345, 5000, 15000},
		{0.37, 0.1, 0.4},
		{3e6, 1e6, 3e6},
	}
	for _, tc := range tests {
		step, top := Ticks(tc.peak)
		if math.Abs(step-tc.step) > 1e-9*tc.step || math.Abs(top-tc.top) > 1e-9*tc.top {
			t.Errorf("Ticks(%v) = %v, %v; want %v, %v", tc.peak, step, top, tc.step, tc.top)
		}
		if top < tc.peak || top/step > 5+1e-9 {
			t.Errorf("Ticks(%v): top %v with step %v does not show the peak in ≤ 5 intervals", tc.peak, top, step)
		}
	}
}

func TestCompact(t *testing.T) {
	tests := []struct {
		v    float64
		want string
	}{
		{0, "0"}, {0.042, "0.04"}, {0.5, "0.5"}, {1, "1"}, {12, "12"}, {12.34, "12.3"},
		{845, "845"}, {1234, "1.23k"}, {12345, "12.3k"}, {123456, "123k"}, {1.5e6, "1.5M"},
	}
	for _, tc := range tests {
		if got := Compact(tc.v); got != tc.want {
			t.Errorf("Compact(%v) = %q, want %q", tc.v, got, tc.want)
		}
	}
}

type rect struct {
	Class  string  `xml:"class,attr"`
	X      float64 `xml:"x,attr"`
	Y      float64 `xml:"y,attr"`
	Height float64 `xml:"height,attr"`
	Fill   string  `xml:"fill,attr"`
	Title  string  `xml:"title"`
}

// bars parses the SVG as XML and returns its bar rectangles in order.
func bars(t *testing.T, svg []byte) (out []rect, text string) {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(svg))
	var texts []string
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v\n%s", err, svg)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			if e.Name.Local == "rect" {
				var r rect
				if err := d.DecodeElement(&r, &e); err != nil {
					t.Fatal(err)
				}
				if r.Class == "bar" {
					out = append(out, r)
				}
			}
		case xml.CharData:
			texts = append(texts, string(e))
		}
	}
	return out, strings.Join(texts, "|")
}

func TestWriteSVG(t *testing.T) {
	c := Chart{
		Title:  "a <b> & c",
		Series: []string{"one", "two", "three"},
		Rows: []Row{
			{Title: "req/s", Panels: []Panel{
				{Title: "small", Bars: [][]float64{{4000}, {2000}, {1000}}},
				{Title: "empty", Bars: [][]float64{{0}, nil, {0}}},
			}},
			{Title: "cpu", Parts: []string{"proxy", "rewriter"}, Panels: []Panel{
				{Title: "small", Bars: [][]float64{{30, 10}, {20}, {0, 40}}},
			}},
		},
	}
	var buf bytes.Buffer
	if err := c.WriteSVG(&buf); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(buf.Bytes(), []byte("NaN")) || bytes.Contains(buf.Bytes(), []byte("Inf")) {
		t.Fatalf("non-finite coordinate:\n%s", buf.Bytes())
	}
	rs, text := bars(t, buf.Bytes())
	if !strings.Contains(text, "a <b> & c") {
		t.Errorf("title lost in %q", text)
	}
	// Bars drawn: 3 req/s bars, none for zero or missing values, then
	// cpu parts 30, 10, 20, 40 (the zero part skipped).
	want := []struct {
		title, fill string
		value       float64
	}{
		{"4k", Colors[0], 4000}, {"2k", Colors[1], 2000}, {"1k", Colors[2], 1000},
		{"proxy: 30", Colors[0], 30}, {"rewriter: 10", Colors[0], 10}, {"proxy: 20", Colors[1], 20}, {"rewriter: 40", Colors[2], 40},
	}
	if len(rs) != len(want) {
		t.Fatalf("%d bars, want %d: %+v", len(rs), len(want), rs)
	}
	for i, w := range want {
		if rs[i].Title != w.title || rs[i].Fill != w.fill {
			t.Errorf("bar %d: title %q fill %s, want %q %s", i, rs[i].Title, rs[i].Fill, w.title, w.fill)
		}
	}
	// Heights are proportional to values within a panel, and a stacked
	// part sits on top of the one below it.
	for _, p := range [][2]int{{0, 1}, {0, 2}, {3, 4}, {3, 5}, {3, 6}} {
		a, b := rs[p[0]], rs[p[1]]
		if got, want := a.Height/b.Height, want[p[0]].value/want[p[1]].value; math.Abs(got-want) > 0.01 {
			t.Errorf("bars %d/%d height ratio %.3f, want %.3f", p[0], p[1], got, want)
		}
	}
	if math.Abs(rs[4].Y+rs[4].Height-rs[3].Y) > 0.01 || rs[4].X != rs[3].X {
		t.Errorf("stacked part at x=%v y=%v h=%v is not on top of x=%v y=%v", rs[4].X, rs[4].Y, rs[4].Height, rs[3].X, rs[3].Y)
	}
	// The tallest bar of a panel reaches at most the axis top (plotH).
	if rs[0].Height > plotH || rs[0].Height < plotH/2 {
		t.Errorf("tallest bar %v px, want within (%d/2, %d]", rs[0].Height, plotH, plotH)
	}
	// Value labels above the bars: totals.
	for _, label := range []string{"|4k|", "|40|", "|20|"} {
		if !strings.Contains("|"+text+"|", label) {
			t.Errorf("no label %s in %q", label, text)
		}
	}
}

func TestWriteSVGRejects(t *testing.T) {
	tests := []struct {
		name string
		bars [][]float64
		want string
	}{
		{"negative", [][]float64{{-1}}, "value -1"},
		{"NaN", [][]float64{{math.NaN()}}, "value NaN"},
		{"Inf", [][]float64{{math.Inf(1)}}, "value +Inf"},
		{"too many bars", [][]float64{{1}, {1}}, "2 bars for 1 series"},
	}
	for _, tc := range tests {
		c := Chart{Series: []string{"s"}, Rows: []Row{{Title: "r", Panels: []Panel{{Title: "p" + strconv.Itoa(len(tc.bars)), Bars: tc.bars}}}}}
		err := c.WriteSVG(io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "row 0 (r) panel 0") {
			t.Errorf("%s: error %v, want one naming row 0 (r) panel 0 and %q", tc.name, err, tc.want)
		}
	}
}
