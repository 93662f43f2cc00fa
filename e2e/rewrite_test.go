//go:build e2e

package e2e

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/streamsub/streamsub/internal/demoorigin"
)

// Independent oracles for the rule sets of examples/streamsub.yaml. For
// literal rules leftmost-first is what strings.Replacer does (earliest
// match, then argument order); beta's regex rules are expanded by Go's
// regexp as one leftmost-first alternation.
var (
	standardRules = []string{
		"https://www.example.com", "https://clone.example.net",
		"www.example.com", "clone.example.net",
		"UA-12345-1", "UA-99999-9",
	}
	standard = strings.NewReplacer(standardRules...)
	partner  = strings.NewReplacer(append(standardRules, "Example Corp", "Partner Corp")...)
	betaRe   = regexp.MustCompile(`(?i:https?://www\.example\.com)|www\.example\.com|UA-(\d+)-1`)
)

func beta(s string) string {
	return betaRe.ReplaceAllStringFunc(s, func(m string) string {
		switch {
		case strings.HasPrefix(strings.ToLower(m), "http"):
			return "https://beta.example.net"
		case strings.HasPrefix(m, "UA-"):
			return "UA-" + betaRe.FindStringSubmatch(m)[1] + "-2"
		default:
			return "beta.example.net"
		}
	})
}

// TestRewrite runs the rewrite cases against one stack with the demo config.
func TestRewrite(t *testing.T) {
	s := startStack(t, "")
	c := newClient()
	get := func(t *testing.T, path string, hdr map[string][]string) (*http.Response, []byte) {
		t.Helper()
		return do(t, c, "GET", s.envoy.url+path, hdr)
	}
	wantBody := func(t *testing.T, got []byte, want string) {
		t.Helper()
		if string(got) != want {
			t.Fatalf("body differs\n got %q\nwant %q", got, want)
		}
	}
	// Sanity: the rules match the pages, so equality below is meaningful.
	if standard.Replace(demoorigin.IndexHTML) == demoorigin.IndexHTML {
		t.Fatal("oracle does not change the index page")
	}

	t.Run("match cut across origin flushes", func(t *testing.T) {
		// streamsub's count of chunks: Envoy's access log counts full-duplex
		// body calls only some of the time.
		const chunks = "streamsub_chunk_processing_seconds_count"
		before := s.metric(t, chunks)
		resp, body := get(t, unique("/split"), nil)
		if resp.StatusCode != 200 {
			t.Fatalf("status %d", resp.StatusCode)
		}
		wantBody(t, body, standard.Replace(strings.Join(demoorigin.SplitPieces(), "")))
		calls := s.metric(t, chunks) - before
		t.Logf("body chunks streamsub rewrote for /split: %v (origin flushed %d pieces)", calls, len(demoorigin.SplitPieces()))
		if calls < 2 {
			t.Errorf("body reached streamsub in %v chunks: the flushes were not exercised", calls)
		}
	})

	t.Run("slow origin, pauses between flushes", func(t *testing.T) {
		_, body := get(t, unique("/slow?ms=300&n=4"), nil)
		var want strings.Builder
		for i := range 4 {
			fmt.Fprintf(&want, "<p>%d: %s</p>\n", i, demoorigin.OriginHost)
		}
		wantBody(t, body, standard.Replace(want.String()))
	})

	t.Run("several rules, rewritten headers", func(t *testing.T) {
		resp, body := get(t, unique("/"), nil)
		wantBody(t, body, standard.Replace(demoorigin.IndexHTML))
		if cl := resp.Header.Get("Content-Length"); cl != "" {
			t.Errorf("content-length %s on a rewritten body", cl)
		}
	})

	t.Run("unknown host gets the * rule set", func(t *testing.T) {
		_, body := get(t, unique("/"), map[string][]string{"Host": {"other.example.test"}})
		wantBody(t, body, standard.Replace(demoorigin.IndexHTML))
	})

	t.Run("host-based rule set", func(t *testing.T) {
		_, body := get(t, unique("/"), map[string][]string{"Host": {"partner.example.test"}})
		wantBody(t, body, partner.Replace(demoorigin.IndexHTML))
	})

	t.Run("metadata-based rule set (Envoy vhost initial_metadata)", func(t *testing.T) {
		_, body := get(t, unique("/"), map[string][]string{"Host": {"beta.example.test"}})
		wantBody(t, body, beta(demoorigin.IndexHTML))
	})

	t.Run("PNG byte-identical, never streamed to streamsub", func(t *testing.T) {
		const skipped = `streamsub_bodies_skipped_total{reason="content_type"}`
		before := s.metric(t, skipped)
		path := unique("/logo.png")
		resp, body := get(t, path, nil)
		if after := s.metric(t, skipped); after != before+1 {
			t.Errorf("%s went %v → %v, want +1", skipped, before, after)
		}
		t.Logf("PNG: %d bytes, content-length %q", len(body), resp.Header.Get("Content-Length"))
		if !bytes.Equal(body, demoorigin.LogoPNG()) {
			t.Fatalf("PNG changed: %d bytes, want %d", len(body), len(demoorigin.LogoPNG()))
		}
		if ct := resp.Header.Get("Content-Type"); ct != "image/png" {
			t.Errorf("content-type %q", ct)
		}
		if calls := s.bodyCalls(t, path); calls != "-" {
			t.Errorf("ext_proc body calls %s for a PNG, want none (-)", calls)
		}
	})

	t.Run("gzip to a client that accepts it", func(t *testing.T) {
		resp, body := get(t, unique("/"), map[string][]string{"Accept-Encoding": {"gzip"}})
		plain := gunzip(t, resp, body)
		wantBody(t, plain, standard.Replace(demoorigin.IndexHTML))
	})

	t.Run("plain to a client that does not accept gzip", func(t *testing.T) {
		resp, body := get(t, unique("/"), nil)
		if ce := resp.Header.Get("Content-Encoding"); ce != "" {
			t.Fatalf("content-encoding %q, want none", ce)
		}
		wantBody(t, body, standard.Replace(demoorigin.IndexHTML))
	})

	t.Run("internal request headers never reach the origin", func(t *testing.T) {
		_, body := get(t, unique("/headers"), map[string][]string{
			"X-Debug-Token":    {"secret1", "secret2"},
			"x-DEBUG-token":    {"secret3"},
			"X-Internal-Route": {"secret4"},
			"x-internal-USER":  {"secret5", "secret6"},
			"X-Internal":       {"kept-no-dash"},
			"X-Keep":           {"kept"},
		})
		echo := strings.ToLower(string(body))
		for _, bad := range []string{"x-debug-token", "x-internal-", "secret"} {
			if strings.Contains(echo, bad) {
				t.Errorf("origin saw %q:\n%s", bad, body)
			}
		}
		for _, good := range []string{"x-keep: kept", "x-internal: kept-no-dash"} {
			if !strings.Contains(echo, good) {
				t.Errorf("origin did not see %q:\n%s", good, body)
			}
		}
	})

	t.Run("internal response headers never reach the client", func(t *testing.T) {
		resp, _ := get(t, unique("/headers"), nil)
		for name := range resp.Header {
			l := strings.ToLower(name)
			if l == "x-origin-debug" || strings.HasPrefix(l, "x-internal-") {
				t.Errorf("client got %s: %q", name, resp.Header[name])
			}
		}
		if resp.Header.Get("X-Public") != "kept" {
			t.Errorf("X-Public = %q, want kept", resp.Header.Get("X-Public"))
		}
	})

	t.Run("etag weakened, last-modified and content-length gone", func(t *testing.T) {
		resp, body := get(t, unique("/cached"), nil)
		wantBody(t, body, standard.Replace(demoorigin.CachedHTML))
		if et := resp.Header.Get("Etag"); et != "W/"+demoorigin.CachedETag {
			t.Errorf("etag %q, want W/%s", et, demoorigin.CachedETag)
		}
		if lm := resp.Header.Get("Last-Modified"); lm != "" {
			t.Errorf("last-modified %q kept", lm)
		}
		if cl := resp.Header.Get("Content-Length"); cl != "" {
			t.Errorf("content-length %s kept", cl)
		}
	})

	// Bodiless responses: status and headers pass, no body goes to streamsub.
	bodiless := []struct {
		name, method, path string
		hdr                map[string][]string
		status             int
	}{
		{"HEAD", "HEAD", "/", nil, 200},
		{"204", "GET", "/status/204", nil, 204},
		{"304 from origin", "GET", "/status/304", nil, 304},
		{"304 on revalidation", "GET", "/cached", map[string][]string{"If-None-Match": {"W/" + demoorigin.CachedETag}}, 304},
		{"empty 200", "GET", "/empty", nil, 200},
	}
	for _, tc := range bodiless {
		t.Run("untouched "+tc.name, func(t *testing.T) {
			path := unique(tc.path)
			resp, body := do(t, c, tc.method, s.envoy.url+path, tc.hdr)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.status)
			}
			if len(body) != 0 {
				t.Errorf("body %q, want none", body)
			}
			if calls := s.bodyCalls(t, path); calls != "-" && calls != "0" {
				t.Errorf("ext_proc body calls %s, want none", calls)
			}
			t.Logf("%s %s: %d content-length=%q", tc.method, tc.path, resp.StatusCode, resp.Header.Get("Content-Length"))
		})
	}
}

// gunzip checks that resp is gzip-encoded and returns its body decoded.
func gunzip(t *testing.T, resp *http.Response, body []byte) []byte {
	t.Helper()
	if ce := resp.Header.Get("Content-Encoding"); ce != "gzip" {
		t.Fatalf("content-encoding %q, want gzip", ce)
	}
	zr, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	plain, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return plain
}
