package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/streamsub/streamsub/config/load"
)

// freeAddr returns a loopback address that was free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// TestBinaryServe runs `streamsub serve` as Envoy's operators do: exit 2
// with the loader's message for a bad config, flags from the environment,
// SIGHUP reload that keeps the old config on a bad file, SIGTERM drain and
// exit 0.
func TestBinaryServe(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary; skipped with -short")
	}
	bin := filepath.Join(t.TempDir(), "streamsub")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	bad := writeFile(t, "bad.yaml", "rule_sets: [{name: x, rules: [{regex: '(', replace: y}]}]\n")
	_, loadErr := load.File(bad)
	if loadErr == nil {
		t.Fatal("load.File accepted the bad file")
	}
	failing := writeFile(t, "failing.yaml", "rule_sets: [{name: x, rules: [{literal: a, replace: b}],\n"+
		"  tests: [{name: typo, input: a, output: c}]}]\n")
	for _, tc := range []struct {
		name    string
		env     []string
		args    []string
		wantErr string
	}{
		{"bad config", nil, []string{"-config", bad}, loadErr.Error()},
		{"failing self-test", nil, []string{"-config", failing}, failing + `:2:11: rule set "x": test "typo": output differs`},
		{"no config", nil, nil, "no config file given"},
		{"bad env", []string{"STREAMSUB_DRAIN_TIMEOUT=soon"}, []string{"-config", bad}, "STREAMSUB_DRAIN_TIMEOUT"},
		{"stray argument", nil, []string{"-config", bad, "extra"}, "unexpected arguments"},
	} {
		cmd := exec.Command(bin, append([]string{"serve"}, tc.args...)...)
		cmd.Env = append(os.Environ(), tc.env...)
		var errOut bytes.Buffer
		cmd.Stderr = &errOut
		err := cmd.Run()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.Contains(errOut.String(), tc.wantErr) {
			t.Errorf("%s: %v, stderr %q; want exit 2 mentioning %q", tc.name, err, errOut.String(), tc.wantErr)
		}
	}

	cfg := writeFile(t, "streamsub.yaml", applyConfig)
	grpcAddr, adminAddr := freeAddr(t), freeAddr(t)
	cmd := exec.Command(bin, "serve", "-admin", adminAddr)
	cmd.Env = append(os.Environ(), "STREAMSUB_CONFIG="+cfg, "STREAMSUB_LISTEN="+grpcAddr,
		"STREAMSUB_LOG_LEVEL=debug", "STREAMSUB_WATCH_INTERVAL=0")
	var logs bytes.Buffer
	cmd.Stderr = &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			<-exited
		}
	})

	conn, err := grpc.NewClient(grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	waitUntil(t, "gRPC health SERVING", func() error {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		r, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
		if err != nil {
			return err
		}
		if r.GetStatus() != healthpb.HealthCheckResponse_SERVING {
			return fmt.Errorf("status %v", r.GetStatus())
		}
		return nil
	})

	// A bad file on SIGHUP: counted, old config kept.
	if err := os.WriteFile(cfg, []byte("rule_sets: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "failed reload counted", func() error {
		m, err := httpGet("http://" + adminAddr + "/metrics")
		if err != nil {
			return err
		}
		if !strings.Contains(m, `streamsub_config_reloads_total{result="failed"} 1`) {
			return errors.New("counter not at 1 yet")
		}
		return nil
	})
	if hz, err := httpGet("http://" + adminAddr + "/healthz"); err != nil || !strings.Contains(hz, `"ok":false`) {
		t.Errorf("/healthz after a failed reload: %v %s", err, hz)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("serve after SIGTERM: %v; want exit 0\n%s", err, logs.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("serve did not exit after SIGTERM\n%s", logs.String())
	}
	for _, want := range []string{`"msg":"serving"`, `"msg":"config reload failed; keeping the previous config"`, `"msg":"draining"`, `"msg":"stopped"`} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log lacks %s:\n%s", want, logs.String())
		}
	}
}

func httpGet(url string) (string, error) {
	resp, err := http.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// waitUntil polls check until it succeeds, for at most 20 s.
func waitUntil(t *testing.T, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
