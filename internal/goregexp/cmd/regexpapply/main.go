// Command regexpapply rewrites a file with a benchmark workload (package
// htmlgen) using the Go regexp baseline (package goregexp), whole body in
// memory: the "Go regexp" side of the `streamsub apply` comparison in
// BENCHMARKS.md. It reports the rewrite time (reading and writing
// excluded) on standard error.
//
//	regexpapply -workload clone -o out.html page.html
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/streamsub/streamsub/internal/goregexp"
	"github.com/streamsub/streamsub/internal/htmlgen"
	"github.com/streamsub/streamsub/matcher"
)

func main() {
	workload := flag.String("workload", "clone", "workload `name`: clone, literals or regexes")
	out := flag.String("o", "", "write the output to this `file` (default: discard)")
	flag.Parse()
	w, ok := htmlgen.ByName(*workload)
	if !ok || flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	body, err := os.ReadFile(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, "regexpapply:", err)
		os.Exit(1)
	}
	rules := make([]matcher.Rule, len(w.Rules))
	for i, r := range w.Rules {
		rules[i] = matcher.Rule(r)
	}
	rw, err := goregexp.Compile(rules)
	if err != nil {
		fmt.Fprintln(os.Stderr, "regexpapply:", err)
		os.Exit(1)
	}
	t0 := time.Now()
	res := rw.Rewrite(make([]byte, 0, len(body)+len(body)/4), body)
	d := time.Since(t0)
	fmt.Fprintf(os.Stderr, "regexpapply: %d bytes in %v (%.2f MB/s)\n", len(body), d, float64(len(body))/d.Seconds()/1e6)
	if *out != "" {
		if err := os.WriteFile(*out, res, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "regexpapply:", err)
			os.Exit(1)
		}
	}
}
