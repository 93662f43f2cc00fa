package main

import (
	"net"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
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
