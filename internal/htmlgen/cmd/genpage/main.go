// Command genpage writes a generated HTML page (package htmlgen) and,
// optionally, a streamsub configuration holding one benchmark workload:
// the inputs of the `streamsub apply` speed comparison in BENCHMARKS.md.
//
//	genpage -size 67108864 -seed 1 -o page.html -workload clone -config clone.yaml
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/streamsub/streamsub/internal/htmlgen"
)

func main() {
	size := flag.Int("size", 1<<20, "page size in `bytes`")
	seed := flag.Uint64("seed", 1, "generator seed")
	out := flag.String("o", "", "write the page to this `file` (required)")
	workload := flag.String("workload", "clone", "workload `name` for -config: clone, literals or regexes")
	config := flag.String("config", "", "also write a streamsub config with the workload to this `file`")
	flag.Parse()
	if *out == "" || *size < 0 {
		flag.Usage()
		os.Exit(2)
	}
	if err := os.WriteFile(*out, htmlgen.Page(*seed, *size), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "genpage:", err)
		os.Exit(1)
	}
	if *config != "" {
		w, ok := htmlgen.ByName(*workload)
		if !ok {
			fmt.Fprintf(os.Stderr, "genpage: unknown workload %q\n", *workload)
			os.Exit(2)
		}
		if err := os.WriteFile(*config, []byte(htmlgen.ConfigYAML(w)), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "genpage:", err)
			os.Exit(1)
		}
	}
}
