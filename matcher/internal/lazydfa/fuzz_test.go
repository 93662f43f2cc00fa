package lazydfa

import (
	"math/rand/v2"
	"testing"

	"github.com/streamsub/streamsub/matcher/internal/nfatest"
)

// FuzzScan holds ScanWindows (unrolled loops, speculative
// chain) to scanSimple on fuzzed rules, bodies, cuts, window limits and
// window buffer sizes; see compareScans and compareWindowScans. Each body byte picks a piece of a small alphabet of the
// rules' bytes, and the body is repeated so that it is long enough for the
// speculative chain.
func FuzzScan(f *testing.F) {
	f.Add(uint64(1), []byte("the quick brown fox"), uint16(7), uint16(1<<15), uint8(4), false)
	f.Add(uint64(2), []byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, uint16(100), uint16(9), uint8(20), true)
	f.Add(uint64(3), []byte("kkkkkkkkabcabcabc    zz"), uint16(300), uint16(40), uint8(30), false)
	atoms := []string{"a", "b", "ab", "[a-c]", "[^a]", ".", `\b`, "x|y", "é", "(?i)k", "[0-9]{2}", "abc", "k[a-z]+b", " ", "$", "^"}
	quants := []string{"", "", "*", "+", "?", "{1,3}"}
	alpha := []string{"a", "b", "c", "x", "y", "k", "K", "0", "1", " ", "\n", "é", "\xff", "abc", "kab", "zz"}
	f.Fuzz(func(t *testing.T, seed uint64, text []byte, cut, maxWindow uint16, repeat uint8, tiny bool) {
		r := rand.New(rand.NewPCG(seed, seed>>32))
		pats := randRules(r, atoms, quants)
		cfg := Config{}
		if tiny {
			cfg = Config{CacheBytes: 1, MaxClears: 1 + int(seed%5)}
		}
		d := New(nfatest.New(t, pats...), cfg)
		if d.CanMatchEmpty() {
			return
		}
		var body []byte
		for range 1 + int(repeat)%32 {
			for _, c := range text {
				body = append(body, alpha[int(c)%len(alpha)]...)
			}
		}
		compareScans(t, d, pats, body, int(cut)%(len(body)+1), 1+int(maxWindow))
		compareWindowScans(t, d, pats, body, int(cut)%(len(body)+1), 1+int(maxWindow), 1+int(repeat)%5)
	})
}
