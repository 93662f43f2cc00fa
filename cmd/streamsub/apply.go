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

	"github.com/streamsub/streamsub/config"
	"github.com/streamsub/streamsub/config/load"
	"github.com/streamsub/streamsub/matcher"
)

func init() {
	register("apply", "rewrite a body or headers offline with a rule set: apply -config FILE [-ruleset NAME] [-header 'Name: value'] [FILE]", runApply)
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
		fmt.Fprintln(stderr, "usage: streamsub apply -config FILE [-ruleset NAME] [-chunk-size N | -chunk-sizes a,b,c] [-o OUT] [-stats]")
		fmt.Fprintln(stderr, "                       [-header 'Name: value']... [-request-header 'Name: value']... [FILE]")
		fmt.Fprintln(stderr, "Rewrites FILE (default: standard input) to standard output or OUT. With -header or -request-header")
		fmt.Fprintln(stderr, "it prints those headers rewritten (request headers first), then, if FILE is given, an empty line")
		fmt.Fprintln(stderr, "and the body (unless -o); standard input is not read.")
		fs.PrintDefaults()
	}
	configPath := fs.String("config", "", "configuration `file` (required)")
	ruleSet := fs.String("ruleset", "", "rule set `name` (default: the first)")
	chunkSize := fs.Int("chunk-size", 0, "feed the body in chunks of `N` bytes (default 65536)")
	chunkSizes := fs.String("chunk-sizes", "", "feed chunks of these successive `sizes` (0 = an empty chunk); the rest goes as a last chunk")
	outPath := fs.String("o", "", "write the output to this `file` instead of standard output")
	stats := fs.Bool("stats", false, "report the number of replacements on standard error")
	var respHeaders, reqHeaders headerFlags
	fs.Var(&respHeaders, "header", "a response header `'Name: value'` to rewrite with the rule set's header rules (repeatable)")
	fs.Var(&reqHeaders, "request-header", "a request header `'Name: value'` to rewrite with the rule set's request header rules (repeatable)")
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

	if len(respHeaders) > 0 || len(reqHeaders) > 0 {
		hw := bufio.NewWriter(stdout)
		n := rewriteHeaderLines(hw, stderr, rs, rs.RequestRewriter, reqHeaders)
		n += rewriteHeaderLines(hw, stderr, rs, rs.ResponseRewriter, respHeaders)
		if fs.NArg() == 1 && *outPath == "" {
			fmt.Fprintln(hw)
		}
		if err := hw.Flush(); err != nil {
			fmt.Fprintf(stderr, "streamsub apply: writing the headers: %v\n", err)
			return exitIO
		}
		if *stats {
			fmt.Fprintf(stderr, "streamsub apply: rule set %q: %d header replacement(s)\n", rs.Name, n)
		}
		if fs.NArg() == 0 {
			return exitOK // headers only: standard input is not a body here
		}
	}

	in := stdin
	var inFile *os.File
	if fs.NArg() == 1 {
		f, err := os.Open(fs.Arg(0))
		if err != nil {
			fmt.Fprintf(stderr, "streamsub apply: %v\n", err)
			return exitIO
		}
		defer f.Close()
		in, inFile = f, f
	}
	var out io.Writer = stdout
	var outFile *outputFile
	if *outPath != "" {
		f, err := os.OpenFile(*outPath, os.O_WRONLY|os.O_CREATE, 0o666)
		if err != nil {
			fmt.Fprintf(stderr, "streamsub apply: %v\n", err)
			return exitIO
		}
		info, err := f.Stat()
		if err != nil {
			f.Close()
			fmt.Fprintf(stderr, "streamsub apply: %v\n", err)
			return exitIO
		}
		if inFile != nil {
			if inInfo, err := inFile.Stat(); err == nil && os.SameFile(inInfo, info) {
				f.Close()
				return bad("-o %s is the input file; write to another file", *outPath)
			}
		}
		outFile = &outputFile{f: f, regular: info.Mode().IsRegular()}
		defer outFile.close() // on early returns: what was written, cut to its length
		out = outFile
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
		err = outFile.close()
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
// chunks): one read and one write per block instead of per chunk. 64 and
// 128 KiB blocks measured slower on a 64 MiB page (more hand-offs between
// the pipeline's goroutines), 1 MiB blocks too (less overlap).
const readBlock = 256 << 10

// pipelineDepth is how many blocks may be in flight on each side of the
// rewrite: enough for the reader and the writer to keep their own core busy
// while the stream rewrites the block between them.
const pipelineDepth = 2

// feedEvery feeds the rest of in to st in chunks of every bytes (the last
// one shorter), as successive reads of every bytes would, and writes the
// output to w. Reading, rewriting and writing run as a three-stage
// pipeline over whole blocks of chunks, so that the file I/O (a fifth of
// the time on a large page) overlaps the rewrite instead of adding to it;
// the blocks and their outputs are recycled, so the steady state
// allocates nothing. A write error sticks in w (a bufio.Writer) and is
// reported by its Flush; a read error is returned.
func feedEvery(in io.Reader, w io.Writer, st *matcher.Stream, every int) error {
	type block struct {
		data []byte
		err  error // the read's error: io.EOF or io.ErrUnexpectedEOF end the input
	}
	size := max(every, readBlock/every*every)
	freeIn := make(chan []byte, pipelineDepth)
	for range pipelineDepth {
		freeIn <- make([]byte, size)
	}
	filled := make(chan block, pipelineDepth)
	go func() { // reader: stops after the block that ends the input
		defer close(filled)
		for buf := range freeIn {
			got, err := io.ReadFull(in, buf)
			filled <- block{buf[:got], err}
			if err != nil {
				return
			}
		}
	}()
	freeOut := make(chan []byte, pipelineDepth+1)
	for range pipelineDepth + 1 {
		freeOut <- nil
	}
	written := make(chan []byte, pipelineDepth)
	writerDone := make(chan struct{})
	go func() { // writer
		defer close(writerDone)
		for out := range written {
			w.Write(out)
			freeOut <- out[:0]
		}
	}()

	var readErr error
	for blk := range filled {
		if blk.err != nil && blk.err != io.EOF && blk.err != io.ErrUnexpectedEOF {
			readErr = blk.err
			break
		}
		dst := <-freeOut
		for p := 0; p < len(blk.data); p += every {
			dst = st.Write(dst, blk.data[p:min(len(blk.data), p+every)])
		}
		written <- dst
		if blk.err != nil {
			break
		}
		freeIn <- blk.data[:cap(blk.data)]
	}
	close(freeIn) // the reader has stopped or stops at its next block
	for range filled {
	}
	close(written)
	<-writerDone
	return readErr
}

// outputFile is apply's -o file. An existing regular file is overwritten
// in place and cut to the output's length at close, not truncated first:
// on ext4, a file truncated to zero and written again is flushed at close
// (auto_da_alloc: 18 ms of a 64 MiB run here), and freeing its old blocks
// first cost about as much; the overwrite reuses them. Inode, links and
// permissions stay as with O_TRUNC; only a run killed halfway leaves old
// bytes after the new ones (an error exit still cuts the file to what was
// written).
type outputFile struct {
	f       *os.File
	regular bool  // a device or FIFO is neither overwritten nor cut
	n       int64 // bytes written
	closed  bool
}

func (o *outputFile) Write(p []byte) (int, error) {
	n, err := o.f.Write(p)
	o.n += int64(n)
	return n, err
}

// close cuts the file to the bytes written and closes it; later calls do
// nothing.
func (o *outputFile) close() error {
	if o.closed {
		return nil
	}
	o.closed = true
	var err error
	if o.regular {
		err = o.f.Truncate(o.n)
	}
	if cerr := o.f.Close(); err == nil {
		err = cerr
	}
	return err
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
	cfg, err := load.File(path)
	if err == nil {
		return cfg, exitOK
	}
	if errors.As(err, new(*load.Error)) {
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
