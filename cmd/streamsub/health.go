package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
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
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	conn, err := grpc.NewClient(*addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
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
