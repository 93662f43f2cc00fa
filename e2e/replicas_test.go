//go:build e2e

package e2e

import (
	"fmt"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/streamsub/streamsub/envoy"
)

// Timings of the replica tests: Envoy checks each replica every 200 ms and
// marks it unhealthy after 2 failures (at most 200 ms × 2 + 300 ms = 0.7 s),
// so a 1.5 s -drain-delay covers it.
var (
	replicaHealthCheck = envoy.HealthCheck{Interval: 200 * time.Millisecond, Timeout: 300 * time.Millisecond, UnhealthyThreshold: 2}
	replicaDrainDelay  = 1500 * time.Millisecond
)

// loadWorkers is the number of concurrent HTTP clients of the load.
const loadWorkers = 8

// replicas is the demo origin, three `streamsub serve` on their own ports
// and one Envoy whose streamsub cluster has the three as hosts.
type replicas struct {
	t          *testing.T
	dir, bin   string
	configPath string
	ports      []int
	procs      []*proc
	envoy      *envoyProc
}

func startReplicas(t *testing.T, n int) *replicas {
	t.Helper()
	envoy.BinaryOrSkip(t) // skip early when there is no Envoy
	r := &replicas{t: t, dir: logDir(t), bin: streamsubBinary(t), configPath: exampleConfig(t)}
	_, originPort := startOrigin(t, r.dir, r.bin)
	for i := range n {
		r.ports = append(r.ports, freePort(t))
		r.procs = append(r.procs, nil)
		r.start(i)
	}
	p := envoyParams(originPort, r.ports...)
	p.HealthCheck = replicaHealthCheck
	r.envoy = startEnvoyWith(t, r.dir, p)
	r.waitHealthy(n)
	return r
}

// start (re)starts replica i on its port and waits for gRPC health SERVING.
func (r *replicas) start(i int) {
	t := r.t
	t.Helper()
	name := "streamsub-" + strconv.Itoa(i)
	r.procs[i] = startProc(t, r.dir, name, nil, r.bin, "serve", "-config", r.configPath,
		"-listen", addr(r.ports[i]), "-admin", "", "-log-level", "warn",
		"-drain-delay", replicaDrainDelay.String(), "-drain-timeout", "10s")
	waitFor(t, name+" gRPC health", r.procs[i], 60*time.Second, func() error {
		return grpcHealthy(addr(r.ports[i]))
	})
}

// waitHealthy waits until Envoy sees n healthy streamsub hosts.
func (r *replicas) waitHealthy(n int) {
	t := r.t
	t.Helper()
	waitFor(t, fmt.Sprintf("envoy sees %d healthy streamsub hosts", n), nil, 60*time.Second, func() error {
		if got := r.envoy.stat(t, "cluster.streamsub.membership_healthy"); got != int64(n) {
			return fmt.Errorf("cluster.streamsub.membership_healthy = %d", got)
		}
		return nil
	})
}

// drain sends SIGTERM to replica i and waits for it to exit, which must be
// with status 0 (a graceful stop, not the drain timeout's hard stop).
func (r *replicas) drain(i int) time.Duration {
	t := r.t
	t.Helper()
	p := r.procs[i]
	start := time.Now()
	if err := syscall.Kill(p.cmd.Process.Pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("replica %d did not exit within 30 s of SIGTERM", i)
	}
	if p.err != nil {
		t.Errorf("replica %d: %v after SIGTERM, want exit 0", i, p.err)
	}
	return time.Since(start)
}

// TestReplicaSIGTERMUnderLoad: one of two or three replicas drains under
// load; no request fails, because Envoy moves new streams away during the
// drain delay and in-flight ones finish.
func TestReplicaSIGTERMUnderLoad(t *testing.T) {
	for _, n := range []int{2, 3} {
		t.Run(strconv.Itoa(n)+" replicas", func(t *testing.T) {
			r := startReplicas(t, n)
			l := startLoad(r.envoy.url, loadWorkers, 20*time.Second)
			time.Sleep(time.Second)
			took := r.drain(0)
			time.Sleep(time.Second)
			reqs, fails := l.stop()
			t.Logf("SIGTERM of 1 of %d replicas under load: drain took %v; %d requests, %d failed %s",
				n, took.Round(time.Millisecond), reqs, len(fails), summary(fails))
			if reqs < 100 {
				t.Errorf("only %d requests: the load did not run", reqs)
			}
			if len(fails) > 0 {
				t.Errorf("%d requests failed during the drain, want 0", len(fails))
			}
		})
	}
}

// TestReplicaSIGKILLUnderLoad: a replica killed outright fails its
// in-flight requests; Envoy ejects it at once (outlier detection on
// connection failures), so no request started later than 1 s after the
// kill fails.
func TestReplicaSIGKILLUnderLoad(t *testing.T) {
	r := startReplicas(t, 3)
	l := startLoad(r.envoy.url, loadWorkers, 20*time.Second)
	time.Sleep(time.Second)
	killed := time.Now()
	if err := syscall.Kill(r.procs[0].cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second)
	n, fails := l.stop()
	// A failed response is seen by the client only when Envoy closes the
	// connection, after its delayed_close_timeout (1 s): what tells an
	// in-flight request from a new one is when it started.
	last := -time.Hour // the latest start of a failed request, relative to the kill
	inFlight := 0
	for _, f := range fails {
		last = max(last, f.start.Sub(killed))
		if f.start.Before(killed) {
			inFlight++
		}
	}
	t.Logf("SIGKILL of 1 of 3 replicas under load: %d requests, %d failed (%d started before the kill; latest start relative to the kill: %v): %s",
		n, len(fails), inFlight, last.Round(time.Millisecond), summary(fails))
	if n < 100 {
		t.Errorf("only %d requests: the load did not run", n)
	}
	for _, f := range fails {
		if d := f.start.Sub(killed); d > time.Second {
			t.Errorf("a request started %v after the kill failed: %s", d.Round(time.Millisecond), f.reason)
		}
	}
	if len(fails) > 2*loadWorkers {
		t.Errorf("%d failures: more than the %d requests that can be in flight", len(fails), 2*loadWorkers)
	}
}

// TestRollingRestartUnderLoad restarts the three replicas one after the
// other (SIGTERM, exit, start on the same port, healthy in Envoy) under
// load; no request fails.
func TestRollingRestartUnderLoad(t *testing.T) {
	r := startReplicas(t, 3)
	l := startLoad(r.envoy.url, loadWorkers, 60*time.Second)
	time.Sleep(500 * time.Millisecond)
	for i := range r.procs {
		r.drain(i)
		r.start(i)
		r.waitHealthy(len(r.procs))
	}
	time.Sleep(500 * time.Millisecond)
	n, fails := l.stop()
	t.Logf("rolling restart of 3 replicas under load: %d requests, %d failed %s", n, len(fails), summary(fails))
	if n < 100 {
		t.Errorf("only %d requests: the load did not run", n)
	}
	if len(fails) > 0 {
		t.Errorf("%d requests failed during the rolling restart, want 0", len(fails))
	}
}
