package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	extprocfilterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_proc/v3"
	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"

	"github.com/streamsub/streamsub/config"
	"github.com/streamsub/streamsub/config/load"
)

const configV1 = `
rule_sets:
  - name: v1
    content_types: [text/html]
    rules:
      - {literal: "foo", replace: "bar"}
hosts: {"*": v1}
header_filter:
  request: {remove: [x-debug-token]}
`

const configV2 = `
rule_sets:
  - name: v2
    content_types: [text/plain]
    rules:
      - {literal: "foo", replace: "baz"}
hosts: {"*": v2}
`

// testServer is a Server serving on loopback ports picked by the kernel.
type testServer struct {
	*Server
	path   string
	addr   string // the gRPC listener
	grpc   *grpc.ClientConn
	admin  string // http://host:port
	cancel context.CancelFunc
	done   chan error
	halted bool // stop has returned
}

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func startServer(t *testing.T, mutate func(*Settings)) *testServer {
	t.Helper()
	return startServerTB(t, mutate)
}

func startServerTB(t testing.TB, mutate func(*Settings)) *testServer {
	t.Helper()
	path := filepath.Join(t.TempDir(), "streamsub.yaml")
	writeFile(t, path, configV1)
	st := DefaultSettings()
	st.ConfigPath = path
	st.WatchInterval = 0 // tests reload explicitly
	st.DrainTimeout = 10 * time.Second
	st.DrainDelay = 0
	if mutate != nil {
		mutate(&st)
	}
	srv, err := New(st, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	gl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	al, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ts := &testServer{Server: srv, path: path, cancel: cancel, done: make(chan error, 1),
		addr: gl.Addr().String(), admin: "http://" + al.Addr().String()}
	go func() { ts.done <- srv.Serve(ctx, gl, al) }()
	conn, err := grpc.NewClient(gl.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	ts.grpc = conn
	t.Cleanup(func() {
		conn.Close()
		ts.stop(t)
	})
	return ts
}

// stop cancels Serve and waits for it to return.
func (ts *testServer) stop(t testing.TB) {
	t.Helper()
	if ts.halted {
		return
	}
	ts.cancel()
	select {
	case err := <-ts.done:
		ts.halted = true
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Serve did not return after cancel")
	}
}

func (ts *testServer) get(t *testing.T, path string) (int, string) {
	t.Helper()
	resp, err := http.Get(ts.admin + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// process opens a Process stream, with optional initial metadata.
func (ts *testServer) process(t testing.TB, ctx context.Context, md ...string) extprocv3.ExternalProcessor_ProcessClient {
	t.Helper()
	if len(md) > 0 {
		ctx = metadata.AppendToOutgoingContext(ctx, md...)
	}
	pc, err := extprocv3.NewExternalProcessorClient(ts.grpc).Process(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return pc
}

func headers(kv ...string) *corev3.HeaderMap {
	hm := &corev3.HeaderMap{}
	for i := 0; i+1 < len(kv); i += 2 {
		hm.Headers = append(hm.Headers, &corev3.HeaderValue{Key: kv[i], RawValue: []byte(kv[i+1])})
	}
	return hm
}

func roundTrip(t testing.TB, pc extprocv3.ExternalProcessor_ProcessClient, req *extprocv3.ProcessingRequest) *extprocv3.ProcessingResponse {
	t.Helper()
	if err := pc.Send(req); err != nil {
		t.Fatalf("Send: %v", err)
	}
	resp, err := pc.Recv()
	if err != nil {
		t.Fatalf("Recv: %v", err)
	}
	return resp
}

func requestHeaders(kv ...string) *extprocv3.ProcessingRequest {
	return &extprocv3.ProcessingRequest{Request: &extprocv3.ProcessingRequest_RequestHeaders{
		RequestHeaders: &extprocv3.HttpHeaders{Headers: headers(kv...), EndOfStream: true}}}
}

func responseHeaders(kv ...string) *extprocv3.ProcessingRequest {
	return &extprocv3.ProcessingRequest{Request: &extprocv3.ProcessingRequest_ResponseHeaders{
		ResponseHeaders: &extprocv3.HttpHeaders{Headers: headers(kv...)}}}
}

func body(b string, eos bool) *extprocv3.ProcessingRequest {
	return &extprocv3.ProcessingRequest{Request: &extprocv3.ProcessingRequest_ResponseBody{
		ResponseBody: &extprocv3.HttpBody{Body: []byte(b), EndOfStream: eos}}}
}

func bodyMode(resp *extprocv3.ProcessingResponse) extprocfilterv3.ProcessingMode_BodySendMode {
	return resp.GetModeOverride().GetResponseBodyMode()
}

// expectedRewrite is what the rule set named name makes of chunks: the
// server must pass the matcher's output through unchanged.
func expectedRewrite(t *testing.T, cfg *config.Config, name string, chunks ...string) string {
	t.Helper()
	st := cfg.RuleSet(name).Compiled.NewStream()
	var out []byte
	for _, c := range chunks {
		out = st.Write(out, []byte(c))
	}
	return string(st.Close(out))
}

func TestHealthAndProcessRoundTrip(t *testing.T) {
	ts := startServer(t, nil)
	for _, svc := range []string{"", ExtProcService} {
		resp, err := healthpb.NewHealthClient(ts.grpc).Check(t.Context(), &healthpb.HealthCheckRequest{Service: svc})
		if err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
			t.Fatalf("health %q = %v, %v; want SERVING", svc, resp.GetStatus(), err)
		}
	}

	pc := ts.process(t, t.Context())
	r := roundTrip(t, pc, requestHeaders(":method", "GET", ":authority", "site.test", ":path", "/", "X-Debug-Token", "s"))
	if got := r.GetRequestHeaders().GetResponse().GetHeaderMutation().GetRemoveHeaders(); len(got) != 1 || got[0] != "X-Debug-Token" {
		t.Errorf("remove_headers = %q, want [X-Debug-Token]", got)
	}
	r = roundTrip(t, pc, responseHeaders(":status", "200", "content-type", "text/html", "content-length", "12"))
	if bodyMode(r) != extprocfilterv3.ProcessingMode_FULL_DUPLEX_STREAMED {
		t.Fatalf("mode_override %v, want FULL_DUPLEX_STREAMED", r.GetModeOverride())
	}
	chunks := []string{"<p>fo", "o</p>", ""}
	for i, c := range chunks {
		if err := pc.Send(body(c, i == len(chunks)-1)); err != nil {
			t.Fatal(err)
		}
	}
	var got strings.Builder
	for range chunks {
		r, err := pc.Recv()
		if err != nil {
			t.Fatal(err)
		}
		m := r.GetResponseBody().GetResponse().GetBodyMutation().GetStreamedResponse()
		if m == nil {
			t.Fatalf("body reply %v without a streamed body", r)
		}
		got.Write(m.Body)
	}
	if want := expectedRewrite(t, ts.Config(), "v1", chunks...); got.String() != want {
		t.Errorf("body = %q, want %q", got.String(), want)
	}
	if err := pc.CloseSend(); err != nil {
		t.Fatal(err)
	}
	if _, err := pc.Recv(); err != io.EOF {
		t.Errorf("after CloseSend: %v, want io.EOF", err)
	}
}

// TestLargeBodiesRoundTrip: bodies of many HTTP/2 frames, pipelined on
// concurrent streams, cross the real gRPC server (whose codec decodes
// chunks in place and hands reply bodies to the transport) unchanged but
// for the rewrite, each stream its own.
func TestLargeBodiesRoundTrip(t *testing.T) {
	ts := startServer(t, nil)
	const streams = 4
	errs := make(chan string, streams)
	for i := range streams {
		go func() {
			fill := strings.Repeat(string(rune('a'+i)), 97)
			chunks := []string{strings.Repeat(fill+"foo", 3000), "fo", strings.Repeat("o"+fill+"f", 700), "", strings.Repeat(fill, 4000)}
			pc := ts.process(t, t.Context())
			roundTrip(t, pc, requestHeaders(":method", "GET", ":authority", "site.test", ":path", "/"))
			roundTrip(t, pc, responseHeaders(":status", "200", "content-type", "text/html"))
			for j, c := range chunks {
				if err := pc.Send(body(c, j == len(chunks)-1)); err != nil {
					errs <- err.Error()
					return
				}
			}
			var got strings.Builder
			for range chunks {
				r, err := pc.Recv()
				if err != nil {
					errs <- err.Error()
					return
				}
				got.Write(r.GetResponseBody().GetResponse().GetBodyMutation().GetStreamedResponse().GetBody())
			}
			pc.CloseSend()
			if want := expectedRewrite(t, ts.Config(), "v1", chunks...); got.String() != want {
				errs <- fmt.Sprintf("stream %d: body of %d bytes differs from the %d expected", i, got.Len(), len(want))
				return
			}
			errs <- ""
		}()
	}
	for range streams {
		if e := <-errs; e != "" {
			t.Error(e)
		}
	}
}

func TestReload(t *testing.T) {
	ts := startServer(t, nil)
	old := ts.Config()

	// A stream that started before the reload keeps the old config.
	before := ts.process(t, t.Context())
	roundTrip(t, before, requestHeaders(":method", "GET", ":authority", "site.test"))

	writeFile(t, ts.path, "rule_sets: [{name: broken, rules: [{regex: '(', replace: x}]}]\n")
	err := ts.Reload()
	if err == nil {
		t.Fatal("Reload of a bad file succeeded")
	}
	_, loadErr := load.File(ts.path)
	if loadErr == nil || err.Error() != loadErr.Error() {
		t.Errorf("Reload error %q, want the loader's %q", err, loadErr)
	}
	if ts.Config() != old {
		t.Fatal("bad file replaced the config")
	}
	if n := testutil.ToFloat64(ts.metrics.reloads.WithLabelValues(reloadFailed)); n != 1 {
		t.Errorf("failed reloads = %v, want 1", n)
	}
	code, hz := ts.get(t, "/healthz")
	var h healthzBody
	if err := json.Unmarshal([]byte(hz), &h); err != nil {
		t.Fatalf("/healthz %q: %v", hz, err)
	}
	if code != http.StatusOK || h.LastReload.OK || h.LastReload.Error != err.Error() || h.RuleSets[0] != "v1" {
		t.Errorf("/healthz = %d %s, want 200 serving v1 with the reload error", code, hz)
	}

	writeFile(t, ts.path, configV2)
	if err := ts.Reload(); err != nil {
		t.Fatalf("Reload: %v", err)
	}
	if ts.Config().RuleSet("v2") == nil {
		t.Fatal("good file not installed")
	}
	if n := testutil.ToFloat64(ts.metrics.reloads.WithLabelValues(reloadOK)); n != 1 {
		t.Errorf("ok reloads = %v, want 1", n)
	}

	// Old stream: v1 rewrites text/html.
	if r := roundTrip(t, before, responseHeaders(":status", "200", "content-type", "text/html")); bodyMode(r) != extprocfilterv3.ProcessingMode_FULL_DUPLEX_STREAMED {
		t.Errorf("stream from before the reload: mode %v, want FULL_DUPLEX_STREAMED (v1 takes text/html)", r.GetModeOverride())
	}
	// New streams: v2 takes text/plain only.
	for ct, want := range map[string]extprocfilterv3.ProcessingMode_BodySendMode{
		"text/html":  extprocfilterv3.ProcessingMode_NONE,
		"text/plain": extprocfilterv3.ProcessingMode_FULL_DUPLEX_STREAMED,
	} {
		pc := ts.process(t, t.Context())
		roundTrip(t, pc, requestHeaders(":method", "GET", ":authority", "site.test"))
		if r := roundTrip(t, pc, responseHeaders(":status", "200", "content-type", ct)); bodyMode(r) != want {
			t.Errorf("new stream, %s: mode %v, want %v", ct, r.GetModeOverride(), want)
		}
		pc.CloseSend()
	}
	before.CloseSend()
}

func TestWatchReloadsChangedFile(t *testing.T) {
	ts := startServer(t, func(s *Settings) { s.WatchInterval = 20 * time.Millisecond })
	writeFile(t, ts.path, configV2)
	deadline := time.Now().Add(20 * time.Second)
	for ts.Config().RuleSet("v2") == nil {
		if time.Now().After(deadline) {
			t.Fatal("changed file not reloaded")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := testutil.ToFloat64(ts.metrics.reloads.WithLabelValues(reloadOK)); n != 1 {
		t.Errorf("ok reloads = %v, want 1", n)
	}
}

func TestMetricsExposed(t *testing.T) {
	ts := startServer(t, nil)
	pc := ts.process(t, t.Context())
	roundTrip(t, pc, requestHeaders(":method", "GET", ":authority", "site.test"))
	roundTrip(t, pc, responseHeaders(":status", "200", "content-type", "image/png"))
	pc.CloseSend()
	pc.Recv()

	code, text := ts.get(t, "/metrics")
	if code != http.StatusOK {
		t.Fatalf("/metrics: %d", code)
	}
	for _, name := range []string{
		"streamsub_streams_total 1",
		"streamsub_streams_active",
		`streamsub_body_bytes_in_total{rule_set="v1"}`,
		`streamsub_body_bytes_out_total{rule_set="v1"}`,
		`streamsub_replacements_total{rule_set="v1"}`,
		`streamsub_bodies_rewritten_total{rule_set="v1"}`,
		`streamsub_bodies_skipped_total{reason="content_type"} 1`,
		`streamsub_stream_buffer_cap_exceeded_total{rule_set="v1"}`,
		`streamsub_stream_errors_total{error="out_of_order"}`,
		`streamsub_config_reloads_total{result="failed"} 0`,
		`streamsub_config_reloads_total{result="ok"} 0`,
		"streamsub_config_last_reload_successful 1",
		"streamsub_config_loaded_timestamp_seconds",
		"streamsub_chunk_processing_seconds_bucket",
		"go_goroutines",
	} {
		if !strings.Contains(text, name) {
			t.Errorf("/metrics lacks %s", name)
		}
	}
}

// TestPprof: Go's profiles are served on the admin listener with -pprof,
// and only then.
func TestPprof(t *testing.T) {
	for _, on := range []bool{false, true} {
		ts := startServer(t, func(s *Settings) { s.Pprof = on })
		code, text := ts.get(t, "/debug/pprof/")
		if want := map[bool]int{false: http.StatusNotFound, true: http.StatusOK}[on]; code != want {
			t.Errorf("-pprof=%v: /debug/pprof/ answered %d, want %d", on, code, want)
		}
		if on && !strings.Contains(text, "goroutine") {
			t.Errorf("-pprof: /debug/pprof/ lists no goroutine profile:\n%.300s", text)
		}
		if code, _ := ts.get(t, "/debug/pprof/cmdline"); on && code != http.StatusOK {
			t.Errorf("-pprof: /debug/pprof/cmdline answered %d", code)
		}
		ts.stop(t)
	}
}

func TestGracefulStop(t *testing.T) {
	ts := startServer(t, nil)
	watch, err := healthpb.NewHealthClient(ts.grpc).Watch(t.Context(), &healthpb.HealthCheckRequest{Service: ExtProcService})
	if err != nil {
		t.Fatal(err)
	}
	if r, err := watch.Recv(); err != nil || r.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health watch: %v, %v; want SERVING", r.GetStatus(), err)
	}
	// A stream in flight when SIGTERM comes.
	pc := ts.process(t, t.Context())
	roundTrip(t, pc, requestHeaders(":method", "GET", ":authority", "site.test"))

	ts.cancel()
	if r, err := watch.Recv(); err != nil || r.GetStatus() != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Fatalf("health watch after stop: %v, %v; want NOT_SERVING", r.GetStatus(), err)
	}
	if code, _ := ts.get(t, "/healthz"); code != http.StatusServiceUnavailable {
		t.Errorf("/healthz while draining: %d, want 503", code)
	}
	// The in-flight stream still completes.
	if r := roundTrip(t, pc, responseHeaders(":status", "200", "content-type", "text/html")); bodyMode(r) != extprocfilterv3.ProcessingMode_FULL_DUPLEX_STREAMED {
		t.Errorf("draining stream: mode %v, want FULL_DUPLEX_STREAMED", r.GetModeOverride())
	}
	r := roundTrip(t, pc, body("foo", true))
	if got := r.GetResponseBody().GetResponse().GetBodyMutation().GetStreamedResponse().GetBody(); string(got) != "bar" {
		t.Errorf("draining stream: reply %v, want the rewritten body %q", r, "bar")
	}
	pc.CloseSend()
	pc.Recv()
	// The health watch is an RPC too; GracefulStop waits for it.
	watch.CloseSend()
	ts.grpc.Close()
}

// TestDrainTimeout: a stream that never ends is cut at the deadline.
func TestDrainTimeout(t *testing.T) {
	ts := startServer(t, func(s *Settings) { s.DrainTimeout = 50 * time.Millisecond })
	pc := ts.process(t, t.Context())
	roundTrip(t, pc, requestHeaders(":method", "GET", ":authority", "site.test"))
	ts.stop(t) // fails the test if Serve hangs
	if _, err := pc.Recv(); err == nil {
		t.Error("stream still open after the hard stop")
	}
}

func TestBadConfigAtStart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.yaml")
	writeFile(t, path, "rule_sets: [{name: x, rules: [{literal: a, replace: '$x'}]}]\n")
	_, loadErr := load.File(path)
	if loadErr == nil {
		t.Fatal("load.File accepted a bad file")
	}
	st := DefaultSettings()
	st.ConfigPath = path
	if _, err := New(st, nil); err == nil || err.Error() != loadErr.Error() {
		t.Fatalf("New = %v, want the loader's error %q", err, loadErr)
	}
	st.ConfigPath = ""
	if _, err := New(st, nil); err == nil {
		t.Fatal("New without a config path succeeded")
	}
}
