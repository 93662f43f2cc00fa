package matcher

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/streamsub/streamsub/matcher/internal/cputime"
)

// The header set benchmarks compare the trie with a Go map on two
// workloads. Their names are a contract (BENCHMARKS.md and other tooling
// read them):
//
//	BenchmarkHeaderSet/{trie,map}/hit={100,50,10,1}   one op = one lookup
//	BenchmarkHeaderFilterRequest/{trie,map}           one op = one request
//
// The first is trie-hard's own benchmark: its 118 header names, each
// reversed, probed by 50,000 random [a-z0-9-] tokens of length 4-29 of
// which exactly hit % are replaced by keys, evenly spaced. The second
// filters generated request header lists the way the processor does.

const (
	trieHardProbes = 50_000
	probeAlphabet  = "abcdefghijklmnopqrstuvwxyz0123456789-"
)

var hitPercents = []int{100, 50, 10, 1}

// trieHardKeys returns the trie-hard header names, each reversed.
func trieHardKeys(tb testing.TB) []string {
	tb.Helper()
	data, err := os.ReadFile("testdata/trie-hard/headers.txt")
	if err != nil {
		tb.Fatal(err)
	}
	var keys []string
	for line := range strings.Lines(string(data)) {
		line = strings.TrimRight(line, "\n")
		if line == "" {
			continue
		}
		r := []byte(line)
		slices.Reverse(r)
		keys = append(keys, string(r))
	}
	if len(keys) != 118 {
		tb.Fatalf("testdata/trie-hard/headers.txt: %d names, want 118", len(keys))
	}
	return keys
}

// trieHardProbeSet returns trieHardProbes deterministic probe tokens, of
// which exactly hit % (evenly spaced) are keys, packed into one buffer in
// order as a parser would leave them.
func trieHardProbeSet(keys []string, hit int) []string {
	rng := rand.New(rand.NewPCG(5, uint64(hit)))
	isKey := make(map[string]bool, len(keys))
	for _, k := range keys {
		isKey[k] = true
	}
	tokens := make([]string, trieHardProbes)
	tok := make([]byte, 0, 29)
	for i := range tokens {
		for {
			tok = tok[:0]
			for range 4 + rng.IntN(26) {
				tok = append(tok, probeAlphabet[rng.IntN(len(probeAlphabet))])
			}
			if !isKey[string(tok)] {
				break
			}
		}
		tokens[i] = string(tok)
	}
	if hits := trieHardProbes * hit / 100; hits > 0 {
		step := trieHardProbes / hits
		for i := range hits {
			tokens[i*step] = keys[rng.IntN(len(keys))]
		}
	}
	// Pack so that probes sit in memory in probe order.
	var sb strings.Builder
	for _, t := range tokens {
		sb.WriteString(t)
	}
	packed, off := sb.String(), 0
	for i, t := range tokens {
		tokens[i] = packed[off : off+len(t)]
		off += len(t)
	}
	return tokens
}

// TestTrieHardWorkload checks the benchmark's probe sets: exactly hit % of
// the probes are keys, and the trie and the map agree on every probe.
func TestTrieHardWorkload(t *testing.T) {
	keys := trieHardKeys(t)
	hs := NewHeaderSet(keys, nil)
	m := keyMap(keys)
	for _, hit := range hitPercents {
		probes := trieHardProbeSet(keys, hit)
		n := 0
		for _, p := range probes {
			_, inMap := m[p]
			for _, hs := range bothPaths(hs) {
				if hs.Contains(p) != inMap {
					t.Fatalf("hit=%d: probe %q: set (index %v) says %v, map %v", hit, p, hs.slots != nil, !inMap, inMap)
				}
			}
			if inMap {
				n++
			}
			if !inMap && (len(p) < 4 || len(p) > 29) {
				t.Fatalf("hit=%d: probe %q has length %d", hit, p, len(p))
			}
		}
		if want := trieHardProbes * hit / 100; n != want {
			t.Errorf("hit=%d: %d hits in %d probes, want %d", hit, n, len(probes), want)
		}
	}
}

func keyMap(keys []string) map[string]struct{} {
	m := make(map[string]struct{}, len(keys))
	for _, k := range keys {
		m[k] = struct{}{}
	}
	return m
}

// sink keeps benchmark results alive.
var sink int

func BenchmarkHeaderSet(b *testing.B) {
	keys := trieHardKeys(b)
	probeSets := map[int][]string{}
	for _, hit := range hitPercents {
		probeSets[hit] = trieHardProbeSet(keys, hit)
	}
	b.Run("trie", func(b *testing.B) {
		hs := NewHeaderSet(keys, nil)
		for _, hit := range hitPercents {
			probes := probeSets[hit]
			b.Run(fmt.Sprintf("hit=%d", hit), func(b *testing.B) { benchContains(b, hs, probes) })
		}
	})
	b.Run("map", func(b *testing.B) {
		m := keyMap(keys)
		for _, hit := range hitPercents {
			probes := probeSets[hit]
			b.Run(fmt.Sprintf("hit=%d", hit), func(b *testing.B) {
				b.ReportAllocs()
				n, j := 0, 0
				cpu := cputime.Start(cputime.Thread)
				for range b.N {
					if _, ok := m[probes[j]]; ok {
						n++
					}
					if j++; j == len(probes) {
						j = 0
					}
				}
				cpu.Report(b, 0)
				sink += n
			})
		}
	})
}

// BenchmarkHeaderSetWalk is BenchmarkHeaderSet/trie with the exact-name
// index switched off, so every lookup that passes the bigram filter walks
// the trie: the trie's own speed, for comparison.
func BenchmarkHeaderSetWalk(b *testing.B) {
	keys := trieHardKeys(b)
	hs := NewHeaderSet(keys, nil)
	hs.slots = nil
	for _, hit := range hitPercents {
		probes := trieHardProbeSet(keys, hit)
		b.Run(fmt.Sprintf("hit=%d", hit), func(b *testing.B) { benchContains(b, hs, probes) })
	}
}

// benchContains looks the probes up in hs in turn, b.N times in all.
func benchContains(b *testing.B, hs *HeaderSet, probes []string) {
	b.ReportAllocs()
	n, j := 0, 0
	cpu := cputime.Start(cputime.Thread)
	for range b.N {
		if hs.Contains(probes[j]) {
			n++
		}
		if j++; j == len(probes) {
			j = 0
		}
	}
	cpu.Report(b, 0)
	sink += n
}

// benchHeader is shaped like ext_proc's HeaderValue.
type benchHeader struct {
	Key      string
	Value    string
	RawValue []byte
}

func headerKey(h *benchHeader) string { return h.Key }

// Request workload: internal names to strip, and real request header names
// as Envoy hands them to ext_proc (lower case, pseudo-headers included).
var (
	reqInternalNames    = []string{"x-internal-route", "x-debug-token", "x-origin-trace", "x-backend-server", "x-cache-key", "x-edge-secret"}
	reqInternalPrefixes = []string{"x-internal-", "x-debug-"}
	reqRealNames        = []string{
		":authority", ":method", ":path", ":scheme", "accept", "accept-encoding", "accept-language",
		"cache-control", "connection", "content-length", "content-type", "cookie", "dnt", "if-modified-since",
		"if-none-match", "origin", "pragma", "priority", "range", "referer", "sec-ch-ua", "sec-ch-ua-mobile",
		"sec-ch-ua-platform", "sec-fetch-dest", "sec-fetch-mode", "sec-fetch-site", "sec-fetch-user",
		"te", "upgrade-insecure-requests", "user-agent", "authorization", "x-forwarded-for",
		"x-forwarded-proto", "x-forwarded-host", "x-request-id", "x-real-ip", "x-envoy-expected-rq-timeout-ms",
		"x-envoy-internal", "x-b3-traceid", "x-b3-spanid", "traceparent", "tracestate", "x-csrf-token",
		"x-requested-with", "forwarded", "via", "x-amzn-trace-id",
	}
)

const (
	benchRequests = 256
	internalShare = 10 // % of headers that are internal
)

// requestWorkload returns benchRequests header lists of 10-30 headers
// (mean 20); about internalShare % are internal names in mixed case, half
// of those matched by a prefix rather than an exact name.
func requestWorkload() [][]*benchHeader {
	rng := rand.New(rand.NewPCG(7, 11))
	reqs := make([][]*benchHeader, benchRequests)
	for i := range reqs {
		req := make([]*benchHeader, 10+rng.IntN(21))
		for j := range req {
			var key string
			switch {
			case rng.IntN(100) >= internalShare:
				key = reqRealNames[rng.IntN(len(reqRealNames))]
			case rng.IntN(2) == 0:
				key = randomCase(rng, reqInternalNames[rng.IntN(len(reqInternalNames))])
			default:
				key = randomCase(rng, reqInternalPrefixes[rng.IntN(len(reqInternalPrefixes))]+
					reqRealNames[rng.IntN(len(reqRealNames))])
			}
			req[j] = &benchHeader{Key: key, Value: "v"}
		}
		reqs[i] = req
	}
	return reqs
}

// randomCase upper-cases each letter of s with probability 1/2.
func randomCase(rng *rand.Rand, s string) string {
	return string(mapBytes(s, func(b byte) byte {
		if 'a' <= b && b <= 'z' && rng.IntN(2) == 0 {
			return b - ('a' - 'A')
		}
		return b
	}))
}

// mapFilter is the filter a Go programmer would write without the trie:
// lower-case each name into a stack buffer, look it up in a map, then try
// the prefixes. It appends the names to remove to dst.
func mapFilter(dst []string, exact map[string]struct{}, prefixes []string, headers []*benchHeader) []string {
	var buf [128]byte
	for _, h := range headers {
		k := h.Key
		var l []byte
		if len(k) <= len(buf) {
			l = buf[:len(k)]
		} else {
			l = make([]byte, len(k))
		}
		for i := 0; i < len(k); i++ {
			c := k[i]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			l[i] = c
		}
		if _, ok := exact[string(l)]; ok {
			dst = append(dst, k)
			continue
		}
		for _, p := range prefixes {
			if len(l) >= len(p) && string(l[:len(p)]) == p {
				dst = append(dst, k)
				break
			}
		}
	}
	return dst
}

// TestRequestWorkload checks the request benchmark's data and that both
// filters agree on it.
func TestRequestWorkload(t *testing.T) {
	reqs := requestWorkload()
	hs := NewHeaderSet(reqInternalNames, reqInternalPrefixes)
	exact := keyMap(reqInternalNames)
	headers, removed := 0, 0
	for i, req := range reqs {
		got := AppendMatching(hs, nil, req, headerKey)
		want := mapFilter(nil, exact, reqInternalPrefixes, req)
		if !slices.Equal(got, want) {
			t.Fatalf("request %d: trie removes %q, map %q", i, got, want)
		}
		headers += len(req)
		removed += len(got)
	}
	if mean := float64(headers) / benchRequests; mean < 18 || mean > 22 {
		t.Errorf("mean request has %.1f headers, want about 20", mean)
	}
	if share := 100 * float64(removed) / float64(headers); share < 7 || share > 13 {
		t.Errorf("%.1f%% of headers are internal, want about %d%%", share, internalShare)
	}
}

func BenchmarkHeaderFilterRequest(b *testing.B) {
	reqs := requestWorkload()
	dst := make([]string, 0, 32)
	b.Run("trie", func(b *testing.B) {
		hs := NewHeaderSet(reqInternalNames, reqInternalPrefixes)
		b.ReportAllocs()
		n, j := 0, 0
		cpu := cputime.Start(cputime.Thread)
		for range b.N {
			dst = AppendMatching(hs, dst[:0], reqs[j], headerKey)
			n += len(dst)
			if j++; j == len(reqs) {
				j = 0
			}
		}
		cpu.Report(b, 0)
		sink += n
	})
	b.Run("map", func(b *testing.B) {
		exact := keyMap(reqInternalNames)
		b.ReportAllocs()
		n, j := 0, 0
		cpu := cputime.Start(cputime.Thread)
		for range b.N {
			dst = mapFilter(dst[:0], exact, reqInternalPrefixes, reqs[j])
			n += len(dst)
			if j++; j == len(reqs) {
				j = 0
			}
		}
		cpu.Report(b, 0)
		sink += n
	})
}
