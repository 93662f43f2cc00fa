//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/streamsub/streamsub/envoy"
)

// proc is a child process run in its own process group, its output in a
// log file that is printed when the test fails.
type proc struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	done    chan struct{}
	err     error
}

// logDir returns the per-test directory holding process logs and configs.
func logDir(t *testing.T) string {
	t.Helper()
	d := filepath.Join(t.TempDir(), "logs")
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

// startProc starts bin with args; it is stopped (whole process group) when
// the test ends, and its log is dumped if the test failed.
func startProc(t *testing.T, dir, name string, env []string, bin string, args ...string) *proc {
	t.Helper()
	logPath := filepath.Join(dir, name+".log")
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	fmt.Fprintf(f, "### %s %s\n", bin, strings.Join(args, " "))
	if err := cmd.Start(); err != nil {
		f.Close()
		t.Fatalf("start %s: %v", name, err)
	}
	p := &proc{name: name, cmd: cmd, logPath: logPath, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		f.Close()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.stop()
		if t.Failed() || os.Getenv("E2E_SHOW_LOGS") != "" {
			b, _ := os.ReadFile(logPath)
			t.Logf("---- %s log (%s) ----\n%s", name, logPath, tail(b, 16<<10))
		}
	})
	return p
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return append([]byte("...\n"), b[len(b)-n:]...)
	}
	return b
}

// stop sends SIGTERM to the process group, then SIGKILL after 5 s.
func (p *proc) stop() {
	select {
	case <-p.done:
		return
	default:
	}
	pgid := p.cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-p.done
	}
}

// exited reports whether the process has ended.
func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// freePort asks the kernel for a free loopback TCP port.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// waitFor polls ready until it returns nil, the process dies or timeout passes.
func waitFor(t *testing.T, what string, p *proc, timeout time.Duration, ready func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var err error
	for time.Now().Before(deadline) {
		if p != nil && p.exited() {
			t.Fatalf("%s: process %s exited: %v", what, p.name, p.err)
		}
		if err = ready(); err == nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s: not ready after %v: %v", what, timeout, err)
}

// envoyProc is a running Envoy and the ports it listens on.
type envoyProc struct {
	*proc
	params envoy.Params
	url    string // http://127.0.0.1:<listener>
	admin  string // http://127.0.0.1:<admin>
}

// startEnvoy renders the bootstrap for the given upstream ports, changed by
// opts, starts Envoy and waits for /ready.
func startEnvoy(t *testing.T, dir string, streamsubPort, originPort int, opts ...func(*envoy.Params)) *envoyProc {
	t.Helper()
	p := envoyParams(originPort, streamsubPort)
	for _, o := range opts {
		o(&p)
	}
	return startEnvoyWith(t, dir, p)
}

// envoyParams is the e2e rendering (loud header mutations) for an origin and
// streamsub replicas on loopback ports.
func envoyParams(originPort int, streamsubPorts ...int) envoy.Params {
	p := envoy.Local()
	p.Name = "e2e"
	p.DisallowIsError = true
	p.OriginPort = originPort
	p.Streamsub = nil
	for _, port := range streamsubPorts {
		p.Streamsub = append(p.Streamsub, envoy.Endpoint{Address: "127.0.0.1", Port: port})
	}
	return p
}

// startEnvoyWith starts Envoy with the rendering of p on free listener and
// admin ports, and waits for /ready.
func startEnvoyWith(t *testing.T, dir string, p envoy.Params) *envoyProc {
	t.Helper()
	bin := envoy.BinaryOrSkip(t)
	p.ListenPort, p.AdminPort = freePort(t), freePort(t)
	cfg, err := envoy.Render(p)
	if err != nil {
		t.Fatal(err)
	}
	// The first Envoy of a test is "envoy"; more get the admin port.
	name := "envoy"
	if _, err := os.Stat(filepath.Join(dir, name+".yaml")); err == nil {
		name += "-" + strconv.Itoa(p.AdminPort)
	}
	cfgPath := filepath.Join(dir, name+".yaml")
	if err := os.WriteFile(cfgPath, cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	e := &envoyProc{
		params: p,
		url:    "http://127.0.0.1:" + strconv.Itoa(p.ListenPort),
		admin:  "http://127.0.0.1:" + strconv.Itoa(p.AdminPort),
	}
	e.proc = startProc(t, dir, name, nil, bin, "-c", cfgPath,
		"--disable-hot-restart", "--concurrency", "2", "--log-level", "info",
		"--file-flush-interval-msec", "50", // access log lines appear promptly
		"--base-id", strconv.Itoa(p.AdminPort))
	waitFor(t, "envoy /ready", e.proc, 60*time.Second, func() error {
		_, err := httpGetBody(e.admin + "/ready")
		return err
	})
	return e
}

// stat returns one counter or gauge from Envoy's admin /stats.
func (e *envoyProc) stat(t *testing.T, name string) int64 {
	t.Helper()
	body, err := httpGetBody(e.admin + "/stats?filter=^" + name + "$")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(body), "\n") {
		if k, v, ok := strings.Cut(line, ": "); ok && k == name {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				t.Fatalf("stat %s: %v", name, err)
			}
			return n
		}
	}
	return 0
}

// httpGetBody GETs url and returns the body of a 200 response.
func httpGetBody(url string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return b, fmt.Errorf("GET %s: %s: %s", url, resp.Status, bytes.TrimSpace(b))
	}
	return b, nil
}

// newClient returns an HTTP client that never asks for compression by itself
// (tests set Accept-Encoding explicitly); each test gets its own pool.
func newClient() *http.Client {
	return &http.Client{
		Timeout:   60 * time.Second,
		Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 4},
	}
}

// do sends a request and returns the response with its body read.
func do(t *testing.T, c *http.Client, method, url string, hdr map[string][]string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, vs := range hdr {
		if strings.EqualFold(k, "host") {
			req.Host = vs[0]
			continue
		}
		// Keep the name's case as written (no canonicalisation).
		req.Header[k] = append(req.Header[k], vs...)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading body: %v", method, url, err)
	}
	return resp, b
}
