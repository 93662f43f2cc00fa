package processor

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	extprocfilterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_proc/v3"
	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	"github.com/streamsub/streamsub/config"
	"github.com/streamsub/streamsub/matcher"
	"github.com/streamsub/streamsub/processor/wire"
)

// phase is where a stream is in the ext_proc exchange.
type phase uint8

const (
	phaseStart   phase = iota // nothing seen yet
	phaseRequest              // request headers answered
	phaseBody                 // response headers answered; body chunks may follow
	phaseDone                 // the response body's end (end_of_stream or trailers) was answered
)

// stream is the state of one Process stream. Everything in it is owned by
// the goroutine running Process; streams are pooled, so start resets every
// per-stream field.
type stream struct {
	// Set by start.
	p   *Processor
	srv extprocv3.ExternalProcessor_ProcessServer
	cfg *config.Config // snapshot taken when the stream started

	// Per-stream state.
	phase     phase
	rs        *config.RuleSet
	rsReason  skipReason // why rs is nil (no_rule_set or unknown_rule_set)
	method    string
	authority string
	path      string
	ms        *matcher.Stream // the body's rewriter; nil unless the body is rewritten
	decision  skipReason      // set by response headers
	// envoyFullDuplex: Envoy's configured response body mode (its
	// protocol_config) is FULL_DUPLEX_STREAMED, so it ignores our mode
	// overrides and streams every body that way.
	envoyFullDuplex bool
	// abandoned: Envoy gave up on the stream while a chunk was being
	// rewritten, with chunkLeft bytes of it not fed to the matcher.
	abandoned bool
	chunkLeft int
	nIn, nOut int    // body bytes in and out, for the debug summary
	reported  int    // replacements already added to the metric
	fallbacks int    // fast-path fallbacks already added to the metric
	gaveUp    bool   // a DFA cache that gave up was counted
	overflow  bool   // the cap overflow was logged and counted
	recall    recall // what the memory is to learn of this body (remember.go)
	// Header rewriting: replacements made (both directions, for the debug
	// summary), and whether a refused value was logged.
	headerReplacements  int
	headerRefusalLogged bool
	// Collectors of rs, looked up once per stream.
	bytesIn, bytesOut prometheus.Counter

	// Reused across chunks and streams. The message received (in) and its
	// body are valid until in.Release; a body reply's body belongs to gRPC
	// once sent (package wire), so each chunk's output is built in a new
	// buffer from reply.Buffer.
	spare   *matcher.Stream  // the last body's matcher stream, for Reset
	spareRS *matcher.RuleSet // the rule set spare was made by
	sh      *shadow          // the shadow rule set's side of the body (shadow.go)
	in      *wire.Request
	reply   *wire.BodyReply
	removes []string
	// before is a reply to send ahead of the one handle returns (the
	// body's tail, ahead of the trailers reply); nil when none.
	before proto.Message

	// Scratch of rewriteHeaders, reused likewise: new values, which header
	// each belongs to, the names changed.
	hdrBuf     []byte
	hdrChanges []headerChange
	hdrNames   []string
}

func newStream() *stream {
	return &stream{in: &wire.Request{}, reply: wire.NewBodyReply()}
}

func (s *stream) start(p *Processor, srv extprocv3.ExternalProcessor_ProcessServer) {
	removes, in, reply, spare := s.removes[:0], s.in, s.reply, s.spare
	spareRS, sh := s.spareRS, s.sh
	hdrBuf, hdrChanges, hdrNames := s.hdrBuf[:0], s.hdrChanges[:0], s.hdrNames[:0]
	if cap(hdrBuf) > maxPooledBuffer {
		hdrBuf = nil
	}
	*s = stream{p: p, srv: srv, removes: removes, in: in, reply: reply, spare: spare, spareRS: spareRS, sh: sh,
		hdrBuf: hdrBuf, hdrChanges: hdrChanges, hdrNames: hdrNames}
	if p.current != nil {
		s.cfg = p.current()
	}
}

// finish accounts for a stream that ended, cleanly or not.
func (s *stream) finish() {
	if s.ms != nil && (s.phase != phaseDone || s.abandoned) {
		s.countUnfinished()
	}
	s.reportStats()
	s.shadowFinish()
	if s.p.log.Enabled(context.Background(), slog.LevelDebug) {
		s.logSummary()
	}
	if s.ms != nil {
		s.spare, s.spareRS = s.ms, s.rs.Compiled
	}
	clear(s.hdrChanges) // the pool must not keep this stream's headers alive
	s.in.Release()
	s.ms, s.srv, s.cfg, s.rs, s.bytesIn, s.bytesOut, s.before = nil, nil, nil, nil, nil, nil, nil
}

// logSummary logs what the stream did, at debug level.
func (s *stream) logSummary() {
	name, repl := "", 0
	if s.rs != nil {
		name = s.rs.Name
	}
	if s.ms != nil {
		repl = s.ms.Stats().Replacements
	}
	decision := string(s.decision)
	if s.ms != nil {
		decision = "rewrite"
	}
	s.p.log.Debug("stream done", "authority", s.authority, "path", s.path, "method", s.method,
		"rule_set", name, "decision", decision, "bytes_in", s.nIn, "bytes_out", s.nOut,
		"replacements", repl, "header_replacements", s.headerReplacements, "overflowed", s.overflow)
}

// reportStats adds what the body's rewriter counted since the last report
// to the rule set's metrics.
func (s *stream) reportStats() {
	if s.ms == nil {
		return
	}
	st := s.ms.Stats()
	if n := st.Replacements; n > s.reported {
		s.p.metrics.Replacements.WithLabelValues(s.rs.Name).Add(float64(n - s.reported))
		s.reported = n
	}
	if n := st.FastFallbacks; n > s.fallbacks {
		s.p.metrics.FastFallbacks.WithLabelValues(s.rs.Name).Add(float64(n - s.fallbacks))
		s.fallbacks = n
	}
	if st.CacheGaveUp && !s.gaveUp {
		s.gaveUp = true
		s.p.metrics.CacheGaveUp.WithLabelValues(s.rs.Name).Inc()
		s.p.log.Warn("lazy DFA cache gave up (rule set too complex for its memory budget); the rest of the body ran on the exact engine",
			"rule_set", s.rs.Name, "authority", s.authority, "path", s.path)
	}
}

// matcherStream returns a fresh matcher stream for s.rs: the spare one
// reset when it was made by the same compiled rule set, else a new one.
func (s *stream) matcherStream() *matcher.Stream {
	if ms := s.spare; ms != nil && s.spareRS == s.rs.Compiled {
		ms.Reset()
		return ms
	}
	// The spare belongs to another (maybe reloaded-away) rule set.
	s.spare, s.spareRS = nil, nil
	return s.rs.Compiled.NewStream()
}

// handle answers the message received, s.in. Every message that Envoy
// waits on gets exactly one reply; response trailers that end a rewritten
// body get the body's tail first (s.before).
func (s *stream) handle() (proto.Message, error) {
	req := s.in.Msg()
	if pc := req.GetProtocolConfig(); pc != nil {
		s.envoyFullDuplex = pc.GetResponseBodyMode() == extprocfilterv3.ProcessingMode_FULL_DUPLEX_STREAMED
	}
	switch r := req.Request.(type) {
	case *extprocv3.ProcessingRequest_RequestHeaders:
		return s.requestHeaders(r.RequestHeaders)
	case *extprocv3.ProcessingRequest_ResponseHeaders:
		return s.responseHeaders(r.ResponseHeaders)
	case *extprocv3.ProcessingRequest_ResponseBody:
		return s.responseBody(r.ResponseBody, s.in.Body())
	case *extprocv3.ProcessingRequest_RequestBody:
		// Never asked for; answer CONTINUE so Envoy is not stuck.
		return &extprocv3.ProcessingResponse{Response: &extprocv3.ProcessingResponse_RequestBody{
			RequestBody: &extprocv3.BodyResponse{}}}, nil
	case *extprocv3.ProcessingRequest_RequestTrailers:
		return &extprocv3.ProcessingResponse{Response: &extprocv3.ProcessingResponse_RequestTrailers{
			RequestTrailers: &extprocv3.TrailersResponse{}}}, nil
	case *extprocv3.ProcessingRequest_ResponseTrailers:
		s.responseTrailers()
		return &extprocv3.ProcessingResponse{Response: &extprocv3.ProcessingResponse_ResponseTrailers{
			ResponseTrailers: &extprocv3.TrailersResponse{}}}, nil
	default:
		return nil, &streamError{code: codes.InvalidArgument, token: errUnknownMessage,
			msg: "ProcessingRequest carries no known request type"}
	}
}

func (s *stream) requestHeaders(h *extprocv3.HttpHeaders) (*extprocv3.ProcessingResponse, error) {
	if s.phase != phaseStart {
		return nil, outOfOrder("request headers received twice")
	}
	s.phase = phaseRequest
	headers := h.GetHeaders().GetHeaders()
	for _, hv := range headers {
		switch hv.GetKey() {
		case ":method":
			s.method = string(value(hv))
		case ":authority":
			s.authority = string(value(hv))
		case ":path":
			s.path = string(value(hv))
		}
	}
	s.selectRuleSet()

	s.removes = s.removes[:0]
	var set []*corev3.HeaderValueOption
	if s.cfg != nil {
		s.removes = appendInternal(s.removes, headers, s.cfg.RequestHeaders)
	}
	if s.rs != nil {
		set = s.rewriteHeaders(s.rs.RequestRewriter, dirRequest, headers, nil)
	}
	return &extprocv3.ProcessingResponse{Response: &extprocv3.ProcessingResponse_RequestHeaders{
		RequestHeaders: &extprocv3.HeadersResponse{Response: common(s.removes, set)},
	}}, nil
}

// selectRuleSet picks the stream's rule set: initial metadata names it, else
// the :authority host map does, else the default ("*", or the first rule set
// when the file has no hosts; also when :authority is unknown), else none.
func (s *stream) selectRuleSet() {
	s.rs, s.rsReason = nil, skipNoRuleSet
	if s.cfg == nil {
		return
	}
	if name := ruleSetFromMetadata(s.srv.Context()); name != "" {
		if s.rs = s.cfg.RuleSet(name); s.rs == nil {
			s.rsReason = skipUnknownRuleSet
			s.p.log.Warn("initial metadata names an unknown rule set", "rule_set", name,
				"authority", s.authority, "path", s.path)
		}
		return
	}
	s.rs = s.cfg.RuleSetForHost(s.authority)
}

func (s *stream) responseHeaders(h *extprocv3.HttpHeaders) (*extprocv3.ProcessingResponse, error) {
	switch s.phase {
	case phaseStart:
		// Request headers not sent to us (request_header_mode SKIP): no
		// :authority, so metadata or the default chooses the rule set.
		s.selectRuleSet()
	case phaseRequest:
	default:
		return nil, outOfOrder("response headers received twice")
	}
	s.phase = phaseBody

	headers := h.GetHeaders().GetHeaders()
	f := responseFacts{method: s.method, endOfStream: h.GetEndOfStream()}
	var etag, clen *corev3.HeaderValue
	for _, hv := range headers {
		switch key := hv.GetKey(); {
		case key == ":status":
			f.status = parseStatus(value(hv))
		case strings.EqualFold(key, "content-type"):
			f.contentType = string(value(hv))
		case strings.EqualFold(key, "content-encoding"):
			if f.contentEncoding != "" {
				f.contentEncoding += ","
			}
			f.contentEncoding += string(value(hv))
		case strings.EqualFold(key, "trailer"):
			f.trailer = len(bytes.TrimSpace(value(hv))) > 0
		case strings.EqualFold(key, "etag"):
			etag = hv
		case strings.EqualFold(key, "content-length"):
			clen = hv
		}
	}
	reason := decide(s.rs, f)
	if reason == skipNoRuleSet {
		reason = s.rsReason
	}
	reason = s.recallSkip(reason, f, headers)
	s.decision = reason

	s.removes = s.removes[:0]
	if s.cfg != nil {
		s.removes = appendInternal(s.removes, headers, s.cfg.ResponseHeaders)
	}
	mode := &extprocfilterv3.ProcessingMode{
		RequestBodyMode:     extprocfilterv3.ProcessingMode_NONE,
		ResponseBodyMode:    extprocfilterv3.ProcessingMode_NONE,
		RequestTrailerMode:  extprocfilterv3.ProcessingMode_SKIP,
		ResponseTrailerMode: extprocfilterv3.ProcessingMode_SKIP,
	}
	var set []*corev3.HeaderValueOption
	shadowOnly := false // streamed for the shadow rule set alone
	if reason == rewrite {
		// FULL_DUPLEX_STREAMED: Envoy fails the stream (a reset once the
		// body has begun) rather than fail open mid-body, so a client
		// never gets half a rewrite; trailers must be sent in that mode,
		// and they are where a body with trailers ends (design.md §2).
		mode.ResponseBodyMode = extprocfilterv3.ProcessingMode_FULL_DUPLEX_STREAMED
		mode.ResponseTrailerMode = extprocfilterv3.ProcessingMode_SEND
		s.ms = s.matcherStream()
		s.startShadow(f, reason)
		s.bytesIn = s.p.metrics.BytesIn.WithLabelValues(s.rs.Name)
		s.bytesOut = s.p.metrics.BytesOut.WithLabelValues(s.rs.Name)
		s.p.metrics.Rewritten.WithLabelValues(s.rs.Name).Inc()
	} else {
		s.p.metrics.Skipped.WithLabelValues(string(reason)).Inc()
		if shadowOnly = s.startShadow(f, reason); shadowOnly {
			// Streamed for the shadow alone and passed through unchanged:
			// STREAMED is enough, since a failure mid-body can only pass
			// on more of the original. (An Envoy configured with STREAMED
			// then sends it without content-length, chunked.)
			mode.ResponseBodyMode = extprocfilterv3.ProcessingMode_STREAMED
		}
	}
	asRewrite := representsRewrite(s.rs, f, reason)
	if asRewrite && reason != rewrite && s.remembersNoMatch(headers) {
		// A GET would be skipped by the memory, the origin's headers
		// kept: a HEAD or a 304 keeps them too.
		asRewrite = false
	}
	if asRewrite {
		// The body changes (or, for HEAD and 304, would): its length is
		// unknown, its date is not the origin's, and byte-for-byte
		// equality with the origin is gone.
		s.removes = appendName(s.removes, "content-length")
		if !s.rs.KeepLastModified {
			s.removes = appendName(s.removes, "last-modified")
		}
		if etag != nil {
			switch weak, strong, ok := weakETag(value(etag)); {
			case strong:
				set = append(set, overwrite("etag", weak))
			case !ok:
				// Not an entity tag: drop it rather than vouch for the new body.
				s.removes = appendName(s.removes, "etag")
			}
		}
	} else if clen != nil && !shadowOnly && !containsFold(s.removes, "content-length") {
		// An Envoy configured with response_body_mode STREAMED drops
		// content-length before asking us, even if we then skip the
		// body; setting it in this reply puts it back (checked in e2e
		// TestEnvoyModeOverrideNone).
		set = append(set, overwrite("content-length", value(clen)))
	}
	if s.rs != nil {
		// Whatever the body: a redirect, an image's link header, a 304.
		set = s.rewriteHeaders(s.rs.ResponseRewriter, dirResponse, headers, set)
	}
	return &extprocv3.ProcessingResponse{
		Response: &extprocv3.ProcessingResponse_ResponseHeaders{
			ResponseHeaders: &extprocv3.HeadersResponse{Response: common(s.removes, set)},
		},
		ModeOverride: mode,
	}, nil
}

// responseBody answers a response body chunk b whose bytes are body, in
// segments.
func (s *stream) responseBody(b *extprocv3.HttpBody, body [][]byte) (proto.Message, error) {
	switch s.phase {
	case phaseBody:
	case phaseDone:
		return nil, outOfOrder("response body after its end")
	default:
		return nil, outOfOrder("response body before response headers")
	}
	eos := b.GetEndOfStream()
	if eos {
		s.phase = phaseDone
	}
	if s.ms == nil {
		// Skipped, but streamed for the shadow rule set, or by Envoy
		// anyway.
		s.shadowWrite(body, eos, body...)
		if s.envoyFullDuplex {
			// Envoy configured with full duplex ignores mode overrides:
			// hand the chunk back as it came (copied: the reply's body
			// goes to gRPC, the chunk's buffers back to it).
			out := s.reply.Buffer(segmentsLen(body))
			for _, seg := range body {
				out = append(out, seg...)
			}
			return s.bodyChunkReply(out, eos), nil
		}
		// A reply without a body mutation passes the chunk on.
		return &extprocv3.ProcessingResponse{Response: &extprocv3.ProcessingResponse_ResponseBody{
			ResponseBody: &extprocv3.BodyResponse{}}}, nil
	}

	n := segmentsLen(body)
	t0 := time.Now()
	// Room for the chunk and some growth: the output of a chunk is about as
	// long as the chunk, and append grows the buffer when it is not.
	out, err := s.rewriteChunk(s.reply.Buffer(n+n/8+64), body)
	if err != nil {
		s.reply.SetBody(out, false) // never sent; its buffer serves the next chunk
		return nil, err
	}
	if eos {
		out = s.ms.Close(out)
	}
	s.p.metrics.ChunkSeconds.Observe(time.Since(t0).Seconds())
	s.shadowWrite(body, eos, out)
	s.countBody(n, out)
	if eos {
		s.reportStats()
		s.rememberBody()
	}
	return s.bodyChunkReply(out, eos), nil
}

// rewriteChunk appends the rewrite of a chunk, in segments, to dst. It
// feeds the matcher at most sliceBytes at a time and stops, with
// errAbandonedStream, when Envoy has given up on the stream (message
// timeout, idle timeout, client gone: the stream's context is cancelled),
// so a costly rule set burns no more than one slice after that. The output
// does not depend on the segments or the slicing (semantics.md
// "Streaming"), except where the hold-back cap overflows: the cap is
// checked at each slice's end.
func (s *stream) rewriteChunk(dst []byte, chunk [][]byte) ([]byte, error) {
	ctx := s.srv.Context()
	budget := 0 // bytes the matcher may take before the next check
	for i, seg := range chunk {
		for len(seg) > 0 {
			if budget == 0 {
				if ctx.Err() != nil {
					s.abandon(len(seg) + segmentsLen(chunk[i+1:]))
					return dst, errAbandonedStream
				}
				budget = sliceBytes
			}
			n := min(len(seg), budget)
			dst = s.ms.Write(dst, seg[:n])
			seg, budget = seg[n:], budget-n
		}
	}
	return dst, nil
}

// segmentsLen is the length of a chunk in segments.
func segmentsLen(segs [][]byte) int {
	n := 0
	for _, seg := range segs {
		n += len(seg)
	}
	return n
}

// sliceBytes is the most input the processor hands the matcher between two
// checks of the stream's context.
const sliceBytes = 16 << 10

// errAbandonedStream ends a stream that Envoy gave up on while a chunk was
// being rewritten, quietly; finish counts and logs it.
var errAbandonedStream = errors.New("processor: Envoy gave up on the stream")

// abandon notes that Envoy gave up on the stream while a chunk was being
// rewritten, with rest bytes of it not fed to the matcher; finish counts it.
func (s *stream) abandon(rest int) {
	s.abandoned, s.chunkLeft = true, rest
}

// countUnfinished counts and logs a rewritten body whose stream ended
// before the body did: Envoy gave up (client gone, a timeout, a reset) or
// the stream failed. Rewriting stopped there, between two chunks or at a
// slice boundary inside one; bytes held back for a pending match are lost.
func (s *stream) countUnfinished() {
	held := s.ms.Stats().Buffered
	s.p.metrics.Errors.WithLabelValues(errAbandoned).Inc()
	if held > 0 {
		s.p.metrics.Errors.WithLabelValues(errBodyLost).Inc()
	}
	s.p.log.Warn("response body abandoned before its end; rewriting stopped",
		"error", errAbandoned, "rule_set", s.rs.Name, "bytes_in", s.nIn, "mid_chunk", s.abandoned,
		"chunk_bytes_left", s.chunkLeft, "held_back_lost", held,
		"authority", s.authority, "path", s.path)
}

// countBody adds a chunk of n bytes in and its output out to the metrics,
// and logs and counts a hold-back cap overflow once.
func (s *stream) countBody(n int, out []byte) {
	s.bytesIn.Add(float64(n))
	s.bytesOut.Add(float64(len(out)))
	s.nIn += n
	s.nOut += len(out)
	if !s.overflow && s.ms.Stats().Overflowed {
		s.overflow = true
		s.p.metrics.CapExceeded.WithLabelValues(s.rs.Name).Inc()
		s.p.log.Warn("held-back bytes exceeded max_buffered_bytes; rest of body passes through unchanged",
			"error", "stream_buffer_cap_exceeded", "rule_set", s.rs.Name,
			"authority", s.authority, "path", s.path)
	}
}

// bodyChunkReply returns the reused full-duplex body reply carrying out, a
// buffer from s.reply.Buffer that gRPC takes over when the reply is sent.
// It is always explicit, even empty; eos ends the body.
func (s *stream) bodyChunkReply(out []byte, eos bool) proto.Message {
	s.reply.SetBody(out, eos)
	return s.reply
}

// responseTrailers ends a body that ends with trailers (no chunk carries
// end_of_stream then): the held-back tail goes out ahead of the trailers
// reply. Full duplex only; a skipped body has nothing held.
func (s *stream) responseTrailers() {
	if s.ms == nil || s.phase != phaseBody {
		return
	}
	s.phase = phaseDone
	out := s.ms.Close(s.reply.Buffer(64))
	s.shadowWrite(nil, true, out)
	s.countBody(0, out)
	s.reportStats()
	s.rememberBody()
	// Not end_of_stream: the trailers reply that follows ends the body.
	s.before = s.bodyChunkReply(out, false)
}

// overwrite sets header key to v, replacing any value. The value goes in
// raw_value only: Envoy reads raw_value, and a value in both fields is an
// error.
func overwrite(key string, v []byte) *corev3.HeaderValueOption {
	return &corev3.HeaderValueOption{
		Header:       &corev3.HeaderValue{Key: key, RawValue: bytes.Clone(v)},
		AppendAction: corev3.HeaderValueOption_OVERWRITE_IF_EXISTS_OR_ADD,
	}
}

// common builds a CommonResponse with the header mutation, or none.
func common(remove []string, set []*corev3.HeaderValueOption) *extprocv3.CommonResponse {
	if len(remove) == 0 && len(set) == 0 {
		return &extprocv3.CommonResponse{}
	}
	return &extprocv3.CommonResponse{HeaderMutation: &extprocv3.HeaderMutation{
		RemoveHeaders: append([]string(nil), remove...),
		SetHeaders:    set,
	}}
}
