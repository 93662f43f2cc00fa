package server

import (
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/status"
)

// Stream limits. Every in-flight HTTP request holds one Process stream, so
// these bound how many requests one streamsub serves at once; the defaults
// and their memory cost are argued in README.md ("Running replicas").
const (
	// DefaultMaxStreams caps streams over all connections. An idle stream
	// costs about 14 KiB of RSS (measured by e2e TestIdleStreamFlood: 5,000
	// idle streams, +70 MiB), so a full server holds ~140 MiB of stream
	// state on top of the bodies in flight.
	DefaultMaxStreams = 10000
	// DefaultMaxConnStreams caps streams per HTTP/2 connection. Envoy opens
	// another connection when it reaches the limit the server announces,
	// and the shipped Envoy configs set the same figure on their side.
	DefaultMaxConnStreams = 1000
)

// Keepalive. Envoy pings its gRPC upstreams (the shipped configs: every
// 30 s); grpc-go answers pings more frequent than the enforcement MinTime
// (default 5 min) with GOAWAY too_many_pings, which drops every stream on
// the connection. KeepaliveMinTime must stay at or below Envoy's
// http2_protocol_options.connection_keepalive.interval.
const (
	KeepaliveMinTime = 10 * time.Second
	// keepaliveTime and keepaliveTimeout: the server pings a connection
	// idle for keepaliveTime and closes it when no answer comes within
	// keepaliveTimeout, so a peer that vanished without a FIN (a dead
	// node, a dropped NAT entry) does not hold its streams for ever.
	keepaliveTime    = 30 * time.Second
	keepaliveTimeout = 10 * time.Second
)

// HTTP/2 flow control towards Envoy. In full duplex Envoy sends a body's
// chunks without waiting for replies, so how much of a body can sit in
// streamsub's receive buffers is what the windows allow; grpc-go's default
// (64 KiB, grown by its bandwidth estimator up to 16 MiB per connection)
// let 32 streams of 4 MiB pages hold ~150 MiB peak RSS. Fixed windows turn
// the estimator off and bound that memory; measured side by side they cost
// no throughput on loopback (BENCHMARKS.md, "Through Envoy: attempts").
const (
	// StreamWindow is each stream's receive window: about one chunk of a
	// body ahead of the one being rewritten.
	StreamWindow = 256 << 10
	// ConnWindow is the receive window of a connection, shared by its
	// streams: what one Envoy connection can have in flight towards
	// streamsub at once.
	ConnWindow = 1 << 20
)

// flowControlOptions fix the HTTP/2 receive windows.
func flowControlOptions() []grpc.ServerOption {
	return []grpc.ServerOption{grpc.InitialWindowSize(StreamWindow), grpc.InitialConnWindowSize(ConnWindow)}
}

// keepaliveOptions are the server's keepalive settings.
func keepaliveOptions() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{
			MinTime:             KeepaliveMinTime,
			PermitWithoutStream: true, // Envoy pings pooled connections with no stream too
		}),
		grpc.KeepaliveParams(keepalive.ServerParameters{
			Time:    keepaliveTime,
			Timeout: keepaliveTimeout,
		}),
	}
}

// streamLimiter is the stream interceptor that enforces -max-streams and
// -stream-idle-timeout.
type streamLimiter struct {
	max         int64
	idleTimeout time.Duration // 0: none
	active      atomic.Int64
	metrics     *metrics
}

// intercept admits a stream when fewer than max are running, else refuses
// it at once with RESOURCE_EXHAUSTED (Envoy then applies its failure mode
// to that request without waiting). Client-streaming calls (Process) are
// also ended when they receive nothing for idleTimeout.
func (l *streamLimiter) intercept(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	if n := l.active.Add(1); n > l.max {
		l.active.Add(-1)
		l.metrics.streamsRefused.Inc()
		return status.Errorf(codes.ResourceExhausted, "streamsub: %d streams already open (-max-streams)", l.max)
	}
	if l.idleTimeout <= 0 || !info.IsClientStream {
		defer l.active.Add(-1)
		return handler(srv, ss)
	}
	return l.runWithIdleTimeout(srv, ss, handler)
}

// runWithIdleTimeout runs handler in its own goroutine, because only the
// end of the RPC (this function returning) can unblock a Recv that waits
// for a message that never comes. When the stream has received nothing for
// idleTimeout, it returns DEADLINE_EXCEEDED; grpc-go then writes the status
// and cancels the stream, so the handler's Recv fails and it returns. The
// stream's slot is released only when the handler has returned.
func (l *streamLimiter) runWithIdleTimeout(srv any, ss grpc.ServerStream, handler grpc.StreamHandler) error {
	w := &idleStream{ServerStream: ss}
	w.lastRecv.Store(time.Now().UnixNano())
	fired := make(chan struct{}, 1)
	timer := time.AfterFunc(l.idleTimeout, func() { fired <- struct{}{} })
	defer timer.Stop()
	done := make(chan error, 1)
	go func() {
		defer l.active.Add(-1)
		done <- handler(srv, w)
	}()
	for {
		select {
		case err := <-done:
			return err
		case <-fired:
			// The timer is not reset per message: on firing, it is rearmed
			// for what is left of the interval since the last one.
			if left := l.idleTimeout - time.Since(time.Unix(0, w.lastRecv.Load())); left > 0 {
				timer.Reset(left)
				continue
			}
			w.end()
			l.metrics.streamsIdleClosed.Inc()
			return status.Errorf(codes.DeadlineExceeded, "streamsub: no message for %v (-stream-idle-timeout)", l.idleTimeout)
		}
	}
}

// idleStream records when it last received a message, and keeps the
// handler from sending once the RPC has ended.
type idleStream struct {
	grpc.ServerStream

	lastRecv atomic.Int64 // Unix ns of the last message received, or of the start

	mu    sync.Mutex // held by SendMsg, so the RPC cannot end under a send
	ended bool
}

func (w *idleStream) RecvMsg(m any) error {
	err := w.ServerStream.RecvMsg(m)
	if err == nil {
		w.lastRecv.Store(time.Now().UnixNano())
	}
	return err
}

func (w *idleStream) SendMsg(m any) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ended {
		return status.Error(codes.DeadlineExceeded, "streamsub: stream ended for idleness")
	}
	return w.ServerStream.SendMsg(m)
}

// end waits for a send in progress, then refuses later ones.
func (w *idleStream) end() {
	w.mu.Lock()
	w.ended = true
	w.mu.Unlock()
}

// streamLimitOptions are the grpc.ServerOptions for s's limits.
func streamLimitOptions(s Settings, m *metrics) []grpc.ServerOption {
	l := &streamLimiter{max: int64(s.MaxStreams), idleTimeout: s.StreamIdleTimeout, metrics: m}
	return []grpc.ServerOption{
		grpc.MaxConcurrentStreams(uint32(s.MaxConnStreams)),
		grpc.StreamInterceptor(l.intercept),
	}
}
