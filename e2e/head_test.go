//go:build e2e

package e2e

import (
	"net/http"
	"strconv"
	"testing"

	"github.com/streamsub/streamsub/internal/demoorigin"
)

// representation is what HEAD and 304 must agree on with GET (RFC 9110
// §9.3.2, §15.4.5): the headers that describe the body.
type representation struct {
	contentLength, etag, lastModified string
}

func headersOf(r *http.Response) representation {
	return representation{r.Header.Get("Content-Length"), r.Header.Get("Etag"), r.Header.Get("Last-Modified")}
}

// TestHeadAndNotModifiedAgreeWithGet: a HEAD of a page that GET rewrites
// carries the headers GET does (no origin content-length, the weak ETag, no
// last-modified), and so does the 304 that a revalidation with that ETag
// gets; a HEAD of a body that is not rewritten keeps the origin's.
func TestHeadAndNotModifiedAgreeWithGet(t *testing.T) {
	s := startStack(t, "")
	c := newClient()
	for _, path := range []string{"/", "/cached", "/logo.png"} {
		t.Run(path, func(t *testing.T) {
			get, body := do(t, c, "GET", s.envoy.url+unique(path), nil)
			head, headBody := do(t, c, "HEAD", s.envoy.url+unique(path), nil)
			if get.StatusCode != 200 || head.StatusCode != 200 || len(headBody) != 0 {
				t.Fatalf("GET %d, HEAD %d with %d body bytes", get.StatusCode, head.StatusCode, len(headBody))
			}
			g, h := headersOf(get), headersOf(head)
			t.Logf("GET %+v (%d bytes), HEAD %+v", g, len(body), h)
			if h != g {
				t.Errorf("HEAD %+v, GET %+v", h, g)
			}
			if g.contentLength != "" && g.contentLength != strconv.Itoa(len(body)) {
				t.Errorf("GET content-length %s for %d bytes", g.contentLength, len(body))
			}
		})
	}

	t.Run("304 revalidating the rewritten /cached", func(t *testing.T) {
		get, _ := do(t, c, "GET", s.envoy.url+unique("/cached"), nil)
		etag := get.Header.Get("Etag")
		if etag != "W/"+demoorigin.CachedETag {
			t.Fatalf("GET etag %q, want W/%s", etag, demoorigin.CachedETag)
		}
		for _, method := range []string{"GET", "HEAD"} {
			resp, body := do(t, c, method, s.envoy.url+unique("/cached"), map[string][]string{"If-None-Match": {etag}})
			r := headersOf(resp)
			t.Logf("%s: %d %+v", method, resp.StatusCode, r)
			if resp.StatusCode != 304 || len(body) != 0 {
				t.Fatalf("%s: status %d with %d body bytes, want 304", method, resp.StatusCode, len(body))
			}
			if want := (representation{etag: etag}); r != want {
				t.Errorf("%s 304 %+v, want %+v (the 200's validators)", method, r, want)
			}
		}
	})
}
