//go:build e2e

package e2e

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	filterextprocv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_proc/v3"
	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
)

// resizer is a minimal ext_proc server used to prove how Envoy 1.40 treats
// what streamsub does: in its response headers reply it switches the body
// to FULL_DUPLEX_STREAMED (the configured mode is NONE), then answers with
// streamed_response bodies of another size than the chunks — chunk i-1's
// transform with chunk i, held bytes at end_of_stream — or, for a path with
// skip=1, switches the body off. With die=1 it fails the stream after its
// first body reply; with streamed=1 it switches to STREAMED instead and
// answers with plain body mutations (what streamsub used to do).
type resizer struct {
	extprocv3.UnimplementedExternalProcessorServer

	mu     sync.Mutex
	chunks map[string][][]byte // path → body chunks as Envoy sent them
	clen   map[string]string   // path → content-length in the response headers sent
}

// transform changes the size of chunk i: doubled, replaced by a short
// marker naming its length, or dropped.
func transform(i int, chunk []byte) []byte {
	switch i % 3 {
	case 0:
		return append(bytes.ToUpper(chunk), chunk...)
	case 1:
		return []byte("<" + strconv.Itoa(len(chunk)) + ">")
	default:
		return nil
	}
}

// expected is what the client must receive for the chunks Envoy sent.
func expected(chunks [][]byte) []byte {
	var out []byte
	for i, c := range chunks {
		out = append(out, transform(i, c)...)
	}
	return out
}

func (r *resizer) Process(srv extprocv3.ExternalProcessor_ProcessServer) error {
	var (
		path string
		held []byte
		n    int
	)
	for {
		req, err := srv.Recv()
		if err != nil {
			return nil // io.EOF or cancel: the HTTP request ended
		}
		resp := &extprocv3.ProcessingResponse{}
		switch v := req.Request.(type) {
		case *extprocv3.ProcessingRequest_RequestHeaders:
			for _, h := range v.RequestHeaders.GetHeaders().GetHeaders() {
				if h.Key == ":path" {
					path = string(h.RawValue)
				}
			}
			resp.Response = &extprocv3.ProcessingResponse_RequestHeaders{RequestHeaders: &extprocv3.HeadersResponse{}}
		case *extprocv3.ProcessingRequest_ResponseHeaders:
			var clen string
			for _, h := range v.ResponseHeaders.GetHeaders().GetHeaders() {
				if h.Key == "content-length" {
					clen = string(h.RawValue)
				}
			}
			r.mu.Lock()
			r.clen[path] = clen
			r.mu.Unlock()
			resp.Response = &extprocv3.ProcessingResponse_ResponseHeaders{ResponseHeaders: &extprocv3.HeadersResponse{}}
			// What streamsub does: both body modes restated; a body it
			// rewrites goes full duplex (with trailers, which that mode
			// needs) and loses its content-length.
			mode := &filterextprocv3.ProcessingMode{
				RequestBodyMode:     filterextprocv3.ProcessingMode_NONE,
				ResponseBodyMode:    filterextprocv3.ProcessingMode_FULL_DUPLEX_STREAMED,
				ResponseTrailerMode: filterextprocv3.ProcessingMode_SEND,
			}
			switch {
			case strings.Contains(path, "skip=1"):
				mode.ResponseBodyMode, mode.ResponseTrailerMode = filterextprocv3.ProcessingMode_NONE, filterextprocv3.ProcessingMode_SKIP
			case strings.Contains(path, "streamed=1"):
				mode.ResponseBodyMode, mode.ResponseTrailerMode = filterextprocv3.ProcessingMode_STREAMED, filterextprocv3.ProcessingMode_SKIP
			}
			resp.ModeOverride = mode
			if mode.ResponseBodyMode != filterextprocv3.ProcessingMode_NONE {
				resp.Response = &extprocv3.ProcessingResponse_ResponseHeaders{ResponseHeaders: &extprocv3.HeadersResponse{
					Response: &extprocv3.CommonResponse{HeaderMutation: &extprocv3.HeaderMutation{RemoveHeaders: []string{"content-length"}}},
				}}
			}
		case *extprocv3.ProcessingRequest_ResponseBody:
			if strings.Contains(path, "die=1") && n == 1 {
				return status.Error(codes.Unavailable, "resizer: dying as asked")
			}
			chunk := v.ResponseBody.Body
			r.mu.Lock()
			r.chunks[path] = append(r.chunks[path], bytes.Clone(chunk))
			r.mu.Unlock()
			out := held
			held = transform(n, chunk)
			n++
			eos := v.ResponseBody.EndOfStream
			if eos {
				out = append(out, held...)
				held = nil
			}
			m := &extprocv3.BodyMutation{Mutation: &extprocv3.BodyMutation_StreamedResponse{
				StreamedResponse: &extprocv3.StreamedBodyResponse{Body: out, EndOfStream: eos}}}
			if strings.Contains(path, "streamed=1") {
				m = &extprocv3.BodyMutation{Mutation: &extprocv3.BodyMutation_Body{Body: out}}
			}
			resp.Response = &extprocv3.ProcessingResponse_ResponseBody{ResponseBody: &extprocv3.BodyResponse{
				Response: &extprocv3.CommonResponse{BodyMutation: m},
			}}
		default:
			return fmt.Errorf("unexpected request %T", v)
		}
		if err := srv.Send(resp); err != nil {
			return err
		}
	}
}

// startResizer serves the resizer (and gRPC health) on a free loopback port.
func startResizer(t *testing.T) (*resizer, int) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &resizer{chunks: map[string][][]byte{}, clen: map[string]string{}}
	s := grpc.NewServer()
	extprocv3.RegisterExternalProcessorServer(s, r)
	healthpb.RegisterHealthServer(s, health.NewServer())
	go s.Serve(l)
	t.Cleanup(s.Stop)
	return r, l.Addr().(*net.TCPAddr).Port
}

// resizerStack starts a resizer, a flushing origin and Envoy between
// them, and returns a client for Envoy.
func resizerStack(t *testing.T) (*resizer, *envoyProc, *http.Client) {
	t.Helper()
	r, grpcPort := startResizer(t)
	e := startEnvoy(t, logDir(t), grpcPort, flushingOrigin(t))
	return r, e, newClient()
}

// flushingOrigin serves /flush?n=N&size=S (N pieces of S bytes, flushed
// apart, no content-length) and /fixed?size=S (one write, content-length set).
func piece(i, size int) []byte {
	b := make([]byte, size)
	for j := range b {
		b[j] = "abcdefghijklmnopqrstuvwxyz"[(i+j)%26]
	}
	return b
}

// flushBody is the body flushingOrigin sends for path.
func flushBody(path string) []byte {
	u, _ := url.Parse(path)
	size, _ := strconv.Atoi(u.Query().Get("size"))
	if u.Path == "/fixed" {
		return piece(0, size)
	}
	n, _ := strconv.Atoi(u.Query().Get("n"))
	var b []byte
	for i := range n {
		b = append(b, piece(i, size)...)
	}
	return b
}

func flushingOrigin(t *testing.T) int {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/flush", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		size, _ := strconv.Atoi(r.URL.Query().Get("size"))
		w.Header().Set("Content-Type", "text/html")
		for i := range n {
			w.Write(piece(i, size))
			w.(http.Flusher).Flush()
			time.Sleep(5 * time.Millisecond)
		}
	})
	mux.HandleFunc("/fixed", func(w http.ResponseWriter, r *http.Request) {
		size, _ := strconv.Atoi(r.URL.Query().Get("size"))
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Content-Length", strconv.Itoa(size))
		w.Write(piece(0, size))
	})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &http.Server{Handler: mux}
	go s.Serve(l)
	t.Cleanup(func() { s.Close() })
	return l.Addr().(*net.TCPAddr).Port
}

// TestEnvoyFullDuplexResizing is the experiment design.md §2 asks for:
// Envoy 1.40, configured with response body NONE and switched to
// FULL_DUPLEX_STREAMED in the response headers reply, must deliver the
// server's replies, whatever their size, in order, and nothing else.
func TestEnvoyFullDuplexResizing(t *testing.T) {
	r, e, c := resizerStack(t)
	cases := []struct {
		name, path string
		wantLen    int
	}{
		{"few flushed pieces", "/flush?n=7&size=100", 700},
		{"many flushed pieces", "/flush?n=200&size=3000", 600000},
		{"one tiny piece", "/flush?n=1&size=1", 1},
		{"no body bytes", "/flush?n=0&size=0", 0},
		{"content-length 1 MiB", "/fixed?size=1048576", 1 << 20},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := do(t, c, "GET", e.url+tc.path, nil)
			if resp.StatusCode != 200 {
				t.Fatalf("status %d: %s", resp.StatusCode, body)
			}
			r.mu.Lock()
			chunks := r.chunks[tc.path]
			r.mu.Unlock()
			seen := bytes.Join(chunks, nil)
			if len(seen) != tc.wantLen {
				t.Fatalf("ext_proc saw %d body bytes in %d chunks, origin sent %d", len(seen), len(chunks), tc.wantLen)
			}
			want := expected(chunks)
			if !bytes.Equal(body, want) {
				t.Fatalf("client got %d bytes, want %d (%d chunks, sizes %v)\n got %.200q\nwant %.200q",
					len(body), len(want), len(chunks), sizes(chunks), body, want)
			}
			if cl := resp.Header.Get("Content-Length"); cl != "" && cl != strconv.Itoa(len(body)) {
				t.Errorf("content-length %s on a %d-byte resized body", cl, len(body))
			}
			t.Logf("%d chunks %v → %d bytes out, content-length %q, transfer-encoding %v",
				len(chunks), sizes(chunks), len(body), resp.Header.Get("Content-Length"), resp.TransferEncoding)
		})
	}
}

// TestEnvoyModeOverrideNone checks the skip path streamsub relies on: a
// response-headers reply with mode_override response_body_mode NONE makes
// Envoy pass the body untouched, content-length kept (the configured mode
// is NONE, so Envoy never dropped it), without sending it; and for HEAD no
// body chunk is sent at all.
func TestEnvoyModeOverrideNone(t *testing.T) {
	r, e, c := resizerStack(t)
	for _, path := range []string{"/fixed?size=5000&skip=1", "/flush?n=5&size=100&skip=1"} {
		resp, body := do(t, c, "GET", e.url+path, nil)
		r.mu.Lock()
		n := len(r.chunks[path])
		sent := r.clen[path]
		r.mu.Unlock()
		if n != 0 {
			t.Errorf("%s: %d body chunks sent after mode override NONE", path, n)
		}
		if !bytes.Equal(body, flushBody(path)) {
			t.Errorf("%s: body changed (%d bytes)", path, len(body))
		}
		got := resp.Header.Get("Content-Length")
		t.Logf("%s: %d bytes; content-length to ext_proc %q, to the client %q", path, len(body), sent, got)
		if got != sent {
			t.Errorf("%s: content-length %q to the client, %q from the origin", path, got, sent)
		}
	}
	resp, body := do(t, c, "HEAD", e.url+"/fixed?size=5000&skip=1", nil)
	r.mu.Lock()
	n := len(r.chunks["/fixed?size=5000&skip=1"])
	r.mu.Unlock()
	t.Logf("HEAD: status %d, %d body bytes, content-length %q, %d body chunks to ext_proc", resp.StatusCode, len(body), resp.Header.Get("Content-Length"), n)
	if n != 0 || len(body) != 0 || resp.Header.Get("Content-Length") != "5000" {
		t.Errorf("HEAD: %d body chunks to ext_proc, %d body bytes to the client, content-length %q", n, len(body), resp.Header.Get("Content-Length"))
	}
}

// TestEnvoyFailOpenMidBody is the fact behind the failure modes (design.md
// §2): on a failure_mode_allow route, a stream that fails after its first
// body reply resets the response when the body is FULL_DUPLEX_STREAMED —
// the client can tell — while in STREAMED mode Envoy fails open and passes
// the rest unmodified: a complete 200 that mixes the server's bytes with
// the origin's, losing what the server held.
func TestEnvoyFailOpenMidBody(t *testing.T) {
	_, e, c := resizerStack(t)
	for _, tc := range []struct {
		path     string
		complete bool
	}{
		{"/failopen/flush?n=5&size=100&die=1", false},
		{"/failopen/flush?n=5&size=100&die=1&streamed=1", true},
	} {
		resp, err := c.Get(e.url + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Logf("%s: status %d, %d bytes, read error %v", tc.path, resp.StatusCode, len(body), err)
		if complete := err == nil; complete != tc.complete {
			t.Errorf("%s: complete response %v, want %v", tc.path, complete, tc.complete)
		}
		if original := flushBody("/flush?n=5&size=100"); tc.complete && (bytes.Equal(body, original) || len(body) == len(original)) {
			t.Errorf("%s: the body is the origin's (or as long): the failure did not happen mid-body", tc.path)
		}
	}
}

func sizes(chunks [][]byte) []int {
	s := make([]int, 0, len(chunks))
	for _, c := range chunks {
		s = append(s, len(c))
	}
	if len(s) > 20 {
		return append(s[:10:10], s[len(s)-10:]...)
	}
	return s
}
