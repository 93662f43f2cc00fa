package matcher

// RuleSet is a compiled, ordered rule set. It is immutable after Compile and
// safe for concurrent use by any number of Streams.
//
// TEMPORARY pass-through skeleton; the exact engine replaces this file.
type RuleSet struct {
	rules []Rule
	opts  Options
}

// Compile compiles rules, in declaration order, into a RuleSet.
func Compile(rules []Rule, opts Options) (*RuleSet, error) {
	return &RuleSet{rules: rules, opts: opts}, nil
}

// NewStream returns a Stream that rewrites one body with rs.
func (rs *RuleSet) NewStream() *Stream { return &Stream{rs: rs} }

// Stream rewrites one body. It belongs to one goroutine.
type Stream struct {
	rs    *RuleSet
	stats StreamStats
}

// StreamStats describes what a Stream has done so far.
type StreamStats struct {
	Replacements int  // matches replaced (once-rule shadow matches not counted)
	Overflowed   bool // the hold-back cap was exceeded; the rest passed through unchanged
	Buffered     int  // bytes currently held back
}

// Write rewrites chunk, appends the output that is final to dst and returns it.
func (st *Stream) Write(dst, chunk []byte) []byte { return append(dst, chunk...) }

// Close ends the body, appends the held-back tail to dst and returns it.
func (st *Stream) Close(dst []byte) []byte { return dst }

// Stats reports what the stream has done so far.
func (st *Stream) Stats() StreamStats { return st.stats }
