package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/streamsub/streamsub/server"
)

func init() {
	register("health", "probe a streamsub server's gRPC health (exit 0 when SERVING)", runHealth)
}

// runHealth is the container healthcheck: distroless-style images have no
// grpc_health_probe, so the binary probes itself.
func runHealth(args []string) int {
	fs := flag.NewFlagSet("health", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:50051", "gRPC address of streamsub serve")
	service := fs.String("service", "", "health service name (empty: the whole server)")
	timeout := fs.Duration("timeout", 2*time.Second, "deadline for the probe")
	var tc tlsClient
	fs.StringVar(&tc.ca, "tls-ca", "", "PEM CA certificates that sign the server's certificate; set: probe over TLS")
	fs.StringVar(&tc.cert, "tls-cert", "", "PEM client certificate, for a server started with -tls-client-ca")
	fs.StringVar(&tc.key, "tls-key", "", "PEM private key of -tls-cert")
	fs.StringVar(&tc.serverName, "tls-server-name", "", "name to verify in the server's certificate (and SNI); default: the host of -addr")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	creds, err := tc.credentials()
	if err != nil {
		fmt.Fprintf(os.Stderr, "streamsub health: %v\n", err)
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	conn, err := grpc.NewClient(*addr, grpc.WithTransportCredentials(creds))
	if err != nil {
		fmt.Fprintf(os.Stderr, "streamsub health: %s: %v\n", *addr, err)
		return 1
	}
	defer conn.Close()
	resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: *service})
	if err != nil {
		fmt.Fprintf(os.Stderr, "streamsub health: %s: %v\n", *addr, err)
		return 1
	}
	fmt.Println(resp.GetStatus())
	if resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		return 1
	}
	return 0
}

// tlsClient are the health probe's TLS flags.
type tlsClient struct{ ca, cert, key, serverName string }

// credentials returns TLS credentials when -tls-ca is set, else plaintext.
func (c tlsClient) credentials() (credentials.TransportCredentials, error) {
	if c.ca == "" {
		if c.cert != "" || c.key != "" || c.serverName != "" {
			return nil, errors.New("-tls-cert, -tls-key and -tls-server-name need -tls-ca")
		}
		return insecure.NewCredentials(), nil
	}
	pool, err := server.LoadCertPool(c.ca)
	if err != nil {
		return nil, fmt.Errorf("-tls-ca: %w", err)
	}
	cfg := &tls.Config{RootCAs: pool, ServerName: c.serverName, MinVersion: tls.VersionTLS12}
	if c.cert != "" || c.key != "" {
		cert, err := tls.LoadX509KeyPair(c.cert, c.key)
		if err != nil {
			return nil, fmt.Errorf("-tls-cert %s, -tls-key %s: %w", c.cert, c.key, err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return credentials.NewTLS(cfg), nil
}
