// Command abreport prints the summary of an A/B run (scripts/ab.sh):
//
//	abreport -in results.tsv -base VARIANT
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/streamsub/streamsub/internal/abreport"
)

func main() {
	in := flag.String("in", "", "results `file` (required)")
	base := flag.String("base", "", "the `target` the others are compared with (required)")
	flag.Parse()
	if *in == "" || *base == "" || flag.NArg() != 0 {
		flag.Usage()
		os.Exit(2)
	}
	f, err := os.Open(*in)
	if err != nil {
		fmt.Fprintln(os.Stderr, "abreport:", err)
		os.Exit(1)
	}
	defer f.Close()
	runs, err := abreport.Parse(f)
	if err != nil {
		fmt.Fprintf(os.Stderr, "abreport: %s: %v\n", *in, err)
		os.Exit(1)
	}
	if err := abreport.Write(os.Stdout, runs, *base); err != nil {
		fmt.Fprintln(os.Stderr, "abreport:", err)
		os.Exit(1)
	}
}
