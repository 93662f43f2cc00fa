package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"sync"
	"sync/atomic"
	"time"

	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/streamsub/streamsub/config"
	"github.com/streamsub/streamsub/config/load"
	"github.com/streamsub/streamsub/processor"
	"github.com/streamsub/streamsub/processor/wire"
)

// ExtProcService is the gRPC health service name of the ext_proc service,
// besides "" for the whole server.
const ExtProcService = "envoy.service.ext_proc.v3.ExternalProcessor"

// Server is one streamsub process: config, gRPC server and admin listener.
type Server struct {
	settings Settings
	log      *slog.Logger

	cfg      atomic.Pointer[config.Config] // what new streams start with
	reloadMu sync.Mutex                    // serialises Reload
	stamp    fileStamp                     // guarded by reloadMu: the file version last tried
	status   atomic.Pointer[reloadStatus]  // for /healthz
	draining atomic.Bool

	reg     *prometheus.Registry
	metrics *metrics
	procM   *processor.Metrics
	grpc    *grpc.Server
	health  *health.Server
	admin   *http.Server
}

// reloadStatus is the outcome of the last load, shown by /healthz.
type reloadStatus struct {
	At       time.Time
	OK       bool
	Error    string    // the loader's message when !OK
	LoadedAt time.Time // when the config in use was loaded
}

// New loads the config file named by s and builds the server. A config
// that does not load is returned as the loader's error: serve exits 2.
func New(s Settings, log *slog.Logger) (*Server, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if s.ConfigPath == "" {
		return nil, errors.New("no config file given (-config or STREAMSUB_CONFIG)")
	}
	if err := s.Check(); err != nil {
		return nil, err
	}
	creds, err := tlsOption(s)
	if err != nil {
		return nil, err
	}
	srv := &Server{settings: s, log: log, reg: prometheus.NewRegistry()}
	srv.metrics = newMetrics(srv.reg)
	srv.procM = processor.NewMetrics(srv.reg)

	stamp := stat(s.ConfigPath)
	cfg, err := load.File(s.ConfigPath)
	if err != nil {
		return nil, err
	}
	srv.install(cfg, stamp)

	opts := append(keepaliveOptions(), streamLimitOptions(s, srv.metrics)...)
	opts = append(opts, flowControlOptions()...)
	// Body chunks in and out without copies (package wire).
	opts = append(opts, wire.ServerOptions()...)
	if creds != nil {
		opts = append(opts, creds)
	}
	srv.grpc = grpc.NewServer(opts...)
	srv.health = health.NewServer()
	healthpb.RegisterHealthServer(srv.grpc, srv.health)
	extprocv3.RegisterExternalProcessorServer(srv.grpc, processor.New(srv.Config, srv.procM, log))

	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(srv.reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /healthz", srv.healthz)
	if s.Pprof {
		mux.HandleFunc("GET /debug/pprof/", pprof.Index)
		mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	}
	srv.admin = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	return srv, nil
}

// Config returns the config new streams start with.
func (srv *Server) Config() *config.Config { return srv.cfg.Load() }

// install makes cfg the config of new streams.
func (srv *Server) install(cfg *config.Config, stamp fileStamp) {
	names := make([]string, len(cfg.RuleSets))
	for i, rs := range cfg.RuleSets {
		names[i] = rs.Name
	}
	srv.procM.InitRuleSets(names...)
	srv.procM.InitShadows(cfg)
	now := time.Now()
	srv.cfg.Store(cfg)
	srv.stamp = stamp
	srv.status.Store(&reloadStatus{At: now, OK: true, LoadedAt: now})
	srv.metrics.lastReloadOK.Set(1)
	srv.metrics.loadedAt.Set(float64(now.UnixNano()) / 1e9)
}

// Run listens on the settings' addresses and serves until ctx is done,
// then stops gracefully (see Serve).
func (srv *Server) Run(ctx context.Context) error {
	gl, err := net.Listen("tcp", srv.settings.Listen)
	if err != nil {
		return fmt.Errorf("gRPC listener: %w", err)
	}
	var al net.Listener
	if srv.settings.Admin != "" {
		if al, err = net.Listen("tcp", srv.settings.Admin); err != nil {
			gl.Close()
			return fmt.Errorf("admin listener: %w", err)
		}
	}
	return srv.Serve(ctx, gl, al)
}

// Serve serves gRPC on gl and the admin HTTP API on al (nil: none) until
// ctx is done. Then it marks health NOT_SERVING, lets in-flight streams
// finish for up to the drain timeout, stops hard, and returns.
func (srv *Server) Serve(ctx context.Context, gl, al net.Listener) error {
	srv.log.Info("serving", "grpc", gl.Addr().String(), "admin", addrOf(al),
		"config", srv.settings.ConfigPath, "rule_sets", len(srv.Config().RuleSets))
	srv.health.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	srv.health.SetServingStatus(ExtProcService, healthpb.HealthCheckResponse_SERVING)

	errc := make(chan error, 2)
	go func() { errc <- srv.grpc.Serve(gl) }()
	if al != nil {
		go func() {
			if err := srv.admin.Serve(al); !errors.Is(err, http.ErrServerClosed) {
				errc <- fmt.Errorf("admin: %w", err)
			}
		}()
	}
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	if srv.settings.WatchInterval > 0 {
		go srv.watch(watchCtx, srv.settings.WatchInterval)
	}

	var err error
	select {
	case <-ctx.Done():
	case err = <-errc:
		srv.log.Error("listener failed", "error", err)
	}
	stopWatch()
	srv.shutdown()
	if al != nil {
		sctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		srv.admin.Shutdown(sctx)
	}
	return err
}

// shutdown drains the gRPC server. Health goes NOT_SERVING first, and the
// server keeps accepting new streams for the drain delay: a load balancer
// that health-checks it (Envoy: every interval, unhealthy after
// unhealthy_threshold failures) moves new requests to other replicas
// meanwhile. Then GracefulStop (no new streams, in-flight ones finish), and
// Stop at the drain timeout.
func (srv *Server) shutdown() {
	srv.draining.Store(true)
	srv.health.Shutdown() // every service NOT_SERVING
	srv.log.Info("draining", "delay", srv.settings.DrainDelay.String(), "timeout", srv.settings.DrainTimeout.String())
	time.Sleep(srv.settings.DrainDelay)
	srv.log.Info("graceful stop")
	done := make(chan struct{})
	go func() { srv.grpc.GracefulStop(); close(done) }()
	select {
	case <-done:
		srv.log.Info("stopped")
	case <-time.After(srv.settings.DrainTimeout):
		srv.log.Warn("drain timeout: stopping in-flight streams")
		srv.grpc.Stop()
		<-done
	}
}

func addrOf(l net.Listener) string {
	if l == nil {
		return ""
	}
	return l.Addr().String()
}
