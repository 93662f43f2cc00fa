package processor

import (
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	extprocfilterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_proc/v3"
	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/streamsub/streamsub/config"
	"github.com/streamsub/streamsub/matcher"
)

const (
	streamed = extprocfilterv3.ProcessingMode_FULL_DUPLEX_STREAMED
	skipped  = extprocfilterv3.ProcessingMode_NONE
)

// memStep is one response played through a processor with a memory.
type memStep struct {
	name   string
	cfg    *config.Config // the config from this step on; nil: unchanged
	sleep  time.Duration  // fake time passing before the step
	method string         // "" is GET
	host   string         // "" is site.test
	path   string
	status string   // "" is 200
	hdrs   []string // response headers besides :status and content-type
	body   string   // sent in two chunks when streamed
	noEOS  bool     // the stream ends before end_of_stream
	want   extprocfilterv3.ProcessingMode_BodySendMode
}

// memoryOracle rewrites a whole body as memoryCfg's rule set does (Go's
// regexp is leftmost-first, as the matcher).
func memoryOracle(body string) string {
	return memoryRules.ReplaceAllStringFunc(body, func(m string) string {
		if m == "foo" {
			return "bar"
		}
		return "Z"
	})
}

var memoryRules = regexp.MustCompile(`foo|a[^z]*z`)

// memoryCfg has one rule set, "css" (foo → bar, a[^z]*z → Z), for every
// host, rewriting text/css, with the given memory settings and a small
// hold-back cap.
func memoryCfg(t testing.TB, r config.Remember) *config.Config {
	return mustConfig(t, config.Config{
		RuleSets: []*config.RuleSet{{Name: "css", ContentTypes: []string{"text/css"},
			Rules: []matcher.Rule{literal("foo", "bar"), regex("a[^z]*z", "Z")}}},
		MaxBufferedBytes: 16,
		Remember:         r,
	})
}

// playMemory plays the steps in order through one processor and checks
// each one's body mode, that a skip restores content-length, and that a
// streamed body is rewritten.
func playMemory(t *testing.T, cfg *config.Config, steps []memStep) *Metrics {
	t.Helper()
	var cur atomic.Pointer[config.Config]
	cur.Store(cfg)
	m := NewMetrics(prometheus.NewRegistry())
	p := New(cur.Load, m, slog.New(slog.DiscardHandler))
	for i, st := range steps {
		if st.cfg != nil {
			cur.Store(st.cfg)
		}
		time.Sleep(st.sleep)
		h := startStream(t, p)
		h.sendRequestHeaders(":method", cmpOr(st.method, "GET"), ":authority", cmpOr(st.host, "site.test"), ":path", st.path)
		h.wantHeadersReply()
		h.sendResponseHeaders(false, append([]string{":status", cmpOr(st.status, "200"), "content-type", "text/css"}, st.hdrs...)...)
		c, r := h.wantHeadersReply()
		if got := r.GetModeOverride().GetResponseBodyMode(); got != st.want {
			t.Fatalf("step %d (%s): body mode %v, want %v", i, st.name, got, st.want)
		}
		if st.want == skipped {
			var want, got string
			for j := 0; j+1 < len(st.hdrs); j += 2 {
				if st.hdrs[j] == "content-length" {
					want = st.hdrs[j+1]
				}
			}
			for _, o := range c.GetHeaderMutation().GetSetHeaders() {
				if o.GetHeader().GetKey() == "content-length" {
					got = string(o.GetHeader().GetRawValue())
				}
			}
			if got != want {
				t.Errorf("step %d (%s): skipped with content-length %q set, want %q", i, st.name, got, want)
			}
			h.closeOK()
			continue
		}
		half := len(st.body) / 2
		h.sendBody(st.body[:half], false)
		out := string(h.wantBodyReply())
		if !st.noEOS {
			h.sendBody(st.body[half:], true)
			out += string(h.wantBodyReply())
			if want := memoryOracle(st.body); out != want {
				t.Errorf("step %d (%s): body %q, want %q", i, st.name, out, want)
			}
		}
		h.closeOK()
	}
	return m
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// TestRemember plays sequences of responses and checks which are skipped.
func TestRemember(t *testing.T) {
	on := config.Remember{Entries: 100, TTL: time.Minute}
	etag := func(v string) []string { return []string{"etag", v, "content-length", "12"} }
	plain := "p { x: 1; }\n"
	tests := []struct {
		name     string
		remember config.Remember
		steps    []memStep
	}{
		{"etag", on, []memStep{
			{name: "first", path: "/app.css", hdrs: etag(`"v1"`), body: plain, want: streamed},
			{name: "same etag", path: "/app.css", hdrs: etag(`"v1"`), body: plain, want: skipped},
			{name: "again", path: "/app.css", hdrs: etag(`"v1"`), body: plain, want: skipped},
			{name: "changed etag", path: "/app.css", hdrs: etag(`"v2"`), body: plain, want: streamed},
			{name: "the new etag", path: "/app.css", hdrs: etag(`"v2"`), body: plain, want: skipped},
			{name: "the old etag", path: "/app.css", hdrs: etag(`"v1"`), body: plain, want: streamed},
			{name: "weak etag", path: "/app.css", hdrs: etag(`W/"v1"`), body: plain, want: streamed},
			{name: "weak etag again", path: "/app.css", hdrs: etag(`W/"v1"`), body: plain, want: skipped},
			{name: "etag without content-length", path: "/app.css", hdrs: []string{"etag", `W/"v1"`}, body: plain, want: skipped},
		}},
		{"last-modified and content-length", on, []memStep{
			{name: "first", path: "/lm.css", hdrs: []string{"last-modified", "Tue, 01 Jan 2030 00:00:00 GMT", "content-length", "12"}, body: plain, want: streamed},
			{name: "same", path: "/lm.css", hdrs: []string{"last-modified", "Tue, 01 Jan 2030 00:00:00 GMT", "content-length", "12"}, body: plain, want: skipped},
			{name: "other length", path: "/lm.css", hdrs: []string{"last-modified", "Tue, 01 Jan 2030 00:00:00 GMT", "content-length", "13"}, body: plain + " ", want: streamed},
			{name: "other date", path: "/lm.css", hdrs: []string{"last-modified", "Wed, 02 Jan 2030 00:00:00 GMT", "content-length", "13"}, body: plain + " ", want: streamed},
			{name: "last-modified alone", path: "/lm1.css", hdrs: []string{"last-modified", "Tue, 01 Jan 2030 00:00:00 GMT"}, body: plain, want: streamed},
			{name: "last-modified alone again", path: "/lm1.css", hdrs: []string{"last-modified", "Tue, 01 Jan 2030 00:00:00 GMT"}, body: plain, want: streamed},
		}},
		{"what is never skipped", on, []memStep{
			{name: "a body that matched", path: "/page.css", hdrs: etag(`"p"`), body: "a { foo: 1 }", want: streamed},
			{name: "it again", path: "/page.css", hdrs: etag(`"p"`), body: "a { foo: 1 }", want: streamed},
			{name: "no validator", path: "/plain.css", hdrs: []string{"content-length", "12"}, body: plain, want: streamed},
			{name: "no validator again", path: "/plain.css", hdrs: []string{"content-length", "12"}, body: plain, want: streamed},
			{name: "404", path: "/404.css", status: "404", hdrs: etag(`"n"`), body: plain, want: streamed},
			{name: "404 again", path: "/404.css", status: "404", hdrs: etag(`"n"`), body: plain, want: streamed},
			{name: "POST", method: "POST", path: "/post.css", hdrs: etag(`"q"`), body: plain, want: streamed},
			{name: "POST again", method: "POST", path: "/post.css", hdrs: etag(`"q"`), body: plain, want: streamed},
			{name: "long path", path: "/" + strings.Repeat("x", maxRememberedBytes), hdrs: etag(`"l"`), body: plain, want: streamed},
			{name: "long path again", path: "/" + strings.Repeat("x", maxRememberedBytes), hdrs: etag(`"l"`), body: plain, want: streamed},
		}},
		{"host and path are the key", on, []memStep{
			{name: "first", path: "/app.css", hdrs: etag(`"v1"`), body: plain, want: streamed},
			{name: "other host", host: "other.test", path: "/app.css", hdrs: etag(`"v1"`), body: plain, want: streamed},
			{name: "other path", path: "/app.css?v=2", hdrs: etag(`"v1"`), body: plain, want: streamed},
			{name: "first again", path: "/app.css", hdrs: etag(`"v1"`), body: plain, want: skipped},
			{name: "other host again", host: "other.test", path: "/app.css", hdrs: etag(`"v1"`), body: plain, want: skipped},
		}},
		{"unfinished bodies are not remembered", on, []memStep{
			{name: "cap overflow", path: "/long.css", hdrs: etag(`"o"`), body: "a" + strings.Repeat("-", 40), want: streamed},
			{name: "cap overflow again", path: "/long.css", hdrs: etag(`"o"`), body: "a" + strings.Repeat("-", 40), want: streamed},
			{name: "no end_of_stream", path: "/cut.css", hdrs: etag(`"c"`), body: plain, noEOS: true, want: streamed},
			{name: "whole", path: "/cut.css", hdrs: etag(`"c"`), body: plain, want: streamed},
			{name: "whole again", path: "/cut.css", hdrs: etag(`"c"`), body: plain, want: skipped},
		}},
		{"time to live", on, []memStep{
			{name: "first", path: "/app.css", hdrs: etag(`"v1"`), body: plain, want: streamed},
			{name: "within the TTL", sleep: 59 * time.Second, path: "/app.css", hdrs: etag(`"v1"`), body: plain, want: skipped},
			{name: "a skip does not extend it", sleep: time.Second, path: "/app.css", hdrs: etag(`"v1"`), body: plain, want: streamed},
			{name: "streamed again: remembered again", path: "/app.css", hdrs: etag(`"v1"`), body: plain, want: skipped},
		}},
		{"eviction", config.Remember{Entries: 2, TTL: time.Minute}, []memStep{
			{name: "a", path: "/a.css", hdrs: etag(`"a"`), body: plain, want: streamed},
			{name: "b", path: "/b.css", hdrs: etag(`"b"`), body: plain, want: streamed},
			{name: "a again", path: "/a.css", hdrs: etag(`"a"`), body: plain, want: skipped},
			{name: "c evicts b", path: "/c.css", hdrs: etag(`"c"`), body: plain, want: streamed},
			{name: "b forgotten", path: "/b.css", hdrs: etag(`"b"`), body: plain, want: streamed},
			{name: "b evicted a", path: "/a.css", hdrs: etag(`"a"`), body: plain, want: streamed},
		}},
		{"off", config.Remember{}, []memStep{
			{name: "first", path: "/app.css", hdrs: etag(`"v1"`), body: plain, want: streamed},
			{name: "again", path: "/app.css", hdrs: etag(`"v1"`), body: plain, want: streamed},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				m := playMemory(t, memoryCfg(t, tt.remember), tt.steps)
				wantSkips := 0
				for _, st := range tt.steps {
					if st.want == skipped {
						wantSkips++
					}
				}
				if n := testutil.ToFloat64(m.Skipped.WithLabelValues(string(skipRememberedNoMatch))); n != float64(wantSkips) {
					t.Errorf("skipped{reason=remembered_no_match} = %v, want %d", n, wantSkips)
				}
				if n := sum(t, m.Skipped); n != float64(wantSkips) {
					t.Errorf("%v bodies skipped in all, want %d", n, wantSkips)
				}
				if n := testutil.ToFloat64(m.Remember.Entries); n > float64(max(tt.remember.Entries, 0)) {
					t.Errorf("entries gauge %v over the limit %d", n, tt.remember.Entries)
				}
			})
		})
	}
}

// TestRememberEvictionsAndEntries: the gauge follows the entries and the
// counter the evictions, also when a reload lowers the limit or turns the
// memory off.
func TestRememberEvictionsAndEntries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		two := memoryCfg(t, config.Remember{Entries: 2, TTL: time.Minute})
		one := memoryCfg(t, config.Remember{Entries: 1, TTL: time.Minute})
		off := memoryCfg(t, config.Remember{})
		var steps []memStep
		for i := range 5 {
			path := fmt.Sprintf("/%d.css", i)
			steps = append(steps, memStep{path: path, hdrs: []string{"etag", `"x"`}, body: "x", want: streamed})
		}
		m := playMemory(t, two, steps)
		if e, n := testutil.ToFloat64(m.Remember.Entries), testutil.ToFloat64(m.Remember.Evictions); e != 2 || n != 3 {
			t.Errorf("after 5 files in 2 entries: entries %v, evictions %v; want 2, 3", e, n)
		}

		m = playMemory(t, two, append(steps[:2:2],
			memStep{cfg: one, path: "/9.css", hdrs: []string{"etag", `"x"`}, body: "x", want: streamed}))
		// The reload to one entry evicts one of the two, /9.css the other.
		if e, n := testutil.ToFloat64(m.Remember.Entries), testutil.ToFloat64(m.Remember.Evictions); e != 1 || n != 2 {
			t.Errorf("after a reload to 1 entry: entries %v, evictions %v; want 1, 2", e, n)
		}

		m = playMemory(t, two, append(steps[:2:2],
			memStep{cfg: off, path: "/0.css", hdrs: []string{"etag", `"x"`}, body: "x", want: streamed}))
		if e := testutil.ToFloat64(m.Remember.Entries); e != 0 {
			t.Errorf("after a reload that turns it off: entries %v, want 0", e)
		}
	})
}

// TestRememberReload: a reload compiles new rule sets, whose memory starts
// empty even when the rules are the same.
func TestRememberReload(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := config.Remember{Entries: 100, TTL: time.Minute}
		first, second := memoryCfg(t, r), memoryCfg(t, r)
		hdrs := []string{"etag", `"v1"`, "content-length", "4"}
		m := playMemory(t, first, []memStep{
			{name: "first", path: "/app.css", hdrs: hdrs, body: "p{};", want: streamed},
			{name: "remembered", path: "/app.css", hdrs: hdrs, body: "p{};", want: skipped},
			{name: "after a reload", cfg: second, path: "/app.css", hdrs: hdrs, body: "p{};", want: streamed},
			{name: "remembered by the new rules", path: "/app.css", hdrs: hdrs, body: "p{};", want: skipped},
		})
		if n := testutil.ToFloat64(m.Remember.Entries); n != 2 {
			t.Errorf("entries %v, want 2 (one per rule set generation)", n)
		}
	})
}

// TestRememberVerification: one in verify_one_in remembered skips is
// streamed; when a rule matches it, the memory was wrong, which is counted
// and corrected.
func TestRememberVerification(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hdrs := []string{"etag", `"same"`, "content-length", "5"}
		m := playMemory(t, memoryCfg(t, config.Remember{Entries: 100, TTL: time.Minute, VerifyOneIn: 2}), []memStep{
			{name: "first", path: "/app.css", hdrs: hdrs, body: "p{};\n", want: streamed},
			{name: "skip 1", path: "/app.css", hdrs: hdrs, body: "p{};\n", want: skipped},
			{name: "skip 2: verified, right", path: "/app.css", hdrs: hdrs, body: "p{};\n", want: streamed},
			{name: "skip 3", path: "/app.css", hdrs: hdrs, body: "p{};\n", want: skipped},
			{name: "skip 4: verified, the body changed", path: "/app.css", hdrs: hdrs, body: "foo;\n", want: streamed},
			{name: "the memory learnt", path: "/app.css", hdrs: hdrs, body: "foo;\n", want: streamed},
			{name: "and still knows", path: "/app.css", hdrs: hdrs, body: "foo;\n", want: streamed},
		})
		if n := testutil.ToFloat64(m.Remember.Verified.WithLabelValues("css")); n != 2 {
			t.Errorf("verified = %v, want 2", n)
		}
		if n := testutil.ToFloat64(m.Remember.Wrong.WithLabelValues("css")); n != 1 {
			t.Errorf("wrong = %v, want 1", n)
		}
	})
}

// BenchmarkRememberedSkip is the response headers of a remembered file,
// from many streams at once: run with -cpu 1,2 to see what the memory's
// one mutex costs under contention.
func BenchmarkRememberedSkip(b *testing.B) {
	cfg := memoryCfg(b, config.Remember{Entries: 10000, TTL: time.Hour})
	p, m := newProcessorTB(b, cfg)
	const files = 1000
	warm := newStream()
	for i := range files {
		warm.start(p, &fakeStream{ctx: b.Context()})
		rememberFile(b, warm, i, false)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		s := newStream()
		i := 0
		for pb.Next() {
			s.start(p, &fakeStream{ctx: b.Context()})
			rememberFile(b, s, i%files, true)
			i++
		}
	})
	if n := testutil.ToFloat64(m.Skipped.WithLabelValues(string(skipRememberedNoMatch))); n < float64(b.N) {
		b.Fatalf("%v remembered skips in %d runs", n, b.N)
	}
}

// rememberFile plays GET /static/i.css and its response headers on s; the
// body (no match) is streamed unless wantSkip.
func rememberFile(b *testing.B, s *stream, i int, wantSkip bool) {
	path := fmt.Sprintf("/static/%d.css", i)
	if _, err := s.requestHeaders(&extprocv3.HttpHeaders{Headers: headerMap([]string{":method", "GET", ":authority", "site.test", ":path", path})}); err != nil {
		b.Fatal(err)
	}
	resp, err := s.responseHeaders(&extprocv3.HttpHeaders{Headers: headerMap([]string{":status", "200", "content-type", "text/css",
		"etag", fmt.Sprintf(`"%d"`, i), "content-length", "5"})})
	if err != nil {
		b.Fatal(err)
	}
	if skip := resp.GetModeOverride().GetResponseBodyMode() == skipped; skip != wantSkip {
		b.Fatalf("%s: skipped %v, want %v", path, skip, wantSkip)
	}
	if !wantSkip {
		if _, err := s.responseBody(&extprocv3.HttpBody{EndOfStream: true}, [][]byte{[]byte("p{};\n")}); err != nil {
			b.Fatal(err)
		}
	}
	s.finish()
}

// TestRememberLeavesShadowedRuleSets: a rule set with a shadow is streamed
// every time, for the shadow to see it.
func TestRememberLeavesShadowedRuleSets(t *testing.T) {
	cfg := mustConfig(t, config.Config{
		RuleSets: []*config.RuleSet{
			{Name: "css", ContentTypes: []string{"text/css"}, Rules: []matcher.Rule{literal("foo", "bar")}},
			{Name: "css-v2", ContentTypes: []string{"text/css"}, Rules: []matcher.Rule{literal("p{", "P{")}},
		},
		Shadows:  map[string]string{"css": "css-v2"},
		Remember: config.Remember{Entries: 100, TTL: time.Minute},
	})
	synctest.Test(t, func(t *testing.T) {
		hdrs := []string{"etag", `"v1"`, "content-length", "5"}
		m := playMemory(t, cfg, []memStep{
			{name: "first", path: "/app.css", hdrs: hdrs, body: "p{};\n", want: streamed},
			{name: "again", path: "/app.css", hdrs: hdrs, body: "p{};\n", want: streamed},
		})
		if n := testutil.ToFloat64(m.Remember.Entries); n != 0 {
			t.Errorf("entries %v, want 0", n)
		}
	})
}

func TestMatchedRules(t *testing.T) {
	tests := []struct {
		replacements []int
		want         []uint64
	}{
		{nil, nil},
		{[]int{0, 0, 0}, nil},
		{[]int{1, 0, 7}, []uint64{0b101}},
		{append(make([]int, 64), 2), []uint64{0, 1}},
		{append(append(make([]int, 63), 1), make([]int, 67)...), []uint64{1 << 63, 0, 0}},
	}
	for _, tt := range tests {
		if got := matchedRules(tt.replacements); !slices.Equal(got, tt.want) {
			t.Errorf("matchedRules(%v) = %b, want %b", tt.replacements, got, tt.want)
		}
	}
}

// TestRememberedHeadAndNotModified: a HEAD, or a 304, of a response the
// memory would skip (no rule matched its last body, same validator) keeps
// the origin's headers, as the GET does; one whose last body matched gets
// the rewrite's.
func TestRememberedHeadAndNotModified(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, _ := newProcessor(t, memoryCfg(t, config.Remember{Entries: 100, TTL: time.Minute}))
		playMemoryOn(t, p, "/plain.css", `"p"`, "p { x: 1; }\n")
		playMemoryOn(t, p, "/foo.css", `"f"`, "a { foo: 1 }")
		tests := []struct {
			method, path, status, etag string
			wantRemove, wantSet        []string
		}{
			{"HEAD", "/plain.css", "200", `"p"`, nil, []string{"content-length", "12"}},
			{"GET", "/plain.css", "304", `"p"`, nil, []string{"content-length", "12"}},
			{"HEAD", "/plain.css", "200", `"p2"`, []string{"content-length", "last-modified"}, []string{"etag", `W/"p2"`}}, // changed: not known
			{"HEAD", "/foo.css", "200", `"f"`, []string{"content-length", "last-modified"}, []string{"etag", `W/"f"`}},
		}
		for _, tt := range tests {
			h := startStream(t, p)
			h.sendRequestHeaders(":method", tt.method, ":authority", "site.test", ":path", tt.path)
			h.wantHeadersReply()
			h.sendResponseHeaders(true, ":status", tt.status, "content-type", "text/css", "etag", tt.etag, "content-length", "12")
			c := h.wantModeOverride(skipped)
			var set []string
			for _, o := range c.GetHeaderMutation().GetSetHeaders() {
				set = append(set, o.GetHeader().GetKey(), string(o.GetHeader().GetRawValue()))
			}
			if got := c.GetHeaderMutation().GetRemoveHeaders(); !equalStrings(got, tt.wantRemove) || !equalStrings(set, tt.wantSet) {
				t.Errorf("%s %s %s etag %s: remove %q set %q, want remove %q set %q", tt.method, tt.path, tt.status, tt.etag, got, set, tt.wantRemove, tt.wantSet)
			}
			h.closeOK()
		}
	})
}

// playMemoryOn plays a GET of path on p whose 200 response (text/css,
// etag, 12 bytes) has body, rewritten, so that p's memory learns it.
func playMemoryOn(t *testing.T, p *Processor, path, etag, body string) {
	t.Helper()
	h := startStream(t, p)
	h.sendRequestHeaders(":method", "GET", ":authority", "site.test", ":path", path)
	h.wantHeadersReply()
	h.sendResponseHeaders(false, ":status", "200", "content-type", "text/css", "etag", etag, "content-length", "12")
	h.wantModeOverride(streamed)
	h.sendBody(body, true)
	h.wantBodyReply()
	h.closeOK()
}
