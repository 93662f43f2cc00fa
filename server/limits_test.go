package server

import (
	"context"
	"io"
	"net"
	"testing"
	"time"

	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"golang.org/x/net/http2"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
)

// openStream opens a Process stream and completes one round trip, so the
// server has admitted it.
func openStream(t *testing.T, ts *testServer) extprocv3.ExternalProcessor_ProcessClient {
	t.Helper()
	pc := ts.process(t, t.Context())
	roundTrip(t, pc, requestHeaders(":method", "GET", ":authority", "site.test"))
	return pc
}

// closeStream half-closes pc and waits for the server to end it.
func closeStream(t *testing.T, pc extprocv3.ExternalProcessor_ProcessClient) {
	t.Helper()
	pc.CloseSend()
	if _, err := pc.Recv(); err == nil {
		t.Fatal("stream still open after CloseSend")
	}
}

func TestMaxStreams(t *testing.T) {
	ts := startServer(t, func(s *Settings) { s.MaxStreams = 3 })
	var open []extprocv3.ExternalProcessor_ProcessClient
	for range 3 {
		open = append(open, openStream(t, ts))
	}
	// The fourth is refused before it reads a message.
	pc := ts.process(t, t.Context())
	if _, err := pc.Recv(); status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("fourth stream: %v, want ResourceExhausted", err)
	}
	if got := testutil.ToFloat64(ts.metrics.streamsRefused); got != 1 {
		t.Errorf("streamsub_streams_refused_total = %v, want 1", got)
	}
	// A slot freed is a slot for the next stream.
	closeStream(t, open[0])
	deadline := time.Now().Add(10 * time.Second)
	for {
		pc := ts.process(t, t.Context())
		if err := pc.Send(requestHeaders(":method", "GET")); err != nil {
			t.Fatal(err)
		}
		_, err := pc.Recv()
		if err == nil {
			break
		}
		// The server releases the slot after Recv returned on our side.
		if status.Code(err) != codes.ResourceExhausted || time.Now().After(deadline) {
			t.Fatalf("after closing a stream: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestMaxConnStreams: the per-connection limit is the HTTP/2 setting, so a
// grpc-go client waits for a free slot instead of opening a fourth stream.
func TestMaxConnStreams(t *testing.T) {
	ts := startServer(t, func(s *Settings) { s.MaxConnStreams = 2 })
	a, _ := openStream(t, ts), openStream(t, ts)
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	if pc, err := ts.grpcProcess(ctx); err == nil {
		if _, err = pc.Recv(); status.Code(err) != codes.DeadlineExceeded {
			t.Fatalf("third stream on the connection: %v, want it to wait until its deadline", err)
		}
	} else if status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("third stream on the connection: %v, want DeadlineExceeded", err)
	}
	if got := testutil.ToFloat64(ts.metrics.streamsRefused); got != 0 {
		t.Errorf("streamsub_streams_refused_total = %v, want 0 (the connection limit is not -max-streams)", got)
	}
	closeStream(t, a)
	openStream(t, ts)
}

func (ts *testServer) grpcProcess(ctx context.Context) (extprocv3.ExternalProcessor_ProcessClient, error) {
	return extprocv3.NewExternalProcessorClient(ts.grpc).Process(ctx)
}

func TestStreamIdleTimeout(t *testing.T) {
	const idle = 300 * time.Millisecond
	ts := startServer(t, func(s *Settings) { s.StreamIdleTimeout = idle })

	// A stream that keeps receiving messages lives past the timeout; a
	// silent one opened at the same time is ended with DEADLINE_EXCEEDED.
	quiet := openStream(t, ts)
	busy := openStream(t, ts)
	roundTrip(t, busy, responseHeaders(":status", "200", "content-type", "text/html"))
	start := time.Now()
	for time.Since(start) < 3*idle {
		time.Sleep(idle / 6)
		roundTrip(t, busy, body("foo", false))
	}
	if _, err := quiet.Recv(); status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("idle stream: %v, want DeadlineExceeded", err)
	}
	if got := testutil.ToFloat64(ts.metrics.streamsIdleClosed); got != 1 {
		t.Errorf("streamsub_streams_idle_closed_total = %v, want 1", got)
	}
	// The idle stream's handler has returned: one Process stream is left.
	waitUntil(t, "idle stream's handler returned", func() bool {
		return testutil.ToFloat64(ts.procM.ActiveStreams) == 1
	})
	closeStream(t, busy)
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after 10s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestDrainDelay: after SIGTERM, health is NOT_SERVING at once, but new
// streams are still served until the drain delay has passed.
func TestDrainDelay(t *testing.T) {
	const delay = time.Second
	ts := startServer(t, func(s *Settings) { s.DrainDelay = delay })
	watchCtx, endWatch := context.WithCancel(t.Context())
	defer endWatch()
	watch, err := healthpb.NewHealthClient(ts.grpc).Watch(watchCtx, &healthpb.HealthCheckRequest{Service: ExtProcService})
	if err != nil {
		t.Fatal(err)
	}
	if r, err := watch.Recv(); err != nil || r.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health watch: %v, %v; want SERVING", r.GetStatus(), err)
	}
	stopped := time.Now()
	ts.cancel()
	if r, err := watch.Recv(); err != nil || r.GetStatus() != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Fatalf("health watch after stop: %v, %v; want NOT_SERVING", r.GetStatus(), err)
	}
	// A stream that starts while NOT_SERVING is served to its end.
	pc := openStream(t, ts)
	if time.Since(stopped) >= delay {
		t.Skip("the machine is too slow to open a stream within the drain delay")
	}
	closeStream(t, pc)
	endWatch()
	ts.stop(t)
	if d := time.Since(stopped); d < delay {
		t.Errorf("Serve returned %v after the stop, before the drain delay %v", d, delay)
	}
}

// TestFlowControlWindows reads what the server announces to a raw HTTP/2
// client: its SETTINGS_INITIAL_WINDOW_SIZE (each stream's window) and the
// connection window, raised from HTTP/2's 65,535 bytes by a WINDOW_UPDATE
// on stream 0.
func TestFlowControlWindows(t *testing.T) {
	ts := startServer(t, nil)
	conn, err := net.DialTimeout("tcp", ts.addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(conn, http2.ClientPreface); err != nil {
		t.Fatal(err)
	}
	fr := http2.NewFramer(conn, conn)
	if err := fr.WriteSettings(); err != nil {
		t.Fatal(err)
	}
	const initialConnWindow = 65535
	streamWindow, connWindow := uint32(0), uint32(initialConnWindow)
	for streamWindow == 0 || connWindow == initialConnWindow {
		f, err := fr.ReadFrame()
		if err != nil {
			t.Fatalf("reading the server's frames: %v (stream window %d, connection window %d so far)", err, streamWindow, connWindow)
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if v, ok := f.Value(http2.SettingInitialWindowSize); ok {
				streamWindow = v
			}
		case *http2.WindowUpdateFrame:
			if f.StreamID == 0 {
				connWindow += f.Increment
			}
		}
	}
	if streamWindow != StreamWindow || connWindow != ConnWindow {
		t.Errorf("stream window %d, connection window %d; want %d and %d", streamWindow, connWindow, StreamWindow, ConnWindow)
	}
}
