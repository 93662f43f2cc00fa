package processor

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"

	extprocfilterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_proc/v3"
	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/streamsub/streamsub/config"
	"github.com/streamsub/streamsub/headerrewrite"
	"github.com/streamsub/streamsub/matcher"
)

// cloneCfg is a clone's configuration: rule set "clone" for clone.test maps
// the origin's host to the clone in bodies and response headers, and the
// clone back to the origin in referer and origin; "copy" copies what
// follows "crlf:" (up to ';') and grows "grow", to make unsafe values.
func cloneCfg(t testing.TB, maxValue int) *config.Config {
	t.Helper()
	clone := htmlRuleSet("clone",
		literal("https://www.example.com", "https://clone.test"),
		literal("www.example.com", "clone.test"),
		regex(`(?i)(domain=)\.example\.com\b`, "${1}clone.test"))
	clone.ResponseHeaders = headerrewrite.DefaultResponseHeaders
	clone.RequestHeaders = []string{"referer", "origin", "x-origin-ref"}
	clone.RequestHeaderRules = []matcher.Rule{literal("clone.test", "www.example.com")}
	copyRS := htmlRuleSet("copy", regex(`crlf:([^;]*)`, "copied:$1"), literal("grow", strings.Repeat("g", 100)))
	copyRS.ResponseHeaders = []string{"location", "set-cookie"}
	return mustConfig(t, config.Config{
		RuleSets:            []*config.RuleSet{clone, copyRS},
		Hosts:               map[string]string{"clone.test": "clone", "copy.test": "copy"},
		RequestHeaders:      matcher.NewHeaderSet(nil, []string{"x-origin-"}),
		ResponseHeaders:     matcher.NewHeaderSet([]string{"x-powered-by"}, nil),
		MaxHeaderValueBytes: maxValue,
	})
}

// setHeaders renders a reply's header mutation as "remove a,b" and one
// "key: value" line per set header, checking that each writes raw_value
// only and that rewritten headers are appended.
func setHeaders(t *testing.T, c *extprocv3.CommonResponse) []string {
	t.Helper()
	hm := c.GetHeaderMutation()
	out := []string{"remove " + strings.Join(hm.GetRemoveHeaders(), ",")}
	for _, o := range hm.GetSetHeaders() {
		hv := o.GetHeader()
		if hv.GetValue() != "" {
			t.Errorf("set %s with value %q: only raw_value may be written", hv.GetKey(), hv.GetValue())
		}
		if hv.GetKey() != "etag" && hv.GetKey() != "content-length" && !o.GetAppend().GetValue() {
			t.Errorf("set %s with append %v, want append true after a remove", hv.GetKey(), o.GetAppend())
		}
		out = append(out, hv.GetKey()+": "+string(hv.GetRawValue()))
	}
	return out
}

func TestResponseHeaderRewriting(t *testing.T) {
	redirect := []string{":status", "302", "location", "https://www.example.com/landing?ref=www.example.com",
		"set-cookie", "sid=1; Domain=www.example.com", "set-cookie", "pref=2; Domain=.example.com",
		"link", "<https://www.example.com/app.css>; rel=preload",
		"content-security-policy", "default-src 'self' https://www.example.com",
		"x-other", "https://www.example.com", "content-length", "0"}
	tests := []struct {
		name   string
		method string
		eos    bool
		resp   []string
		mode   extprocfilterv3.ProcessingMode_BodySendMode
		want   []string
		n      float64 // header replacements
	}{
		{"302 without body", "GET", true, redirect, extprocfilterv3.ProcessingMode_NONE, []string{
			"remove location,set-cookie,link,content-security-policy",
			"content-length: 0",
			"location: https://clone.test/landing?ref=clone.test",
			"set-cookie: sid=1; Domain=clone.test",
			"set-cookie: pref=2; Domain=clone.test",
			"link: <https://clone.test/app.css>; rel=preload",
			"content-security-policy: default-src 'self' https://clone.test",
		}, 6},
		{"only one cookie changes: both are set again, in order", "GET", true, []string{":status", "200",
			"set-cookie", "a=1", "set-cookie", "b=2; Domain=.example.com", "set-cookie", "c=3"},
			extprocfilterv3.ProcessingMode_NONE, []string{
				"remove set-cookie",
				"set-cookie: a=1",
				"set-cookie: b=2; Domain=clone.test",
				"set-cookie: c=3",
			}, 1},
		{"nothing to rewrite", "GET", true, []string{":status", "302", "location", "/local", "x-other", "www.example.com"},
			extprocfilterv3.ProcessingMode_NONE, []string{"remove "}, 0},
		// A 304 and a HEAD of a page the rule set rewrites also carry a
		// rewrite's headers (decide_test.go, TestRepresentsRewrite).
		{"304 keeps its link rewritten", "GET", true, []string{":status", "304", "link", "<https://www.example.com/c>; rel=canonical"},
			extprocfilterv3.ProcessingMode_NONE, []string{"remove content-length,last-modified,link", "link: <https://clone.test/c>; rel=canonical"}, 1},
		{"HEAD", "HEAD", true, []string{":status", "200", "content-type", "text/html", "content-location", "https://www.example.com/x"},
			extprocfilterv3.ProcessingMode_NONE, []string{"remove content-length,last-modified,content-location", "content-location: https://clone.test/x"}, 1},
		{"an image's link header", "GET", false, []string{":status", "200", "content-type", "image/png", "link", "<https://www.example.com/>"},
			extprocfilterv3.ProcessingMode_NONE, []string{"remove link", "link: <https://clone.test/>"}, 1},
		{"rewritten body and header", "GET", false, []string{":status", "200", "content-type", "text/html",
			"access-control-allow-origin", "https://www.example.com", "x-powered-by", "www.example.com"},
			extprocfilterv3.ProcessingMode_FULL_DUPLEX_STREAMED, []string{
				"remove x-powered-by,content-length,last-modified,access-control-allow-origin",
				"access-control-allow-origin: https://clone.test",
			}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p, m := newProcessor(t, cloneCfg(t, 0))
				h := startStream(t, p)
				h.sendRequestHeaders(":method", tt.method, ":authority", "clone.test", ":path", "/")
				h.wantHeadersReply()
				h.sendResponseHeaders(tt.eos, tt.resp...)
				got := setHeaders(t, h.wantModeOverride(tt.mode))
				if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
					t.Errorf("mutation:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
				}
				if n := testutil.ToFloat64(m.HeaderReplacements.WithLabelValues("clone", dirResponse)); n != tt.n {
					t.Errorf("header replacements %v, want %v", n, tt.n)
				}
				if tt.mode == extprocfilterv3.ProcessingMode_FULL_DUPLEX_STREAMED {
					h.sendBody("", true)
					h.wantBodyReply()
				}
				h.closeOK()
			})
		})
	}
}

func TestRequestHeaderRewriting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, m := newProcessor(t, cloneCfg(t, 0))
		h := startStream(t, p)
		h.sendRequestHeaders(":method", "POST", ":authority", "clone.test", ":path", "/form",
			"referer", "https://clone.test/a", "origin", "https://clone.test", "cookie", "clone.test=1",
			"x-origin-ref", "clone.test")
		c, _ := h.wantHeadersReply()
		want := []string{
			"remove x-origin-ref,referer,origin", // internal first: never rewritten
			"referer: https://www.example.com/a",
			"origin: https://www.example.com",
		}
		if got := setHeaders(t, c); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("mutation:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if n := testutil.ToFloat64(m.HeaderReplacements.WithLabelValues("clone", dirRequest)); n != 2 {
			t.Errorf("request header replacements %v, want 2", n)
		}
		h.sendResponseHeaders(true, ":status", "204")
		h.wantModeOverride(extprocfilterv3.ProcessingMode_NONE)
		h.closeOK()
	})
}

// TestHeaderRewriteRefused: a rewritten value that would carry CR, LF or
// NUL (copied from the value itself by a capture), or exceed the limit, is
// not sent; the original stays, each is counted, the first is logged.
func TestHeaderRewriteRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs bytes.Buffer
		m := NewMetrics(nil)
		p := New(func() *config.Config { return cloneCfg(t, 64) }, m, slog.New(slog.NewTextHandler(&logs, nil)))
		h := startStream(t, p)
		h.sendRequestHeaders(":method", "GET", ":authority", "copy.test", ":path", "/")
		h.wantHeadersReply()
		h.sendResponseHeaders(true, ":status", "302",
			"location", "https://a.test/crlf:\r\nSet-Cookie: admin=1",
			"set-cookie", "a=crlf:ok; Path=/",
			"set-cookie", "b=crlf:\x00; Path=/",
			"set-cookie", "c=grow",
			"x-copy", "crlf:\r\n")
		got := setHeaders(t, h.wantModeOverride(extprocfilterv3.ProcessingMode_NONE))
		want := []string{
			"remove set-cookie",
			"set-cookie: a=copied:ok; Path=/",
			"set-cookie: b=crlf:\x00; Path=/",
			"set-cookie: c=grow",
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("mutation:\n%q\nwant:\n%q", got, want)
		}
		for reason, want := range map[headerrewrite.Reject]float64{headerrewrite.ForbiddenByte: 2, headerrewrite.TooLong: 1} {
			if n := testutil.ToFloat64(m.HeaderRejected.WithLabelValues("copy", string(reason))); n != want {
				t.Errorf("rejected{%s} = %v, want %v", reason, n, want)
			}
		}
		h.closeOK()
		if n := strings.Count(logs.String(), "rewritten header value refused"); n != 1 {
			t.Errorf("%d log lines, want 1 per stream:\n%s", n, logs.String())
		}
		for _, want := range []string{"reason=forbidden_byte", "header=location", "rule_set=copy", "direction=response"} {
			if !strings.Contains(logs.String(), want) {
				t.Errorf("log lacks %q: %s", want, logs.String())
			}
		}
		if strings.Contains(logs.String(), "admin") {
			t.Errorf("the log shows the header's value: %s", logs.String())
		}
	})
}

// TestManyRepeatedHeaders: 50 set-cookie headers come back as 50, in order.
func TestManyRepeatedHeaders(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, _ := newProcessor(t, cloneCfg(t, 0))
		h := startStream(t, p)
		h.sendRequestHeaders(":method", "GET", ":authority", "clone.test", ":path", "/")
		h.wantHeadersReply()
		kv := []string{":status", "200"}
		want := []string{"remove set-cookie"}
		for i := range 50 {
			kv = append(kv, "set-cookie", fmt.Sprintf("c%d=%d; Domain=www.example.com", i, i))
			want = append(want, fmt.Sprintf("set-cookie: c%d=%d; Domain=clone.test", i, i))
		}
		h.sendResponseHeaders(true, kv...)
		if got := setHeaders(t, h.wantModeOverride(extprocfilterv3.ProcessingMode_NONE)); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("mutation:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		h.closeOK()
	})
}

// TestHeaderRewriteAllocs: a response whose rewritable headers do not match
// allocates nothing for header rewriting.
func TestHeaderRewriteAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop the rule set's value streams")
	}
	cfg := cloneCfg(t, 0)
	p, _ := newProcessorTB(t, cfg)
	s := newStream()
	s.start(p, &fakeStream{ctx: t.Context()})
	defer s.finish()
	s.rs = cfg.RuleSet("clone")
	headers := headerMap([]string{":status", "200", "content-type", "text/html", "link", "</style.css>; rel=preload",
		"set-cookie", "a=1; Path=/", "cache-control", "max-age=60"}).Headers
	s.rewriteHeaders(s.rs.ResponseRewriter, dirResponse, headers, nil) // warm the pools
	if a := testing.AllocsPerRun(100, func() {
		if set := s.rewriteHeaders(s.rs.ResponseRewriter, dirResponse, headers, nil); set != nil {
			t.Fatalf("rewrote %v", set)
		}
	}); a != 0 {
		t.Errorf("%v allocations per response", a)
	}
}
