// Package demoorigin is the HTTP origin behind Envoy in `make demo` and the
// e2e tests: pages that carry the demo rule set's matches, in every shape the
// rewriter and Envoy must handle (cut across flushes, large and streamed,
// binary, pre-compressed, cacheable, bodiless, slow), and headers that name
// the origin (a redirect, cookies, link, CSP).
package demoorigin

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/andybalholm/brotli"
)

// Matches of the demo rule set (examples/streamsub.yaml) the pages carry.
const (
	OriginURL  = "https://www.example.com"
	OriginHost = "www.example.com"
	Analytics  = "UA-12345-1"
	Brand      = "Example Corp"
)

// Modified is the fixed Last-Modified time of /cached.
var Modified = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// CachedETag is the strong ETag of /cached.
const CachedETag = `"demo-v1"`

// MaxBigSize caps /big?size=N and /trickle?size=N.
const MaxBigSize = 4 << 30

// BigFlush is how often /big flushes: every 32 KiB.
const BigFlush = 32 << 10

// MaxTrickleChunk caps /trickle?chunk=K; DefaultTrickleChunk is K when
// the query gives none. MaxTricklePause caps /trickle?pause=D.
const (
	MaxTrickleChunk     = 1 << 20
	DefaultTrickleChunk = 1 << 10
	MaxTricklePause     = 10 * time.Millisecond
)

// Handler returns the origin's routes:
//
//	/               HTML page with every demo match
//	/headers        the request headers received, as text/plain; sets
//	                internal response headers (x-origin-debug, X-Internal-*);
//	                ?delay=D: D ms before the response headers
//	/logo.png       a PNG whose tEXt chunk contains the matches
//	/big?size=N     N bytes of generated HTML, streamed in 32 KiB flushes
//	/trickle?size=N&chunk=K&pause=D
//	                the /big body flushed every K bytes (default 1 KiB),
//	                pausing D µs after each flush (default 0): many small
//	                chunks, so many body calls per request
//	/split          HTML whose matches are cut across flushes
//	/cached         HTML with a strong ETag and Last-Modified (304 on revalidation)
//	/gzip           HTML sent with content-encoding: gzip
//	/gzip-always    AlwaysHTML, gzip-encoded whatever the request accepts
//	/deflate        DeflateHTML sent with content-encoding: deflate (which
//	                the shipped Envoy configs do not decode)
//	/br-always      AlwaysHTML, brotli-encoded whatever the request accepts
//	/redirect       302 to the origin, with cookies, link and CSP naming it
//	/cookies?n=N    N set-cookie headers scoped to the origin's host
//	/slow?ms=D&n=K  K HTML pieces, D ms apart (SlowPieces); &cut=1: each pause
//	                falls inside a match, so a rewriter holds bytes back
//	/comment?size=N HTML with an N-byte comment between two matches,
//	                streamed in 4 KiB flushes (for the hold-back cap)
//	/empty          200 text/html with an empty body
//	/static/app.css, /static/app.js
//	                64 KiB of CSS and JavaScript without a demo match,
//	                with a strong ETag and Last-Modified
//	/status/{code}  that status, text/html content type, no body
func Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", index)
	mux.HandleFunc("GET /headers", headers)
	mux.HandleFunc("GET /logo.png", logo)
	mux.HandleFunc("GET /big", big)
	mux.HandleFunc("GET /trickle", trickle)
	mux.HandleFunc("GET /split", split)
	mux.HandleFunc("GET /cached", cached)
	mux.HandleFunc("GET /gzip", gzipped)
	mux.HandleFunc("GET /gzip-always", encodedAlways("gzip", gzipAlways))
	mux.HandleFunc("GET /deflate", encodedAlways("deflate", deflateBody))
	mux.HandleFunc("GET /br-always", encodedAlways("br", brAlways))
	mux.HandleFunc("GET /redirect", redirect)
	mux.HandleFunc("GET /cookies", cookies)
	mux.HandleFunc("GET /slow", slow)
	mux.HandleFunc("GET /comment", comment)
	mux.HandleFunc("GET /empty", empty)
	mux.HandleFunc("GET /static/{file}", staticRoute)
	mux.HandleFunc("GET /status/{code}", status)
	return mux
}

// IndexHTML is the body of /.
const IndexHTML = `<!doctype html>
<html><head><title>` + Brand + `</title>
<link rel="canonical" href="` + OriginURL + `/">
<script>ga('create', '` + Analytics + `', 'auto');</script>
</head><body>
<h1>Welcome to ` + Brand + `</h1>
<p>Visit <a href="` + OriginURL + `/about">` + OriginHost + `</a> or mail webmaster@` + OriginHost + `.</p>
<img src="/logo.png" alt="logo">
</body></html>
`

func index(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprint(w, IndexHTML)
}

// headers echoes the request headers, one "Name: value" line each, sorted.
func headers(w http.ResponseWriter, r *http.Request) {
	if !pause(r, r.URL.Query().Get("delay")) {
		return
	}
	var lines []string
	lines = append(lines, "Host: "+r.Host)
	for name, vs := range r.Header {
		for _, v := range vs {
			lines = append(lines, name+": "+v)
		}
	}
	sort.Strings(lines)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Origin-Debug", "1")
	w.Header().Set("X-Internal-Trace", "abc")
	w.Header().Add("X-Internal-Trace", "def")
	w.Header().Set("X-Public", "kept")
	fmt.Fprintln(w, strings.Join(lines, "\n"))
}

func logo(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "image/png")
	w.Header().Set("Content-Length", strconv.Itoa(len(LogoPNG())))
	w.Write(LogoPNG())
}

// BigBlock returns block i of /big: about 1 KiB of HTML carrying every demo
// match, different for each i.
func BigBlock(i int) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "<div class=\"item\" id=\"item-%d\">\n", i)
	fmt.Fprintf(&b, "  <a href=\"%s/products/%d\">Product %d at %s</a>\n", OriginURL, i, i, OriginHost)
	fmt.Fprintf(&b, "  <img src=\"//%s/img/%d.jpg\" alt=\"%s product %d\">\n", OriginHost, i, Brand, i)
	fmt.Fprintf(&b, "  <p>%s</p>\n", strings.Repeat("Lorem ipsum dolor sit amet, consectetur adipiscing elit. ", 1+i%12))
	fmt.Fprintf(&b, "  <script>track('%s', %d);</script>\n</div>\n", Analytics, i)
	return b.Bytes()
}

// Big writes the first size bytes of the /big body to w, calling flush
// after every BigFlush bytes.
func Big(w io.Writer, size int64, flush func()) error {
	return Trickle(w, size, BigFlush, flush)
}

// Trickle writes the first size bytes of the /big body to w, calling flush
// after every chunk bytes (and not after a last, shorter piece); chunk must
// be positive.
func Trickle(w io.Writer, size int64, chunk int, flush func()) error {
	pending := 0 // bytes written since the last flush
	write := func(p []byte) error {
		for len(p) > 0 {
			n := min(len(p), chunk-pending)
			if _, err := w.Write(p[:n]); err != nil {
				return err
			}
			p = p[n:]
			if pending += n; pending == chunk {
				flush()
				pending = 0
			}
		}
		return nil
	}
	head, next := cachedPage(size)
	if err := write(head); err != nil {
		return err
	}
	for i, rest := next, size-int64(len(head)); rest > 0; i++ {
		blk := BigBlock(i)
		if int64(len(blk)) > rest {
			blk = blk[:rest]
		}
		rest -= int64(len(blk))
		if err := write(blk); err != nil {
			return err
		}
	}
	return nil
}

// maxCachedPage bounds the /big bytes kept in memory: generating them costs
// far more CPU than sending them (~15 µs per KiB), which would make the
// origin, not the proxy, the bottleneck of a load test.
var maxCachedPage = 64 << 20

// pageCache holds the longest prefix of the /big body generated so far, in
// whole BigBlocks: the body of every size is a prefix of one sequence of
// blocks. It only grows, up to maxCachedPage (plus one block); slices of
// it handed out stay valid and are never written.
var pageCache struct {
	sync.Mutex
	b      []byte
	blocks int // BigBlocks in b
}

// cachedPage returns the first size bytes of the /big body from the cache,
// or, when size exceeds what the cache may hold, all of the cache and the
// index of the first block after it.
func cachedPage(size int64) (head []byte, next int) {
	pageCache.Lock()
	defer pageCache.Unlock()
	for int64(len(pageCache.b)) < size && len(pageCache.b) < maxCachedPage {
		pageCache.b = append(pageCache.b, BigBlock(pageCache.blocks)...)
		pageCache.blocks++
	}
	if int64(len(pageCache.b)) >= size {
		return pageCache.b[:size:size], 0
	}
	return pageCache.b[:len(pageCache.b):len(pageCache.b)], pageCache.blocks
}

// sizeParam parses the size query parameter of /big and /trickle.
func sizeParam(w http.ResponseWriter, r *http.Request) (int64, bool) {
	size, err := strconv.ParseInt(r.URL.Query().Get("size"), 10, 64)
	if err != nil || size < 0 || size > MaxBigSize {
		http.Error(w, "size: want 0.."+strconv.Itoa(MaxBigSize), http.StatusBadRequest)
		return 0, false
	}
	return size, true
}

func big(w http.ResponseWriter, r *http.Request) {
	size, ok := sizeParam(w, r)
	if !ok {
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	rc := http.NewResponseController(w)
	Big(w, size, func() { rc.Flush() })
}

func trickle(w http.ResponseWriter, r *http.Request) {
	size, ok := sizeParam(w, r)
	if !ok {
		return
	}
	chunk, pause := DefaultTrickleChunk, 0
	q := r.URL.Query()
	if q.Has("chunk") {
		var err error
		if chunk, err = strconv.Atoi(q.Get("chunk")); err != nil || chunk < 1 || chunk > MaxTrickleChunk {
			http.Error(w, "chunk: want 1.."+strconv.Itoa(MaxTrickleChunk), http.StatusBadRequest)
			return
		}
	}
	if q.Has("pause") {
		var err error
		if pause, err = strconv.Atoi(q.Get("pause")); err != nil || pause < 0 || pause > int(MaxTricklePause/time.Microsecond) {
			http.Error(w, "pause: want 0.."+strconv.Itoa(int(MaxTricklePause/time.Microsecond))+" µs", http.StatusBadRequest)
			return
		}
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	rc := http.NewResponseController(w)
	gone := r.Context().Done()
	Trickle(w, size, chunk, func() {
		rc.Flush()
		if pause > 0 {
			select {
			case <-time.After(time.Duration(pause) * time.Microsecond):
			case <-gone:
			}
		}
	})
}

// SplitPieces are the pieces of /split, each flushed separately: every demo
// match is cut at least once, several at every inner position.
func SplitPieces() []string {
	pieces := []string{"<html><body>\n"}
	for _, m := range []string{OriginURL, OriginHost, Analytics} {
		for cut := 1; cut < len(m); cut++ {
			pieces = append(pieces, fmt.Sprintf("<p>cut %d: %s", cut, m[:cut]), m[cut:]+"</p>\n")
		}
	}
	// A match cut into single bytes, and one cut right before a longer
	// rule could extend it (www.example.com vs https://www.example.com).
	for _, c := range OriginURL {
		pieces = append(pieces, string(c))
	}
	pieces = append(pieces, "\n<p>https://", "www.example.com</p>\n", "</body></html>\n")
	return pieces
}

func split(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	rc := http.NewResponseController(w)
	for _, p := range SplitPieces() {
		if _, err := fmt.Fprint(w, p); err != nil {
			return
		}
		rc.Flush()
		time.Sleep(time.Millisecond)
	}
}

// CachedHTML is the body of /cached.
const CachedHTML = "<html><body><a href=\"" + OriginURL + "/\">cached " + OriginHost + "</a></body></html>\n"

// CachedLink is the link header of /cached, sent with its 304s too.
const CachedLink = "<" + OriginURL + "/cached>; rel=canonical"

func cached(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("ETag", CachedETag)
	w.Header().Set("Link", CachedLink)
	// ServeContent answers If-None-Match / If-Modified-Since with 304.
	http.ServeContent(w, r, "", Modified, strings.NewReader(CachedHTML))
}

// GzipHTML is the plain text of /gzip, which is sent gzip-compressed.
const GzipHTML = "<html><body>compressed by the origin: " + OriginURL + "</body></html>\n"

// gzipBody is built on first use (a gzip writer costs ~1 MB of
// allocations, which every subcommand would pay at init).
var gzipBody = sync.OnceValue(func() []byte { return encode(gzip.NewWriter, GzipHTML) })

func gzipped(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Encoding", "gzip")
	w.Header().Set("Content-Length", strconv.Itoa(len(gzipBody())))
	w.Write(gzipBody())
}

// AlwaysHTML is the plain text of /gzip-always and /br-always.
const AlwaysHTML = "<html><head><script>ga('create', '" + Analytics + "', 'auto');</script></head>\n" +
	"<body><p>Encoded by the origin whatever the client accepts: <a href=\"" + OriginURL + "/about\">" + OriginHost + "</a></p></body></html>\n"

// gzipAlways and brAlways are AlwaysHTML encoded, built on first use.
var (
	gzipAlways = sync.OnceValue(func() []byte { return encode(gzip.NewWriter, AlwaysHTML) })
	brAlways   = sync.OnceValue(func() []byte {
		return encode(func(w io.Writer) *brotli.Writer { return brotli.NewWriter(w) }, AlwaysHTML)
	})
)

// DeflateHTML is the plain text of /deflate.
const DeflateHTML = "<html><body>deflated by the origin: " + OriginURL + "</body></html>\n"

// deflateBody is DeflateHTML in HTTP's deflate coding (the zlib format).
var deflateBody = sync.OnceValue(func() []byte { return encode(zlib.NewWriter, DeflateHTML) })

// encode compresses s with the writer newW makes.
func encode[W io.WriteCloser](newW func(io.Writer) W, s string) []byte {
	var b bytes.Buffer
	zw := newW(&b)
	io.WriteString(zw, s)
	zw.Close()
	return b.Bytes()
}

// encodedAlways serves body() with content-encoding enc, ignoring the
// request's accept-encoding, as some origins and CDNs do.
func encodedAlways(enc string, body func() []byte) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Encoding", enc)
		w.Header().Set("Content-Length", strconv.Itoa(len(body())))
		w.Write(body())
	}
}

// Headers of /redirect: each names the origin, as a site's redirect does.
const (
	RedirectLocation = OriginURL + "/landing?ref=" + OriginHost
	RedirectLink     = "<" + OriginURL + "/app.css>; rel=preload"
	RedirectCSP      = "default-src 'self' " + OriginURL
)

// RedirectCookies are the set-cookie headers of /redirect, in order: one for
// the origin's host, one for its whole domain.
var RedirectCookies = []string{
	"sid=abc123; Path=/; Domain=" + OriginHost + "; HttpOnly",
	"pref=dark; Path=/; Domain=.example.com; Max-Age=3600",
}

func redirect(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Location", RedirectLocation)
	for _, c := range RedirectCookies {
		h.Add("Set-Cookie", c)
	}
	h.Set("Link", RedirectLink)
	h.Set("Content-Security-Policy", RedirectCSP)
	h.Set("Content-Length", "0")
	w.WriteHeader(http.StatusFound)
}

// MaxCookies caps /cookies?n=N.
const MaxCookies = 200

// Cookie returns the i-th set-cookie header of /cookies.
func Cookie(i int) string {
	return fmt.Sprintf("c%d=v%d; Path=/; Domain=%s", i, i, OriginHost)
}

func cookies(w http.ResponseWriter, r *http.Request) {
	n, err := strconv.Atoi(r.URL.Query().Get("n"))
	if err != nil || n < 0 || n > MaxCookies {
		http.Error(w, "n: want 0.."+strconv.Itoa(MaxCookies), http.StatusBadRequest)
		return
	}
	for i := range n {
		w.Header().Add("Set-Cookie", Cookie(i))
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprintf(w, "%d cookies\n", n)
}

// SlowLine is line i of /slow.
func SlowLine(i int) string { return fmt.Sprintf("<p>%d: %s</p>\n", i, OriginHost) }

// SlowPieces are the n pieces of /slow: one line each, or with cut, the
// lines cut in the middle of their host name, so that every pause but the
// last falls inside a match.
func SlowPieces(n int, cut bool) []string {
	var pieces []string
	carry := ""
	for i := range n {
		line := SlowLine(i)
		if !cut || i == n-1 {
			pieces = append(pieces, carry+line)
			carry = ""
			continue
		}
		k := strings.Index(line, OriginHost) + len(OriginHost)/2
		pieces = append(pieces, carry+line[:k])
		carry = line[k:]
	}
	return pieces
}

func slow(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	n, _ := strconv.Atoi(q.Get("n"))
	n = min(max(n, 1), 1000)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	rc := http.NewResponseController(w)
	for i, p := range SlowPieces(n, q.Get("cut") == "1") {
		if i > 0 && !pause(r, q.Get("ms")) {
			return
		}
		io.WriteString(w, p)
		rc.Flush()
	}
}

// pause waits ms milliseconds (0..10000; a bad value is 0) unless the
// request is gone first; it reports whether to go on.
func pause(r *http.Request, ms string) bool {
	d, _ := strconv.Atoi(ms)
	select {
	case <-time.After(time.Duration(min(max(d, 0), 10000)) * time.Millisecond):
		return true
	case <-r.Context().Done():
		return false
	}
}

// CommentPage is the body of /comment?size=n: a match, an HTML comment with
// n filler bytes, another match.
func CommentPage(n int) string {
	return "<p>" + OriginHost + "</p>\n<!-- " + strings.Repeat("x", n) + " -->\n<p>" + OriginHost + "</p>\n"
}

func comment(w http.ResponseWriter, r *http.Request) {
	n, err := strconv.Atoi(r.URL.Query().Get("size"))
	if err != nil || n < 0 || n > 64<<20 {
		http.Error(w, "size: want 0..64 MiB", http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	rc := http.NewResponseController(w)
	page := CommentPage(n)
	for len(page) > 0 {
		k := min(len(page), 4<<10)
		if _, err := io.WriteString(w, page[:k]); err != nil {
			return
		}
		rc.Flush()
		page = page[k:]
	}
}

func empty(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Length", "0")
	w.WriteHeader(http.StatusOK)
}

func status(w http.ResponseWriter, r *http.Request) {
	code, err := strconv.Atoi(r.PathValue("code"))
	if err != nil || code < 200 || code > 599 {
		http.Error(w, "status: want 200..599", http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
}
