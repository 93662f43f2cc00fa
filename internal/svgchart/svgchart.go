// Package svgchart draws small-multiple bar charts as standalone SVG: rows
// of panels, each panel with its own y axis and one bar per series, a bar
// optionally stacked from named parts. It is written for the load
// benchmark's plot (internal/loadreport) and has no dependencies.
package svgchart

import (
	"bufio"
	"fmt"
	"html"
	"io"
	"math"
	"strconv"
	"unicode/utf8"
)

// Chart is a grid of panels: one row per metric, one panel per case.
type Chart struct {
	Title, Subtitle string
	// Series name the bars of every panel, in order; each has its color.
	Series []string
	Rows   []Row
}

// Row is one metric across all cases.
type Row struct {
	Title string // e.g. "req/s (higher is better)"
	// Parts name the stacked parts of each bar, bottom first, drawn in the
	// series color at decreasing opacity; empty for plain bars.
	Parts  []string
	Panels []Panel
}

// Panel is one case of a row.
type Panel struct {
	Title string
	// Bars[i] holds series i's parts, bottom first (one value for plain
	// bars); a nil or empty entry draws no bar. Values must be ≥ 0.
	Bars [][]float64
}

// Colors of the series (Okabe–Ito, distinguishable with colour-blindness),
// reused in turn after the last.
var Colors = []string{"#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00"}

// partOpacity is the fill opacity of stacked part i.
func partOpacity(i int) float64 { return 1 / (1 + 0.9*float64(i)) }

// Layout in pixels.
const (
	barW      = 30
	barGap    = 8
	axisW     = 44 // y tick labels left of a panel's plot area
	panelPad  = 14 // between panels
	plotH     = 150
	panelTopH = 34 // panel title and value labels above the plot area
	panelBotH = 10
	rowTitleH = 22
	margin    = 16
	headH     = 52 // chart title and subtitle
	legendH   = 22
)

// WriteSVG writes the chart to w.
func (c *Chart) WriteSVG(w io.Writer) error {
	for r, row := range c.Rows {
		for p, panel := range row.Panels {
			if len(panel.Bars) > len(c.Series) {
				return fmt.Errorf("row %d (%s) panel %d (%s): %d bars for %d series", r, row.Title, p, panel.Title, len(panel.Bars), len(c.Series))
			}
			for _, bar := range panel.Bars {
				for _, v := range bar {
					if !(v >= 0) || math.IsInf(v, 0) {
						return fmt.Errorf("row %d (%s) panel %d (%s): value %v, want a finite value ≥ 0", r, row.Title, p, panel.Title, v)
					}
				}
			}
		}
	}
	panelW := axisW + len(c.Series)*(barW+barGap) + barGap
	cols := 1
	for _, row := range c.Rows {
		cols = max(cols, len(row.Panels))
	}
	width := 2*margin + cols*panelW + (cols-1)*panelPad
	width = max(width, 2*margin+textW(c.Title, 15), 2*margin+textW(c.Subtitle, 11))
	legend := legendItems(c.Series)
	width = max(width, 2*margin+legendW(legend))
	for _, row := range c.Rows {
		if len(row.Parts) > 1 {
			width = max(width, 2*margin+textW(row.Title+":", 11)+14+legendW(legendItems(row.Parts)))
		}
	}
	legendLines := 1
	for _, row := range c.Rows {
		if len(row.Parts) > 1 {
			legendLines++
		}
	}
	rowH := rowTitleH + panelTopH + plotH + panelBotH
	height := headH + legendH*legendLines + len(c.Rows)*rowH + margin

	b := bufio.NewWriter(w)
	fmt.Fprintf(b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="11">`+"\n", width, height, width, height)
	fmt.Fprintf(b, `<rect width="%d" height="%d" fill="white"/>`+"\n", width, height)
	fmt.Fprintf(b, `<text x="%d" y="22" font-size="15" font-weight="bold">%s</text>`+"\n", margin, esc(c.Title))
	fmt.Fprintf(b, `<text x="%d" y="40" fill="#444">%s</text>`+"\n", margin, esc(c.Subtitle))

	// Legend: series colors, then each stacked row's parts.
	y := headH
	for i, it := range legend {
		fmt.Fprintf(b, `<rect x="%d" y="%d" width="12" height="12" fill="%s"/><text x="%d" y="%d">%s</text>`+"\n", margin+it.x, y, color(i), margin+it.x+16, y+10, esc(it.text))
	}
	y += legendH
	for _, row := range c.Rows {
		if len(row.Parts) <= 1 {
			continue
		}
		fmt.Fprintf(b, `<text x="%d" y="%d" fill="#444">%s:</text>`+"\n", margin, y+10, esc(row.Title))
		x := margin + textW(row.Title+":", 11) + 14
		for i, it := range legendItems(row.Parts) {
			fmt.Fprintf(b, `<rect x="%d" y="%d" width="12" height="12" fill="#555" fill-opacity="%.2f"/><text x="%d" y="%d">%s</text>`+"\n", x+it.x, y, partOpacity(i), x+it.x+16, y+10, esc(it.text))
		}
		y += legendH
	}
	y = headH + legendH*legendLines

	for _, row := range c.Rows {
		fmt.Fprintf(b, `<text x="%d" y="%d" font-size="13" font-weight="bold">%s</text>`+"\n", margin, y+15, esc(row.Title))
		top := y + rowTitleH + panelTopH // plot area top
		for p, panel := range row.Panels {
			x0 := margin + p*(panelW+panelPad)
			writePanel(b, panel, row.Parts, x0, top)
		}
		y += rowH
	}
	b.WriteString("</svg>\n")
	return b.Flush()
}

// writePanel draws one panel whose plot area starts at (x0+axisW, top).
func writePanel(b *bufio.Writer, panel Panel, parts []string, x0, top int) {
	plotX := x0 + axisW
	plotW := len(panel.Bars)*(barW+barGap) + barGap
	fmt.Fprintf(b, `<text x="%d" y="%d" text-anchor="middle" font-weight="bold">%s</text>`+"\n", plotX+plotW/2, top-panelTopH+12, esc(panel.Title))
	peak := 0.0
	for _, bar := range panel.Bars {
		peak = math.Max(peak, sum(bar))
	}
	step, axisTop := Ticks(peak)
	scale := float64(plotH) / axisTop
	for v := 0.0; v <= axisTop+step/2; v += step {
		ty := float64(top+plotH) - v*scale
		fmt.Fprintf(b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/>`, plotX, plotX+plotW, ty, ty)
		fmt.Fprintf(b, `<text x="%d" y="%.1f" text-anchor="end" fill="#444" font-size="10">%s</text>`+"\n", plotX-4, ty+3.5, Compact(v))
	}
	for i, bar := range panel.Bars {
		if len(bar) == 0 {
			continue
		}
		bx := plotX + barGap + i*(barW+barGap)
		base := float64(top + plotH)
		for j, v := range bar {
			h := v * scale
			if h <= 0 {
				continue
			}
			title := Compact(v)
			if j < len(parts) {
				title = parts[j] + ": " + title
			}
			fmt.Fprintf(b, `<rect class="bar" x="%d" y="%.2f" width="%d" height="%.2f" fill="%s" fill-opacity="%.2f"><title>%s</title></rect>`+"\n",
				bx, base-h, barW, h, color(i), partOpacity(j), esc(title))
			base -= h
		}
		fmt.Fprintf(b, `<text x="%d" y="%.1f" text-anchor="middle" font-size="10">%s</text>`+"\n", bx+barW/2, base-3, Compact(sum(bar)))
	}
	fmt.Fprintf(b, `<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="#333"/>`+"\n", plotX, plotX+plotW, top+plotH, top+plotH)
}

func color(i int) string { return Colors[i%len(Colors)] }

// textW estimates the width of s in a sans-serif font of size px.
func textW(s string, px int) int { return (utf8.RuneCountInString(s)*px*6 + 9) / 10 }

// legendItem is one swatch and its text, x from the legend's start.
type legendItem struct {
	text string
	x    int
}

func legendItems(names []string) []legendItem {
	items := make([]legendItem, len(names))
	x := 0
	for i, n := range names {
		items[i] = legendItem{n, x}
		x += 16 + textW(n, 11) + 18
	}
	return items
}

func legendW(items []legendItem) int {
	if len(items) == 0 {
		return 0
	}
	last := items[len(items)-1]
	return last.x + 16 + textW(last.text, 11)
}

func esc(s string) string { return html.EscapeString(s) }

func sum(v []float64) float64 {
	t := 0.0
	for _, x := range v {
		t += x
	}
	return t
}

// Ticks returns the tick step of an axis from 0 that shows peak, a 1, 2 or
// 5 times a power of ten giving at most 5 intervals, and the axis top: the
// first multiple of step ≥ peak. A peak of 0 gives step 0.25, top 1.
func Ticks(peak float64) (step, top float64) {
	if !(peak > 0) {
		return 0.25, 1
	}
	raw := peak / 5
	pow := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if step = m * pow; step >= raw*(1-1e-9) {
			break
		}
	}
	top = math.Ceil(peak/step*(1-1e-9)) * step
	return step, top
}

// Compact formats v with about three significant digits and a k or M
// suffix: 0.04, 0.5, 12, 845, 1.23k, 12.3k, 1.5M.
func Compact(v float64) string {
	suffix := ""
	switch {
	case v >= 1e6:
		v, suffix = v/1e6, "M"
	case v >= 1e3:
		v, suffix = v/1e3, "k"
	}
	prec := 2 // decimals
	switch {
	case v == 0:
		return "0"
	case v >= 100:
		prec = 0
	case v >= 10:
		prec = 1
	}
	s := strconv.FormatFloat(v, 'f', prec, 64)
	if prec > 0 {
		for s[len(s)-1] == '0' {
			s = s[:len(s)-1]
		}
		if s[len(s)-1] == '.' {
			s = s[:len(s)-1]
		}
	}
	return s + suffix
}
