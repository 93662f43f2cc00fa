package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/streamsub/streamsub/matcher"
	"github.com/streamsub/streamsub/server/config"
)

func init() {
	register("apply", "rewrite a body offline with a rule set: apply -config FILE [-ruleset NAME] [FILE]", runApply)
}

// defaultChunkSize is apply's chunk size when none is given: Envoy's usual
// body chunk is of this order.
const defaultChunkSize = 64 << 10

// Exit codes of apply and check.
const (
	exitOK       = 0
	exitIO       = 1 // reading or writing a file failed
	exitRejected = 2 // bad flags, a rejected config, an unknown rule set
)

func runApply(args []string) int {
	return apply(args, os.Stdin, os.Stdout, os.Stderr)
}

// apply feeds a body through one matcher stream of a configured rule set,
// cut into the chunks the flags ask for, the way the processor feeds
// Envoy's chunks; the output does not depend on the cut (semantics.md)
// unless the hold-back cap is exceeded, which is reported.
func apply(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("apply", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: streamsub apply -config FILE [-ruleset NAME] [-chunk-size N | -chunk-sizes a,b,c] [-o OUT] [-stats] [FILE]")
		fmt.Fprintln(stderr, "Rewrites FILE (default: standard input) to standard output or OUT.")
		fs.PrintDefaults()
	}
	configPath := fs.String("config", "", "configuration `file` (required)")
	ruleSet := fs.String("ruleset", "", "rule set `name` (default: the first)")
	chunkSize := fs.Int("chunk-size", 0, "feed the body in chunks of `N` bytes (default 65536)")
	chunkSizes := fs.String("chunk-sizes", "", "feed chunks of these successive `sizes` (0 = an empty chunk); the rest goes as a last chunk")
	outPath := fs.String("o", "", "write the output to this `file` instead of standard output")
	stats := fs.Bool("stats", false, "report the number of replacements on standard error")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitRejected
	}
	bad := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "streamsub apply: "+format+"\n", a...)
		return exitRejected
	}
	if *configPath == "" {
		return bad("-config is required")
	}
	if fs.NArg() > 1 {
		return bad("at most one input file, got %d: %q", fs.NArg(), fs.Args())
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var sizes []int
	switch {
	case set["chunk-size"] && set["chunk-sizes"]:
		return bad("give -chunk-size or -chunk-sizes, not both")
	case set["chunk-size"] && *chunkSize <= 0:
		return bad("-chunk-size %d: want a positive size", *chunkSize)
	case set["chunk-sizes"]:
		var err error
		if sizes, err = parseSizes(*chunkSizes); err != nil {
			return bad("-chunk-sizes: %v", err)
		}
	}
	every := *chunkSize
	if every == 0 && sizes == nil {
		every = defaultChunkSize
	}

	cfg, code := loadConfig(*configPath, "apply", stderr)
	if cfg == nil {
		return code
	}
	rs := cfg.RuleSets[0]
	if *ruleSet != "" {
		if rs = cfg.RuleSet(*ruleSet); rs == nil {
			return bad("%s: unknown rule set %q (have %s)", cfg.Source, *ruleSet, ruleSetNames(cfg))
		}
	}

	in := stdin
	if fs.NArg() == 1 {
		f, err := os.Open(fs.Arg(0))
		if err != nil {
			fmt.Fprintf(stderr, "streamsub apply: %v\n", err)
			return exitIO
		}
		defer f.Close()
		in = f
	}
	var out io.Writer = stdout
	var outFile *os.File
	if *outPath != "" {
		f, err := os.Create(*outPath)
		if err != nil {
			fmt.Fprintf(stderr, "streamsub apply: %v\n", err)
			return exitIO
		}
		outFile = f
		defer f.Close()
		out = f
	}
	w := bufio.NewWriterSize(out, 64<<10)

	st := rs.Compiled.NewStream()
	var buf, dst []byte
	var readErr error
	feed := func(n int) bool { // reads up to n bytes and writes one chunk; false at EOF
		if cap(buf) < n {
			buf = make([]byte, n)
		}
		got, err := io.ReadFull(in, buf[:n])
		if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
			readErr = err
			return false
		}
		if got > 0 || n == 0 {
			dst = st.Write(dst[:0], buf[:got])
			w.Write(dst)
		}
		return err == nil
	}
	more := true
	for _, n := range sizes {
		if more = feed(n); !more {
			break
		}
	}
	if sizes != nil && more && readErr == nil { // the rest as one last chunk
		rest, err := io.ReadAll(in)
		if err != nil {
			readErr = err
		} else if len(rest) > 0 {
			dst = st.Write(dst[:0], rest)
			w.Write(dst)
		}
	}
	if every > 0 && readErr == nil {
		readErr = feedEvery(in, w, st, every)
	}
	if readErr != nil {
		fmt.Fprintf(stderr, "streamsub apply: reading the body: %v\n", readErr)
		return exitIO
	}
	dst = st.Close(dst[:0])
	w.Write(dst)
	err := w.Flush()
	if err == nil && outFile != nil {
		err = outFile.Close()
	}
	if err != nil {
		fmt.Fprintf(stderr, "streamsub apply: writing the output: %v\n", err)
		return exitIO
	}
	s := st.Stats()
	if s.Overflowed {
		fmt.Fprintf(stderr, "streamsub apply: rule set %q: a pending match needed more than max_buffered_bytes (%d); the rest of the body passed through unchanged\n",
			rs.Name, cfg.MaxBufferedBytes)
	}
	if *stats {
		fmt.Fprintf(stderr, "streamsub apply: rule set %q: %d replacement(s)\n", rs.Name, s.Replacements)
	}
	return exitOK
}

// readBlock is how much feedEvery reads at a time (rounded down to whole
// chunks): one read and one write per block instead of per chunk.
const readBlock = 1 << 20

// feedEvery feeds the rest of in to st in chunks of every bytes (the last
// one shorter), as successive reads of every bytes would, but reads whole
// blocks of chunks and writes each block's output with one call, reusing
// both buffers.
func feedEvery(in io.Reader, w io.Writer, st *matcher.Stream, every int) error {
	block := max(every, readBlock/every*every)
	buf := make([]byte, block)
	var dst []byte
	for {
		got, err := io.ReadFull(in, buf)
		if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
			return err
		}
		dst = dst[:0]
		for p := 0; p < got; p += every {
			dst = st.Write(dst, buf[p:min(got, p+every)])
		}
		w.Write(dst) // a write error sticks in the bufio.Writer: reported by Flush
		if err != nil {
			return nil
		}
	}
}

// parseSizes parses "a,b,c" into non-negative chunk sizes.
func parseSizes(s string) ([]int, error) {
	var sizes []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 0 {
			return nil, fmt.Errorf("%q is not a size in bytes (want a list like 100,0,4096)", f)
		}
		sizes = append(sizes, n)
	}
	return sizes, nil
}

// loadConfig loads a configuration for a subcommand; on failure it prints
// why and returns the exit code: exitRejected for a rejected file (each
// problem on its own line, naming file and culprit), exitIO when the file
// cannot be read.
func loadConfig(path, cmd string, stderr io.Writer) (*config.Config, int) {
	cfg, err := config.Load(path)
	if err == nil {
		return cfg, exitOK
	}
	if errors.As(err, new(*config.Error)) {
		fmt.Fprintln(stderr, err)
		fmt.Fprintf(stderr, "streamsub %s: %s: configuration rejected\n", cmd, path)
		return nil, exitRejected
	}
	fmt.Fprintf(stderr, "streamsub %s: %v\n", cmd, err)
	return nil, exitIO
}

func ruleSetNames(cfg *config.Config) string {
	names := make([]string, len(cfg.RuleSets))
	for i, rs := range cfg.RuleSets {
		names[i] = strconv.Quote(rs.Name)
	}
	return strings.Join(names, ", ")
}
