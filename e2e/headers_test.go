//go:build e2e

package e2e

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/streamsub/streamsub/internal/demoorigin"
)

// cookieDomain is the standard rule set's cookie-domain rule, for the
// header oracle.
var cookieDomain = regexp.MustCompile(`(?i)(domain=)\.example\.com\b`)

// standardHeader is an independent oracle for a header value rewritten by
// the standard rule set of examples/streamsub.yaml.
func standardHeader(v string) string {
	return cookieDomain.ReplaceAllString(standard.Replace(v), "${1}clone.example.net")
}

// noRedirects returns a client that hands back 3xx responses.
func noRedirects() *http.Client {
	c := newClient()
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return c
}

// wantHeader checks every value of name, in order.
func wantHeader(t *testing.T, h http.Header, name string, want ...string) {
	t.Helper()
	if got := h.Values(name); !slices.Equal(got, want) {
		t.Errorf("%s = %q\n   want %q", name, got, want)
	}
	for _, v := range h.Values(name) {
		if strings.Contains(v, "example.com") {
			t.Errorf("%s %q still names an example.com host", name, v)
		}
	}
}

// TestHeaderRewriting: response headers rewritten on a redirect (GET and
// HEAD), on a 304 and on 50 cookies, each value separate and in order;
// request headers mapped back to the origin.
func TestHeaderRewriting(t *testing.T) {
	s := startStack(t, "")
	c := noRedirects()
	const responseReplacements = `streamsub_header_replacements_total{direction="response",rule_set="standard"}`

	redirectCookies := make([]string, len(demoorigin.RedirectCookies))
	for i, v := range demoorigin.RedirectCookies {
		redirectCookies[i] = standardHeader(v)
	}
	for _, method := range []string{"GET", "HEAD"} {
		t.Run(method+" /redirect", func(t *testing.T) {
			before := s.metric(t, responseReplacements)
			resp, body := do(t, c, method, s.envoy.url+unique("/redirect"), nil)
			if resp.StatusCode != http.StatusFound || len(body) != 0 {
				t.Fatalf("status %d, body %q; want 302 without body", resp.StatusCode, body)
			}
			wantHeader(t, resp.Header, "Location", standardHeader(demoorigin.RedirectLocation))
			wantHeader(t, resp.Header, "Set-Cookie", redirectCookies...)
			wantHeader(t, resp.Header, "Link", standardHeader(demoorigin.RedirectLink))
			wantHeader(t, resp.Header, "Content-Security-Policy", standardHeader(demoorigin.RedirectCSP))
			// location 2, each cookie 1, link 1, CSP 1.
			if got := s.metric(t, responseReplacements) - before; got != 6 {
				t.Errorf("%s went up by %v, want 6", responseReplacements, got)
			}
		})
	}

	t.Run("50 set-cookie headers", func(t *testing.T) {
		resp, _ := do(t, c, "GET", s.envoy.url+unique("/cookies?n=50"), nil)
		var want []string
		for i := range 50 {
			want = append(want, standardHeader(demoorigin.Cookie(i)))
		}
		if resp.StatusCode != 200 {
			t.Fatalf("status %d", resp.StatusCode)
		}
		wantHeader(t, resp.Header, "Set-Cookie", want...)
	})

	t.Run("304 keeps its link rewritten", func(t *testing.T) {
		resp, _ := do(t, c, "GET", s.envoy.url+unique("/cached"), nil)
		etag := resp.Header.Get("Etag")
		wantHeader(t, resp.Header, "Link", standardHeader(demoorigin.CachedLink))
		resp, body := do(t, c, "GET", s.envoy.url+unique("/cached"), map[string][]string{"If-None-Match": {etag}})
		if resp.StatusCode != http.StatusNotModified || len(body) != 0 {
			t.Fatalf("revalidation with %s: status %d body %q, want 304", etag, resp.StatusCode, body)
		}
		wantHeader(t, resp.Header, "Link", standardHeader(demoorigin.CachedLink))
	})

	t.Run("request headers mapped back to the origin", func(t *testing.T) {
		const requestReplacements = `streamsub_header_replacements_total{direction="request",rule_set="standard"}`
		before := s.metric(t, requestReplacements)
		_, body := do(t, c, "GET", s.envoy.url+unique("/headers"), map[string][]string{
			"Referer": {"https://clone.example.net/a"},
			"Origin":  {"https://clone.example.net"},
			"X-Keep":  {"https://clone.example.net/kept"},
		})
		for _, want := range []string{"Referer: https://www.example.com/a\n", "Origin: https://www.example.com\n", "X-Keep: https://clone.example.net/kept\n"} {
			if !strings.Contains(string(body), want) {
				t.Errorf("origin did not see %q:\n%s", want, body)
			}
		}
		if got := s.metric(t, requestReplacements) - before; got != 2 {
			t.Errorf("%s went up by %v, want 2", requestReplacements, got)
		}
	})
}

// TestHeaderValueTooLong: with max_header_value_bytes 40 every rewritten
// header of /redirect is longer: none is sent, the originals stay, each is
// counted, and the stream logs it once.
func TestHeaderValueTooLong(t *testing.T) {
	example, err := os.ReadFile(exampleConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	configPath := filepath.Join(t.TempDir(), "streamsub.yaml")
	if err := os.WriteFile(configPath, append(example, "\nmax_header_value_bytes: 40\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, v := range append([]string{demoorigin.RedirectLocation, demoorigin.RedirectLink, demoorigin.RedirectCSP}, demoorigin.RedirectCookies...) {
		if len(standardHeader(v)) <= 40 {
			t.Fatalf("%q rewrites to %d bytes: not over the limit", v, len(standardHeader(v)))
		}
	}
	s := startStack(t, configPath)
	const rejected = `streamsub_header_rewrites_rejected_total{reason="too_long",rule_set="standard"}`
	before := s.metric(t, rejected)
	resp, _ := do(t, noRedirects(), "GET", s.envoy.url+unique("/redirect"), nil)
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("status %d", resp.StatusCode)
	}
	for name, want := range map[string][]string{
		"Location":                {demoorigin.RedirectLocation},
		"Set-Cookie":              demoorigin.RedirectCookies,
		"Link":                    {demoorigin.RedirectLink},
		"Content-Security-Policy": {demoorigin.RedirectCSP},
	} {
		if got := resp.Header.Values(name); !slices.Equal(got, want) {
			t.Errorf("%s = %q, want the origin's %q", name, got, want)
		}
	}
	if got := s.metric(t, rejected) - before; got != 5 {
		t.Errorf("%s went up by %v, want 5", rejected, got)
	}
	log, err := os.ReadFile(s.streamsub.logPath)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(log), "rewritten header value refused"); n != 1 {
		t.Errorf("%d log lines about refused values, want 1 (once per stream):\n%s", n, log)
	}
}

// rawOrigin serves canned HTTP/1.1 responses by path, written byte for byte
// (so they may carry what no Go server writes), on a free loopback port.
func rawOrigin(t *testing.T, responses map[string]string) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				conn.SetDeadline(time.Now().Add(10 * time.Second))
				req, err := http.ReadRequest(bufio.NewReader(conn))
				if err != nil {
					return
				}
				resp, ok := responses[req.URL.Path]
				if !ok {
					resp = "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"
				}
				conn.Write([]byte(resp))
			}()
		}
	}()
	return l.Addr().(*net.TCPAddr).Port
}

// TestHeaderInjectionAttempts: what an origin can put in a header value to
// make a rewrite produce CR or LF, through Envoy. Envoy refuses NUL and
// other control bytes (502) and folds an obs-fold line into one value, so
// streamsub never sees a raw CR, LF or NUL (a capture cannot produce what
// the value does not hold; the processor's unit tests cover the refusal);
// an encoded CR LF stays encoded: templates never decode.
func TestHeaderInjectionAttempts(t *testing.T) {
	redirect := func(location string) string {
		return "HTTP/1.1 302 Found\r\nLocation: " + location + "\r\nContent-Length: 0\r\n\r\n"
	}
	port := rawOrigin(t, map[string]string{
		"/encoded": redirect("https://www.example.com/a%0D%0ASet-Cookie:%20admin=1"),
		"/folded":  redirect("https://www.example.com/a\r\n Set-Cookie: admin=1"),
		"/nul":     redirect("https://www.example.com/a\x00Set-Cookie: admin=1"),
	})
	s := startStackWithOrigin(t, "", port)
	c := noRedirects()
	for _, tc := range []struct {
		path, location string
		status         int
	}{
		{"/encoded", "https://clone.example.net/a%0D%0ASet-Cookie:%20admin=1", http.StatusFound},
		{"/folded", "https://clone.example.net/a Set-Cookie: admin=1", http.StatusFound},
		{"/nul", "", http.StatusBadGateway},
	} {
		t.Run(tc.path, func(t *testing.T) {
			resp, body := do(t, c, "GET", s.envoy.url+unique(tc.path), nil)
			t.Logf("%s: %d location %q %q", tc.path, resp.StatusCode, resp.Header.Values("Location"), body)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.status)
			}
			if tc.location != "" {
				wantHeader(t, resp.Header, "Location", tc.location)
			}
			if cookies := resp.Header.Values("Set-Cookie"); len(cookies) > 0 {
				t.Errorf("set-cookie injected: %q", cookies)
			}
		})
	}
	for _, reason := range []string{"forbidden_byte", "too_long"} {
		sample := fmt.Sprintf(`streamsub_header_rewrites_rejected_total{reason=%q,rule_set="standard"}`, reason)
		if n := s.metric(t, sample); n != 0 {
			t.Errorf("%s = %v: nothing reached streamsub to refuse", sample, n)
		}
	}
}
