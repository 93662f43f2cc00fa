package server

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
)

// tlsOption returns the gRPC server option for s's TLS settings, or nil
// for plaintext. With a client CA, every client must present a certificate
// that CA signed (mTLS); the ext_proc port then answers no one else.
func tlsOption(s Settings) (grpc.ServerOption, error) {
	if s.TLSCert == "" {
		return nil, nil
	}
	cert, err := tls.LoadX509KeyPair(s.TLSCert, s.TLSKey)
	if err != nil {
		return nil, fmt.Errorf("-tls-cert %s, -tls-key %s: %w", s.TLSCert, s.TLSKey, err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if s.TLSClientCA != "" {
		pool, err := LoadCertPool(s.TLSClientCA)
		if err != nil {
			return nil, fmt.Errorf("-tls-client-ca: %w", err)
		}
		cfg.ClientCAs = pool
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return grpc.Creds(credentials.NewTLS(cfg)), nil
}

// LoadCertPool reads the PEM certificates of file into a new pool.
func LoadCertPool(file string) (*x509.CertPool, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("%s: no PEM certificate", file)
	}
	return pool, nil
}
