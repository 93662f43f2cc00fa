//go:build e2e

package e2e

import (
	"testing"
	"time"

	"github.com/streamsub/streamsub/internal/demoorigin"
)

// TestFailureModes stops streamsub and checks Envoy's configured failure
// modes: fail-closed (5xx) by default, unmodified bodies on /failopen/; then
// restarts it and checks that rewriting recovers.
func TestFailureModes(t *testing.T) {
	s := startStack(t, "")
	c := newClient()
	want := standard.Replace(demoorigin.IndexHTML)

	for _, path := range []string{"/", "/failopen/"} {
		_, body := do(t, c, "GET", s.envoy.url+unique(path), nil)
		if string(body) != want {
			t.Fatalf("%s before the failure: body not rewritten: %q", path, body)
		}
	}

	s.stopStreamsub()

	resp, body := do(t, c, "GET", s.envoy.url+unique("/"), nil)
	t.Logf("streamsub down, fail-closed route: %d %q", resp.StatusCode, body)
	if resp.StatusCode < 500 {
		t.Errorf("fail-closed route: status %d, want 5xx", resp.StatusCode)
	}
	resp, body = do(t, c, "GET", s.envoy.url+unique("/failopen/"), nil)
	t.Logf("streamsub down, fail-open route: %d, %d bytes", resp.StatusCode, len(body))
	if resp.StatusCode != 200 || string(body) != demoorigin.IndexHTML {
		t.Errorf("fail-open route: status %d, body %q; want 200 and the origin's body unmodified", resp.StatusCode, body)
	}

	s.startStreamsub()
	s.waitEnvoySeesStreamsub(true)
	// The first requests may still race Envoy's reconnect; recovery must
	// come within a few seconds.
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, body := do(t, c, "GET", s.envoy.url+unique("/"), nil)
		if resp.StatusCode == 200 && string(body) == want {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after restart: status %d body %q, want the rewritten page", resp.StatusCode, body)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
