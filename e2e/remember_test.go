//go:build e2e

package e2e

import (
	"bytes"
	"net/http"
	"strconv"
	"testing"

	"github.com/streamsub/streamsub/internal/demoorigin"
)

// TestRememberedStatic runs the demo config's remember section through
// Envoy: a static file no rule matches is streamed once, then skipped with
// its body identical, its content-length and validators intact and no body
// call to streamsub; a page that matches is streamed every time.
func TestRememberedStatic(t *testing.T) {
	s := startStack(t, "")
	c := newClient()
	const remembered = `streamsub_bodies_skipped_total{reason="remembered_no_match"}`
	// Whether a body was streamed to streamsub: Envoy's access log counts
	// full-duplex body calls only some of the time, so streamsub's count.
	const streamed = `streamsub_bodies_rewritten_total{rule_set="standard"}`

	for _, name := range []string{"app.css", "app.js"} {
		t.Run(name, func(t *testing.T) {
			file, etag := demoorigin.StaticFile(name)
			path := unique("/static/" + name)
			before, streamedBefore := s.metric(t, remembered), s.metric(t, streamed)

			resp, body := do(t, c, "GET", s.envoy.url+path, nil)
			if resp.StatusCode != 200 || !bytes.Equal(body, file) {
				t.Fatalf("first response: status %d, %d bytes; want 200 and the file (%d bytes)", resp.StatusCode, len(body), len(file))
			}
			if n := s.metric(t, streamed); n != streamedBefore+1 {
				t.Fatalf("first response: %s went %v → %v; it must be streamed to be remembered", streamed, streamedBefore, n)
			}
			if resp.Header.Get("Etag") != "W/"+etag {
				t.Errorf("first response: etag %q, want the weakened %q (streamed bodies may change)", resp.Header.Get("Etag"), "W/"+etag)
			}

			resp, body = do(t, c, "GET", s.envoy.url+path, nil)
			if resp.StatusCode != 200 || !bytes.Equal(body, file) {
				t.Fatalf("second response: status %d, %d bytes; want 200 and the file", resp.StatusCode, len(body))
			}
			if after := s.metric(t, remembered); after != before+1 {
				t.Errorf("%s went %v → %v, want +1", remembered, before, after)
			}
			if calls := s.bodyCallsN(t, path, 2); calls != "-" || s.metric(t, streamed) != streamedBefore+1 {
				t.Errorf("second response: %s body calls to streamsub, %s %v; want none (-) and no change", calls, streamed, s.metric(t, streamed))
			}
			h := resp.Header
			if h.Get("Content-Length") != strconv.Itoa(len(file)) || h.Get("Etag") != etag ||
				h.Get("Last-Modified") != demoorigin.Modified.Format(http.TimeFormat) {
				t.Errorf("second response: content-length %q, etag %q, last-modified %q; want the origin's %d, %s, %s",
					h.Get("Content-Length"), h.Get("Etag"), h.Get("Last-Modified"),
					len(file), etag, demoorigin.Modified.Format(http.TimeFormat))
			}
		})
	}

	t.Run("a page that matches is never skipped", func(t *testing.T) {
		path := unique("/cached")
		before := s.metric(t, remembered)
		for i := 1; i <= 3; i++ {
			streamedBefore := s.metric(t, streamed)
			resp, body := do(t, c, "GET", s.envoy.url+path, nil)
			if want := standard.Replace(demoorigin.CachedHTML); resp.StatusCode != 200 || string(body) != want {
				t.Fatalf("response %d: status %d, body %q; want 200, %q", i, resp.StatusCode, body, want)
			}
			if n := s.metric(t, streamed); n != streamedBefore+1 {
				t.Errorf("response %d: not streamed to streamsub (%s %v → %v)", i, streamed, streamedBefore, n)
			}
		}
		if after := s.metric(t, remembered); after != before {
			t.Errorf("%s went %v → %v, want unchanged", remembered, before, after)
		}
	})

	if n := s.metric(t, "streamsub_remembered_entries"); n < 3 {
		t.Errorf("streamsub_remembered_entries = %v, want at least 3 (app.css, app.js, /cached)", n)
	}
}
