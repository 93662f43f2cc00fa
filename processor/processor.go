package processor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"

	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/streamsub/streamsub/config"
)

// RuleSetMetadataKey is the gRPC initial metadata key that names the rule
// set for a stream; Envoy sets it per virtual host in the ext_proc
// grpc_service's initial_metadata. It wins over the :authority host map.
const RuleSetMetadataKey = "x-streamsub-ruleset"

// maxPooledBuffer caps the scratch buffers a pooled stream keeps, so one
// huge chunk or header does not pin its memory for ever.
const maxPooledBuffer = 1 << 20

// Processor is the ext_proc service: each Process call runs one stream's
// state machine. It is safe for concurrent use.
type Processor struct {
	extprocv3.UnimplementedExternalProcessorServer

	current func() *config.Config // the config a new stream starts with
	metrics *Metrics
	log     *slog.Logger
	pool    sync.Pool // *stream, with its message holders

	shadowSeen atomic.Uint64 // responses a shadow could see (sampleShadow)
	shadowLog  logLimiter    // the shadow difference log

	memory memory // bodies no rule matched (remember.go)
}

// New returns a Processor. current is called once at the start of every
// stream; the stream keeps that config to its end, so a reload never
// changes a body half-way. current may return nil (nothing loaded): then
// every body is skipped and no header is removed.
func New(current func() *config.Config, m *Metrics, log *slog.Logger) *Processor {
	if m == nil {
		m = NewMetrics(nil)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	p := &Processor{current: current, metrics: m, log: log}
	p.shadowLog.interval = shadowLogInterval
	return p
}

// Process runs one ext_proc stream: Recv → dispatch → Send until Envoy
// closes it. Protocol violations end this stream only, with a gRPC status;
// a panic is recovered here and becomes codes.Internal.
func (p *Processor) Process(srv extprocv3.ExternalProcessor_ProcessServer) (err error) {
	p.metrics.Streams.Inc()
	p.metrics.ActiveStreams.Inc()
	defer p.metrics.ActiveStreams.Dec()

	s, _ := p.pool.Get().(*stream)
	if s == nil {
		s = newStream()
	}
	s.start(p, srv)
	defer func() {
		if r := recover(); r != nil {
			// s may be inconsistent: drop it rather than pool it.
			p.metrics.Errors.WithLabelValues(errPanic).Inc()
			p.log.Error("ext_proc stream panicked", "error", errPanic, "panic", fmt.Sprint(r),
				"stack", string(debug.Stack()), "authority", s.authority, "path", s.path)
			err = status.Error(codes.Internal, "internal error")
			return
		}
		s.finish()
		p.pool.Put(s)
	}()
	return s.run()
}

// run is the stream loop. It returns nil when Envoy ends the stream.
func (s *stream) run() error {
	for {
		if err := s.srv.RecvMsg(s.in); err != nil {
			if quietEnd(err) {
				return nil
			}
			return s.fail(errRecv, "ext_proc receive failed", err)
		}
		end, err := s.answer()
		// The replies are encoded by now: nothing refers to the message
		// received any more, and its buffers go back to gRPC.
		s.in.Release()
		if end {
			return err
		}
	}
}

// answer handles the message received and sends its replies. end says the
// stream ends, with err (nil: quietly).
func (s *stream) answer() (end bool, err error) {
	resp, err := s.handle()
	if errors.Is(err, errAbandonedStream) {
		return true, nil // counted and logged by finish
	}
	if err != nil {
		token := errInternal
		if se, ok := errors.AsType[*streamError](err); ok {
			token = se.token
		}
		return true, s.fail(token, "ext_proc stream aborted", err)
	}
	if s.in.Msg().GetObservabilityMode() {
		return false, nil // Envoy ignores replies in observability mode
	}
	if s.before != nil {
		before := s.before
		s.before = nil
		if err := s.srv.SendMsg(before); err != nil {
			return true, s.sendFailed(err)
		}
	}
	if err := s.srv.SendMsg(resp); err != nil {
		return true, s.sendFailed(err)
	}
	return false, nil
}

// sendFailed ends the stream after a failed Send: quietly when Envoy is
// gone, else counted and logged.
func (s *stream) sendFailed(err error) error {
	if quietEnd(err) {
		return nil
	}
	return s.fail(errSend, "ext_proc send failed", err)
}

// fail counts and logs the error that ends this stream, and returns it.
func (s *stream) fail(token, msg string, err error) error {
	s.p.metrics.Errors.WithLabelValues(token).Inc()
	s.p.log.Warn(msg, "error", token, "cause", err.Error(), "authority", s.authority, "path", s.path)
	return err
}

// quietEnd reports whether a Recv/Send error is the normal end of a stream:
// Envoy half-closed it, or the HTTP request is gone.
func quietEnd(err error) bool {
	if errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) {
		return true
	}
	c := status.Code(err)
	return c == codes.Canceled
}

// ruleSetFromMetadata returns the rule set name that Envoy put in the
// stream's initial metadata, or "".
func ruleSetFromMetadata(ctx context.Context) string {
	vs := metadata.ValueFromIncomingContext(ctx, RuleSetMetadataKey)
	if len(vs) == 0 {
		return ""
	}
	return vs[0]
}
