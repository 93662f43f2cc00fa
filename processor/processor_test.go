package processor

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"

	extprocfilterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_proc/v3"
	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"

	"github.com/streamsub/streamsub/config"
	"github.com/streamsub/streamsub/internal/htmlgen"
	"github.com/streamsub/streamsub/matcher"
	"github.com/streamsub/streamsub/processor/wire"
)

// testCfg has three rule sets: "standard" for site.test (HTML and CSS),
// "keep" for keep.test (keeps last-modified) and "anything" (every content
// type, chosen by metadata only), and a header filter on both sides.
func testCfg(t testing.TB) *config.Config {
	t.Helper()
	return mustConfig(t, config.Config{
		Source: "testCfg",
		RuleSets: []*config.RuleSet{
			{Name: "standard", ContentTypes: []string{"text/html", "text/css"},
				Rules: []matcher.Rule{literal("foo", "bar"), regex("a+b", "X")}},
			{Name: "keep", ContentTypes: []string{config.DefaultContentType}, KeepLastModified: true,
				Rules: []matcher.Rule{literal("foo", "FOO")}},
			{Name: "anything", ContentTypes: []string{config.AnyContentType},
				Rules: []matcher.Rule{literal("secret", "public")}},
		},
		Hosts:           map[string]string{"site.test": "standard", "keep.test": "keep"},
		RequestHeaders:  matcher.NewHeaderSet([]string{"x-debug-token"}, []string{"x-internal-"}),
		ResponseHeaders: matcher.NewHeaderSet([]string{"x-powered-by"}, []string{"x-origin-"}),
	})
}

// rewriteResponse plays a whole HTML response for host site.test through
// one stream, in the given chunks, and returns the body replies.
func rewriteResponse(t *testing.T, p *Processor, chunks []string) [][]byte {
	h := startStream(t, p)
	h.openResponse("site.test", "/", "text/html; charset=utf-8", extprocfilterv3.ProcessingMode_FULL_DUPLEX_STREAMED)
	// Envoy pipelines chunks without waiting for replies.
	for i, c := range chunks {
		h.sendBody(c, i == len(chunks)-1)
	}
	var got [][]byte
	for i := range chunks {
		body, eos := h.wantBodyChunk()
		if eos != (i == len(chunks)-1) {
			t.Errorf("reply %d: end_of_stream %v", i, eos)
		}
		got = append(got, body)
	}
	h.wantNoReply()
	h.closeOK()
	return got
}

func TestRewriteAcrossChunks(t *testing.T) {
	cfg := testCfg(t)
	tests := []struct {
		chunks []string
		want   string
	}{
		{[]string{"foo"}, "bar"},
		{[]string{"f", "o", "o", ""}, "bar"},
		{[]string{"xxfo", "oyy"}, "xxbaryy"},
		{[]string{"aa", "ab foo", "f"}, "X barf"},
		{[]string{"a", "a", "", "a", "b"}, "X"},
		{[]string{"a", "a", "a"}, "aaa"}, // a+b never completes: the tail is flushed unchanged
		{[]string{"", ""}, ""},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q", tt.chunks), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p, m := newProcessor(t, cfg)
				got := rewriteResponse(t, p, tt.chunks)
				if len(got) != len(tt.chunks) {
					t.Fatalf("%d replies for %d chunks", len(got), len(tt.chunks))
				}
				if body := string(bytes.Join(got, nil)); body != tt.want {
					t.Errorf("body = %q, want %q (replies %q)", body, tt.want, got)
				}
				in := testutil.ToFloat64(m.BytesIn.WithLabelValues("standard"))
				out := testutil.ToFloat64(m.BytesOut.WithLabelValues("standard"))
				if in != float64(len(strings.Join(tt.chunks, ""))) || out != float64(len(tt.want)) {
					t.Errorf("bytes in/out = %v/%v, want %d/%d", in, out, len(strings.Join(tt.chunks, "")), len(tt.want))
				}
			})
		})
	}
}

// TestEveryCut cuts one body at every position (plus an empty final chunk)
// and checks the replies add up to the same rewrite.
func TestEveryCut(t *testing.T) {
	cfg := testCfg(t)
	const body, want = "<p>foo aab fofoo</p>", "<p>bar X fobar</p>"
	for cut := 0; cut <= len(body); cut++ {
		synctest.Test(t, func(t *testing.T) {
			p, _ := newProcessor(t, cfg)
			got := rewriteResponse(t, p, []string{body[:cut], body[cut:], ""})
			if s := string(bytes.Join(got, nil)); s != want {
				t.Errorf("cut %d: body = %q, want %q (replies %q)", cut, s, want, got)
			}
		})
	}
}

// TestHeldBackTail checks that a chunk whose output is all held back gets an
// explicit empty body, and that end_of_stream flushes the tail. How long the
// engine holds bytes beyond what correctness needs is its business, so only
// the forced cases are pinned: "fo" may still become "foo", and "aa" may
// still become "aab" until the end.
func TestHeldBackTail(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, m := newProcessor(t, testCfg(t))
		got := rewriteResponse(t, p, []string{"fo", "o", "aa", ""})
		if len(got[0]) != 0 {
			t.Errorf("reply to %q = %q, want empty (held back)", "fo", got[0])
		}
		if !bytes.HasSuffix(got[3], []byte("aa")) {
			t.Errorf("end_of_stream reply = %q, want the held-back tail %q", got[3], "aa")
		}
		if body := string(bytes.Join(got, nil)); body != "baraa" {
			t.Errorf("body = %q, want %q", body, "baraa")
		}
		if n := testutil.ToFloat64(m.Replacements.WithLabelValues("standard")); n != 1 {
			t.Errorf("replacements = %v, want 1", n)
		}
	})
}

func TestSkipDecisions(t *testing.T) {
	cfg := testCfg(t)
	html := []string{":status", "200", "content-type", "text/html"}
	tests := []struct {
		name    string
		md      []string // initial metadata
		method  string
		host    string
		resp    []string
		eos     bool
		rewrite bool
		reason  string
		ruleSet string // the rule set that rewrites; "" = standard
	}{
		{name: "html", method: "GET", host: "site.test", resp: html, rewrite: true},
		{name: "css with params", method: "GET", host: "site.test", resp: []string{":status", "200", "content-type", "TEXT/CSS;charset=utf-8"}, rewrite: true},
		{name: "404 has a body", method: "GET", host: "site.test", resp: []string{":status", "404", "content-type", "text/html"}, rewrite: true},
		{name: "HEAD", method: "HEAD", host: "site.test", resp: html, reason: "head_request"},
		{name: "204", method: "GET", host: "site.test", resp: []string{":status", "204", "content-type", "text/html"}, reason: "status_without_body"},
		{name: "304", method: "GET", host: "site.test", resp: []string{":status", "304", "content-type", "text/html"}, reason: "status_without_body"},
		{name: "image/png", method: "GET", host: "site.test", resp: []string{":status", "200", "content-type", "image/png"}, reason: "content_type"},
		{name: "no content-type", method: "GET", host: "site.test", resp: []string{":status", "200"}, reason: "content_type"},
		{name: "gzip", method: "GET", host: "site.test", resp: append([]string{"content-encoding", "gzip"}, html...), reason: "content_encoding"},
		{name: "identity encoding", method: "GET", host: "site.test", resp: append([]string{"content-encoding", "identity"}, html...), rewrite: true},
		{name: "grpc", method: "POST", host: "site.test", resp: []string{":status", "200", "content-type", "application/grpc+proto"}, reason: "grpc"},
		{name: "grpc under any-type rule set", md: []string{RuleSetMetadataKey, "anything"}, method: "POST", host: "x.test", resp: []string{":status", "200", "content-type", "application/grpc"}, reason: "grpc"},
		{name: "trailers announced", method: "GET", host: "site.test", resp: append([]string{"trailer", "x-checksum"}, html...), reason: "trailers"},
		{name: "no body", method: "GET", host: "site.test", resp: html, eos: true, reason: "no_body"},
		{name: "unknown host", method: "GET", host: "other.test", resp: html, reason: "no_rule_set"},
		{name: "metadata picks rule set", md: []string{RuleSetMetadataKey, "anything"}, method: "GET", host: "other.test", resp: []string{":status", "200", "content-type", "image/svg+xml"}, rewrite: true, ruleSet: "anything"},
		{name: "metadata wins over host", md: []string{RuleSetMetadataKey, "anything"}, method: "GET", host: "site.test", resp: []string{":status", "200", "content-type", "image/png"}, rewrite: true, ruleSet: "anything"},
		{name: "metadata names unknown set", md: []string{RuleSetMetadataKey, "nope"}, method: "GET", host: "site.test", resp: html, reason: "unknown_rule_set"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p, m := newProcessor(t, cfg)
				h := startStream(t, p, tt.md...)
				h.sendRequestHeaders(":method", tt.method, ":authority", tt.host, ":path", "/x")
				h.wantHeadersReply()
				h.sendResponseHeaders(tt.eos, tt.resp...)
				mode := extprocfilterv3.ProcessingMode_NONE
				if tt.rewrite {
					mode = extprocfilterv3.ProcessingMode_FULL_DUPLEX_STREAMED
				}
				h.wantModeOverride(mode)
				h.closeOK()
				if !tt.rewrite {
					if n := testutil.ToFloat64(m.Skipped.WithLabelValues(tt.reason)); n != 1 {
						t.Errorf("skipped{reason=%q} = %v, want 1", tt.reason, n)
					}
				} else if n := sum(t, m.Skipped); n != 0 {
					t.Errorf("%v bodies counted as skipped, want none", n)
				}
				if want := map[bool]float64{true: 1}[tt.rewrite]; sum(t, m.Rewritten) != want {
					t.Errorf("rewritten = %v, want %v", sum(t, m.Rewritten), want)
				}
				if rs := cmp.Or(tt.ruleSet, "standard"); tt.rewrite && testutil.ToFloat64(m.Rewritten.WithLabelValues(rs)) != 1 {
					t.Errorf("body not rewritten by rule set %q", rs)
				}
			})
		})
	}
}

// TestSkippedBodyPassesThrough: when Envoy streams a skipped body anyway
// (mode override not allowed), every chunk is answered without mutation.
func TestSkippedBodyPassesThrough(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, _ := newProcessor(t, testCfg(t))
		h := startStream(t, p)
		h.openResponse("site.test", "/img", "image/png", extprocfilterv3.ProcessingMode_NONE)
		h.sendBody("\x89PNG", false)
		h.sendBody("", true)
		h.wantPassThrough()
		h.wantPassThrough()
		h.closeOK()
	})
}

func TestHeaderRemoval(t *testing.T) {
	cfg := testCfg(t)
	tests := []struct {
		name string
		req  []string
		want []string
	}{
		{"none", []string{"accept", "text/html"}, nil},
		{"exact", []string{"x-debug-token", "s3cret", "accept", "*/*"}, []string{"x-debug-token"}},
		{"prefix", []string{"x-internal-route", "a", "x-internal-user", "b"}, []string{"x-internal-route", "x-internal-user"}},
		{"case variants and repeats", []string{"X-Internal-Route", "a", "x-internal-route", "b", "X-DEBUG-TOKEN", "c", "x-debug-token", "d"}, []string{"X-Internal-Route", "X-DEBUG-TOKEN"}},
		{"prefix alone is a name", []string{"x-internal-", "a", "x-internals", "b"}, []string{"x-internal-"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p, _ := newProcessor(t, cfg)
				h := startStream(t, p)
				h.sendRequestHeaders(append([]string{":method", "GET", ":authority", "site.test", ":path", "/", "host", "site.test"}, tt.req...)...)
				c, _ := h.wantHeadersReply()
				if got := c.GetHeaderMutation().GetRemoveHeaders(); !equalStrings(got, tt.want) {
					t.Errorf("remove_headers = %q, want %q", got, tt.want)
				}
				h.closeOK()
			})
		})
	}
}

// TestPseudoAndHostNeverRemoved uses a header set that would match them.
func TestPseudoAndHostNeverRemoved(t *testing.T) {
	hs := matcher.NewHeaderSet([]string{"host", ":authority", "x-a"}, []string{":"})
	hdrs := headerMap([]string{":authority", "a", "Host", "a", ":path", "/", "x-a", "1"}).Headers
	if got := appendInternal(nil, hdrs, hs); !equalStrings(got, []string{"x-a"}) {
		t.Fatalf("got %q, want only x-a", got)
	}
}

func TestResponseHeaderFixups(t *testing.T) {
	cfg := testCfg(t)
	tests := []struct {
		name       string
		host       string
		resp       []string
		wantRemove []string
		wantETag   string // "" = no etag set
	}{
		{"content-length and last-modified", "site.test",
			[]string{"content-length", "42", "last-modified", "Tue, 01 Jan 2030 00:00:00 GMT"},
			[]string{"content-length", "last-modified"}, ""},
		{"keep last-modified", "keep.test",
			[]string{"content-length", "42", "last-modified", "Tue, 01 Jan 2030 00:00:00 GMT"},
			[]string{"content-length"}, ""},
		{"strong etag weakened", "site.test", []string{"etag", `"abc"`},
			[]string{"content-length", "last-modified"}, `W/"abc"`},
		{"weak etag unchanged", "site.test", []string{"etag", `W/"abc"`},
			[]string{"content-length", "last-modified"}, ""},
		{"malformed etag dropped", "site.test", []string{"etag", `abc`},
			[]string{"content-length", "last-modified", "etag"}, ""},
		{"internal response headers", "site.test", []string{"X-Powered-By", "php", "x-origin-node", "7", "x-origin-node", "8"},
			[]string{"X-Powered-By", "x-origin-node", "content-length", "last-modified"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p, _ := newProcessor(t, cfg)
				h := startStream(t, p)
				h.sendRequestHeaders(":method", "GET", ":authority", tt.host, ":path", "/")
				h.wantHeadersReply()
				h.sendResponseHeaders(false, append([]string{":status", "200", "content-type", "text/html"}, tt.resp...)...)
				c := h.wantModeOverride(extprocfilterv3.ProcessingMode_FULL_DUPLEX_STREAMED)
				hm := c.GetHeaderMutation()
				if got := hm.GetRemoveHeaders(); !equalStrings(got, tt.wantRemove) {
					t.Errorf("remove_headers = %q, want %q", got, tt.wantRemove)
				}
				set := hm.GetSetHeaders()
				switch {
				case tt.wantETag == "" && len(set) != 0:
					t.Errorf("set_headers = %v, want none", set)
				case tt.wantETag != "":
					if len(set) != 1 {
						t.Fatalf("set_headers = %v, want one etag", set)
					}
					hv := set[0].GetHeader()
					if hv.GetKey() != "etag" || string(hv.GetRawValue()) != tt.wantETag || hv.GetValue() != "" {
						t.Errorf("set %q raw_value=%q value=%q, want etag raw_value=%q and no value",
							hv.GetKey(), hv.GetRawValue(), hv.GetValue(), tt.wantETag)
					}
				}
				h.closeOK()
			})
		})
	}
}

// TestSkipStripsInternalResponseHeaders: internal response headers go even
// when the body is not rewritten; content-length is restated (Envoy drops
// it for a STREAMED filter before asking us) and nothing else is touched.
func TestSkipStripsInternalResponseHeaders(t *testing.T) {
	tests := []struct {
		name    string
		resp    []string
		wantSet []string // key, raw value pairs
	}{
		{"with content-length", []string{"content-length", "9"}, []string{"content-length", "9"}},
		{"chunked", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p, _ := newProcessor(t, testCfg(t))
				h := startStream(t, p)
				h.sendRequestHeaders(":method", "GET", ":authority", "site.test", ":path", "/a.png")
				h.wantHeadersReply()
				h.sendResponseHeaders(false, append([]string{":status", "200", "content-type", "image/png",
					"etag", `"x"`, "last-modified", "Tue, 01 Jan 2030 00:00:00 GMT", "x-powered-by", "php"}, tt.resp...)...)
				c := h.wantModeOverride(extprocfilterv3.ProcessingMode_NONE)
				if got := c.GetHeaderMutation().GetRemoveHeaders(); !equalStrings(got, []string{"x-powered-by"}) {
					t.Errorf("remove_headers = %q, want [x-powered-by]", got)
				}
				var set []string
				for _, o := range c.GetHeaderMutation().GetSetHeaders() {
					if o.GetHeader().GetValue() != "" {
						t.Errorf("set %q with value %q: only raw_value may be set", o.GetHeader().GetKey(), o.GetHeader().GetValue())
					}
					set = append(set, o.GetHeader().GetKey(), string(o.GetHeader().GetRawValue()))
				}
				if !equalStrings(set, tt.wantSet) {
					t.Errorf("set_headers = %q, want %q", set, tt.wantSet)
				}
				h.closeOK()
			})
		})
	}
}

func TestProtocolErrors(t *testing.T) {
	tests := []struct {
		name  string
		play  func(h *harness)
		code  codes.Code
		token string
	}{
		{"body before headers", func(h *harness) {
			h.sendRequestHeaders(":method", "GET", ":authority", "site.test")
			h.wantHeadersReply()
			h.sendBody("x", true)
		}, codes.FailedPrecondition, errOutOfOrder},
		{"body after end_of_stream", func(h *harness) {
			h.sendRequestHeaders(":method", "GET", ":authority", "site.test")
			h.wantHeadersReply()
			h.sendResponseHeaders(false, ":status", "200", "content-type", "text/html")
			h.wantHeadersReply()
			h.sendBody("x", true)
			h.wantBodyReply()
			h.sendBody("y", true)
		}, codes.FailedPrecondition, errOutOfOrder},
		{"request headers twice", func(h *harness) {
			h.sendRequestHeaders(":method", "GET")
			h.wantHeadersReply()
			h.sendRequestHeaders(":method", "GET")
		}, codes.FailedPrecondition, errOutOfOrder},
		{"unknown request type", func(h *harness) {
			h.send(&extprocv3.ProcessingRequest{})
		}, codes.InvalidArgument, errUnknownMessage},
		{"panic", func(h *harness) {
			close(h.fs.panicOnRecv)
		}, codes.Internal, errPanic},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p, m := newProcessor(t, testCfg(t))
				// A healthy stream runs alongside and must not notice.
				other := startStream(t, p)
				other.sendRequestHeaders(":method", "GET", ":authority", "site.test", ":path", "/")
				other.wantHeadersReply()

				h := startStream(t, p)
				tt.play(h)
				h.wantError(tt.code)
				h.wantNoReply()
				if n := testutil.ToFloat64(m.Errors.WithLabelValues(tt.token)); n != 1 {
					t.Errorf("errors{error=%q} = %v, want 1", tt.token, n)
				}

				other.sendResponseHeaders(false, ":status", "200", "content-type", "text/html")
				other.wantModeOverride(extprocfilterv3.ProcessingMode_FULL_DUPLEX_STREAMED)
				other.sendBody("<p>", true)
				other.wantBodyReply()
				other.closeOK()
				if n := testutil.ToFloat64(m.ActiveStreams); n != 0 {
					t.Errorf("active streams = %v after both ended", n)
				}
			})
		})
	}
}

// TestRequestBodyAndTrailersContinue: messages we never asked for still get
// their matching empty reply.
func TestRequestBodyAndTrailersContinue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, _ := newProcessor(t, testCfg(t))
		h := startStream(t, p)
		h.send(&extprocv3.ProcessingRequest{Request: &extprocv3.ProcessingRequest_RequestHeaders{
			RequestHeaders: &extprocv3.HttpHeaders{Headers: headerMap([]string{":method", "POST", ":authority", "site.test"})}}})
		h.wantHeadersReply()
		h.send(&extprocv3.ProcessingRequest{Request: &extprocv3.ProcessingRequest_RequestBody{
			RequestBody: &extprocv3.HttpBody{Body: []byte("a=1")}}})
		if r := h.next(); r.GetRequestBody() == nil || r.GetRequestBody().GetResponse().GetBodyMutation() != nil {
			t.Fatalf("reply %v, want an empty request body reply", r)
		}
		h.send(&extprocv3.ProcessingRequest{Request: &extprocv3.ProcessingRequest_RequestTrailers{
			RequestTrailers: &extprocv3.HttpTrailers{}}})
		if r := h.next(); r.GetRequestTrailers() == nil {
			t.Fatalf("reply %v, want a request trailers reply", r)
		}
		h.sendResponseHeaders(false, ":status", "200", "content-type", "image/png")
		h.wantModeOverride(extprocfilterv3.ProcessingMode_NONE)
		h.send(&extprocv3.ProcessingRequest{Request: &extprocv3.ProcessingRequest_ResponseTrailers{
			ResponseTrailers: &extprocv3.HttpTrailers{}}})
		if r := h.next(); r.GetResponseTrailers() == nil {
			t.Fatalf("reply %v, want a response trailers reply", r)
		}
		h.closeOK()
	})
}

// TestCancelEndsQuietly: Envoy dropping the stream is not an error.
func TestCancelEndsQuietly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, m := newProcessor(t, testCfg(t))
		h := startStream(t, p)
		h.sendRequestHeaders(":method", "GET", ":authority", "site.test")
		h.wantHeadersReply()
		h.cancel()
		if err := h.wait(); err != nil {
			t.Fatalf("cancelled stream ended with %v", err)
		}
		if n := sum(t, m.Errors); n != 0 {
			t.Errorf("%v errors counted after a cancel", n)
		}
	})
}

// TestNoConfig: before any config is loaded every body is skipped.
func TestNoConfig(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, _ := newProcessor(t, nil)
		h := startStream(t, p)
		h.sendRequestHeaders(":method", "GET", ":authority", "site.test", "x-internal-a", "1")
		if c, _ := h.wantHeadersReply(); c.GetHeaderMutation() != nil {
			t.Errorf("header mutation %v without config", c.GetHeaderMutation())
		}
		h.sendResponseHeaders(false, ":status", "200", "content-type", "text/html")
		h.wantModeOverride(extprocfilterv3.ProcessingMode_NONE)
		h.closeOK()
	})
}

// TestBodyChunkAllocs: the processor's per-chunk work allocates nothing once
// warm (the reply message is reused, the output buffer comes from a pool;
// the codec's share is measured in package wire).
func TestBodyChunkAllocs(t *testing.T) {
	p, _ := newProcessor(t, testCfg(t))
	s := newStream()
	s.start(p, &fakeStream{ctx: t.Context()})
	s.method, s.authority = "GET", "site.test"
	s.selectRuleSet()
	s.phase = phaseRequest
	if _, err := s.responseHeaders(&extprocv3.HttpHeaders{Headers: headerMap([]string{":status", "200", "content-type", "text/html"})}); err != nil {
		t.Fatal(err)
	}
	body := bytes.Repeat([]byte("<p>hello foo world</p>\n"), 700)
	segs := [][]byte{body[:1000], body[1000:]}
	req := &extprocv3.HttpBody{}
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := s.responseBody(req, segs); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per chunk, want 0", allocs)
	}
}

// BenchmarkResponseBody rewrites one chunk per iteration: a 16 KiB chunk
// (fed to the matcher in one slice) and a 256 KiB one (sixteen slices, the
// stream's context checked between them).
func BenchmarkResponseBody(b *testing.B) {
	for _, size := range []int{16 << 10, 256 << 10} {
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			cfg := testCfg(b)
			p := New(func() *config.Config { return cfg }, nil, nil)
			s := newStream()
			s.start(p, &fakeStream{ctx: b.Context()})
			s.method, s.authority, s.phase = "GET", "site.test", phaseRequest
			s.selectRuleSet()
			if _, err := s.responseHeaders(&extprocv3.HttpHeaders{Headers: headerMap([]string{":status", "200", "content-type", "text/html"})}); err != nil {
				b.Fatal(err)
			}
			chunk := bytes.Repeat([]byte("<li><a href=\"/x\">foo aab item</a></li>\n"), size/40)
			req := &extprocv3.HttpBody{}
			// In 16 KiB segments, as the codec hands over a chunk received
			// in HTTP/2 frames.
			var segs [][]byte
			for rest := chunk; len(rest) > 0; rest = rest[min(len(rest), 16<<10):] {
				segs = append(segs, rest[:min(len(rest), 16<<10)])
			}
			b.SetBytes(int64(len(chunk)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.responseBody(req, segs); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestBufferCapOverflow: a pending match longer than max_buffered_bytes
// makes the rest of the body pass through unchanged, counted and logged
// once however many chunks follow.
func TestBufferCapOverflow(t *testing.T) {
	cfg := mustConfig(t, config.Config{
		MaxBufferedBytes: 16,
		RuleSets:         []*config.RuleSet{htmlRuleSet("tags", regex("a[^z]*z", "Z"))},
	})
	synctest.Test(t, func(t *testing.T) {
		var logs bytes.Buffer
		m := NewMetrics(prometheus.NewRegistry())
		p := New(func() *config.Config { return cfg }, m, slog.New(slog.NewTextHandler(&logs, nil)))
		chunks := []string{"xa", strings.Repeat("b", 10), strings.Repeat("b", 10), strings.Repeat("b", 10), "z az", ""}
		got := rewriteResponse(t, p, chunks)
		if body, want := string(bytes.Join(got, nil)), strings.Join(chunks, ""); body != want {
			t.Errorf("body = %q, want it unchanged %q", body, want)
		}
		if n := testutil.ToFloat64(m.CapExceeded.WithLabelValues("tags")); n != 1 {
			t.Errorf("cap exceeded = %v, want 1", n)
		}
		if n := strings.Count(logs.String(), "stream_buffer_cap_exceeded"); n != 1 {
			t.Errorf("%d cap log lines, want 1:\n%s", n, logs.String())
		}
		if !strings.Contains(logs.String(), "rule_set=tags") || !strings.Contains(logs.String(), "path=/") {
			t.Errorf("cap log lacks rule set or path:\n%s", logs.String())
		}
	})
}

// holdingBack plays a rewritten response whose first chunk, "xy fo", ends
// in what may become a match: "fo" is held back.
func holdingBack(t *testing.T) (*harness, *Metrics) {
	t.Helper()
	p, m := newProcessor(t, testCfg(t))
	h := startStream(t, p)
	h.openResponse("site.test", "/", "text/html", extprocfilterv3.ProcessingMode_FULL_DUPLEX_STREAMED)
	h.sendBody("xy fo", false)
	if got := h.wantBodyReply(); string(got) != "xy " {
		t.Errorf("reply = %q, want %q", got, "xy ")
	}
	return h, m
}

// TestTrailersEndTheBody: in full duplex a body with trailers has no chunk
// with end_of_stream; the trailers end it, and the held-back tail goes out
// in a body reply just ahead of the trailers reply.
func TestTrailersEndTheBody(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, m := holdingBack(t)
		h.send(&extprocv3.ProcessingRequest{Request: &extprocv3.ProcessingRequest_ResponseTrailers{
			ResponseTrailers: &extprocv3.HttpTrailers{}}})
		if got, eos := h.wantBodyChunk(); string(got) != "fo" || eos {
			t.Errorf("tail reply = %q end_of_stream=%v, want %q without end_of_stream", got, eos, "fo")
		}
		if r := h.next(); r.GetResponseTrailers() == nil {
			t.Fatalf("reply %v, want a response trailers reply", r)
		}
		h.closeOK()
		if n := sum(t, m.Errors); n != 0 {
			t.Errorf("%v errors counted", n)
		}
		if out := testutil.ToFloat64(m.BytesOut.WithLabelValues("standard")); out != 5 {
			t.Errorf("bytes out = %v, want 5", out)
		}
	})
}

// TestEndWithoutEndOfStream: if Envoy ends the stream before the body's end
// (a reset), the body is counted as abandoned and, since bytes were held
// back, their loss too, rather than silent.
func TestEndWithoutEndOfStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, m := holdingBack(t)
		h.closeOK()
		for _, token := range []string{errBodyLost, errAbandoned} {
			if n := testutil.ToFloat64(m.Errors.WithLabelValues(token)); n != 1 {
				t.Errorf("%s = %v, want 1", token, n)
			}
		}
	})
}

// BenchmarkStreamLifecycle runs whole streams (request headers, response
// headers, four 16 KiB chunks, end of stream) through pooled stream state,
// without gRPC: what one HTTP response costs the processor beyond the
// matcher's per-byte work.
func BenchmarkStreamLifecycle(b *testing.B) {
	cfg := testCfg(b)
	p := New(func() *config.Config { return cfg }, nil, nil)
	fs := &fakeStream{ctx: b.Context()}
	chunk := bytes.Repeat([]byte("<li><a href=\"/x\">foo aab item</a></li>\n"), 16<<10/40)
	reqs := []*extprocv3.ProcessingRequest{
		{Request: &extprocv3.ProcessingRequest_RequestHeaders{RequestHeaders: &extprocv3.HttpHeaders{
			Headers: headerMap([]string{":method", "GET", ":authority", "site.test", ":path", "/", "x-internal-route", "a", "accept", "text/html"})}}},
		{Request: &extprocv3.ProcessingRequest_ResponseHeaders{ResponseHeaders: &extprocv3.HttpHeaders{
			Headers: headerMap([]string{":status", "200", "content-type", "text/html", "content-length", "65536", "etag", `"v1"`})}}},
	}
	for i := range 4 {
		reqs = append(reqs, &extprocv3.ProcessingRequest{Request: &extprocv3.ProcessingRequest_ResponseBody{
			ResponseBody: &extprocv3.HttpBody{Body: chunk, EndOfStream: i == 3}}})
	}
	// Each message as gRPC hands it to the codec: in 16 KiB frames.
	frames := make([]mem.BufferSlice, len(reqs))
	for i, req := range reqs {
		enc, err := proto.Marshal(req)
		if err != nil {
			b.Fatal(err)
		}
		for len(enc) > 0 {
			n := min(len(enc), 16<<10)
			frames[i] = append(frames[i], mem.SliceBuffer(enc[:n]))
			enc = enc[n:]
		}
	}
	b.SetBytes(int64(4 * len(chunk)))
	b.ReportAllocs()
	for b.Loop() {
		s, _ := p.pool.Get().(*stream)
		if s == nil {
			s = newStream()
		}
		s.start(p, fs)
		for _, data := range frames {
			if err := (wire.Codec{}).Unmarshal(data, s.in); err != nil {
				b.Fatal(err)
			}
			reply, err := s.handle()
			if err != nil {
				b.Fatal(err)
			}
			out, err := wire.Codec{}.Marshal(reply)
			if err != nil {
				b.Fatal(err)
			}
			out.Free() // as gRPC's transport does once the reply is written
			s.in.Release()
		}
		s.finish()
		p.pool.Put(s)
	}
}

// TestStreamReuse: pooled stream state (matcher stream, buffers, reply
// messages) carries nothing from one response to the next, across rule sets.
func TestStreamReuse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, _ := newProcessor(t, testCfg(t))
		for i, tc := range []struct{ host, chunk0, chunk1, want string }{
			{"site.test", "aa", "a", "aaa"}, // ends with a+b pending: tail flushed
			{"site.test", "fo", "o", "bar"},
			{"keep.test", "fo", "o", "FOO"},
			{"site.test", "b", "foo", "bbar"},
			{"site.test", "", "", ""},
		} {
			h := startStream(t, p)
			h.openResponse(tc.host, "/", "text/html", extprocfilterv3.ProcessingMode_FULL_DUPLEX_STREAMED)
			h.sendBody(tc.chunk0, false)
			h.sendBody(tc.chunk1, true)
			got := string(h.wantBodyReply()) + string(h.wantBodyReply())
			h.closeOK()
			if got != tc.want {
				t.Errorf("response %d (%s): body %q, want %q", i, tc.host, got, tc.want)
			}
		}
	})
}

// TestDebugSummary: at debug level each stream ends with one summary line.
func TestDebugSummary(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs bytes.Buffer
		p := New(func() *config.Config { return testCfg(t) }, nil,
			slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
		h := startStream(t, p)
		h.openResponse("site.test", "/logo.png", "image/png", extprocfilterv3.ProcessingMode_NONE)
		h.closeOK()
		line := logs.String()
		for _, want := range []string{"stream done", "path=/logo.png", "rule_set=standard", "decision=content_type"} {
			if !strings.Contains(line, want) {
				t.Errorf("summary lacks %q: %s", want, line)
			}
		}
	})
}

// TestDefaultRuleSetWithoutRequestHeaders: with request_header_mode SKIP
// the stream starts at the response headers and knows no :authority; the
// default rule set ("*", or the first when the file has no hosts) still
// applies (design.md §1: metadata > host map > default), while a host map
// without "*" has no default.
func TestDefaultRuleSetWithoutRequestHeaders(t *testing.T) {
	for _, tt := range []struct {
		name  string
		hosts map[string]string
		want  string // body for "foo"; "" when not rewritten
	}{
		{"no hosts: the first rule set", nil, "bar"},
		{"star", map[string]string{"*": "other"}, "baz"},
		{"no star: no default", map[string]string{"site.test": "first"}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := mustConfig(t, config.Config{
				RuleSets: []*config.RuleSet{
					htmlRuleSet("first", literal("foo", "bar")),
					htmlRuleSet("other", literal("foo", "baz")),
				},
				Hosts: tt.hosts,
			})
			synctest.Test(t, func(t *testing.T) {
				p, _ := newProcessor(t, cfg)
				h := startStream(t, p)
				h.sendResponseHeaders(false, ":status", "200", "content-type", "text/html")
				if tt.want == "" {
					h.wantModeOverride(extprocfilterv3.ProcessingMode_NONE)
					h.closeOK()
					return
				}
				h.wantModeOverride(extprocfilterv3.ProcessingMode_FULL_DUPLEX_STREAMED)
				h.sendBody("foo", true)
				if got := h.wantBodyReply(); string(got) != tt.want {
					t.Errorf("body %q, want %q", got, tt.want)
				}
				h.closeOK()
			})
		})
	}
}

// TestFastPathMetrics: hand-overs from the lazy DFA fast path to the exact
// engine are counted per rule set, and a DFA cache that gives up (states
// thrashing its budget) is counted once per body and logged.
func TestFastPathMetrics(t *testing.T) {
	configs := map[string]*config.Config{}
	for name, rule := range map[string]matcher.Rule{"edge": literal("abc", "X"), "thrash": regex(htmlgen.StateThrashRule, "X")} {
		configs[name] = mustConfig(t, config.Config{RuleSets: []*config.RuleSet{htmlRuleSet(name, rule)}})
	}
	// About one new DFA state per byte: the default budget fills again and
	// again.
	thrash := htmlgen.StateThrash(1, 256<<10)
	var thrashChunks []string
	for off := 0; off < len(thrash); off += 16 << 10 {
		thrashChunks = append(thrashChunks, string(thrash[off:min(len(thrash), off+16<<10)]))
	}
	tests := []struct {
		ruleSet   string
		chunks    []string
		want      string
		fallbacks func(float64) bool
		gaveUp    float64
	}{
		// The match crosses the chunk edge: the window carried over
		// matches, and the exact engine resolves it.
		{"edge", []string{"xxab", "cxx", ""}, "xxXxx", func(n float64) bool { return n == 1 }, 0},
		{"edge", []string{"xxabcxx", ""}, "xxXxx", func(n float64) bool { return n == 0 }, 0},
		{"thrash", append(thrashChunks, ""), string(thrash), func(n float64) bool { return n > 0 }, 1},
	}
	for _, tt := range tests {
		synctest.Test(t, func(t *testing.T) {
			var logs bytes.Buffer
			m := NewMetrics(prometheus.NewRegistry())
			cfg := configs[tt.ruleSet]
			p := New(func() *config.Config { return cfg }, m, slog.New(slog.NewTextHandler(&logs, nil)))
			got := rewriteResponse(t, p, tt.chunks)
			if body := string(bytes.Join(got, nil)); body != tt.want {
				t.Errorf("%s %d chunks: body = %.40q…, want %.40q…", tt.ruleSet, len(tt.chunks), body, tt.want)
			}
			if n := testutil.ToFloat64(m.FastFallbacks.WithLabelValues(tt.ruleSet)); !tt.fallbacks(n) {
				t.Errorf("%s %d chunks: fast path fallbacks = %v", tt.ruleSet, len(tt.chunks), n)
			}
			if n := testutil.ToFloat64(m.CacheGaveUp.WithLabelValues(tt.ruleSet)); n != tt.gaveUp {
				t.Errorf("%s %d chunks: cache gave up = %v, want %v", tt.ruleSet, len(tt.chunks), n, tt.gaveUp)
			}
			if logged := strings.Count(logs.String(), "cache gave up"); logged != int(tt.gaveUp) {
				t.Errorf("%s: %d gave-up log lines, want %v:\n%.500s", tt.ruleSet, logged, tt.gaveUp, logs.String())
			}
		})
	}
}

// TestHeadAndNotModifiedHeaders: a HEAD, or a 304, for a response that a
// GET (a 200) would rewrite carries the headers the rewrite would: no
// content-length, no last-modified unless the rule set keeps it, a weak
// ETag. Its body is never streamed. Others keep their headers (and
// content-length is restated, as for any skip).
func TestHeadAndNotModifiedHeaders(t *testing.T) {
	const lm = "Tue, 01 Jan 2030 00:00:00 GMT"
	tests := []struct {
		name, method, host string
		resp               []string
		reason             skipReason
		wantRemove         []string
		wantSet            []string // key, raw value pairs
	}{
		{"HEAD of a page", "HEAD", "site.test",
			[]string{":status", "200", "content-type", "text/html", "content-length", "367", "etag", `"v1"`, "last-modified", lm},
			skipNoBody, []string{"content-length", "last-modified"}, []string{"etag", `W/"v1"`}},
		{"HEAD of a page, last-modified kept", "HEAD", "keep.test",
			[]string{":status", "200", "content-type", "text/html", "content-length", "367", "last-modified", lm},
			skipNoBody, []string{"content-length"}, nil},
		{"HEAD of an image", "HEAD", "site.test",
			[]string{":status", "200", "content-type", "image/png", "content-length", "99", "etag", `"v1"`, "last-modified", lm},
			skipNoBody, nil, []string{"content-length", "99"}},
		{"HEAD, unknown host", "HEAD", "other.test",
			[]string{":status", "200", "content-type", "text/html", "content-length", "367"},
			skipNoRuleSet, nil, []string{"content-length", "367"}},
		{"304 without content-type", "GET", "site.test",
			[]string{":status", "304", "etag", `"demo-v1"`, "last-modified", lm},
			skipNoBody, []string{"content-length", "last-modified"}, []string{"etag", `W/"demo-v1"`}},
		{"304 with a weak ETag", "GET", "site.test",
			[]string{":status", "304", "etag", `W/"demo-v1"`},
			skipNoBody, []string{"content-length", "last-modified"}, nil},
		{"304 of an image", "GET", "site.test",
			[]string{":status", "304", "content-type", "image/png", "etag", `"v1"`, "last-modified", lm},
			skipNoBody, nil, nil},
		{"304, unknown host", "GET", "other.test",
			[]string{":status", "304", "etag", `"v1"`},
			skipNoRuleSet, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p, m := newProcessor(t, testCfg(t))
				h := startStream(t, p)
				h.sendRequestHeaders(":method", tt.method, ":authority", tt.host, ":path", "/")
				h.wantHeadersReply()
				h.sendResponseHeaders(true, tt.resp...)
				c := h.wantModeOverride(extprocfilterv3.ProcessingMode_NONE)
				if got := c.GetHeaderMutation().GetRemoveHeaders(); !equalStrings(got, tt.wantRemove) {
					t.Errorf("remove_headers = %q, want %q", got, tt.wantRemove)
				}
				var set []string
				for _, o := range c.GetHeaderMutation().GetSetHeaders() {
					set = append(set, o.GetHeader().GetKey(), string(o.GetHeader().GetRawValue()))
				}
				if !equalStrings(set, tt.wantSet) {
					t.Errorf("set_headers = %q, want %q", set, tt.wantSet)
				}
				if n := testutil.ToFloat64(m.Skipped.WithLabelValues(string(tt.reason))); n != 1 {
					t.Errorf("skipped{reason=%q} = %v, want 1", tt.reason, n)
				}
				h.closeOK()
			})
		})
	}
}

// TestEnvoyConfiguredFullDuplex: an Envoy whose configured response body
// mode is FULL_DUPLEX_STREAMED (its protocol_config says so) ignores mode
// overrides and streams skipped bodies too; they go back unchanged, in
// full-duplex replies, the last one ending the body.
func TestEnvoyConfiguredFullDuplex(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, _ := newProcessor(t, testCfg(t))
		h := startStream(t, p)
		h.send(&extprocv3.ProcessingRequest{
			ProtocolConfig: &extprocv3.ProtocolConfiguration{ResponseBodyMode: extprocfilterv3.ProcessingMode_FULL_DUPLEX_STREAMED},
			Request: &extprocv3.ProcessingRequest_RequestHeaders{RequestHeaders: &extprocv3.HttpHeaders{
				Headers: headerMap([]string{":method", "GET", ":authority", "site.test", ":path", "/a.png"})}},
		})
		h.wantHeadersReply()
		h.sendResponseHeaders(false, ":status", "200", "content-type", "image/png")
		h.wantModeOverride(extprocfilterv3.ProcessingMode_NONE)
		h.sendBody("\x89PNG foo", false)
		h.sendBody("", true)
		for i, want := range []string{"\x89PNG foo", ""} {
			if got, eos := h.wantBodyChunk(); string(got) != want || eos != (i == 1) {
				t.Errorf("reply %d = %q end_of_stream=%v, want %q", i, got, eos, want)
			}
		}
		h.closeOK()
	})
}

// cancelAfter is a stream context that reports cancellation from its nth
// Err call on: Envoy giving up while a chunk is being rewritten.
type cancelAfter struct {
	context.Context
	n int
}

func (c *cancelAfter) Err() error {
	if c.n--; c.n < 0 {
		return context.Canceled
	}
	return nil
}

// TestAbandonedChunk: when Envoy gives up on the stream, rewriting stops at
// the next slice boundary; the chunk's rest is never fed to the matcher,
// and the body is counted and logged once as abandoned (nothing was held
// back: the chunk has no match in the making).
func TestAbandonedChunk(t *testing.T) {
	for _, slices := range []int{0, 1, 3} {
		t.Run(fmt.Sprint(slices), func(t *testing.T) {
			var logs bytes.Buffer
			m := NewMetrics(prometheus.NewRegistry())
			cfg := testCfg(t)
			p := New(func() *config.Config { return cfg }, m, slog.New(slog.NewTextHandler(&logs, nil)))
			s := newStream()
			s.start(p, &fakeStream{ctx: &cancelAfter{Context: t.Context(), n: slices}})
			s.method, s.authority, s.phase = "GET", "site.test", phaseRequest
			s.selectRuleSet()
			if _, err := s.responseHeaders(&extprocv3.HttpHeaders{Headers: headerMap([]string{":status", "200", "content-type", "text/html"})}); err != nil {
				t.Fatal(err)
			}
			// No match: every byte fed comes straight out.
			chunk := bytes.Repeat([]byte("<p>text</p>\n"), 10*sliceBytes/12)
			// The last chunk: Envoy gives up before its end is answered.
			// In segments not aligned with the slices.
			segs := [][]byte{chunk[:1000], chunk[1000 : 3*sliceBytes-7], chunk[3*sliceBytes-7:]}
			_, err := s.responseBody(&extprocv3.HttpBody{EndOfStream: slices == 3}, segs)
			if err != errAbandonedStream {
				t.Fatalf("responseBody = %v, want errAbandonedStream", err)
			}
			if fed := len(s.reply.Body()) + s.ms.Stats().Buffered; fed != slices*sliceBytes {
				t.Errorf("matcher fed %d bytes, want %d (%d slices)", fed, slices*sliceBytes, slices)
			}
			s.finish()
			if n := testutil.ToFloat64(m.Errors.WithLabelValues(errAbandoned)); n != 1 {
				t.Errorf("%s = %v, want 1", errAbandoned, n)
			}
			if n := sum(t, m.Errors); n != 1 {
				t.Errorf("%v errors counted, want 1", n)
			}
			if l := logs.String(); !strings.Contains(l, "error="+errAbandoned) || !strings.Contains(l, "rule_set=standard") ||
				!strings.Contains(l, "mid_chunk=true") || !strings.Contains(l, fmt.Sprintf("chunk_bytes_left=%d", len(chunk)-slices*sliceBytes)) {
				t.Errorf("log lacks the abandonment:\n%s", logs.String())
			}
		})
	}
}
