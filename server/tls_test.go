package server

import (
	"context"
	"crypto/tls"
	"os"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/streamsub/streamsub/internal/testpki"
)

// checkHealth dials addr with creds and runs one health check.
func checkHealth(t *testing.T, addr string, creds credentials.TransportCredentials) error {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(creds))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	_, err = healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
	return err
}

func clientTLS(t *testing.T, ca string, cert *testpki.Files) credentials.TransportCredentials {
	t.Helper()
	pool, err := LoadCertPool(ca)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &tls.Config{RootCAs: pool, ServerName: testpki.ServerName}
	if cert != nil {
		kp, err := tls.LoadX509KeyPair(cert.ClientCert, cert.ClientKey)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Certificates = []tls.Certificate{kp}
	}
	return credentials.NewTLS(cfg)
}

func TestTLS(t *testing.T) {
	dir := t.TempDir()
	pki, err := testpki.Write(dir, "good")
	if err != nil {
		t.Fatal(err)
	}
	other, err := testpki.Write(dir, "other")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		clientCA string // "": server without -tls-client-ca
		creds    credentials.TransportCredentials
		ok       bool
	}{
		{"TLS, no client CA", "", clientTLS(t, pki.CA, nil), true},
		{"TLS, plaintext client", "", insecure.NewCredentials(), false},
		{"mTLS, client certificate", pki.CA, clientTLS(t, pki.CA, &pki), true},
		{"mTLS, no client certificate", pki.CA, clientTLS(t, pki.CA, nil), false},
		{"mTLS, certificate of another CA", pki.CA, clientTLS(t, pki.CA, &other), false},
		{"mTLS, plaintext client", pki.CA, insecure.NewCredentials(), false},
		{"mTLS, client does not trust the server", pki.CA, clientTLS(t, other.CA, &pki), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := startServer(t, func(s *Settings) {
				s.TLSCert, s.TLSKey, s.TLSClientCA = pki.ServerCert, pki.ServerKey, tt.clientCA
			})
			err := checkHealth(t, ts.addr, tt.creds)
			if (err == nil) != tt.ok {
				t.Fatalf("health check: %v, want success %v", err, tt.ok)
			}
		})
	}
}

func TestTLSBadFiles(t *testing.T) {
	dir := t.TempDir()
	pki, err := testpki.Write(dir, "good")
	if err != nil {
		t.Fatal(err)
	}
	notPEM := dir + "/not.pem"
	if err := os.WriteFile(notPEM, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name            string
		cert, key, ca   string
		wantErrContains string
	}{
		{"missing cert", dir + "/none.pem", pki.ServerKey, "", "none.pem"},
		{"key of another cert", pki.ServerCert, pki.ClientKey, "", "-tls-cert"},
		{"CA not PEM", pki.ServerCert, pki.ServerKey, notPEM, "not.pem: no PEM certificate"},
		{"cert without key", pki.ServerCert, "", "", "-tls-cert and -tls-key go together"},
		{"client CA without cert", "", "", pki.CA, "-tls-client-ca needs -tls-cert"},
	}
	cfg := dir + "/streamsub.yaml"
	writeFile(t, cfg, configV1)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := DefaultSettings()
			s.ConfigPath, s.TLSCert, s.TLSKey, s.TLSClientCA = cfg, tt.cert, tt.key, tt.ca
			_, err := New(s, nil)
			if err == nil || !strings.Contains(err.Error(), tt.wantErrContains) {
				t.Fatalf("New: %v, want an error containing %q", err, tt.wantErrContains)
			}
		})
	}
}
