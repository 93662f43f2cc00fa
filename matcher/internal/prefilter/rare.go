package prefilter

import "bytes"

// A Rare prefilter skips by bytes that every match contains, rather than
// by the bytes matches begin with. For a rule set of literal strings it
// picks, in each literal, its rarest byte (Rank) and that byte's offset:
// a match that starts at s then has one of the picked bytes (the needles)
// at s+off, off <= Back. So if r is the first needle at or after i, no
// match starts in [i, r-Back), and the search may start its automaton,
// Idle, at r-Back; with no needle left in the buffer it starts at
// len-Back, so that a match whose needle is in the next chunk still opens
// its window in this one. On HTML whose literals begin with common letters
// (the h of https://, the w of www.) but hold a rare one (the x of
// example.com), the automaton then runs only around the needles.

// maxNeedles is the most needles a Rare prefilter searches, each with its
// own bytes.IndexByte.
const maxNeedles = 3

// RareEnough is the largest Rank a needle should have: past it needles are
// about as frequent as start bytes, and searching for them does not pay.
const RareEnough = 40

// Literal is a string every match of one rule is: its bytes, and whether
// the rule matches it ignoring case. Ignoring case, only bytes that case
// folding cannot change (ASCII other than letters) may be needles, and
// only after an ASCII prefix: a letter before the needle may then match as
// a longer rune (the Kelvin sign K for k, 3 bytes; ſ for s, 2), so the
// needle lies up to 3 bytes per preceding byte into the match.
type Literal struct {
	Bytes []byte
	Fold  bool
}

// NewRare returns a Rare prefilter for a rule set whose every match is one
// of lits, or nil when there is none or it would not pay: a literal without
// a byte that may be a needle, a needle whose Rank is above maxRank
// (RareEnough; tests pass more), more than maxNeedles distinct needles.
func NewRare(lits []Literal, maxRank int) *Prefilter {
	if len(lits) == 0 {
		return nil
	}
	p := &Prefilter{kind: Rare}
	for _, lit := range lits {
		at := -1 // the first of the literal's rarest bytes
		for off, c := range lit.Bytes {
			if lit.Fold && c >= 0x80 {
				break // the prefix must be ASCII
			}
			if lit.Fold && isLetter(c) {
				continue
			}
			if at < 0 || Rank(c) < Rank(lit.Bytes[at]) {
				at = off
			}
		}
		if at < 0 || Rank(lit.Bytes[at]) > maxRank {
			return nil
		}
		needle, back := lit.Bytes[at], at
		if lit.Fold {
			back = 3 * at // the Kelvin sign, 3 bytes, is the longest fold of an ASCII letter
		}
		if bytes.IndexByte(p.needles, needle) < 0 {
			if len(p.needles) == maxNeedles {
				return nil
			}
			p.needles = append(p.needles, needle)
			p.set[needle] = true
		}
		p.back = max(p.back, back)
	}
	return p
}

func isLetter(c byte) bool { return 'a' <= c|0x20 && c|0x20 <= 'z' }

// Needles returns the bytes a Rare prefilter searches for.
func (p *Prefilter) Needles() []byte { return p.needles }

// Back returns, for a Rare prefilter, how far before a needle a match may
// start.
func (p *Prefilter) Back() int { return p.back }

// Rarer reports whether searching with p, a Rare prefilter, skips more than
// searching with start, a start-byte prefilter (nil: none): start has
// several bytes, or its one byte is more frequent than p's needles.
func (p *Prefilter) Rarer(start *Prefilter) bool {
	if start == nil || start.kind == None || start.kind == Table {
		return true
	}
	if start.kind != Byte {
		return false // Never: nothing is faster
	}
	for _, c := range p.needles {
		if Rank(c) >= Rank(start.one) {
			return false
		}
	}
	return true
}

// Cursor remembers, for one buffer, where each needle of a Rare prefilter
// next occurs, so that a scan of the buffer visits each byte once per
// needle whatever the number of Skip calls. The zero Cursor is ready for a
// new buffer.
type Cursor struct {
	next [maxNeedles]int // index of the needle's next occurrence + 1; 0: not searched yet
}

// Skip returns q, the first index >= i at which a match of b may start as
// far as p can tell, and r >= q: the search must not skip again before
// r+1 (the needle that q was derived from, or len(b) for a tail with no
// needle; r == q for the start-byte kinds). c must be passed to every
// call of one scan of b, with i never decreasing.
func (p *Prefilter) Skip(b []byte, i int, c *Cursor) (q, r int) {
	if p.kind != Rare {
		q = p.Next(b, i)
		return q, q
	}
	n := len(b)
	r = n
	for k, x := range p.needles {
		j := c.next[k] - 1
		if j < i {
			j = n
			if d := bytes.IndexByte(b[i:], x); d >= 0 {
				j = i + d
			}
			c.next[k] = j + 1
		}
		r = min(r, j)
	}
	return max(i, r-p.back), r
}

// Rank estimates how often byte c occurs in HTML and text, as a rank: the
// lower, the rarer. Letters follow English frequencies (lower case far
// above upper case), the markup's punctuation and white space rank with
// the commonest letters, digits in between, and bytes of multi-byte UTF-8
// sequences high, since non-English text is made of them.
func Rank(c byte) int { return rank[c] }

var rank = func() (r [256]int) {
	for c := range 256 {
		switch {
		case c >= 0x80:
			r[c] = 70
		case c < 0x20: // control bytes; white space is set below
			r[c] = 0
		case c >= '0' && c <= '9':
			r[c] = 60
		case c >= 'A' && c <= 'Z':
			r[c] = 20
		default:
			r[c] = 40 // other punctuation
		}
	}
	for _, g := range []struct {
		rank  int
		bytes string
	}{
		{100, " \t\n\r\"'<>=/.:-_,;etaoinsrhldcum"},
		{80, "fpgwybACDEINOPRST"},
		{50, "vk()#&"},
		{25, "xjqz"},
	} {
		for i := range len(g.bytes) {
			r[g.bytes[i]] = g.rank
		}
	}
	return r
}()
