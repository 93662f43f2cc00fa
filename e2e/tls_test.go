//go:build e2e

package e2e

import (
	"context"
	"crypto/tls"
	"fmt"
	"os/exec"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/streamsub/streamsub/envoy"
	"github.com/streamsub/streamsub/internal/demoorigin"
	"github.com/streamsub/streamsub/internal/testpki"
	"github.com/streamsub/streamsub/server"
)

// TestMTLS runs streamsub with -tls-cert -tls-key -tls-client-ca behind an
// Envoy whose streamsub cluster presents a client certificate: bodies are
// rewritten over mTLS, while a plaintext client, a TLS client without a
// certificate and one with a certificate of another CA are refused.
func TestMTLS(t *testing.T) {
	envoy.BinaryOrSkip(t)
	dir := logDir(t)
	pki, err := testpki.Write(dir, "e2e")
	if err != nil {
		t.Fatal(err)
	}
	other, err := testpki.Write(dir, "other")
	if err != nil {
		t.Fatal(err)
	}
	bin := streamsubBinary(t)
	_, originPort := startOrigin(t, dir, bin)
	grpcPort := freePort(t)
	ss := startProc(t, dir, "streamsub", nil, bin, "serve", "-config", exampleConfig(t),
		"-listen", addr(grpcPort), "-admin", "", "-drain-delay", "0",
		"-tls-cert", pki.ServerCert, "-tls-key", pki.ServerKey, "-tls-client-ca", pki.CA)
	// `streamsub health` as the compose and Kubernetes probes run it.
	probe := []string{"health", "-addr", addr(grpcPort), "-tls-ca", pki.CA, "-tls-cert", pki.ClientCert,
		"-tls-key", pki.ClientKey, "-tls-server-name", testpki.ServerName}
	waitFor(t, "streamsub health over mTLS", ss, 60*time.Second, func() error {
		return runCmd(bin, probe...)
	})

	p := envoyParams(originPort, grpcPort)
	p.UpstreamTLS = &envoy.TLS{CertFile: pki.ClientCert, KeyFile: pki.ClientKey, CAFile: pki.CA, SNI: testpki.ServerName}
	e := startEnvoyWith(t, dir, p)
	waitFor(t, "envoy health check of streamsub over mTLS", nil, 60*time.Second, func() error {
		if n := e.stat(t, "cluster.streamsub.membership_healthy"); n != 1 {
			return fmt.Errorf("cluster.streamsub.membership_healthy = %d", n)
		}
		return nil
	})
	_, body := do(t, newClient(), "GET", e.url+unique("/"), nil)
	if want := standard.Replace(demoorigin.IndexHTML); string(body) != want {
		t.Fatalf("through Envoy over mTLS: body %q, want %q", body, want)
	}
	if n := e.stat(t, "cluster.streamsub.upstream_cx_total"); n == 0 {
		t.Errorf("cluster.streamsub.upstream_cx_total = 0")
	}
	if n := e.stat(t, "cluster.streamsub.ssl.handshake"); n == 0 {
		t.Errorf("cluster.streamsub.ssl.handshake = 0: Envoy did not use TLS")
	}

	// An Envoy that talks plaintext to the same streamsub gets nothing
	// through: fail-closed 5xx.
	plain := startEnvoyWith(t, dir, envoyParams(originPort, grpcPort))
	resp, body := do(t, newClient(), "GET", plain.url+unique("/"), nil)
	t.Logf("through a plaintext Envoy: %d %q", resp.StatusCode, body)
	if resp.StatusCode < 500 {
		t.Errorf("through a plaintext Envoy: status %d, want 5xx", resp.StatusCode)
	}

	withCert := func(f testpki.Files) []tls.Certificate {
		kp, err := tls.LoadX509KeyPair(f.ClientCert, f.ClientKey)
		if err != nil {
			t.Fatal(err)
		}
		return []tls.Certificate{kp}
	}
	pool, err := server.LoadCertPool(pki.CA)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		creds credentials.TransportCredentials
		ok    bool
	}{
		{"client certificate", credentials.NewTLS(&tls.Config{RootCAs: pool, ServerName: testpki.ServerName, Certificates: withCert(pki)}), true},
		{"plaintext", insecure.NewCredentials(), false},
		{"TLS without a client certificate", credentials.NewTLS(&tls.Config{RootCAs: pool, ServerName: testpki.ServerName}), false},
		{"certificate of another CA", credentials.NewTLS(&tls.Config{RootCAs: pool, ServerName: testpki.ServerName, Certificates: withCert(other)}), false},
	} {
		err := healthCheck(addr(grpcPort), tc.creds)
		t.Logf("direct gRPC client, %s: %v", tc.name, err)
		if (err == nil) != tc.ok {
			t.Errorf("direct gRPC client, %s: %v, want success %v", tc.name, err, tc.ok)
		}
	}
	if err := runCmd(bin, "health", "-addr", addr(grpcPort), "-timeout", "2s"); err == nil {
		t.Errorf("streamsub health without TLS flags succeeded against a TLS server")
	}
}

// healthCheck runs one gRPC health check against target with creds.
func healthCheck(target string, creds credentials.TransportCredentials) error {
	conn, err := grpc.NewClient(target, grpc.WithTransportCredentials(creds))
	if err != nil {
		return err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	_, err = healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
	return err
}

// runCmd runs bin with args and returns its error with its output.
func runCmd(bin string, args ...string) error {
	out, err := exec.Command(bin, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%v: %s", err, out)
	}
	return nil
}
