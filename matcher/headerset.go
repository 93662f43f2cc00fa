package matcher

// The header set is a trie in the manner of Cloudflare's trie-hard
// (github.com/cloudflare/trie-hard), design.md §4: every key is bulk-loaded
// into one contiguous node array laid out breadth-first, so the children of a
// node are adjacent. The distinct bytes of the keys form the alphabet; each
// alphabet byte owns one bit of a uint64, and upper- and lower-case ASCII
// letters share their bit, so case folding costs nothing on the walk. A node
// holds the mask of the bits its children have and the index of its first
// child; the child for bit b is first + popcount(mask & (b-1)). A subtree
// that holds a single key is collapsed into one leaf that keeps the rest of
// the key (lower-cased) as a tail to compare. A prefix key ends in a
// prefix-terminal node whose subtree is dropped: everything below it matches.
//
// A lookup touches one node per byte until the walk leaves the trie, so its
// cost is O(len(name)) with a tiny constant and no hashing; most names that
// are not in the set leave after a byte or two. It never allocates.

import "math/bits"

const (
	// maxClasses is the number of distinct case-folded bytes a trie can
	// tell apart: one bit each in a node's child mask.
	maxClasses = 64
	// maxTail is the longest key remainder, in bytes, that one leaf can
	// hold; a longer single-key subtree keeps interior nodes until the rest
	// fits.
	maxTail = 1<<16 - 1
)

// nodeKind says what a node accepts once the walk stops at it.
type nodeKind uint8

const (
	kindNone   nodeKind = iota // nothing: no key ends here
	kindExact                  // the rest of the name equals the tail
	kindPrefix                 // the rest of the name starts with the tail
	kindWide                   // the root of a set too wide for a trie: scan HeaderSet.wide
)

// node is one trie node: 16 bytes, four to a cache line.
//
// An interior node has mask != 0 and next is the index of its first child;
// its tail is empty. A leaf has mask == 0 and next is the offset of its tail
// in HeaderSet.tails. A node that ends an exact key is kindExact with an
// empty tail; a prefix-terminal node is kindPrefix with an empty tail and no
// children.
type node struct {
	mask uint64   // one bit per alphabet class that has a child
	next uint32   // interior: index of the first child; leaf: tail offset
	tlen uint16   // tail length in bytes
	kind nodeKind // what the node accepts
}

// HeaderSet recognises internal header names: exact names and name
// prefixes, compared ASCII case-insensitively (other bytes compare exactly,
// so a name with a byte no key has simply does not match). It is immutable
// after NewHeaderSet and safe for concurrent use; a nil *HeaderSet contains
// nothing.
type HeaderSet struct {
	nodes []node      // breadth-first; nodes[0] is the root
	bit   [256]uint64 // byte → its class bit; 0 for bytes no key has
	// tails holds the leaf tails, lower-cased, concatenated; caseBits has
	// 0x20 where tails has a letter and 0 elsewhere, so that a name's
	// bytes b match tail bytes t when b|caseBits == t, eight at a time.
	tails, caseBits string

	// wide holds the keys when they use more than maxClasses distinct
	// case-folded bytes, which no set of RFC 9110 token names can (they fold
	// to 51); the root is then a lone kindWide node and lookups scan the
	// keys.
	wide []wideKey
}

type wideKey struct {
	key    string // lower-cased
	prefix bool
}

// NewHeaderSet builds a HeaderSet from exact names and prefixes. Any prefix
// matches the names that start with it, including itself; the empty prefix
// matches every name. Duplicate and redundant keys (an exact name or a
// prefix that starts with another prefix) are dropped.
func NewHeaderSet(names, prefixes []string) *HeaderSet {
	hs := &HeaderSet{}
	root := &buildNode{}
	var inAlphabet [256]bool
	classes := 0
	add := func(key string, prefix bool) {
		k := lowerASCII(key)
		for i := 0; i < len(k); i++ {
			if !inAlphabet[k[i]] {
				inAlphabet[k[i]] = true
				classes++
			}
		}
		root.insert(k, prefix)
		hs.wide = append(hs.wide, wideKey{k, prefix})
	}
	for _, n := range names {
		add(n, false)
	}
	for _, p := range prefixes {
		add(p, true)
	}
	if classes > maxClasses {
		hs.nodes = []node{{kind: kindWide}}
		return hs
	}
	hs.wide = nil

	// Classes in byte order; an upper-case letter shares its lower-case
	// letter's bit (keys are lower-cased, so only the latter is in
	// inAlphabet).
	var class [256]int
	c := 0
	for b := range 256 {
		if inAlphabet[b] {
			class[b] = c
			c++
		}
	}
	for b := range 256 {
		if f := foldASCII[b]; inAlphabet[f] {
			hs.bit[b] = 1 << class[f]
		}
	}
	hs.layout(root, &class)
	return hs
}

// buildNode is the pointer trie NewHeaderSet loads the keys into before
// laying them out.
type buildNode struct {
	kind     nodeKind
	children []buildEdge // sorted by byte
	keys     int         // keys that end in this subtree
	height   int         // bytes on the longest path down from this node
}

type buildEdge struct {
	b     byte
	child *buildNode
}

// insert adds the lower-cased key k below n.
func (n *buildNode) insert(k string, prefix bool) {
	for i := 0; i < len(k); i++ {
		if n.kind == kindPrefix {
			return // already covered by a shorter prefix
		}
		n = n.child(k[i])
	}
	switch {
	case prefix:
		n.kind = kindPrefix
		n.children = nil // everything below matches anyway
	case n.kind == kindNone:
		n.kind = kindExact
	}
}

// child returns n's child for byte b, adding it if needed.
func (n *buildNode) child(b byte) *buildNode {
	i := 0
	for i < len(n.children) && n.children[i].b < b {
		i++
	}
	if i < len(n.children) && n.children[i].b == b {
		return n.children[i].child
	}
	c := &buildNode{}
	n.children = append(n.children, buildEdge{})
	copy(n.children[i+1:], n.children[i:])
	n.children[i] = buildEdge{b, c}
	return c
}

// count sets keys and height in the subtree of n.
func (n *buildNode) count() {
	n.keys, n.height = 0, 0
	if n.kind != kindNone {
		n.keys = 1
	}
	for _, e := range n.children {
		e.child.count()
		n.keys += e.child.keys
		n.height = max(n.height, 1+e.child.height)
	}
}

// layout writes the trie rooted at root into hs.nodes breadth-first, so
// that the children of each node are adjacent and in class order, and
// collapses single-key subtrees into leaves.
func (hs *HeaderSet) layout(root *buildNode, class *[256]int) {
	root.count()
	type item struct {
		n   *buildNode
		idx int
	}
	hs.nodes = append(hs.nodes, node{})
	queue := []item{{root, 0}}
	var tails []byte
	for len(queue) > 0 {
		it := queue[0]
		queue = queue[1:]
		n := it.n
		if n.keys == 1 && n.height > 0 && n.height <= maxTail {
			// One key below, so the subtree is a chain: keep its bytes as
			// the tail of a leaf. (A longer chain keeps interior nodes
			// until the rest fits.)
			off := len(tails)
			end := n
			for len(end.children) > 0 {
				tails = append(tails, end.children[0].b)
				end = end.children[0].child
			}
			hs.nodes[it.idx] = node{next: uint32(off), tlen: uint16(n.height), kind: end.kind}
			continue
		}
		nd := node{kind: n.kind, next: uint32(len(hs.nodes))}
		for _, e := range n.children {
			nd.mask |= 1 << class[e.b]
			queue = append(queue, item{e.child, len(hs.nodes)})
			hs.nodes = append(hs.nodes, node{})
		}
		if nd.mask == 0 {
			nd.next = 0
		}
		hs.nodes[it.idx] = nd
	}
	hs.tails = string(tails)
	caseBits := make([]byte, len(tails))
	for i, b := range tails {
		if 'a' <= b && b <= 'z' {
			caseBits[i] = 'a' - 'A'
		}
	}
	hs.caseBits = string(caseBits)
}

// Contains reports whether name is in the set: equal to one of its names
// or starting with one of its prefixes, ignoring ASCII case.
func (hs *HeaderSet) Contains(name string) bool {
	return hs != nil && hs.contains(name)
}

// contains is Contains for a non-nil hs; small enough a body that callers
// pay one call per name.
func (hs *HeaderSet) contains(name string) bool {
	nodes := hs.nodes
	nd := &nodes[0]
	i := 0
	// Walk while the next byte has a child; leaves and prefix-terminal
	// nodes have no children, so the walk stops at them too. A byte no key
	// has maps to bit 0 and stops the walk.
	for ; i < len(name); i++ {
		b := hs.bit[name[i]]
		if nd.mask&b == 0 {
			break
		}
		nd = &nodes[nd.next+uint32(bits.OnesCount64(nd.mask&(b-1)))]
	}
	rest := name[i:]
	tl := int(nd.tlen)
	switch nd.kind {
	case kindExact:
		if len(rest) != tl {
			return false
		}
	case kindPrefix:
		if len(rest) < tl {
			return false
		}
		rest = rest[:tl]
	case kindWide:
		return hs.containsWide(name)
	default:
		return false
	}
	if tl == 0 {
		return true
	}
	off := int(nd.next)
	return equalTail(rest, hs.tails[off:off+tl], hs.caseBits[off:off+tl])
}

// equalTail reports whether s matches the lower-case tail t ignoring ASCII
// case, where c is t's case bits (0x20 under letters, else 0):
// s[i]|c[i] == t[i] holds exactly when s[i] is t[i] or, for a letter, its
// upper case. All three have the same length.
func equalTail(s, t, c string) bool {
	n := len(s)
	if n < 8 {
		for i := 0; i < n; i++ {
			if s[i]|c[i] != t[i] {
				return false
			}
		}
		return true
	}
	for i := 0; i < n-8; i += 8 {
		if load64(s, i)|load64(c, i) != load64(t, i) {
			return false
		}
	}
	// The last eight bytes, overlapping what was compared already.
	return load64(s, n-8)|load64(c, n-8) == load64(t, n-8)
}

// load64 returns the eight bytes of s at i as a little-endian word; the
// compiler turns it into one load.
func load64(s string, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// containsWide is Contains for key sets too wide for a trie.
func (hs *HeaderSet) containsWide(name string) bool {
	for _, k := range hs.wide {
		if len(name) == len(k.key) || k.prefix && len(name) > len(k.key) {
			if equalFoldLower(name[:len(k.key)], k.key) {
				return true
			}
		}
	}
	return false
}

// AppendMatching appends to dst the key of each header in headers that hs
// contains, in list order (a repeated header is appended each time), and
// returns the extended slice. key returns a header's name. It works on any
// header list, such as ext_proc's []*corev3.HeaderValue with
//
//	func(h *corev3.HeaderValue) string { return h.Key }
//
// and allocates nothing unless dst must grow; a nil hs matches nothing.
func AppendMatching[H any](hs *HeaderSet, dst []string, headers []H, key func(H) string) []string {
	if hs == nil {
		return dst
	}
	for _, h := range headers {
		if k := key(h); hs.contains(k) {
			dst = append(dst, k)
		}
	}
	return dst
}

// foldASCII maps A-Z to a-z and every other byte to itself.
var foldASCII = func() (t [256]byte) {
	for i := range t {
		t[i] = byte(i)
		if 'A' <= i && i <= 'Z' {
			t[i] += 'a' - 'A'
		}
	}
	return t
}()

// lowerASCII returns s with A-Z mapped to a-z; other bytes are kept, so
// unlike strings.ToLower it never rewrites invalid UTF-8 or non-ASCII
// letters.
func lowerASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				b[j] = foldASCII[b[j]]
			}
			return string(b)
		}
	}
	return s
}

// equalFoldLower reports whether s equals lower, which is lower-case,
// ignoring the ASCII case of s. len(s) must equal len(lower).
func equalFoldLower(s, lower string) bool {
	if len(s) != len(lower) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if foldASCII[s[i]] != lower[i] {
			return false
		}
	}
	return true
}
