package matcher

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// refSet is the reference HeaderSet: ASCII lower-case, a map of exact
// names and a loop over the prefixes.
type refSet struct {
	exact    map[string]bool
	prefixes []string
}

func newRefSet(names, prefixes []string) *refSet {
	r := &refSet{exact: map[string]bool{}}
	for _, n := range names {
		r.exact[refLower(n)] = true
	}
	for _, p := range prefixes {
		r.prefixes = append(r.prefixes, refLower(p))
	}
	return r
}

// refLower lower-cases A-Z only (strings.ToLower would also fold non-ASCII
// letters and rewrite invalid UTF-8).
func refLower(s string) string {
	return string(mapBytes(s, func(b byte) byte {
		if 'A' <= b && b <= 'Z' {
			return b + 'a' - 'A'
		}
		return b
	}))
}

func mapBytes(s string, f func(byte) byte) []byte {
	b := []byte(s)
	for i := range b {
		b[i] = f(b[i])
	}
	return b
}

func (r *refSet) contains(name string) bool {
	l := refLower(name)
	if r.exact[l] {
		return true
	}
	for _, p := range r.prefixes {
		if strings.HasPrefix(l, p) {
			return true
		}
	}
	return false
}

func TestHeaderSetContains(t *testing.T) {
	tests := []struct {
		name     string
		names    []string
		prefixes []string
		in       []string // must be contained
		out      []string // must not be contained
	}{
		{
			name: "empty set",
			out:  []string{"", "a", "x-internal-foo", "\x00", "\xff"},
		},
		{
			name:  "exact names ignore ASCII case",
			names: []string{"x-debug-token", "X-Powered-By"},
			in:    []string{"x-debug-token", "X-DEBUG-TOKEN", "X-Debug-Token", "x-powered-by", "X-POWERED-BY"},
			out:   []string{"", "x-debug-toke", "x-debug-tokens", "x-debug-token ", " x-debug-token", "x_debug_token", "x-powered-b"},
		},
		{
			name:     "prefix matches itself and longer names",
			prefixes: []string{"x-internal-"},
			in:       []string{"x-internal-", "X-Internal-Route", "x-internal-\xff\x00"},
			out:      []string{"", "x-internal", "x-interna-l", "y-internal-route"},
		},
		{
			name:     "prefix of a prefix",
			prefixes: []string{"x-internal-route-", "x-int", "x-internal-"},
			in:       []string{"x-int", "x-intx", "x-internal-route-a", "X-INTERNAL-"},
			out:      []string{"x-in", "x-", "x"},
		},
		{
			name:     "exact name below a prefix is redundant",
			names:    []string{"x-origin-id", "x-origin"},
			prefixes: []string{"x-origin-"},
			in:       []string{"x-origin-id", "x-origin-", "x-origin-zzz", "x-origin"},
			out:      []string{"x-origi", "x-originz"},
		},
		{
			name:  "a name that is a prefix of another name",
			names: []string{"x-a", "x-ab", "x-abcdef", "x-abcdeg"},
			in:    []string{"x-a", "x-ab", "x-abcdef", "X-ABCDEG"},
			out:   []string{"x-", "x-abc", "x-abcd", "x-abcde", "x-abcdefg", "x-abcdeh", "x-abx", "x-b"},
		},
		{
			name:  "single key collapses into the root",
			names: []string{"authorization"},
			in:    []string{"authorization", "AUTHORIZATION"},
			out:   []string{"authorizatio", "authorizations", "bauthorization", ""},
		},
		{
			name:     "empty name and empty prefix",
			names:    []string{""},
			prefixes: []string{""},
			in:       []string{"", "anything", "\xff"},
		},
		{
			// The bigram filter must let through every second byte after a
			// one-byte prefix, including bytes no key has.
			name:     "one-byte prefix and one-byte name",
			names:    []string{"b", "cd"},
			prefixes: []string{"a"},
			in:       []string{"a", "A", "a\xff", "A\x00x", "b", "B", "cD"},
			out:      []string{"", "b\xff", "ba", "c", "ca", "\xffa"},
		},
		{
			name:  "empty name alone",
			names: []string{"", "ab"},
			in:    []string{"", "ab"},
			out:   []string{"a", "b", "abc"},
		},
		{
			name:  "non-ASCII bytes compare exactly",
			names: []string{"x-caf\xc3\xa9", "x-\xff", "k"},
			in:    []string{"x-caf\xc3\xa9", "X-CAF\xc3\xa9", "x-\xff", "K"},
			// \xc3\x89 is É in UTF-8: only ASCII case is folded. The
			// Kelvin sign K (U+212A) folds to k in Unicode, not here.
			out: []string{"x-caf\xc3\x89", "x-cafe", "x-\xdf", "\u212a", "x-caf\xc3"},
		},
		{
			name:  "bytes outside the alphabet do not match",
			names: []string{"ab", "ac"},
			in:    []string{"ab", "AC"},
			out:   []string{"a\x00", "a\xff", "a@", "a`", "\x00b", "a"},
		},
		{
			name:  "case pairs of non-letters are distinct",
			names: []string{"a@", "a[", "a`"},
			in:    []string{"a@", "A@", "a[", "a`"},
			out:   []string{"a{", "a\x60\x00", "A{"},
		},
		{
			// Labels of 7, 8, 9 and 17 bytes exercise the word-wise compare,
			// with case pairs of non-letters (@ `, [ {) in every lane.
			name:  "long labels with non-letter case pairs",
			names: []string{"0@[a@[b@", "1@[a@[b@[", "2@[a@[b@[c", "3@[a@[b@[c@[d@[e@["},
			in:    []string{"0@[A@[B@", "1@[a@[B@[", "2@[A@[b@[C", "3@[A@[B@[C@[D@[E@["},
			out: []string{"0`{a@[b@", "0@[a@[b`", "1@[a@[b@{", "1`[a@[b@[", "2@[a@[b@[C\x00", "2@[a@[b@[",
				"3@[a@[b@[c@[d@[e@{", "3@[a@[b@[c@[d@{e@[", "3`[a@[b@[c@[d@[e@["},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, hs := range bothPaths(NewHeaderSet(tt.names, tt.prefixes)) {
				checkTable(t, hs, tt.names, tt.prefixes, tt.in, tt.out)
			}
		})
	}
}

// bothPaths returns hs and, if it has an exact-name index, a copy without
// it, so that the walk is tested on every set too.
func bothPaths(hs *HeaderSet) []*HeaderSet {
	if hs.slots == nil {
		return []*HeaderSet{hs}
	}
	walkOnly := *hs
	walkOnly.slots = nil
	return []*HeaderSet{hs, &walkOnly}
}

func checkTable(t *testing.T, hs *HeaderSet, names, prefixes, in, out []string) {
	t.Helper()
	walk := ""
	if hs.slots == nil {
		walk = " (walk)"
	}
	for _, n := range in {
		if !hs.Contains(n) {
			t.Errorf("Contains(%q)%s = false, want true", n, walk)
		}
	}
	for _, n := range out {
		if hs.Contains(n) {
			t.Errorf("Contains(%q)%s = true, want false", n, walk)
		}
	}
	// The reference agrees with the table, and so must the set on every
	// variant of the keys.
	ref := newRefSet(names, prefixes)
	for _, n := range slices.Concat(in, out, probeVariants(names), probeVariants(prefixes)) {
		if got, want := hs.Contains(n), ref.contains(n); got != want {
			t.Errorf("Contains(%q)%s = %v, reference says %v", n, walk, got, want)
		}
	}
}

// probeVariants returns names near each key: itself, upper-cased, one byte
// shorter, one byte longer, with its last byte changed.
func probeVariants(keys []string) []string {
	var out []string
	for _, k := range keys {
		out = append(out, k, strings.ToUpper(k), k+"-", k+"\xff")
		if k != "" {
			out = append(out, k[:len(k)-1], k[:len(k)-1]+string(k[len(k)-1]^0x20), k[1:])
		}
	}
	return out
}

func TestHeaderSetNil(t *testing.T) {
	var hs *HeaderSet
	if hs.Contains("x-internal-route") || hs.Contains("") {
		t.Error("nil HeaderSet contains a name")
	}
	if got := AppendMatching(hs, nil, []string{"a", "b"}, ident); len(got) != 0 {
		t.Errorf("AppendMatching(nil set) = %q, want none", got)
	}
}

// TestHeaderSetLayout checks the node array against a dump, so path
// compression and prefix pruning are tested, not just their results.
func TestHeaderSetLayout(t *testing.T) {
	tests := []struct {
		names, prefixes []string
		want            string
	}{
		{nil, nil, "0:none"},
		{[]string{"Abc"}, nil, `0:exact"abc"`},
		{nil, []string{"x-"}, `0:prefix"x-"`},
		{[]string{"abc", "abd"}, nil, `0:none"ab"{c→1 d→2} 1:exact 2:exact`},
		{[]string{"ab", "abcdef", "xyz"}, nil, `0:none{a→1 x→2} 1:exact"b"{c→3} 2:exact"yz" 3:exact"def"`},
		{
			[]string{"X-Internal-Route", "x-internal-trace", "x-debug"}, nil,
			`0:none"x-"{d→1 i→2} 1:exact"ebug" 2:none"nternal-"{r→3 t→4} 3:exact"oute" 4:exact"race"`,
		},
		// Prefix "x-" prunes everything below it.
		{[]string{"x-a", "x-b", "y"}, []string{"x-", "x-internal-"}, `0:none{x→1 y→2} 1:prefix"-" 2:exact`},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.names, tt.prefixes), func(t *testing.T) {
			if got := NewHeaderSet(tt.names, tt.prefixes).dump(); got != tt.want {
				t.Errorf("layout:\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

// dump renders the node array: index:kind"label"{byte→child ...}.
func (hs *HeaderSet) dump() string {
	if hs.wide != nil {
		return fmt.Sprintf("wide%v", hs.wide)
	}
	// Invert the byte → bit table, keeping the lower-case byte of a class.
	byBit := map[uint64]byte{}
	for b := 255; b >= 0; b-- {
		if bit := hs.bit[b]; bit != 0 && (b < 'A' || b > 'Z') {
			byBit[bit] = byte(b)
		}
	}
	var sb strings.Builder
	for i, nd := range hs.nodes {
		if i > 0 {
			sb.WriteByte(' ')
		}
		fmt.Fprintf(&sb, "%d:%s", i, [...]string{"none", "exact", "prefix"}[nd.kind])
		if nd.llen > 0 {
			fmt.Fprintf(&sb, "%q", hs.labels[nd.loff:nd.loff+uint32(nd.llen)])
		}
		if nd.mask != 0 {
			sb.WriteByte('{')
			for j, c := 0, 0; j < 64; j++ {
				if nd.mask&(1<<j) != 0 {
					if c > 0 {
						sb.WriteByte(' ')
					}
					fmt.Fprintf(&sb, "%c→%d", byBit[1<<j], int(nd.first)+c)
					c++
				}
			}
			sb.WriteByte('}')
		}
	}
	return sb.String()
}

// TestHeaderSetAlphabetLimit checks both sides of the 64-class limit: the
// trie up to 64 case-folded bytes, the key scan above it.
func TestHeaderSetAlphabetLimit(t *testing.T) {
	for _, n := range []int{63, 64, 65, 200} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			// n distinct bytes, skipping A-Z (they fold into a-z); k and p
			// start the keys.
			alphabet := []byte("kp")
			for b := 0; len(alphabet) < n; b++ {
				if (b < 'A' || b > 'Z') && b != 'k' && b != 'p' {
					alphabet = append(alphabet, byte(b))
				}
			}
			var names []string
			for i := 0; i < len(alphabet); i += 3 {
				names = append(names, "k"+string(alphabet[i:min(i+3, len(alphabet))]))
			}
			prefixes := []string{"p" + string(alphabet[len(alphabet)-1])}
			hs := NewHeaderSet(names, prefixes)
			if wide := hs.wide != nil; wide != (n > maxClasses) {
				t.Fatalf("%d classes: wide = %v", n, wide)
			}
			ref := newRefSet(names, prefixes)
			probes := slices.Concat(probeVariants(names), probeVariants(prefixes))
			for _, b := range alphabet {
				probes = append(probes, "k"+string(b), "p"+string(b)+"x")
			}
			for _, p := range probes {
				if got, want := hs.Contains(p), ref.contains(p); got != want {
					t.Errorf("Contains(%q) = %v, want %v", p, got, want)
				}
			}
		})
	}
}

// TestHeaderSetLongKey checks keys longer than one label can hold.
func TestHeaderSetLongKey(t *testing.T) {
	long := strings.Repeat("ab", maxLabel)
	hs := NewHeaderSet([]string{long, "x"}, []string{"p" + long})
	for _, tt := range []struct {
		name string
		want bool
	}{
		{long, true},
		{strings.ToUpper(long), true},
		{long[:len(long)-1], false},
		{long + "a", false},
		{long[:len(long)-1] + "x", false},
		{"p" + long, true},
		{"p" + long + "zz", true},
		{"p" + long[:len(long)-1], false},
	} {
		if got := hs.Contains(tt.name); got != tt.want {
			t.Errorf("Contains(len %d) = %v, want %v", len(tt.name), got, tt.want)
		}
	}
}

func ident(s string) string { return s }

type testHeader struct{ Key, Value string }

func TestAppendMatching(t *testing.T) {
	hs := NewHeaderSet([]string{"x-debug-token", "x-powered-by"}, []string{"x-internal-"})
	headers := []*testHeader{
		{":authority", "a"}, {"X-Internal-Route", "r"}, {"accept", "*/*"},
		{"x-debug-token", "t"}, {"x-internal-route", "again"}, {"x-internal", "no"},
	}
	got := AppendMatching(hs, []string{"keep"}, headers, func(h *testHeader) string { return h.Key })
	want := []string{"keep", "X-Internal-Route", "x-debug-token", "x-internal-route"}
	if !slices.Equal(got, want) {
		t.Errorf("AppendMatching = %q, want %q", got, want)
	}

	clean := headers[:1:1]
	clean = append(clean, &testHeader{"accept", ""}, &testHeader{"x-forwarded-for", ""})
	if allocs := testing.AllocsPerRun(100, func() {
		if got := AppendMatching(hs, nil, clean, func(h *testHeader) string { return h.Key }); got != nil {
			t.Fatalf("AppendMatching(no internal headers) = %q", got)
		}
	}); allocs != 0 {
		t.Errorf("AppendMatching with no match: %v allocs, want 0", allocs)
	}
	dst := make([]string, 0, 8)
	if allocs := testing.AllocsPerRun(100, func() {
		dst = AppendMatching(hs, dst[:0], headers, func(h *testHeader) string { return h.Key })
	}); allocs != 0 {
		t.Errorf("AppendMatching into a big enough dst: %v allocs, want 0", allocs)
	}
}

// FuzzHeaderSet checks the trie against the reference on random key sets
// and probes. spec encodes the keys: a header byte per key (bit 0: prefix,
// bits 1-5: length) followed by that many key bytes.
func FuzzHeaderSet(f *testing.F) {
	f.Add([]byte("\x1ax-internal-\x10x-debug-token"), "X-Internal-Route")
	f.Add([]byte("\x06abc\x04ab\x07abd"), "ABD")
	f.Add([]byte("\x01\x00"), "")
	f.Add([]byte("\x04\xc3\xa9\x05\xff"), "\xc3\x89")
	f.Fuzz(func(t *testing.T, spec []byte, probe string) {
		var names, prefixes []string
		for len(spec) > 0 {
			h := spec[0]
			n := min(int(h>>1&31), len(spec)-1)
			key := string(spec[1 : 1+n])
			spec = spec[1+n:]
			if h&1 != 0 {
				prefixes = append(prefixes, key)
			} else {
				names = append(names, key)
			}
		}
		sets := bothPaths(NewHeaderSet(names, prefixes))
		ref := newRefSet(names, prefixes)
		probes := slices.Concat([]string{probe, strings.ToUpper(probe)}, probeVariants(names), probeVariants(prefixes))
		for _, k := range slices.Concat(names, prefixes) {
			probes = append(probes, k+probe, flipCase(k)+probe)
			if len(probe) > 0 && len(k) > 0 {
				i := int(probe[0]) % len(k)
				probes = append(probes, k[:i]+probe)
			}
		}
		for _, hs := range sets {
			for _, p := range probes {
				if got, want := hs.Contains(p), ref.contains(p); got != want {
					t.Fatalf("names %q prefixes %q (index %v): Contains(%q) = %v, reference says %v",
						names, prefixes, hs.slots != nil, p, got, want)
				}
			}
		}
	})
}

// flipCase swaps the case of ASCII letters.
func flipCase(s string) string {
	return string(mapBytes(s, func(b byte) byte {
		if 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' {
			return b ^ 0x20
		}
		return b
	}))
}

// TestHeaderSetKeys: a set reports the keys it was built from (Envoy's
// safety net is rendered from them), lower-cased and in order, as copies.
func TestHeaderSetKeys(t *testing.T) {
	hs := NewHeaderSet([]string{"X-Debug-Token", "x-powered-by"}, []string{"X-Internal-", "x-origin-"})
	names, prefixes := hs.Names(), hs.Prefixes()
	if !slices.Equal(names, []string{"x-debug-token", "x-powered-by"}) || !slices.Equal(prefixes, []string{"x-internal-", "x-origin-"}) {
		t.Fatalf("Names, Prefixes = %q, %q", names, prefixes)
	}
	names[0] = "changed"
	if hs.Names()[0] != "x-debug-token" {
		t.Error("Names returned the set's own slice")
	}
	var none *HeaderSet
	if none.Names() != nil || none.Prefixes() != nil {
		t.Error("a nil set has keys")
	}
}
