package processor

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	extprocfilterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_proc/v3"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/streamsub/streamsub/config"
	"github.com/streamsub/streamsub/matcher"
)

// shadowCfg: site.test is rewritten by "live" (HTML and JSON), shadowed by
// "next" (HTML and CSS), which adds a rule and changes one; cap.test by
// "small", shadowed by "comments", which holds a long comment back beyond
// the cap of 16 bytes.
func shadowCfg(t testing.TB, sample float64) *config.Config {
	t.Helper()
	named := func(name string, r matcher.Rule) matcher.Rule { r.Name = name; return r }
	return mustConfig(t, config.Config{
		RuleSets: []*config.RuleSet{
			{Name: "live", ContentTypes: []string{"text/html", "application/json"},
				Rules: []matcher.Rule{named("foo", literal("foo", "bar")), named("ab", regex("a+b", "X"))}},
			{Name: "next", ContentTypes: []string{"text/html", "text/css"},
				Rules: []matcher.Rule{named("foo", literal("foo", "bar")), literal("baz", "qux"), named("ab", regex("a+b", "Y"))}},
			{Name: "small", ContentTypes: []string{"text/html"}, Rules: []matcher.Rule{literal("x", "y")}},
			{Name: "comments", ContentTypes: []string{"text/html"}, Rules: []matcher.Rule{named("comment", regex("<!--.*?-->", ""))}},
		},
		Hosts:            map[string]string{"site.test": "live", "cap.test": "small"},
		Shadows:          map[string]string{"live": "next", "small": "comments"},
		ShadowSample:     sample,
		MaxBufferedBytes: 16,
	})
}

// playBody plays a GET of host and a 200 response of contentType whose
// body comes in chunks, checks the body mode, and returns what the client
// receives: the body replies, or the chunks themselves where a reply
// passes its chunk on.
func playBody(t *testing.T, p *Processor, host, contentType string, mode extprocfilterv3.ProcessingMode_BodySendMode, chunks []string) string {
	t.Helper()
	h := startStream(t, p)
	h.openResponse(host, "/page", contentType, mode)
	var got strings.Builder
	if mode != extprocfilterv3.ProcessingMode_NONE {
		for i, c := range chunks {
			h.sendBody(c, i == len(chunks)-1)
		}
		for _, c := range chunks {
			r := h.next()
			if m := r.GetResponseBody().GetResponse().GetBodyMutation(); m != nil {
				got.Write(m.GetStreamedResponse().GetBody())
			} else {
				got.WriteString(c)
			}
		}
	}
	h.wantNoReply()
	h.closeOK()
	return got.String()
}

func TestShadow(t *testing.T) {
	// A body the live rule set rewrites goes full duplex; one streamed for
	// the shadow alone, STREAMED.
	const (
		fds      = extprocfilterv3.ProcessingMode_FULL_DUPLEX_STREAMED
		streamed = extprocfilterv3.ProcessingMode_STREAMED
		none     = extprocfilterv3.ProcessingMode_NONE
	)
	tests := []struct {
		name        string
		host, ct    string
		chunks      []string
		mode        extprocfilterv3.ProcessingMode_BodySendMode
		client      string             // what the client receives: the live output
		bodies      float64            // shadow bodies counted
		differing   float64            // of which differ
		rules       map[string]float64 // shadow replacements by rule
		capExceeded float64
	}{
		{"same output", "site.test", "text/html", []string{"fo", "o a", "ab"}, fds,
			"bar X", 1, 1, map[string]float64{"foo": 1, "ab": 1}, 0}, // X vs Y
		{"same output, no ab", "site.test", "text/html", []string{"f", "oo ", "foo"}, fds,
			"bar bar", 1, 0, map[string]float64{"foo": 2}, 0},
		{"shadow adds a rule", "site.test", "text/html", []string{"baz ", "foo"}, fds,
			"baz bar", 1, 1, map[string]float64{"foo": 1, "1": 1}, 0},
		{"only the shadow rewrites the type", "site.test", "text/css", []string{"ba", "z"}, streamed,
			"baz", 1, 1, map[string]float64{"1": 1}, 0},
		{"only the shadow, nothing to replace", "site.test", "text/css", []string{"plain"}, streamed,
			"plain", 1, 0, nil, 0},
		{"only the live rule set rewrites the type", "site.test", "application/json", []string{`{"foo":1}`}, fds,
			`{"bar":1}`, 1, 1, nil, 0},
		{"neither rewrites the type", "site.test", "image/png", []string{"foo"}, none,
			"", 0, 0, nil, 0},
		{"shadow over its cap", "cap.test", "text/html", strings.Split("x<!-- a comment longer than the cap -->x", ""), fds,
			"y<!-- a comment longer than the cap -->y", 1, 1, nil, 1},
		{"shadow within its cap", "cap.test", "text/html", []string{"x<!-- short -->x"}, fds,
			"y<!-- short -->y", 1, 1, map[string]float64{"comment": 1}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p, m := newProcessor(t, shadowCfg(t, 1))
				m.InitShadows(shadowCfg(t, 1))
				if got := playBody(t, p, tc.host, tc.ct, tc.mode, tc.chunks); got != tc.client {
					t.Errorf("client receives %q, want %q", got, tc.client)
				}
				shadow := map[string]string{"site.test": "next", "cap.test": "comments"}[tc.host]
				if n := testutil.ToFloat64(m.ShadowBodies.WithLabelValues(shadow)); n != tc.bodies {
					t.Errorf("shadow bodies %v, want %v", n, tc.bodies)
				}
				if n := testutil.ToFloat64(m.ShadowDiffering.WithLabelValues(shadow)); n != tc.differing {
					t.Errorf("differing bodies %v, want %v", n, tc.differing)
				}
				if n := testutil.ToFloat64(m.ShadowErrors.WithLabelValues(shadow, shadowCapExceeded)); n != tc.capExceeded {
					t.Errorf("cap exceeded %v, want %v", n, tc.capExceeded)
				}
				wantTotal := 0.0
				for rule, want := range tc.rules {
					wantTotal += want
					if n := testutil.ToFloat64(m.ShadowReplacements.WithLabelValues(shadow, rule)); n != want {
						t.Errorf("replacements of rule %s: %v, want %v", rule, n, want)
					}
				}
				if n := sum(t, m.ShadowReplacements); n != wantTotal {
					t.Errorf("replacements in all: %v, want %v", n, wantTotal)
				}
				if n := testutil.ToFloat64(m.Replacements.WithLabelValues(shadow)); n != 0 {
					t.Errorf("the live replacements metric counted %v for the shadow", n)
				}
			})
		})
	}
}

// TestShadowNeverChangesTheResponse cuts bodies at every position and
// checks that the client gets exactly what a config without the shadow
// gives, whatever the shadow does.
func TestShadowNeverChangesTheResponse(t *testing.T) {
	with := shadowCfg(t, 1)
	c := *with
	c.Shadows = nil
	without := mustConfig(t, config.Config{RuleSets: c.RuleSets, Hosts: c.Hosts, MaxBufferedBytes: c.MaxBufferedBytes})
	for _, body := range []string{"foo aab baz fofoo", "x<!-- comment -->x<!-- a comment longer than the cap -->"} {
		host := "site.test"
		if strings.HasPrefix(body, "x") {
			host = "cap.test"
		}
		for cut := 0; cut <= len(body); cut++ {
			chunks := []string{body[:cut], body[cut:], ""}
			synctest.Test(t, func(t *testing.T) {
				p, _ := newProcessor(t, with)
				q, _ := newProcessor(t, without)
				const fds = extprocfilterv3.ProcessingMode_FULL_DUPLEX_STREAMED
				if got, want := playBody(t, p, host, "text/html", fds, chunks), playBody(t, q, host, "text/html", fds, chunks); got != want {
					t.Errorf("%q: with the shadow %q, without %q", chunks, got, want)
				}
			})
		}
	}
}

// TestShadowSample: with shadow_sample 0.25, one response in four is
// shadowed, the 4th, 8th, ...
func TestShadowSample(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, m := newProcessor(t, shadowCfg(t, 0.25))
		for i := 1; i <= 10; i++ {
			playBody(t, p, "site.test", "text/html", extprocfilterv3.ProcessingMode_FULL_DUPLEX_STREAMED, []string{"foo"})
			if n, want := testutil.ToFloat64(m.ShadowBodies.WithLabelValues("next")), float64(i/4); n != want {
				t.Fatalf("after %d responses: %v shadowed, want %v", i, n, want)
			}
		}
		// Unsampled, a body only the shadow would rewrite is not streamed.
		playBody(t, p, "site.test", "text/css", extprocfilterv3.ProcessingMode_NONE, nil)
	})
}

// TestShadowDifferenceLog: a differing body is logged with where the
// outputs first differ; more than one a second are held back and counted.
func TestShadowDifferenceLog(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs bytes.Buffer
		m := NewMetrics(prometheus.NewRegistry())
		cfg := shadowCfg(t, 1)
		p := New(func() *config.Config { return cfg }, m, slog.New(slog.NewTextHandler(&logs, nil)))
		const fds = extprocfilterv3.ProcessingMode_FULL_DUPLEX_STREAMED
		for range 3 {
			playBody(t, p, "site.test", "text/html", fds, []string{"<p>foo ", "baz</p>"})
		}
		time.Sleep(shadowLogInterval)
		playBody(t, p, "site.test", "text/html", fds, []string{"<p>foo ", "baz</p>"})
		lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
		if len(lines) != 2 {
			t.Fatalf("%d log lines, want 2 (one per second):\n%s", len(lines), logs.String())
		}
		for i, want := range []string{
			`msg="shadow rule set output differs from the live output" rule_set=next live_rule_set=live authority=site.test path=/page offset=7 located=true live="\"<p>bar baz</p>\"" shadow="\"<p>bar qux</p>\"" suppressed=0`,
			`suppressed=2`,
		} {
			if !strings.Contains(lines[i], want) {
				t.Errorf("log line %d:\n%s\nwant it to contain\n%s", i, lines[i], want)
			}
		}
		if n := testutil.ToFloat64(m.ShadowDiffering.WithLabelValues("next")); n != 4 {
			t.Errorf("differing bodies %v, want 4", n)
		}
	})
}

// TestShadowPanic: a shadow that panics stops for that body, is counted,
// and the live body goes on.
func TestShadowPanic(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, m := newProcessor(t, shadowCfg(t, 1))
		s := newStream()
		s.start(p, &fakeStream{ctx: t.Context()})
		s.cfg = shadowCfg(t, 1)
		s.rs = s.cfg.RuleSet("live")
		if !s.startShadow(responseFacts{method: "GET", status: 200, contentType: "text/css"}, skipContentType) {
			t.Fatal("a body only the shadow rewrites is not streamed")
		}
		s.sh.ms = nil // the shadow's next Write panics
		baz := [][]byte{[]byte("baz")}
		s.shadowWrite(baz, true, baz...)
		if n := testutil.ToFloat64(m.ShadowErrors.WithLabelValues("next", shadowPanic)); n != 1 {
			t.Errorf("shadow panics counted %v, want 1", n)
		}
		if s.sh.active || testutil.ToFloat64(m.ShadowBodies.WithLabelValues("next")) != 0 {
			t.Error("the shadow went on after it panicked")
		}
		s.finish()
	})
}

func TestLogLimiter(t *testing.T) {
	l := logLimiter{interval: time.Second}
	t0 := time.Unix(1000, 0)
	tests := []struct {
		at         time.Duration
		ok         bool
		suppressed int64
	}{
		{0, true, 0},
		{500 * time.Millisecond, false, 0},
		{999 * time.Millisecond, false, 0},
		{time.Second, true, 2},
		{time.Second, false, 0},
		{5 * time.Second, true, 1},
	}
	for _, tc := range tests {
		suppressed, ok := l.allow(t0.Add(tc.at))
		if ok != tc.ok || suppressed != tc.suppressed {
			t.Errorf("at %v: %v, %d held back; want %v, %d", tc.at, ok, suppressed, tc.ok, tc.suppressed)
		}
	}
}

// TestSampleShadow: the responses sampled, x, among the first twelve.
func TestSampleShadow(t *testing.T) {
	for _, tc := range []struct {
		r    float64
		want string
	}{
		{1, "xxxxxxxxxxxx"},
		{0.5, ".x.x.x.x.x.x"},
		{1.0 / 3, "..x..x..x..x"},
		{0.25, "...x...x...x"},
		{0.1, ".........x.."},
	} {
		var p Processor
		got := ""
		for range len(tc.want) {
			if p.sampleShadow(tc.r) {
				got += "x"
			} else {
				got += "."
			}
		}
		if got != tc.want {
			t.Errorf("sample %v: %s, want %s", tc.r, got, tc.want)
		}
	}
}

// TestShadowOnlyBodyHeaders: a body streamed for the shadow alone keeps
// its headers (the live side does not rewrite it): no etag weakened, no
// last-modified removed, and content-length not set back (Envoy sends a
// streamed body without it).
func TestShadowOnlyBodyHeaders(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, m := newProcessor(t, shadowCfg(t, 1))
		h := startStream(t, p)
		h.sendRequestHeaders(":method", "GET", ":authority", "site.test", ":path", "/a.css")
		h.wantHeadersReply()
		h.sendResponseHeaders(false, ":status", "200", "content-type", "text/css", "content-length", "3",
			"etag", `"v1"`, "last-modified", "Fri, 02 Jan 2026 03:04:05 GMT")
		if c := h.wantModeOverride(extprocfilterv3.ProcessingMode_STREAMED); c.GetHeaderMutation() != nil {
			t.Errorf("header mutation %v, want none", c.GetHeaderMutation())
		}
		h.sendBody("baz", true)
		h.wantPassThrough()
		h.closeOK()
		if n := testutil.ToFloat64(m.Skipped.WithLabelValues(string(skipContentType))); n != 1 {
			t.Errorf("live skips counted %v, want 1", n)
		}
		if n := testutil.ToFloat64(m.ShadowDiffering.WithLabelValues("next")); n != 1 {
			t.Errorf("differing bodies %v, want 1", n)
		}
	})
}

// TestBodyInFrames: a body chunk that reaches the processor in many gRPC
// frames (decoded in place, in segments) is rewritten, and compared by the
// shadow, as the same chunk in one piece: a rewritten body (text/html) and
// one only the shadow rewrites (text/css, passed on unchanged).
func TestBodyInFrames(t *testing.T) {
	chunks := []string{strings.Repeat("foo aab baz <p>", 50), "aa", strings.Repeat("b foo", 30), ""}
	for _, ct := range []string{"text/html", "text/css"} {
		cfg := shadowCfg(t, 1)
		want := strings.Join(chunks, "")
		if ct == "text/html" {
			ms := cfg.RuleSet("live").Compiled.NewStream()
			var b []byte
			for _, c := range chunks {
				b = ms.Write(b, []byte(c))
			}
			want = string(ms.Close(b))
		}
		for _, frame := range []int{16 << 10, 1, 2, 7, 64} {
			synctest.Test(t, func(t *testing.T) {
				p, m := newProcessor(t, cfg)
				h := startStream(t, p)
				h.fs.frame = frame
				// Rewritten: full duplex; streamed for the shadow alone.
				mode := extprocfilterv3.ProcessingMode_STREAMED
				if ct == "text/html" {
					mode = extprocfilterv3.ProcessingMode_FULL_DUPLEX_STREAMED
				}
				h.openResponse("site.test", "/page", ct, mode)
				for i, c := range chunks {
					h.sendBody(c, i == len(chunks)-1)
				}
				var got strings.Builder
				for _, c := range chunks {
					r := h.next()
					if mut := r.GetResponseBody().GetResponse().GetBodyMutation(); mut != nil {
						got.Write(mut.GetStreamedResponse().GetBody())
					} else {
						got.WriteString(c)
					}
				}
				h.closeOK()
				if got.String() != want {
					t.Errorf("%s, %d-byte frames: client got %.60q…, want %.60q…", ct, frame, got.String(), want)
				}
				bodies := testutil.ToFloat64(m.ShadowBodies.WithLabelValues("next"))
				differing := testutil.ToFloat64(m.ShadowDiffering.WithLabelValues("next"))
				if bodies != 1 || differing != 1 {
					t.Errorf("%s, %d-byte frames: shadow bodies %v, differing %v; want 1, 1", ct, frame, bodies, differing)
				}
			})
		}
	}
}
