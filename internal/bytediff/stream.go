package bytediff

import "hash/maphash"

// Stream compares two byte strings, A and B, that arrive in pieces: Write
// takes the next piece of each (either may be empty, and the pieces need
// not line up), Close says whether A and B differ and where.
//
// Memory: while A and B agree, a Stream holds only the bytes by which one
// side has run ahead of the other, up to its limit, and a few excerpt
// bytes. A side that runs further ahead than the limit makes it compare
// the rest of both sides by hash (maphash, one seed per process) instead:
// it still tells whether they differ (up to a 2⁻⁶⁴ chance of a collision)
// but no longer where (Diff.Unlocated). Once they differ it only collects
// the excerpts. Cost: one comparison per byte while they agree.
//
// A Stream belongs to one goroutine; Reset readies it for two new strings.
type Stream struct {
	n, limit int // excerpt length; most bytes held ahead

	pos        int64 // A and B agree on their first pos bytes
	aLen, bLen int64 // bytes written of each
	before     []byte
	ahead      []byte // ahead[off:]: the leading side's bytes from pos on
	off        int
	lead       int // the leading side (0: A, 1: B) when ahead[off:] is not empty

	found   bool
	diff    Diff
	ex      [2][]byte // excerpts of A and B from diff.Offset on
	hashing bool
	hash    [2]maphash.Hash
}

// seed makes the hashes of both sides comparable within the process.
var seed = maphash.MakeSeed()

// NewStream returns a Stream whose excerpts are up to n bytes long and
// which holds at most limit bytes of the side that runs ahead.
func NewStream(n, limit int) *Stream {
	s := &Stream{n: n, limit: limit}
	s.Reset()
	return s
}

// Reset readies s for two new strings, keeping its buffers.
func (s *Stream) Reset() {
	s.pos, s.aLen, s.bLen = 0, 0, 0
	s.before, s.ahead, s.off = s.before[:0], s.ahead[:0], 0
	s.found, s.diff, s.hashing = false, Diff{}, false
	s.ex[0], s.ex[1] = s.ex[0][:0], s.ex[1][:0]
	s.hash[0].SetSeed(seed)
	s.hash[1].SetSeed(seed)
}

// Write takes the next bytes of A and of B.
func (s *Stream) Write(a, b []byte) {
	s.aLen += int64(len(a))
	s.bLen += int64(len(b))
	in := [2][]byte{a, b}
	switch {
	case s.found:
		s.excerpt(0, a)
		s.excerpt(1, b)
		return
	case s.hashing:
		s.hash[0].Write(a)
		s.hash[1].Write(b)
		return
	}
	if s.off < len(s.ahead) {
		// The bytes the leading side holds meet the other side's new ones.
		l, o := s.lead, 1-s.lead
		held := s.ahead[s.off:]
		n := min(len(held), len(in[o]))
		if i := Index(held[:n], in[o][:n]); i >= 0 {
			s.differ(held[:i])
			s.excerpt(l, held[i:])
			s.excerpt(l, in[l])
			s.excerpt(o, in[o][i:])
			return
		}
		s.agree(held[:n])
		s.off += n
		in[o] = in[o][n:]
		if s.off < len(s.ahead) { // the other side is used up
			s.hold(in[l])
			return
		}
		s.ahead, s.off = s.ahead[:0], 0
	}
	n := min(len(in[0]), len(in[1]))
	if i := Index(in[0][:n], in[1][:n]); i >= 0 {
		s.differ(in[0][:i])
		s.excerpt(0, in[0][i:])
		s.excerpt(1, in[1][i:])
		return
	}
	s.agree(in[0][:n])
	for side, p := range in {
		if len(p) > n {
			s.lead = side
			s.hold(p[n:])
		}
	}
}

// Close reports whether A and B differ and where. The Diff's byte slices
// belong to s until its next Reset.
func (s *Stream) Close() (Diff, bool) {
	switch {
	case s.hashing:
		if s.aLen == s.bLen && s.hash[0].Sum64() == s.hash[1].Sum64() {
			return Diff{}, false
		}
		return Diff{Offset: s.pos, Before: s.before, Unlocated: true}, true
	case !s.found && s.off < len(s.ahead):
		// One side is longer: they differ where the other ends.
		s.differ(nil)
		s.excerpt(s.lead, s.ahead[s.off:])
	case !s.found:
		return Diff{}, false
	}
	d := s.diff
	d.A, d.B = s.ex[0], s.ex[1]
	d.AEnd = s.aLen-d.Offset == int64(len(d.A))
	d.BEnd = s.bLen-d.Offset == int64(len(d.B))
	return d, true
}

// agree moves pos past eq, bytes both sides share, keeping the last n of
// them for the excerpts.
func (s *Stream) agree(eq []byte) {
	s.pos += int64(len(eq))
	if len(eq) >= s.n {
		s.before = append(s.before[:0], eq[len(eq)-s.n:]...)
		return
	}
	if drop := len(s.before) + len(eq) - s.n; drop > 0 {
		s.before = append(s.before[:0], s.before[drop:]...)
	}
	s.before = append(s.before, eq...)
}

// differ records that the sides differ right after eq, bytes both share.
func (s *Stream) differ(eq []byte) {
	s.agree(eq)
	s.found = true
	s.diff = Diff{Offset: s.pos, Before: s.before}
}

// excerpt adds p to the excerpt of side, up to n bytes.
func (s *Stream) excerpt(side int, p []byte) {
	if room := s.n - len(s.ex[side]); room > 0 {
		s.ex[side] = append(s.ex[side], p[:min(room, len(p))]...)
	}
}

// hold keeps p, the leading side's next bytes, while the other side
// catches up; beyond the limit it switches to comparing by hash.
func (s *Stream) hold(p []byte) {
	if len(p) == 0 {
		return
	}
	if len(s.ahead)-s.off+len(p) > s.limit {
		s.hashing = true
		s.hash[s.lead].Write(s.ahead[s.off:])
		s.hash[s.lead].Write(p)
		s.ahead, s.off = s.ahead[:0], 0
		return
	}
	if s.off > 0 && (s.off >= len(s.ahead)-s.off || len(s.ahead)+len(p) > cap(s.ahead)) {
		// Move the held bytes down once at least half the buffer is
		// spent (amortised O(1) per byte), or before growing it.
		s.ahead = append(s.ahead[:0], s.ahead[s.off:]...)
		s.off = 0
	}
	if need := len(s.ahead) + len(p); need > cap(s.ahead) {
		// Grow as append would, but never past the limit.
		grown := make([]byte, len(s.ahead), min(s.limit, max(need, 2*cap(s.ahead))))
		copy(grown, s.ahead)
		s.ahead = grown
	}
	s.ahead = append(s.ahead, p...)
}
