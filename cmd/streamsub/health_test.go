package main

import (
	"crypto/tls"
	"net"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/streamsub/streamsub/internal/testpki"
	"github.com/streamsub/streamsub/server"
)

func TestHealthProbe(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	hs := health.NewServer()
	healthpb.RegisterHealthServer(srv, hs)
	go srv.Serve(lis)
	defer srv.Stop()
	addr := lis.Addr().String()

	hs.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	if code := runHealth([]string{"-addr", addr}); code != 0 {
		t.Errorf("SERVING: exit %d, want 0", code)
	}
	hs.SetServingStatus("", healthpb.HealthCheckResponse_NOT_SERVING)
	if code := runHealth([]string{"-addr", addr}); code != 1 {
		t.Errorf("NOT_SERVING: exit %d, want 1", code)
	}
	srv.Stop()
	if code := runHealth([]string{"-addr", addr, "-timeout", "200ms"}); code != 1 {
		t.Errorf("server gone: exit %d, want 1", code)
	}
	if code := runHealth([]string{"-bogus"}); code != 2 {
		t.Errorf("bad flag: exit %d, want 2", code)
	}
	if code := runHealth([]string{"-h"}); code != 0 {
		t.Errorf("-h: exit %d, want 0 (as serve, check and apply)", code)
	}
}

// TestHealthProbeTLS probes a server that requires client certificates.
func TestHealthProbeTLS(t *testing.T) {
	pki, err := testpki.Write(t.TempDir(), "health")
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.LoadX509KeyPair(pki.ServerCert, pki.ServerKey)
	if err != nil {
		t.Fatal(err)
	}
	pool, err := server.LoadCertPool(pki.CA)
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(grpc.Creds(credentials.NewTLS(&tls.Config{
		Certificates: []tls.Certificate{cert}, ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert,
	})))
	hs := health.NewServer()
	healthpb.RegisterHealthServer(srv, hs)
	go srv.Serve(lis)
	defer srv.Stop()
	addr := lis.Addr().String()
	mTLS := []string{"-tls-ca", pki.CA, "-tls-cert", pki.ClientCert, "-tls-key", pki.ClientKey}

	tests := []struct {
		name string
		args []string
		want int
	}{
		{"mTLS", mTLS, 0},
		{"mTLS, server name", append([]string{"-tls-server-name", testpki.ServerName}, mTLS...), 0},
		{"mTLS, wrong server name", append([]string{"-tls-server-name", "other.test"}, mTLS...), 1},
		{"no client certificate", []string{"-tls-ca", pki.CA}, 1},
		{"plaintext", nil, 1},
		{"client certificate without -tls-ca", []string{"-tls-cert", pki.ClientCert, "-tls-key", pki.ClientKey}, 2},
		{"CA file missing", []string{"-tls-ca", pki.CA + ".missing"}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"-addr", addr, "-timeout", "2s"}, tt.args...)
			if code := runHealth(args); code != tt.want {
				t.Errorf("health %q: exit %d, want %d", args, code, tt.want)
			}
		})
	}
}
