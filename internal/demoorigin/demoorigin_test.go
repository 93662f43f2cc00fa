package demoorigin

import (
	"bytes"
	"compress/gzip"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func get(t *testing.T, srv *httptest.Server, method, path string, hdr http.Header) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, vs := range hdr {
		req.Header[k] = vs
	}
	tr := &http.Transport{DisableCompression: true}
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

func TestRoutes(t *testing.T) {
	srv := httptest.NewServer(Handler())
	defer srv.Close()
	tests := []struct {
		method, path string
		hdr          http.Header
		status       int
		ctype        string
		contains     []string
		emptyBody    bool
	}{
		{method: "GET", path: "/", status: 200, ctype: "text/html", contains: []string{OriginURL, OriginHost + "<", Analytics, Brand}},
		{method: "HEAD", path: "/", status: 200, ctype: "text/html", emptyBody: true},
		{method: "GET", path: "/headers", hdr: http.Header{"X-Debug-Token": {"a", "b"}}, status: 200, ctype: "text/plain",
			contains: []string{"X-Debug-Token: a\n", "X-Debug-Token: b\n", "Host: 127.0.0.1:"}},
		{method: "GET", path: "/logo.png", status: 200, ctype: "image/png", contains: []string{OriginURL}},
		{method: "GET", path: "/split", status: 200, ctype: "text/html", contains: []string{OriginURL}},
		{method: "GET", path: "/cached", status: 200, ctype: "text/html", contains: []string{CachedHTML}},
		{method: "GET", path: "/cached", hdr: http.Header{"If-None-Match": {CachedETag}}, status: 304, emptyBody: true},
		{method: "GET", path: "/cached", hdr: http.Header{"If-Modified-Since": {Modified.Format(http.TimeFormat)}}, status: 304, emptyBody: true},
		{method: "GET", path: "/slow?ms=1&n=3", status: 200, ctype: "text/html", contains: []string{"<p>2: " + OriginHost}},
		{method: "GET", path: "/comment?size=10000", status: 200, ctype: "text/html", contains: []string{CommentPage(10000)}},
		{method: "GET", path: "/comment?size=x", status: 400},
		{method: "GET", path: "/empty", status: 200, ctype: "text/html", emptyBody: true},
		{method: "GET", path: "/status/204", status: 204, emptyBody: true},
		{method: "GET", path: "/status/304", status: 304, emptyBody: true},
		{method: "GET", path: "/status/503", status: 503, ctype: "text/html", emptyBody: true},
		{method: "GET", path: "/status/abc", status: 400},
		{method: "GET", path: "/big?size=-1", status: 400},
		{method: "GET", path: "/nope", status: 404},
	}
	for _, tc := range tests {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			resp, body := get(t, srv, tc.method, tc.path, tc.hdr)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d (%s)", resp.StatusCode, tc.status, body)
			}
			if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, tc.ctype) {
				t.Errorf("content-type %q, want prefix %q", ct, tc.ctype)
			}
			for _, s := range tc.contains {
				if !bytes.Contains(body, []byte(s)) {
					t.Errorf("body lacks %q:\n%s", s, body)
				}
			}
			if tc.emptyBody && len(body) != 0 {
				t.Errorf("body %q, want empty", body)
			}
		})
	}
}

func TestHeadersSetsInternalResponseHeaders(t *testing.T) {
	srv := httptest.NewServer(Handler())
	defer srv.Close()
	resp, _ := get(t, srv, "GET", "/headers", nil)
	if got := resp.Header.Values("X-Internal-Trace"); len(got) != 2 {
		t.Errorf("X-Internal-Trace = %q, want two values", got)
	}
	if resp.Header.Get("X-Origin-Debug") == "" {
		t.Error("X-Origin-Debug missing")
	}
}

func TestLogoIsPNG(t *testing.T) {
	img, err := png.Decode(bytes.NewReader(LogoPNG()))
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	if b := img.Bounds(); b.Dx() != 64 || b.Dy() != 64 {
		t.Errorf("bounds %v", b)
	}
}

func TestGzipDecodes(t *testing.T) {
	srv := httptest.NewServer(Handler())
	defer srv.Close()
	resp, body := get(t, srv, "GET", "/gzip", nil)
	if ce := resp.Header.Get("Content-Encoding"); ce != "gzip" {
		t.Fatalf("content-encoding %q", ce)
	}
	zr, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	plain, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if string(plain) != GzipHTML {
		t.Errorf("plain %q, want %q", plain, GzipHTML)
	}
}

// flushCounter records writes and the byte offsets where flush was called.
type flushCounter struct {
	bytes.Buffer
	flushes []int
}

func (f *flushCounter) flush() { f.flushes = append(f.flushes, f.Len()) }

func TestBig(t *testing.T) {
	for _, size := range []int64{0, 1, 1000, 32 << 10, 1<<20 + 7} {
		var a, b flushCounter
		if err := Big(&a, size, a.flush); err != nil {
			t.Fatal(err)
		}
		Big(&b, size, b.flush)
		if int64(a.Len()) != size {
			t.Fatalf("size %d: wrote %d bytes", size, a.Len())
		}
		if !bytes.Equal(a.Bytes(), b.Bytes()) {
			t.Fatalf("size %d: not deterministic", size)
		}
		if size >= 1<<20 {
			if len(a.flushes) < 30 {
				t.Errorf("size %d: %d flushes, want one per 32 KiB", size, len(a.flushes))
			}
			// Matches throughout: in every 64 KiB window.
			for off := 0; off+64<<10 <= a.Len(); off += 64 << 10 {
				w := a.Bytes()[off : off+64<<10]
				for _, m := range []string{OriginURL, OriginHost, Analytics, Brand} {
					if !bytes.Contains(w, []byte(m)) {
						t.Fatalf("no %q in window at %d", m, off)
					}
				}
			}
		}
	}
}

// TestSplitCutsEveryMatch checks that each demo match occurs in /split cut
// at every inner position by a flush boundary.
func TestSplitCutsEveryMatch(t *testing.T) {
	pieces := SplitPieces()
	body := strings.Join(pieces, "")
	cuts := map[int]bool{}
	off := 0
	for _, p := range pieces {
		off += len(p)
		cuts[off] = true
	}
	for _, m := range []string{OriginURL, OriginHost, Analytics} {
		cutAt := map[int]bool{}
		for i := 0; ; {
			j := strings.Index(body[i:], m)
			if j < 0 {
				break
			}
			start := i + j
			for k := 1; k < len(m); k++ {
				if cuts[start+k] {
					cutAt[k] = true
				}
			}
			i = start + 1
		}
		if len(cutAt) != len(m)-1 {
			t.Errorf("%q is cut at %d of %d inner positions", m, len(cutAt), len(m)-1)
		}
	}
}
