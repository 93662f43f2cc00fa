//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/streamsub/streamsub/envoy"
)

// slowConfig is valid and within the automaton budget, but costly: it
// rewrites the demo pages at tens of KiB/s, so a 1 MiB body would keep a
// core busy for some twenty seconds.
const slowConfig = `
rule_sets:
  - name: slow
    rules:
      - {name: e-runs, regex: '(?s)(?:.{0,100}?e){8}Z', replace: 'X'}
`

// cpuSeconds is the user+system CPU time a process has used so far.
func cpuSeconds(t *testing.T, pid int) float64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	// Fields after the command name, which is in parentheses: utime and
	// stime are fields 14 and 15, in clock ticks (100 per second on Linux).
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	utime, _ := strconv.ParseFloat(f[11], 64)
	stime, _ := strconv.ParseFloat(f[12], 64)
	return (utime + stime) / 100
}

// TestAbandonedRewriteStops: when Envoy gives up on a response while
// streamsub rewrites it with a costly rule set — the client goes away, or
// the stream idle timeout fires because no rewritten byte comes — streamsub
// stops within a bounded amount of input: the abandonment is counted and
// logged, and its CPU use stops, instead of rewriting the rest of a body
// nobody will read.
func TestAbandonedRewriteStops(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "slow.yaml")
	if err := os.WriteFile(cfg, []byte(slowConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name          string
		clientTimeout time.Duration
		idleTimeout   time.Duration
	}{
		{"client gives up", 1500 * time.Millisecond, 0},
		{"Envoy stream idle timeout", 30 * time.Second, time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := startStack(t, cfg, func(p *envoy.Params) { p.StreamIdleTimeout = tt.idleTimeout })
			const abandoned = `streamsub_stream_errors_total{error="body_abandoned"}`
			pid := s.streamsub.cmd.Process.Pid

			ctx, cancel := context.WithTimeout(context.Background(), tt.clientTimeout)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, "GET", s.envoy.url+unique("/big?size=1048576"), nil)
			resp, err := newClient().Do(req)
			if err == nil {
				body, rerr := io.ReadAll(resp.Body)
				resp.Body.Close()
				t.Logf("status %d, %d bytes (%.20q), read error %v", resp.StatusCode, len(body), body, rerr)
				if err = rerr; err == nil && resp.StatusCode == 200 {
					t.Fatal("the slow rewrite finished: the test proves nothing")
				}
			}
			t.Logf("response ended: %v", err)
			ended := time.Now()
			waitFor(t, "streamsub counts the abandoned body", s.streamsub, 10*time.Second, func() error {
				if n := s.metric(t, abandoned); n < 1 {
					return fmt.Errorf("%s = %v", abandoned, n)
				}
				return nil
			})
			t.Logf("abandonment counted %v after the response ended", time.Since(ended))
			c0 := cpuSeconds(t, pid)
			time.Sleep(2 * time.Second)
			used := cpuSeconds(t, pid) - c0
			t.Logf("streamsub used %.2f s of CPU in the 2 s after", used)
			if used > 0.5 {
				t.Errorf("streamsub used %.2f s of CPU in the 2 s after the abandonment was counted: still rewriting", used)
			}
			if l := s.streamsubLog(t); !strings.Contains(l, "body_abandoned") {
				t.Errorf("the abandonment is not logged")
			}
		})
	}
}

// streamsubLog returns what streamsub has logged so far.
func (s *stack) streamsubLog(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(s.streamsub.logPath)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
