//go:build e2e

package e2e

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// resizer is a minimal ext_proc server used to prove that Envoy accepts
// STREAMED body replies of a different size than the chunk they answer,
// including empty replies and bytes held back until end_of_stream — exactly
// what streamsub's rewriter does. It answers chunk i with the transform of
// chunk i-1 and, at end_of_stream, with the rest.
type resizer struct {
	extprocv3.UnimplementedExternalProcessorServer

	mu     sync.Mutex
	chunks map[string][][]byte // path → body chunks as Envoy sent them
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
			resp.Response = &extprocv3.ProcessingResponse_ResponseHeaders{ResponseHeaders: &extprocv3.HeadersResponse{}}
		case *extprocv3.ProcessingRequest_ResponseBody:
			chunk := v.ResponseBody.Body
			r.mu.Lock()
			r.chunks[path] = append(r.chunks[path], bytes.Clone(chunk))
			r.mu.Unlock()
			out := held
			held = transform(n, chunk)
			n++
			if v.ResponseBody.EndOfStream {
				out = append(out, held...)
				held = nil
			}
			resp.Response = &extprocv3.ProcessingResponse_ResponseBody{ResponseBody: &extprocv3.BodyResponse{
				Response: &extprocv3.CommonResponse{
					BodyMutation: &extprocv3.BodyMutation{Mutation: &extprocv3.BodyMutation_Body{Body: out}},
				},
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
	r := &resizer{chunks: map[string][][]byte{}}
	s := grpc.NewServer()
	extprocv3.RegisterExternalProcessorServer(s, r)
	healthpb.RegisterHealthServer(s, health.NewServer())
	go s.Serve(l)
	t.Cleanup(s.Stop)
	return r, l.Addr().(*net.TCPAddr).Port
}

// flushingOrigin serves /flush?n=N&size=S (N pieces of S bytes, flushed
// apart, no content-length) and /fixed?size=S (one write, content-length set).
func flushingOrigin(t *testing.T) int {
	t.Helper()
	piece := func(i, size int) []byte {
		b := make([]byte, size)
		for j := range b {
			b[j] = "abcdefghijklmnopqrstuvwxyz"[(i+j)%26]
		}
		return b
	}
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

// TestEnvoyStreamedResizing is the experiment design.md §2 asks for: Envoy
// 1.40 in STREAMED mode must deliver the server's replies, whatever their
// size, in order, and nothing else.
func TestEnvoyStreamedResizing(t *testing.T) {
	dir := logDir(t)
	r, grpcPort := startResizer(t)
	originPort := flushingOrigin(t)
	e := startEnvoy(t, dir, grpcPort, originPort)
	c := newClient()
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
