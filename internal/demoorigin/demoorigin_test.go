package demoorigin

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"fmt"
	"image/png"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/andybalholm/brotli"

	"github.com/streamsub/streamsub/config/load"
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
	c := &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse // the redirect is what is tested
	}}
	resp, err := c.Do(req)
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
		// What a client that got the rewritten page (weakened ETag) sends.
		{method: "GET", path: "/cached", hdr: http.Header{"If-None-Match": {"W/" + CachedETag}}, status: 304, emptyBody: true},
		{method: "GET", path: "/cached", hdr: http.Header{"If-None-Match": {`"other"`}}, status: 200, ctype: "text/html", contains: []string{CachedHTML}},
		{method: "GET", path: "/cached", hdr: http.Header{"If-Modified-Since": {Modified.Format(http.TimeFormat)}}, status: 304, emptyBody: true},
		{method: "GET", path: "/slow?ms=1&n=3", status: 200, ctype: "text/html", contains: []string{"<p>2: " + OriginHost}},
		{method: "GET", path: "/slow?ms=1&n=3&cut=1", status: 200, ctype: "text/html", contains: []string{SlowLine(0) + SlowLine(1) + SlowLine(2)}},
		{method: "GET", path: "/headers?delay=20", status: 200, ctype: "text/plain", contains: []string{"Host: 127.0.0.1:"}},
		{method: "GET", path: "/comment?size=10000", status: 200, ctype: "text/html", contains: []string{CommentPage(10000)}},
		{method: "GET", path: "/comment?size=x", status: 400},
		{method: "GET", path: "/empty", status: 200, ctype: "text/html", emptyBody: true},
		{method: "GET", path: "/status/204", status: 204, emptyBody: true},
		{method: "GET", path: "/status/304", status: 304, emptyBody: true},
		{method: "GET", path: "/status/503", status: 503, ctype: "text/html", emptyBody: true},
		{method: "GET", path: "/status/abc", status: 400},
		{method: "GET", path: "/big?size=-1", status: 400},
		{method: "GET", path: "/trickle?size=3000", status: 200, ctype: "text/html", contains: []string{string(bigPage(3000))}},
		{method: "GET", path: "/trickle?size=3000&chunk=7", status: 200, ctype: "text/html", contains: []string{string(bigPage(3000))}},
		{method: "GET", path: "/trickle?size=3000&chunk=500&pause=50", status: 200, ctype: "text/html", contains: []string{string(bigPage(3000))}},
		{method: "GET", path: "/trickle?size=3000&chunk=0", status: 400},
		{method: "GET", path: "/trickle?size=3000&chunk=", status: 400},
		{method: "GET", path: "/trickle?size=3000&pause=-1", status: 400},
		{method: "GET", path: "/trickle?size=3000&pause=10001", status: 400},
		{method: "GET", path: "/trickle?size=3000&pause=1ms", status: 400},
		{method: "GET", path: "/trickle?size=3000&chunk=x", status: 400},
		{method: "GET", path: "/trickle?size=x", status: 400},
		{method: "GET", path: "/redirect", status: 302, emptyBody: true},
		{method: "HEAD", path: "/redirect", status: 302, emptyBody: true},
		{method: "GET", path: "/cookies?n=3", status: 200, ctype: "text/plain", contains: []string{"3 cookies"}},
		{method: "GET", path: "/cookies?n=201", status: 400},
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

// TestAlwaysEncoded checks that /gzip-always, /br-always and /deflate are
// encoded whatever the request accepts, and decode to their plain text.
func TestAlwaysEncoded(t *testing.T) {
	srv := httptest.NewServer(Handler())
	defer srv.Close()
	decoders := map[string]func(io.Reader) (io.Reader, error){
		"gzip":    func(r io.Reader) (io.Reader, error) { return gzip.NewReader(r) },
		"br":      func(r io.Reader) (io.Reader, error) { return brotli.NewReader(r), nil },
		"deflate": func(r io.Reader) (io.Reader, error) { return zlib.NewReader(r) },
	}
	plainText := map[string]string{"/gzip-always": AlwaysHTML, "/br-always": AlwaysHTML, "/deflate": DeflateHTML}
	for path, enc := range map[string]string{"/gzip-always": "gzip", "/br-always": "br", "/deflate": "deflate"} {
		for _, accept := range []string{"", "identity", "gzip", "br", "deflate"} {
			t.Run(path+" accept-encoding "+accept, func(t *testing.T) {
				var hdr http.Header
				if accept != "" {
					hdr = http.Header{"Accept-Encoding": {accept}}
				}
				resp, body := get(t, srv, "GET", path, hdr)
				if ce := resp.Header.Get("Content-Encoding"); ce != enc {
					t.Fatalf("content-encoding %q, want %q", ce, enc)
				}
				zr, err := decoders[enc](bytes.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				plain, err := io.ReadAll(zr)
				if err != nil {
					t.Fatal(err)
				}
				if string(plain) != plainText[path] {
					t.Errorf("decoded %q, want %q", plain, plainText[path])
				}
			})
		}
	}
	for _, m := range []string{OriginURL, Analytics} {
		if !strings.Contains(AlwaysHTML, m) {
			t.Errorf("AlwaysHTML lacks %q", m)
		}
	}
}

// TestOriginHeaders checks the headers that name the origin: /redirect's,
// in order and separate; /cookies's; /cached's link, on its 304 too.
func TestOriginHeaders(t *testing.T) {
	srv := httptest.NewServer(Handler())
	defer srv.Close()
	resp, _ := get(t, srv, "GET", "/redirect", nil)
	want := map[string][]string{
		"Location":                {RedirectLocation},
		"Set-Cookie":              RedirectCookies,
		"Link":                    {RedirectLink},
		"Content-Security-Policy": {RedirectCSP},
	}
	for name, vs := range want {
		if got := resp.Header.Values(name); strings.Join(got, "\n") != strings.Join(vs, "\n") {
			t.Errorf("/redirect %s = %q, want %q", name, got, vs)
		}
		for _, v := range vs {
			if !strings.Contains(v, "example.com") {
				t.Errorf("/redirect %s %q does not name the origin", name, v)
			}
		}
	}
	if !strings.Contains(RedirectCookies[1], "Domain=.example.com") {
		t.Errorf("second cookie %q is not scoped to the whole domain", RedirectCookies[1])
	}

	resp, _ = get(t, srv, "GET", "/cookies?n=50", nil)
	got := resp.Header.Values("Set-Cookie")
	if len(got) != 50 {
		t.Fatalf("/cookies?n=50: %d set-cookie headers", len(got))
	}
	for i, c := range got {
		if c != Cookie(i) {
			t.Errorf("cookie %d = %q, want %q", i, c, Cookie(i))
		}
	}

	for _, hdr := range []http.Header{nil, {"If-None-Match": {CachedETag}}} {
		resp, _ = get(t, srv, "GET", "/cached", hdr)
		if l := resp.Header.Get("Link"); l != CachedLink {
			t.Errorf("/cached (%d) link %q, want %q", resp.StatusCode, l, CachedLink)
		}
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

// bigPage is the reference /big body of size bytes: BigBlocks end to end.
func bigPage(size int) []byte {
	var b []byte
	for i := 0; len(b) < size; i++ {
		b = append(b, BigBlock(i)...)
	}
	return b[:size]
}

func TestTrickle(t *testing.T) {
	tests := []struct {
		size  int64
		chunk int
	}{
		{0, 1}, {1, 1}, {1000, 1}, {1000, 7}, {5000, 1024}, {32 << 10, BigFlush},
		{100000, BigFlush}, {1<<20 + 7, BigFlush}, {1<<20 + 7, 4096}, {3000, 1 << 20},
	}
	defer func(max int) { maxCachedPage = max; resetPageCache() }(maxCachedPage)
	for _, pass := range []struct {
		name  string
		cache int
		reset bool
	}{
		{"cache filled", 64 << 20, true},
		{"from the cache", 64 << 20, false},
		{"past a small cache", 5000, true}, // cached head, generated rest
	} {
		maxCachedPage = pass.cache
		if pass.reset {
			resetPageCache()
		}
		for _, tc := range tests {
			var got flushCounter
			if err := Trickle(&got, tc.size, tc.chunk, got.flush); err != nil {
				t.Fatal(err)
			}
			if want := bigPage(int(tc.size)); !bytes.Equal(got.Bytes(), want) {
				t.Fatalf("%s: size %d chunk %d: body differs from the BigBlocks (%d bytes, want %d)", pass.name, tc.size, tc.chunk, got.Len(), len(want))
			}
			if len(got.flushes) != int(tc.size)/tc.chunk {
				t.Errorf("%s: size %d chunk %d: %d flushes, want %d", pass.name, tc.size, tc.chunk, len(got.flushes), int(tc.size)/tc.chunk)
			}
			for k, off := range got.flushes {
				if off != (k+1)*tc.chunk {
					t.Fatalf("%s: size %d chunk %d: flush %d at byte %d, want %d", pass.name, tc.size, tc.chunk, k, off, (k+1)*tc.chunk)
				}
			}
		}
		if len(pageCache.b) > pass.cache+len(BigBlock(0))*2 {
			t.Errorf("%s: cache holds %d bytes, want at most %d and a block", pass.name, len(pageCache.b), pass.cache)
		}
	}
}

func resetPageCache() {
	pageCache.Lock()
	pageCache.b, pageCache.blocks = nil, 0
	pageCache.Unlock()
}

func TestBig(t *testing.T) {
	var a, b flushCounter
	const size = 1<<20 + 7
	if err := Big(&a, size, a.flush); err != nil {
		t.Fatal(err)
	}
	Trickle(&b, size, BigFlush, b.flush)
	if !bytes.Equal(a.Bytes(), b.Bytes()) || len(a.flushes) != len(b.flushes) {
		t.Fatalf("Big is not Trickle with chunk %d", BigFlush)
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

// TestTrickleRouteChunks reads /trickle's raw chunked encoding: each flush
// must reach the wire as a chunk of its own.
func TestTrickleRouteChunks(t *testing.T) {
	srv := httptest.NewServer(Handler())
	defer srv.Close()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	const size, chunk = 5000, 100
	fmt.Fprintf(conn, "GET /trickle?size=%d&chunk=%d HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", size, chunk)
	raw, err := io.ReadAll(conn)
	if err != nil {
		t.Fatal(err)
	}
	_, body, ok := bytes.Cut(raw, []byte("\r\n\r\n"))
	if !ok || !bytes.Contains(raw, []byte("Transfer-Encoding: chunked")) {
		t.Fatalf("not a chunked response:\n%.300s", raw)
	}
	var sizes []int64
	var page []byte
	for {
		line, rest, ok := bytes.Cut(body, []byte("\r\n"))
		if !ok {
			t.Fatalf("truncated chunk header after %d chunks", len(sizes))
		}
		n, err := strconv.ParseInt(string(line), 16, 64)
		if err != nil || int64(len(rest)) < n+2 {
			t.Fatalf("bad chunk header %q after %d chunks", line, len(sizes))
		}
		if n == 0 {
			break
		}
		sizes = append(sizes, n)
		page = append(page, rest[:n]...)
		body = rest[n+2:]
	}
	if !bytes.Equal(page, bigPage(size)) {
		t.Fatal("body differs from /big's")
	}
	if len(sizes) != size/chunk {
		t.Fatalf("%d chunks, want %d: %v", len(sizes), size/chunk, sizes)
	}
	for i, n := range sizes {
		if n != chunk {
			t.Fatalf("chunk %d has %d bytes, want %d", i, n, chunk)
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

// TestStatic: the static files are served whole with their validators,
// revalidate to 304, and carry nothing any rule set of the demo config
// matches.
func TestStatic(t *testing.T) {
	srv := httptest.NewServer(Handler())
	defer srv.Close()
	cfg, err := load.File(filepath.Join("..", "..", "examples", "streamsub.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, ctype string }{
		{"app.css", "text/css"},
		{"app.js", "application/javascript"},
	} {
		body, etag := StaticFile(tc.name)
		if len(body) != StaticSize || !strings.HasPrefix(etag, `"`) {
			t.Fatalf("%s: %d bytes, etag %s; want %d bytes and a strong etag", tc.name, len(body), etag, StaticSize)
		}
		resp, got := get(t, srv, "GET", "/static/"+tc.name, nil)
		if resp.StatusCode != 200 || !bytes.Equal(got, body) {
			t.Errorf("%s: status %d, %d bytes; want 200 and the file", tc.name, resp.StatusCode, len(got))
		}
		h := resp.Header
		if mt, _, _ := strings.Cut(h.Get("Content-Type"), ";"); mt != tc.ctype || h.Get("Etag") != etag ||
			h.Get("Last-Modified") != Modified.Format(http.TimeFormat) || h.Get("Content-Length") != strconv.Itoa(StaticSize) {
			t.Errorf("%s: headers %v", tc.name, h)
		}
		if resp, _ := get(t, srv, "GET", "/static/"+tc.name, http.Header{"If-None-Match": {etag}}); resp.StatusCode != 304 {
			t.Errorf("%s: revalidation status %d, want 304", tc.name, resp.StatusCode)
		}
		for _, rs := range cfg.RuleSets {
			st := rs.Compiled.NewStream()
			st.Close(st.Write(nil, body))
			for r, n := range st.RuleReplacements() {
				if n != 0 {
					t.Errorf("%s: rule %d of rule set %q matches it %d times", tc.name, r, rs.Name, n)
				}
			}
		}
	}
	if resp, _ := get(t, srv, "GET", "/static/other.css", nil); resp.StatusCode != 404 {
		t.Errorf("/static/other.css: status %d, want 404", resp.StatusCode)
	}
}

// TestSlowPieces: with cut, every pause but the last falls inside the host
// name of a line; the pieces always add up to the lines.
func TestSlowPieces(t *testing.T) {
	for _, n := range []int{1, 2, 5} {
		var lines string
		for i := range n {
			lines += SlowLine(i)
		}
		for _, cut := range []bool{false, true} {
			pieces := SlowPieces(n, cut)
			if len(pieces) != n || strings.Join(pieces, "") != lines {
				t.Errorf("n=%d cut=%v: pieces %q do not add up to %q", n, cut, pieces, lines)
			}
			for i, p := range pieces[:n-1] {
				if inside := !strings.HasSuffix(p, "\n"); inside != cut {
					t.Errorf("n=%d cut=%v: pause after piece %d %q inside a line: %v", n, cut, i, p, inside)
				}
				if cut && !strings.HasSuffix(p, OriginHost[:len(OriginHost)/2]) {
					t.Errorf("n=%d: piece %d %q does not end inside the host name", n, i, p)
				}
			}
		}
	}
}

// TestHeadersDelay: /headers?delay=D sends nothing for D ms.
func TestHeadersDelay(t *testing.T) {
	srv := httptest.NewServer(Handler())
	defer srv.Close()
	t0 := time.Now()
	resp, _ := get(t, srv, "GET", "/headers?delay=200", nil)
	if d := time.Since(t0); resp.StatusCode != 200 || d < 200*time.Millisecond {
		t.Errorf("status %d after %v, want 200 after at least 200ms", resp.StatusCode, d)
	}
}
