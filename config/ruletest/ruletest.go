// Package ruletest runs the self-tests of a rule set (the tests: of a rule
// set in the configuration file): each test's input goes through the
// streaming rewriter, cut into chunks in several ways, and every way must
// give the expected output.
//
// The chunkings are the body whole, byte by byte, a few fixed sizes and two
// pseudo-random cuts with empty chunks among them, seeded so that a failure
// repeats. The rewriter's output does not depend on the chunking unless the
// hold-back cap overflows (semantics.md "Streaming"), so a test that passes
// whole but fails cut is a rule set too close to its cap.
package ruletest

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/streamsub/streamsub/internal/bytediff"
	"github.com/streamsub/streamsub/matcher"
)

// Case is one self-test of a rule set.
//
// A test covers the response body; once rule sets rewrite response
// headers, a test of them adds the headers in and the headers expected
// here, and Run compares them beside the body.
type Case struct {
	Name  string
	Input []byte
	// Want is the expected body (the input itself for a test that
	// expects it unchanged).
	Want []byte
	// ContentType is the test response's content type, as written ("":
	// none given).
	ContentType string
	// Rewrite reports whether the rule set rewrites a response of
	// ContentType. When it does not, the body passes through unchanged,
	// as serve passes it, and only a Want equal to Input passes.
	Rewrite bool
}

// Failure is a test whose output differs from the expected one.
type Failure struct {
	Test string
	// Chunking names the first chunking whose output differs; Others
	// counts the further ones that differ too.
	Chunking string
	Others   int
	// Diff is where that output first differs from the expected one
	// (A: expected, B: actual).
	Diff bytediff.Diff
	// Overflowed reports that the hold-back cap overflowed in that
	// chunking, and ContentType that the rule set does not rewrite the
	// test's content type (the body passed through unchanged).
	Overflowed  bool
	ContentType string
}

// excerpt is the length of the excerpts a Failure shows on each side of
// the difference.
const excerpt = 32

func (f *Failure) Error() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "test %q: output differs", f.Test)
	switch {
	case f.ContentType != "":
		fmt.Fprintf(&sb, " (content type %q is not rewritten by this rule set: the body passes through unchanged)", f.ContentType)
	case f.Others < len(chunkings)-1: // not every chunking: name the first
		fmt.Fprintf(&sb, " in %s", f.Chunking)
		if f.Others > 0 {
			fmt.Fprintf(&sb, " and %d other chunking(s)", f.Others)
		}
		if f.Overflowed {
			sb.WriteString(" (the hold-back cap, max_buffered_bytes, overflowed: the rest of the body passed through unchanged)")
		}
	}
	sb.WriteString("; ")
	sb.WriteString(f.Diff.Format("want", "got"))
	return sb.String()
}

// Run runs c through rs in every chunking and returns the first that
// gives other output than c.Want, or nil when every one gives it.
func Run(rs *matcher.RuleSet, c Case) *Failure {
	if !c.Rewrite {
		if d, ok := bytediff.Compare(c.Want, c.Input, excerpt); ok {
			return &Failure{Test: c.Name, Chunking: whole, Diff: d, ContentType: c.ContentType}
		}
		return nil
	}
	var f *Failure
	st := rs.NewStream()
	var out []byte
	for _, ch := range chunkings {
		st.Reset()
		out = out[:0]
		for _, chunk := range ch.cut(c.Input) {
			out = st.Write(out, chunk)
		}
		out = st.Close(out)
		d, ok := bytediff.Compare(c.Want, out, excerpt)
		switch {
		case !ok:
		case f == nil:
			// The Diff's slices point into out, which the next chunking
			// reuses.
			d.Before, d.A, d.B = bytes.Clone(d.Before), bytes.Clone(d.A), bytes.Clone(d.B)
			f = &Failure{Test: c.Name, Chunking: ch.name, Diff: d, Overflowed: st.Stats().Overflowed}
		default:
			f.Others++
		}
	}
	return f
}

// whole is the name of the chunking that does not cut the body.
const whole = "the whole body"

// chunking is one way to cut a test's input.
type chunking struct {
	name string
	cut  func(body []byte) [][]byte
}

var chunkings = []chunking{
	{whole, func(body []byte) [][]byte { return [][]byte{body} }},
	{"1-byte chunks", every(1)},
	{"2-byte chunks", every(2)},
	{"3-byte chunks", every(3)},
	{"7-byte chunks", every(7)},
	{"64-byte chunks", every(64)},
	{"random chunks (seed 1)", random(1)},
	{"random chunks (seed 2)", random(2)},
}

// every cuts a body into chunks of n bytes, the last one shorter.
func every(n int) func([]byte) [][]byte {
	return func(body []byte) [][]byte {
		var chunks [][]byte
		for len(body) > n {
			chunks = append(chunks, body[:n])
			body = body[n:]
		}
		return append(chunks, body)
	}
}

// random cuts a body into chunks of 0 to 16 bytes, drawn from a generator
// seeded with seed: the same body is always cut the same way. The last
// chunk is empty, as Envoy's end_of_stream often is.
func random(seed uint64) func([]byte) [][]byte {
	return func(body []byte) [][]byte {
		rng := rand.New(rand.NewPCG(seed, uint64(len(body))))
		var chunks [][]byte
		for len(body) > 0 {
			n := min(rng.IntN(17), len(body))
			chunks = append(chunks, body[:n])
			body = body[n:]
		}
		return append(chunks, nil)
	}
}
