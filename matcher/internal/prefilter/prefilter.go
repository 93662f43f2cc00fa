// Package prefilter finds, in a body, the next byte at which a match of a
// rule set can begin, so that the fast path skips everything else without
// running an automaton. It runs only while no thread is alive (the lazy
// DFA's Idle state).
//
// The start set is computed from the NFA with the same over-approximation
// as the lazy DFA (assertions true, Invalid = any byte >= 0x80), so a byte
// outside it can never begin a match. The skip loop is chosen once per rule
// set: bytes.IndexByte (vectorised by the Go runtime) for a one-byte set, an
// unrolled [256]bool table loop otherwise, nothing when every byte can start
// a match. BenchmarkSkip measures the two loops side by side.
//
// A rule set of literal strings may instead skip by a rare byte each of its
// literals contains (Rare, rare.go), which helps where its start bytes are
// common.
//
// PERF: a SIMD multi-byte search (simd/archsimd, behind a build tag) would
// help rule sets whose start set is small but has more than one byte; not
// done.
package prefilter

import (
	"bytes"

	"github.com/streamsub/streamsub/matcher/internal/nfa"
)

// Kind is the skip loop a Prefilter uses.
type Kind uint8

const (
	None  Kind = iota // every byte may start a match: nothing to skip
	Byte              // one start byte: bytes.IndexByte
	Table             // several: [256]bool table loop
	Never             // no byte starts a match
	Rare              // bytes every match contains: bytes.IndexByte per needle (rare.go)
)

var kindNames = [...]string{"none", "byte", "table", "never", "rare"}

func (k Kind) String() string { return kindNames[k] }

// Prefilter skips to the next byte of its set. It is immutable and safe for
// concurrent use.
type Prefilter struct {
	set  [256]bool
	kind Kind
	one  byte
	// Rare only: the needles and how far before one a match may start.
	needles []byte
	back    int
}

// New returns a prefilter for the given start set.
func New(set [256]bool) *Prefilter {
	p := &Prefilter{set: set}
	n := 0
	for b, in := range set {
		if in {
			n++
			p.one = byte(b)
		}
	}
	switch n {
	case 0:
		p.kind = Never
	case 1:
		p.kind = Byte
	case 256:
		p.kind = None
	default:
		p.kind = Table
	}
	return p
}

// Kind returns the skip loop p uses.
func (p *Prefilter) Kind() Kind { return p.kind }

// Set returns the start set (for Rare, the needles).
func (p *Prefilter) Set() *[256]bool { return &p.set }

// Next returns the smallest index >= i of a byte of b in p's set, or len(b).
// (A Rare prefilter searches with Skip.)
func (p *Prefilter) Next(b []byte, i int) int {
	switch p.kind {
	case None:
		return i
	case Never:
		return len(b)
	case Byte:
		if j := bytes.IndexByte(b[i:], p.one); j >= 0 {
			return i + j
		}
		return len(b)
	}
	return tableNext(&p.set, b, i)
}

func tableNext(set *[256]bool, b []byte, i int) int {
	n := len(b)
	for i+4 <= n && !set[b[i]] && !set[b[i+1]] && !set[b[i+2]] && !set[b[i+3]] {
		i += 4
	}
	for i < n && !set[b[i]] {
		i++
	}
	return i
}

// StartBytes returns the set of bytes that can begin a match of n, with
// every assertion taken as true and Invalid as any byte >= 0x80.
func StartBytes(n *nfa.NFA) (set [256]bool) {
	w := nfa.NewWalker(n)
	w.Reset(nfa.AllLooks)
	w.Closure(nfa.Thread{ID: n.Start()}, nil)
	for _, t := range w.Out {
		for e := range n.State(t.ID).Edges() {
			for b := int(e.Lo); b <= int(e.Hi); b++ {
				set[b] = true
			}
		}
	}
	return set
}
