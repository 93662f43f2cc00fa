package matcher

// Whole-value rewriting: a short byte string (an HTTP header value) is
// rewritten as a body of its own, fed in one chunk. It uses the Stream
// machinery unchanged, so the semantics are the body's exactly
// (semantics.md: leftmost-first, templates, a once rule fires at most once
// per value), and the fast path's prefilter and lazy DFA decide that a
// value without a match has none before the exact engine runs.

// RewriteValue rewrites value as a whole body, appends the result to dst and
// returns it with the number of replacements made. With no replacement the
// appended bytes equal value. A value longer than the hold-back cap
// (Options.MaxBufferedBytes) is treated as such a body is: a match still
// pending at the cap leaves the rest unchanged.
//
// RewriteValue is safe for concurrent use; its streams come from a pool of
// rs, so steady-state calls allocate nothing beyond growing dst.
func (rs *RuleSet) RewriteValue(dst, value []byte) ([]byte, int) {
	st, _ := rs.values.Get().(*Stream)
	if st == nil {
		st = rs.NewStream()
	} else {
		st.Reset()
	}
	dst = st.Write(dst, value)
	dst = st.Close(dst)
	n := st.stats.Replacements
	if cap(st.buf) > maxPooledValueBuffer {
		st.buf = nil // one huge value must not pin its memory in the pool
	}
	rs.values.Put(st)
	return dst, n
}

// maxPooledValueBuffer caps the hold-back buffer a pooled value stream
// keeps; header values are far shorter.
const maxPooledValueBuffer = 64 << 10
