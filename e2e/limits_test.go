//go:build e2e

package e2e

import (
	"context"
	"sync"
	"testing"
	"time"

	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/streamsub/streamsub/server"
)

// floodResult is what became of the streams of idleFlood.
type floodResult struct {
	open    int                // opened, and not ended by the server within settle
	waiting int                // not opened within the open timeout
	ended   map[codes.Code]int // ended by the server, by status
}

// idleFlood opens n Process streams on one connection to addr and sends
// nothing on them, as the adversarial check of issue 14 did. A grpc-go
// client waits for a free slot while the server's per-connection limit is
// reached: streams not opened within open count as waiting. The returned
// function closes the connection and its streams.
func idleFlood(t *testing.T, addr string, n int, open, settle time.Duration) (floodResult, func()) {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	client := extprocv3.NewExternalProcessorClient(conn)
	res := floodResult{ended: map[codes.Code]int{}}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			opened := make(chan error, 1)
			recv := make(chan error, 1)
			go func() {
				pc, err := client.Process(ctx)
				opened <- err
				if err == nil {
					_, err = pc.Recv()
					recv <- err
				}
			}()
			var outcome func()
			select {
			case err := <-opened:
				if err != nil {
					outcome = func() { res.ended[status.Code(err)]++ }
					break
				}
				select {
				case err := <-recv:
					outcome = func() { res.ended[status.Code(err)]++ }
				case <-time.After(settle):
					outcome = func() { res.open++ }
				}
			case <-time.After(open):
				outcome = func() { res.waiting++ }
			}
			mu.Lock()
			outcome()
			mu.Unlock()
		}()
	}
	wg.Wait()
	return res, func() { cancel(); conn.Close() }
}

// TestIdleStreamFlood is issue 14's adversarial check: 5,000 idle Process
// streams on one connection. Unlimited (the original server: all accepted,
// ~45 KiB each, never closed), they show what one idle stream costs; with
// the default limits only -max-conn-streams are admitted; with a total
// limit below the per-connection one, the excess is refused at once with
// RESOURCE_EXHAUSTED. The streams' memory over the idle baseline must stay
// under 64 MiB with the limits.
func TestIdleStreamFlood(t *testing.T) {
	const n = 5000
	tests := []struct {
		name        string
		args        []string
		wantOpen    int
		wantRefused int
		wantWaiting int
		maxDeltaMiB int64 // 0: not checked
	}{
		{"unlimited", []string{"-max-streams", "100000", "-max-conn-streams", "100000"}, n, 0, 0, 0},
		{"defaults", nil, server.DefaultMaxConnStreams, 0, n - server.DefaultMaxConnStreams, 64},
		{"total limit", []string{"-max-streams", "2000", "-max-conn-streams", "10000"}, 2000, n - 2000, 0, 64},
	}
	bin := streamsubBinary(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := logDir(t)
			grpcAddr, admin := addr(freePort(t)), "http://"+addr(freePort(t))
			args := append([]string{"serve", "-config", exampleConfig(t),
				"-listen", grpcAddr, "-admin", admin[len("http://"):], "-log-level", "warn"}, tt.args...)
			p := startProc(t, dir, "streamsub", nil, bin, args...)
			waitFor(t, "streamsub gRPC health", p, 60*time.Second, func() error { return grpcHealthy(grpcAddr) })
			pid := p.cmd.Process.Pid
			before, _, err := rss(pid)
			if err != nil {
				t.Fatal(err)
			}
			res, closeAll := idleFlood(t, grpcAddr, n, 3*time.Second, 2*time.Second)
			defer closeAll()
			active := metricAt(t, admin, "streamsub_streams_active")
			after, _, err := rss(pid)
			if err != nil {
				t.Fatal(err)
			}
			delta := after - before
			t.Logf("%s %v: %d streams: open %d, waiting %d, ended %v; server streams_active %v, refused_total %v; RSS %d → %d KiB (+%d KiB, %.1f KiB per open stream)",
				tt.name, tt.args, n, res.open, res.waiting, res.ended, active, metricAt(t, admin, "streamsub_streams_refused_total"),
				before, after, delta, float64(delta)/float64(max(res.open, 1)))
			if res.open != tt.wantOpen || int(active) != tt.wantOpen {
				t.Errorf("%d streams open (server: %v), want %d", res.open, active, tt.wantOpen)
			}
			if got := res.ended[codes.ResourceExhausted]; got != tt.wantRefused {
				t.Errorf("%d streams refused with RESOURCE_EXHAUSTED, want %d", got, tt.wantRefused)
			}
			if got := metricAt(t, admin, "streamsub_streams_refused_total"); int(got) != tt.wantRefused {
				t.Errorf("streamsub_streams_refused_total = %v, want %d", got, tt.wantRefused)
			}
			if res.waiting != tt.wantWaiting {
				t.Errorf("%d streams waiting for the connection's limit, want %d", res.waiting, tt.wantWaiting)
			}
			if tt.maxDeltaMiB > 0 && delta > tt.maxDeltaMiB<<10 {
				t.Errorf("RSS grew by %d KiB, want under %d MiB", delta, tt.maxDeltaMiB)
			}
		})
	}
}

// metricAt reads one unlabelled sample from the /metrics of admin.
func metricAt(t *testing.T, admin, name string) float64 {
	t.Helper()
	s := &stack{streamsubAdmin: admin}
	return s.metric(t, name)
}
