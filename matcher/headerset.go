package matcher

// The header set is a trie in the manner of Cloudflare's trie-hard
// (github.com/cloudflare/trie-hard), design.md §4: every key is bulk-loaded
// into one contiguous node array laid out breadth-first, so the children of a
// node are adjacent. The distinct bytes of the keys form the alphabet; each
// alphabet byte owns one bit of a uint64, and upper- and lower-case ASCII
// letters share their bit, so case folding costs nothing on the walk. A node
// holds the mask of the bits its children have and the index of its first
// child; the child for bit b is first + popcount(mask & (b-1)).
//
// Runs of nodes with one child and no key ending in them are path-compressed
// into the label of the node below (as in a radix tree), compared eight
// bytes at a time; so a subtree that holds a single key is one leaf whose
// label is the rest of the key. A prefix key ends in a prefix-terminal node
// whose subtree is dropped: everything below it matches.
//
// A lookup goes through up to three stages, each chosen by measurement
// (BENCHMARKS.md, "Header set"):
//
//  1. A bigram filter: one bit for each pair of first two bytes (65,536
//     bits, 8 KiB) that some key allows. Most names that are not in the set
//     fail it at once: 3.5 % of trie-hard's random [a-z0-9-] probes pass,
//     where the trie's root mask lets 43 % through and then mispredicts
//     where the walk stops. Its branch is predictable and it costs no walk.
//  2. For a set without prefixes, an exact-name hash index (length and the
//     first and last two bytes, case folded; linear probing; one word-wise
//     compare) answers the names of two or more bytes. When most lookups
//     hit, a trie walk mispredicts at every branching node and loses to Go's
//     map; the index does not.
//  3. Otherwise the trie walk, which visits one node per branching point:
//     O(len(name)) with a tiny constant and no hashing.
//
// Nothing allocates.

import (
	"math/bits"
	"slices"
)

const (
	// maxClasses is the number of distinct case-folded bytes a trie can
	// tell apart: one bit each in a node's child mask.
	maxClasses = 64
	// maxLabel is the longest label, in bytes, one node can hold; a longer
	// run continues in a one-child node below.
	maxLabel = 1<<16 - 1
)

// nodeKind says what a node accepts when the walk stops at it.
type nodeKind uint8

const (
	kindNone   nodeKind = iota // nothing: no key ends here
	kindExact                  // a name that ends here
	kindPrefix                 // any name that gets here
	kindWide                   // the root of a set too wide for a trie: scan HeaderSet.wide
)

// node is one trie node. The walk enters it after the byte of its parent's
// edge, must then match its label, and either stops (accepting per kind) or
// takes the child for the next byte.
type node struct {
	mask  uint64   // one bit per alphabet class that has a child
	first uint32   // index of the first child
	loff  uint32   // label offset in HeaderSet.labels
	llen  uint16   // label length in bytes
	kind  nodeKind // what the node accepts
}

// HeaderSet recognises internal header names: exact names and name
// prefixes, compared ASCII case-insensitively (other bytes compare exactly,
// so a name with a byte no key has simply does not match). It is immutable
// after NewHeaderSet and safe for concurrent use; a nil *HeaderSet contains
// nothing.
type HeaderSet struct {
	// pair[b0] has bit b1 set when some key can match a name that starts
	// with bytes b0 b1 (case variants included).
	pair  [256][4]uint64
	nodes []node      // breadth-first; nodes[0] is the root
	bit   [256]uint64 // byte → its class bit; 0 for bytes no key has
	// labels holds the node labels, lower-cased, concatenated; caseBits
	// has 0x20 where labels has a letter and 0 elsewhere, so that a name's
	// bytes b match label bytes l when b|caseBits == l, eight at a time.
	labels, caseBits string

	// wide holds the keys when they use more than maxClasses distinct
	// case-folded bytes, which no set of RFC 9110 token names can (they fold
	// to 51); the root is then a lone kindWide node and lookups scan the
	// keys.
	wide []wideKey

	// slots indexes the names of two or more bytes of a set without
	// prefixes by nameHash, with linear probing: slots hold an index into
	// exactOff plus one, 0 when empty. Such names are then looked up here,
	// not by the walk: at trie-hard's hit rates of 50 % and more a probe
	// and one word-wise compare beat the walk's mispredicted branches
	// (BENCHMARKS.md). With prefixes, the walk alone is faster: a miss
	// would pay for both.
	slots     []uint32
	slotShift uint // 32 - log2(len(slots))
	// exactText and exactCase hold the names lower-cased and their case
	// bits (as labels and caseBits); name i is at exactOff[i] and ends
	// where name i+1 starts.
	exactText, exactCase string
	exactOff             []uint32

	// names and prefixes are the keys as given, lower-cased.
	names, prefixes []string
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
	var keys []wideKey
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
		hs.allowPairs(k, prefix)
		keys = append(keys, wideKey{k, prefix})
	}
	for _, n := range names {
		add(n, false)
		hs.names = append(hs.names, lowerASCII(n))
	}
	for _, p := range prefixes {
		add(p, true)
		hs.prefixes = append(hs.prefixes, lowerASCII(p))
	}
	if classes > maxClasses {
		hs.wide = keys
		hs.nodes = []node{{kind: kindWide}}
		return hs
	}

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
	hs.indexExact(keys)
	return hs
}

// Names returns the exact names hs was built from, lower-cased, in the
// order given; nil for a nil set.
func (hs *HeaderSet) Names() []string {
	if hs == nil {
		return nil
	}
	return slices.Clone(hs.names)
}

// Prefixes returns the prefixes hs was built from, lower-cased, in the
// order given; nil for a nil set.
func (hs *HeaderSet) Prefixes() []string {
	if hs == nil {
		return nil
	}
	return slices.Clone(hs.prefixes)
}

// indexExact fills the exact-name hash index from keys, unless there are
// prefixes among them.
func (hs *HeaderSet) indexExact(keys []wideKey) {
	var text []byte
	seen := map[string]bool{}
	for _, k := range keys {
		if k.prefix {
			return
		}
		if len(k.key) >= 2 && !seen[k.key] {
			seen[k.key] = true
			hs.exactOff = append(hs.exactOff, uint32(len(text)))
			text = append(text, k.key...)
		}
	}
	if len(hs.exactOff) == 0 {
		return
	}
	hs.exactOff = append(hs.exactOff, uint32(len(text)))
	hs.exactText = string(text)
	hs.exactCase = string(caseBitsOf(text))
	n := len(hs.exactOff) - 1
	bitsN := max(3, bits.Len(uint(2*n-1)))
	hs.slots = make([]uint32, 1<<bitsN)
	hs.slotShift = uint(32 - bitsN)
	mask := uint32(len(hs.slots) - 1)
	for i := range n {
		j := nameHash(hs.exactText[hs.exactOff[i]:hs.exactOff[i+1]]) >> hs.slotShift
		for hs.slots[j] != 0 {
			j = (j + 1) & mask
		}
		hs.slots[j] = uint32(i + 1)
	}
}

// nameHash hashes a name of two or more bytes by its length and its first
// and last two bytes, ASCII case folded (b|0x20 also merges a few
// non-letter pairs such as @ and `, which only costs a compare). The top
// bits are the good ones.
func nameHash(s string) uint32 {
	n := len(s)
	x := uint32(s[0]) | uint32(s[1])<<8 | uint32(s[n-2])<<16 | uint32(s[n-1])<<24
	x |= 0x20202020
	return (x ^ uint32(n)*0x9e3779b9) * 0x85ebca6b
}

// findExact reports whether name, of two or more bytes, is one of the
// indexed names.
func (hs *HeaderSet) findExact(name string) bool {
	mask := uint32(len(hs.slots) - 1)
	for j := nameHash(name) >> hs.slotShift; ; j = (j + 1) & mask {
		e := hs.slots[j]
		if e == 0 {
			return false
		}
		lo, hi := int(hs.exactOff[e-1]), int(hs.exactOff[e])
		if hi-lo == len(name) && equalTail(name, hs.exactText[lo:hi], hs.exactCase[lo:hi]) {
			return true
		}
	}
}

// allowPairs sets the pair bits of the names of two or more bytes that the
// lower-cased key k can match.
func (hs *HeaderSet) allowPairs(k string, prefix bool) {
	switch {
	case len(k) >= 2:
		for _, b0 := range caseVariants(k[0]) {
			for _, b1 := range caseVariants(k[1]) {
				hs.pair[b0][b1/64] |= 1 << (b1 % 64)
			}
		}
	case prefix && len(k) == 1:
		for _, b0 := range caseVariants(k[0]) {
			hs.pair[b0] = [4]uint64{^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0)}
		}
	case prefix: // the empty prefix matches everything
		for b0 := range hs.pair {
			hs.pair[b0] = [4]uint64{^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0)}
		}
	}
	// An exact key shorter than two bytes matches no name of two or more.
}

// caseVariants returns the bytes that fold to the lower-case byte b.
func caseVariants(b byte) []byte {
	if 'a' <= b && b <= 'z' {
		return []byte{b, b - ('a' - 'A')}
	}
	return []byte{b}
}

// buildNode is the pointer trie NewHeaderSet loads the keys into before
// laying them out.
type buildNode struct {
	kind     nodeKind
	children []buildEdge // sorted by byte
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

// layout writes the trie rooted at root into hs.nodes breadth-first, so
// that the children of each node are adjacent and in class order, and
// path-compresses one-child runs into labels.
func (hs *HeaderSet) layout(root *buildNode, class *[256]int) {
	type item struct {
		n   *buildNode
		idx int
	}
	hs.nodes = append(hs.nodes, node{})
	queue := []item{{root, 0}}
	var labels []byte
	for len(queue) > 0 {
		it := queue[0]
		queue = queue[1:]
		n := it.n
		nd := node{loff: uint32(len(labels))}
		for n.kind == kindNone && len(n.children) == 1 && nd.llen < maxLabel {
			labels = append(labels, n.children[0].b)
			nd.llen++
			n = n.children[0].child
		}
		nd.kind = n.kind
		nd.first = uint32(len(hs.nodes))
		for _, e := range n.children {
			nd.mask |= 1 << class[e.b]
			queue = append(queue, item{e.child, len(hs.nodes)})
			hs.nodes = append(hs.nodes, node{})
		}
		hs.nodes[it.idx] = nd
	}
	labels = append(labels, make([]byte, 8)...) // room for load64 at any label
	hs.labels = string(labels)
	hs.caseBits = string(caseBitsOf(labels))
}

// caseBitsOf returns 0x20 for each letter of the lower-case text and 0 for
// other bytes.
func caseBitsOf(text []byte) []byte {
	c := make([]byte, len(text))
	for i, b := range text {
		if 'a' <= b && b <= 'z' {
			c[i] = 'a' - 'A'
		}
	}
	return c
}

// Contains reports whether name is in the set: equal to one of its names
// or starting with one of its prefixes, ignoring ASCII case.
func (hs *HeaderSet) Contains(name string) bool {
	if hs == nil {
		return false
	}
	if len(name) >= 2 {
		if hs.pair[name[0]][name[1]/64]&(1<<(name[1]%64)) == 0 {
			return false // the bigram filter
		}
		if hs.slots != nil {
			return hs.findExact(name)
		}
	}
	return hs.walk(name)
}

// walk is Contains for the names the bigram filter and the exact-name
// index leave: the trie walk.
func (hs *HeaderSet) walk(name string) bool {
	nodes := hs.nodes
	nd := &nodes[0]
	i := 0
	for {
		if n := int(nd.llen); n != 0 {
			// Nothing above this node accepts name (it would have no child),
			// so a name that does not match the label is not in the set.
			if len(name)-i < n {
				return false
			}
			off := int(nd.loff)
			switch {
			case n <= 8 && len(name)-i >= 8:
				// One word; labels and caseBits are padded, and the shift
				// drops the bytes past the label.
				x := (load64(name, i) | load64(hs.caseBits, off)) ^ load64(hs.labels, off)
				if x<<(64-8*n) != 0 {
					return false
				}
			case n < 8:
				for j := range n {
					if name[i+j]|hs.caseBits[off+j] != hs.labels[off+j] {
						return false
					}
				}
			default:
				if !equalTail(name[i:i+n], hs.labels[off:off+n], hs.caseBits[off:off+n]) {
					return false
				}
			}
			i += n
		}
		if i == len(name) {
			break
		}
		// A byte no key has maps to bit 0 and stops the walk; so do
		// leaves and prefix-terminal nodes, which have no children.
		b := hs.bit[name[i]]
		if nd.mask&b == 0 {
			break
		}
		nd = &nodes[nd.first+uint32(bits.OnesCount64(nd.mask&(b-1)))]
		i++
	}
	switch nd.kind {
	case kindExact:
		return i == len(name)
	case kindPrefix:
		return true
	case kindWide:
		return hs.containsWide(name)
	}
	return false
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
		if k := key(h); hs.Contains(k) {
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
