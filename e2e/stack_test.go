//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/streamsub/streamsub/config/load"
	"github.com/streamsub/streamsub/envoy"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// streamsubBinary builds cmd/streamsub once per test run (into a temp dir,
// so concurrent `make build`s in the tree are not disturbed).
func streamsubBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		root, err := envoy.ModuleRoot(".")
		if err != nil {
			buildErr = err
			return
		}
		dir, err := os.MkdirTemp("", "streamsub-e2e-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "streamsub")
		cmd := exec.Command("go", "build", "-o", binPath, "./cmd/streamsub")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/streamsub: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// stack is demo origin → Envoy → streamsub, all on free loopback ports.
type stack struct {
	t          *testing.T
	dir        string
	bin        string
	configPath string

	origin     *proc // nil when the test runs its own origin
	originPort int

	streamsub           *proc
	grpcPort, adminPort int
	streamsubAdmin      string // http://127.0.0.1:<admin>
	envoy               *envoyProc
}

// startStack starts all three processes with the given streamsub config
// (examples/streamsub.yaml when empty) and waits until each is ready.
// Envoy's header safety net comes from that config; opts change the rest
// of its rendering.
func startStack(t *testing.T, configPath string, opts ...func(*envoy.Params)) *stack {
	t.Helper()
	return startStackWithOrigin(t, configPath, 0, opts...)
}

// startStackWithOrigin is startStack with the origin already listening on
// 127.0.0.1:originPort; 0 starts the demo origin.
func startStackWithOrigin(t *testing.T, configPath string, originPort int, opts ...func(*envoy.Params)) *stack {
	t.Helper()
	envoy.BinaryOrSkip(t) // skip early when there is no Envoy
	if configPath == "" {
		configPath = exampleConfig(t)
	}
	s := &stack{t: t, dir: logDir(t), bin: streamsubBinary(t), configPath: configPath}
	s.originPort = originPort
	if originPort == 0 {
		s.origin, s.originPort = startOrigin(t, s.dir, s.bin)
	}
	s.grpcPort, s.adminPort = freePort(t), freePort(t)
	s.streamsubAdmin = "http://" + addr(s.adminPort)
	s.startStreamsub()
	cfg, err := load.File(configPath)
	if err != nil {
		t.Fatal(err)
	}
	internal := func(p *envoy.Params) { p.Internal = envoy.HeaderFilterOf(cfg) }
	s.envoy = startEnvoy(t, s.dir, s.grpcPort, s.originPort, append([]func(*envoy.Params){internal}, opts...)...)
	s.waitEnvoySeesStreamsub(true)
	return s
}

func addr(port int) string { return "127.0.0.1:" + strconv.Itoa(port) }

// exampleConfig is the path of examples/streamsub.yaml.
func exampleConfig(t *testing.T) string {
	t.Helper()
	root, err := envoy.ModuleRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(root, "examples", "streamsub.yaml")
}

// startOrigin starts the demo origin on a free port and waits until it answers.
func startOrigin(t *testing.T, dir, bin string) (*proc, int) {
	t.Helper()
	port := freePort(t)
	p := startProc(t, dir, "origin", nil, bin, "demo-origin", "-listen", addr(port))
	waitFor(t, "origin", p, 60*time.Second, func() error {
		_, err := httpGetBody("http://" + addr(port) + "/empty")
		return err
	})
	return p, port
}

// startStreamsub (re)starts `streamsub serve` on the stack's ports and
// waits for gRPC health SERVING.
func (s *stack) startStreamsub() {
	t := s.t
	t.Helper()
	// No drain delay: these tests stop streamsub to see Envoy's failure
	// modes, not to drain it (replicas_test.go does that).
	s.streamsub = startProc(t, s.dir, "streamsub", nil, s.bin, "serve",
		"-config", s.configPath, "-listen", addr(s.grpcPort), "-admin", addr(s.adminPort), "-drain-delay", "0")
	waitFor(t, "streamsub gRPC health", s.streamsub, 60*time.Second, func() error {
		return grpcHealthy(addr(s.grpcPort))
	})
}

// stopStreamsub stops streamsub and waits until Envoy's health checker has
// noticed (so the next request sees a dead ext_proc, not a half-closed one).
func (s *stack) stopStreamsub() {
	s.streamsub.stop()
	s.waitEnvoySeesStreamsub(false)
}

// waitEnvoySeesStreamsub waits for Envoy's active gRPC health check of the
// streamsub cluster to report the host healthy (or not).
func (s *stack) waitEnvoySeesStreamsub(healthy bool) {
	t := s.t
	t.Helper()
	waitFor(t, fmt.Sprintf("envoy health check streamsub healthy=%v", healthy), nil, 60*time.Second, func() error {
		n := s.envoy.stat(t, "cluster.streamsub.membership_healthy")
		if (n == 1) != healthy {
			return fmt.Errorf("cluster.streamsub.membership_healthy = %d", n)
		}
		return nil
	})
}

func grpcHealthy(target string) error {
	conn, err := grpc.NewClient(target, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
	if err != nil {
		return err
	}
	if resp.Status != healthpb.HealthCheckResponse_SERVING {
		return fmt.Errorf("health %v", resp.Status)
	}
	return nil
}

// accessLog returns the Envoy access-log line for the request whose path
// (with query) is exactly path, waiting for Envoy to write it. Tests make
// paths unique with a query string.
func (s *stack) accessLog(t *testing.T, path string) string {
	t.Helper()
	return s.accessLogN(t, path, 1)
}

// accessLogN returns the access-log line of the nth request (from 1) whose
// path is exactly path.
func (s *stack) accessLogN(t *testing.T, path string, nth int) string {
	t.Helper()
	var line string
	waitFor(t, "access log for "+path, nil, 30*time.Second, func() error {
		f, err := os.Open(s.envoy.logPath)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for n := 0; sc.Scan(); {
			if l := sc.Text(); strings.Contains(l, path+"\" ") {
				if n++; n == nth {
					line = l
					return nil
				}
			}
		}
		return fmt.Errorf("no line %d for %s yet", nth, path)
	})
	return line
}

// bodyCalls is the access log's ext_proc response_body_call_count for path:
// "-" when no body chunk was sent to streamsub.
func (s *stack) bodyCalls(t *testing.T, path string) string {
	t.Helper()
	return s.bodyCallsN(t, path, 1)
}

// bodyCallsN is bodyCalls for the nth request of path.
func (s *stack) bodyCallsN(t *testing.T, path string, nth int) string {
	t.Helper()
	l := s.accessLogN(t, path, nth)
	_, v, _ := strings.Cut(l, "ext_proc_body_calls=")
	v, _, _ = strings.Cut(v, " ")
	return v
}

var uniq struct {
	sync.Mutex
	n int
}

// unique appends a query parameter that makes the access-log line findable.
func unique(path string) string {
	uniq.Lock()
	defer uniq.Unlock()
	uniq.n++
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	return fmt.Sprintf("%s%se2e=%d", path, sep, uniq.n)
}

// rss reads VmRSS and VmHWM (KiB) of pid from /proc.
func rss(pid int) (rssKiB, hwmKiB int64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		f := strings.Fields(v)
		if len(f) == 0 {
			continue
		}
		n, _ := strconv.ParseInt(f[0], 10, 64)
		switch k {
		case "VmRSS":
			rssKiB = n
		case "VmHWM":
			hwmKiB = n
		}
	}
	return rssKiB, hwmKiB, nil
}

// metric returns the value of one sample from streamsub's /metrics, e.g.
// metric(t, `streamsub_bodies_skipped_total{reason="content_type"}`); 0 when
// the sample is absent (a counter that has not moved yet).
func (s *stack) metric(t *testing.T, sample string) float64 {
	t.Helper()
	body, err := httpGetBody(s.streamsubAdmin + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, sample+" "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				t.Fatalf("metric %s: %v", sample, err)
			}
			return f
		}
	}
	return 0
}

// TestMain removes the streamsub binary built for this run.
func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}
