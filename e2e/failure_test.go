//go:build e2e

package e2e

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"syscall"
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
// streaming: on the fail-closed route the client must not receive a complete
// response; on the fail-open route the rest of the body passes unmodified.
func TestStreamsubDiesMidBody(t *testing.T) {
	const lines = 6
	line := func(i int) string { return fmt.Sprintf("<p>%d: %s</p>\n", i, demoorigin.OriginHost) }
	for _, route := range []string{"/", "/failopen/"} {
		t.Run(route, func(t *testing.T) {
			s := startStack(t, "")
			resp, err := newClient().Get(s.envoy.url + route + unique("slow?ms=400&n="+strconv.Itoa(lines)))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			br := bufio.NewReader(resp.Body)
			first, err := br.ReadString('\n')
			if err != nil {
				t.Fatalf("first line: %v", err)
			}
			if first != standard.Replace(line(0)) {
				t.Fatalf("first line %q not rewritten", first)
			}
			if err := syscall.Kill(-s.streamsub.cmd.Process.Pid, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			rest, err := io.ReadAll(br)
			got := first + string(rest)
			t.Logf("%s: after SIGKILL: read error %v; body %q", route, err, got)
			if route == "/" {
				if err == nil && strings.Count(got, "\n") == lines {
					t.Errorf("fail-closed route delivered a complete body after streamsub died: %q", got)
				}
				return
			}
			if err != nil {
				t.Fatalf("fail-open route: %v", err)
			}
			// Every line arrives, rewritten before the kill, unmodified after it;
			// the last one certainly after it.
			gotLines := strings.SplitAfter(got, "\n")
			gotLines = gotLines[:len(gotLines)-1]
			if len(gotLines) != lines {
				t.Fatalf("fail-open route: %d lines, want %d: %q", len(gotLines), lines, got)
			}
			for i, l := range gotLines {
				if l != line(i) && l != standard.Replace(line(i)) {
					t.Errorf("line %d: %q", i, l)
				}
			}
			if gotLines[lines-1] != line(lines-1) {
				t.Errorf("last line %q: want it unmodified (streamsub is dead)", gotLines[lines-1])
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
