//go:build e2e

package e2e

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/streamsub/streamsub/envoy"
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
	deadline := time.Now().Add(30 * time.Second)
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

// TestStreamsubDiesMidBody kills streamsub (SIGKILL) while a slow body is
// streaming and streamsub holds back the start of a match (the origin
// pauses inside a host name): on every route the client must get the whole
// rewrite, the whole original, or a response it can tell is broken (a
// reset: truncated chunked encoding) — never a 200 that looks complete but
// mixes the two or lacks the held-back bytes.
func TestStreamsubDiesMidBody(t *testing.T) {
	interrupt(t, "SIGKILL", func(s *stack) {
		if err := syscall.Kill(-s.streamsub.cmd.Process.Pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
	})
}

// TestStreamsubStallsMidBody stops streamsub (SIGSTOP) mid-body: the
// response must not complete with a mix of rewritten and original bytes;
// Envoy's stream idle timeout (short here) ends it with a reset.
func TestStreamsubStallsMidBody(t *testing.T) {
	interrupt(t, "SIGSTOP", func(s *stack) {
		pid := s.streamsub.cmd.Process.Pid
		if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { syscall.Kill(pid, syscall.SIGCONT) })
	}, func(p *envoy.Params) { p.StreamIdleTimeout = 2 * time.Second })
}

// interrupt runs a slow GET on each route and calls fail once the client
// has the first rewritten bytes while streamsub holds back the start of a
// match; then it checks what the client got.
func interrupt(t *testing.T, what string, fail func(*stack), opts ...func(*envoy.Params)) {
	const lines = 6
	var original string
	for i := range lines {
		original += demoorigin.SlowLine(i)
	}
	rewritten := standard.Replace(original)
	for _, route := range []string{"/", "/failopen/"} {
		t.Run(route, func(t *testing.T) {
			s := startStack(t, "", opts...)
			path := unique(route + "slow?ms=500&cut=1&n=" + strconv.Itoa(lines))
			resp, err := newClient().Get(s.envoy.url + path)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			// The first piece ends inside a host name: streamsub sends what
			// comes before it and holds the rest.
			first := make([]byte, 64)
			n, err := resp.Body.Read(first)
			if err != nil || !strings.HasPrefix(rewritten, string(first[:n])) {
				t.Fatalf("first bytes %q (%v): want the start of the rewrite", first[:n], err)
			}
			fail(s)
			t0 := time.Now()
			rest, err := io.ReadAll(resp.Body)
			got := string(first[:n]) + string(rest)
			t.Logf("%s %s after %s: status %d, read error %v after %v; body %q", what, route, what, resp.StatusCode, err, time.Since(t0), got)
			if err == nil && got != rewritten && got != original {
				t.Errorf("%s: a complete %d response that is neither the rewrite nor the original: %q", route, resp.StatusCode, got)
			}
			if err == nil && resp.StatusCode == 200 && got == rewritten {
				t.Errorf("%s: the whole rewrite arrived although streamsub was interrupted before its end", route)
			}
		})
	}
}

// internalRequest are request headers of the demo config's header_filter
// (and one that only looks like them, which must pass).
var internalRequest = map[string][]string{
	"X-Debug-Token":    {"secret1"},
	"X-Internal-Route": {"secret2"},
	"x-INTERNAL-user":  {"secret3"},
	"X-Keep":           {"kept"},
}

// checkNoInternalHeaders fails if the origin's echo of the request headers
// (body) shows an internal request header, or the response carries an
// internal response header of the demo config.
func checkNoInternalHeaders(t *testing.T, what string, resp *http.Response, body []byte) {
	t.Helper()
	for name, vs := range resp.Header {
		if l := strings.ToLower(name); l == "x-origin-debug" || l == "x-powered-by" || strings.HasPrefix(l, "x-internal-") {
			t.Errorf("%s: the client got %s: %q", what, name, vs)
		}
	}
	if resp.StatusCode != 200 {
		return // a local reply: nothing reached the origin's echo
	}
	echo := strings.ToLower(string(body))
	if strings.Contains(echo, "secret") {
		t.Errorf("%s: the origin saw an internal request header:\n%s", what, body)
	}
	if !strings.Contains(echo, "x-keep: kept") {
		t.Errorf("%s: the origin did not see X-Keep:\n%s", what, body)
	}
}

// TestInternalHeadersWhenStreamsubFails: no internal header of the config
// crosses Envoy in either direction when streamsub dies while a request is
// at the origin (the response headers then pass unprocessed on a fail-open
// route) or is down, on every route.
func TestInternalHeadersWhenStreamsubFails(t *testing.T) {
	s := startStack(t, "")
	c := newClient()
	routes := []string{"/", "/failopen/", "/bypass/"}
	for _, route := range routes {
		resp, body := do(t, c, "GET", s.envoy.url+unique(route+"headers"), internalRequest)
		checkNoInternalHeaders(t, route+" with streamsub up", resp, body)
	}

	// Dies mid-stream: the origin holds the response while streamsub is
	// killed; Envoy has no one to ask about the response headers.
	type result struct {
		resp *http.Response
		body []byte
	}
	done := map[string]chan result{}
	for _, route := range routes {
		ch := make(chan result, 1)
		done[route] = ch
		go func() {
			req, _ := http.NewRequest("GET", s.envoy.url+unique(route+"headers?delay=1500"), nil)
			for k, vs := range internalRequest {
				req.Header[k] = vs
			}
			resp, err := c.Do(req)
			if err != nil {
				ch <- result{}
				return
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			ch <- result{resp, b}
		}()
	}
	time.Sleep(500 * time.Millisecond) // the requests are at the origin
	if err := syscall.Kill(-s.streamsub.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for _, route := range routes {
		r := <-done[route]
		if r.resp == nil {
			t.Fatalf("%s: request failed", route)
		}
		t.Logf("%s, streamsub killed while the request was at the origin: %d", route, r.resp.StatusCode)
		checkNoInternalHeaders(t, route+" with streamsub killed mid-request", r.resp, r.body)
	}

	s.waitEnvoySeesStreamsub(false)
	for _, route := range routes {
		resp, body := do(t, c, "GET", s.envoy.url+unique(route+"headers"), internalRequest)
		t.Logf("%s, streamsub down: %d", route, resp.StatusCode)
		checkNoInternalHeaders(t, route+" with streamsub down", resp, body)
	}
}
