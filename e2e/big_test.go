//go:build e2e

package e2e

import (
	"bytes"
	"crypto/sha256"
	"io"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/streamsub/streamsub/internal/demoorigin"
)

// rssBoundMiB bounds streamsub's peak RSS (VmHWM) while a 64 MiB body
// streams through it: a server that accumulated the body could not stay
// under the body's own size. Measured: about 32 MiB (20 MiB before the body).
const rssBoundMiB = 64

// TestBigBodyBoundedMemory streams a 64 MiB generated page through Envoy and
// streamsub, checks the rewritten output against the oracle, and samples
// streamsub's RSS from /proc while the body flows.
func TestBigBodyBoundedMemory(t *testing.T) {
	const size = 64 << 20
	s := startStack(t, "")
	pid := s.streamsub.cmd.Process.Pid
	_, hwmBefore, err := rss(pid)
	if err != nil {
		t.Fatal(err)
	}

	// The expected output's hash, from the whole origin body and the oracle.
	var origin bytes.Buffer
	origin.Grow(size)
	if err := demoorigin.Big(&origin, size, func() {}); err != nil {
		t.Fatal(err)
	}
	wantSum := sha256.Sum256([]byte(standard.Replace(origin.String())))
	origin = bytes.Buffer{}

	var (
		mu     sync.Mutex
		maxRSS int64
		stop   = make(chan struct{})
		done   = make(chan struct{})
	)
	go func() {
		defer close(done)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				if r, _, err := rss(pid); err == nil {
					mu.Lock()
					maxRSS = max(maxRSS, r)
					mu.Unlock()
				}
			}
		}
	}()

	path := unique("/big?size=" + strconv.Itoa(size))
	start := time.Now()
	resp, err := newClient().Get(s.envoy.url + path)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	n, err := io.Copy(h, resp.Body)
	resp.Body.Close()
	elapsed := time.Since(start)
	close(stop)
	<-done
	if err != nil {
		t.Fatalf("after %d bytes: %v", n, err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	_, hwm, err := rss(pid)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("64 MiB in: %d bytes out in %v; streamsub VmHWM %d KiB before, %d KiB after; max sampled VmRSS %d KiB; ext_proc body calls %s",
		n, elapsed.Round(time.Millisecond), hwmBefore, hwm, maxRSS, s.bodyCalls(t, path))
	if got := h.Sum(nil); !bytes.Equal(got, wantSum[:]) {
		t.Errorf("rewritten 64 MiB body differs from the oracle (%d bytes received)", n)
	}
	if hwm > rssBoundMiB<<10 {
		t.Errorf("streamsub peak RSS %d KiB, bound %d MiB", hwm, rssBoundMiB)
	}
	// The body stays on the lazy DFA fast path: its cache never gives up,
	// and the matches that Envoy's chunk edges cut (hundreds of edges over
	// 64 MiB) go to the exact engine and back, counted.
	fallbacks := s.metric(t, `streamsub_fast_path_fallbacks_total{rule_set="standard"}`)
	t.Logf("fast-path fallbacks: %v", fallbacks)
	if fallbacks == 0 {
		t.Error("no fast-path fallback counted over 64 MiB of chunks")
	}
	if n := s.metric(t, `streamsub_dfa_cache_gave_up_total{rule_set="standard"}`); n != 0 {
		t.Errorf("DFA cache gave up on %v bodies of the standard rule set", n)
	}
}
