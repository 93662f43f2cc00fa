package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/streamsub/streamsub/config"
	"github.com/streamsub/streamsub/headerrewrite"
)

// headerFlags collects repeated "Name: value" flags, in order.
type headerFlags []string

func (h *headerFlags) String() string { return strings.Join(*h, "; ") }

// Set checks and keeps one "Name: value".
func (h *headerFlags) Set(s string) error {
	name, _, ok := strings.Cut(s, ":")
	if !ok || strings.TrimSpace(name) == "" || strings.ContainsAny(name, " \t") {
		return errors.New(`want "Name: value"`)
	}
	*h = append(*h, s)
	return nil
}

// rewriteHeaderLines writes each "Name: value" of lines to w with its value
// rewritten by rw as the processor would (nil rw: unchanged), and reports a
// refused value on stderr. It returns the replacements made.
func rewriteHeaderLines(w, stderr io.Writer, rs *config.RuleSet, rw *headerrewrite.Rewriter, lines []string) int {
	total := 0
	var buf []byte
	for _, l := range lines {
		name, v, _ := strings.Cut(l, ":")
		v = strings.TrimSpace(v)
		if rw != nil && rw.Applies(name) {
			out, n, reject := rw.Rewrite(buf[:0], []byte(v))
			buf = out
			switch {
			case reject != headerrewrite.Accepted:
				fmt.Fprintf(stderr, "streamsub apply: rule set %q: %s: rewritten value refused (%s); the original stays\n", rs.Name, name, reject)
			case n > 0:
				v = string(out)
				total += n
			}
		}
		fmt.Fprintf(w, "%s: %s\n", name, v)
	}
	return total
}
