package main

import (
	"fmt"
	"io"
	"time"

	"github.com/streamsub/streamsub/config"
	"github.com/streamsub/streamsub/internal/htmlgen"
	"github.com/streamsub/streamsub/matcher"
)

// Cost estimate of `streamsub check`: each rule set rewrites a generated
// HTML page, as the processor feeds bodies (16 KiB chunks), for at most
// costTime; a rule set slower than slowRate is warned about, since every
// body it rewrites costs that much CPU and a request Envoy gives up on is
// abandoned only at the next chunk.
const (
	costSampleBytes = 256 << 10
	costChunk       = 16 << 10
	costTime        = 500 * time.Millisecond
	slowRate        = 5 << 20 // bytes per second
)

// rewriteRate returns how many bytes per second rs rewrites of sample, fed
// in costChunk pieces for at most limit (at least one piece).
func rewriteRate(rs *matcher.RuleSet, sample []byte, limit time.Duration) float64 {
	st := rs.NewStream()
	var out []byte
	n := 0
	t0 := time.Now()
	for n < len(sample) {
		k := min(len(sample)-n, costChunk)
		out = st.Write(out[:0], sample[n:n+k])
		n += k
		if time.Since(t0) > limit {
			break
		}
	}
	st.Close(out[:0])
	return float64(n) / max(time.Since(t0).Seconds(), 1e-9)
}

// writeCost prints each rule set's automaton size and estimated rewrite
// rate, and a warning for each one slower than slowRate.
func writeCost(w io.Writer, cfg *config.Config) {
	sample := htmlgen.Page(1, costSampleBytes)
	fmt.Fprintf(w, "  cost (max_nfa_states %d; rate over generated HTML):", cfg.MaxNFAStates)
	var slow []string
	for i, rs := range cfg.RuleSets {
		rate := rewriteRate(rs.Compiled, sample, costTime)
		sep := ";"
		if i == 0 {
			sep = ""
		}
		fmt.Fprintf(w, "%s %s %d NFA states ~%s/s", sep, rs.Name, rs.Compiled.NumStates(), humanBytes(rate))
		if rate < slowRate {
			slow = append(slow, fmt.Sprintf("warning: rule set %q rewrites ~%s/s (%d NFA states): each MiB of body costs ~%.1f s of CPU; "+
				"look for broad classes or . under bounded repeats",
				rs.Name, humanBytes(rate), rs.Compiled.NumStates(), float64(1<<20)/rate))
		}
	}
	fmt.Fprintln(w)
	for _, s := range slow {
		fmt.Fprintln(w, s)
	}
}

// humanBytes formats a byte count with a binary unit.
func humanBytes(n float64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", n/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", n/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", n/(1<<10))
	}
	return fmt.Sprintf("%.0f B", n)
}
