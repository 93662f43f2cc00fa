// Command loadreport summarises a results file of scripts/load.sh (package
// loadreport): a markdown table and an SVG chart.
//
//	loadreport -in results.tsv -md table.md -svg plot.svg -title "..." -subtitle "..."
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"

	"github.com/streamsub/streamsub/internal/loadreport"
)

func main() {
	in := flag.String("in", "", "results `file` (TSV, required)")
	md := flag.String("md", "", "write the markdown table to this `file` (default: standard output)")
	svg := flag.String("svg", "", "write the chart to this `file`")
	title := flag.String("title", "streamsub through Envoy vs nginx", "chart title")
	subtitle := flag.String("subtitle", "", "chart subtitle (how it was measured)")
	flag.Parse()
	if *in == "" || flag.NArg() != 0 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(*in, *md, *svg, *title, *subtitle); err != nil {
		fmt.Fprintln(os.Stderr, "loadreport:", err)
		os.Exit(1)
	}
}

func run(in, md, svg, title, subtitle string) error {
	f, err := os.Open(in)
	if err != nil {
		return err
	}
	defer f.Close()
	runs, err := loadreport.Parse(f)
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	if len(runs) == 0 {
		return fmt.Errorf("%s: no runs", in)
	}
	sums := loadreport.Summarize(runs)
	var table bytes.Buffer
	if err := loadreport.WriteMarkdown(&table, sums); err != nil {
		return err
	}
	if md == "" {
		os.Stdout.Write(table.Bytes())
	} else if err := os.WriteFile(md, table.Bytes(), 0o644); err != nil {
		return err
	}
	if svg == "" {
		return nil
	}
	var chart bytes.Buffer
	if err := loadreport.Chart(sums, title, subtitle).WriteSVG(&chart); err != nil {
		return fmt.Errorf("%s: %w", svg, err)
	}
	return os.WriteFile(svg, chart.Bytes(), 0o644)
}
