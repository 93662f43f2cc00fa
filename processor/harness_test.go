package processor

import (
	"cmp"
	"context"
	"io"
	"log/slog"
	"testing"
	"testing/synctest"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	extprocfilterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_proc/v3"
	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/streamsub/streamsub/config"
	"github.com/streamsub/streamsub/matcher"
	"github.com/streamsub/streamsub/processor/wire"
)

// fakeStream is an in-memory ExternalProcessor_ProcessServer: the test plays
// Envoy on in/out. Messages cross it as they cross gRPC with wire.Codec:
// encoded, cut into frames, decoded (see deliver and received).
type fakeStream struct {
	grpc.ServerStream // nil: only Context, RecvMsg and SendMsg are used
	ctx               context.Context
	in                chan *extprocv3.ProcessingRequest // closed: RecvMsg returns io.EOF
	out               chan *extprocv3.ProcessingResponse
	panicOnRecv       chan struct{} // closed: the next RecvMsg panics
	frame             int           // frame size for deliver; 0: testFrame
}

func (f *fakeStream) Context() context.Context { return f.ctx }

func (f *fakeStream) RecvMsg(m any) error {
	select {
	case <-f.panicOnRecv:
		panic("test: Recv exploded")
	case req, ok := <-f.in:
		if !ok {
			return io.EOF
		}
		return deliver(req, m, cmp.Or(f.frame, testFrame))
	case <-f.ctx.Done():
		return status.FromContextError(f.ctx.Err()).Err()
	}
}

// Recv and Send complete ExternalProcessor_ProcessServer; the processor
// receives and sends with RecvMsg and SendMsg.
func (f *fakeStream) Recv() (*extprocv3.ProcessingRequest, error) {
	m := &extprocv3.ProcessingRequest{}
	return m, f.RecvMsg(m)
}

func (f *fakeStream) Send(m *extprocv3.ProcessingResponse) error { return f.SendMsg(m) }

func (f *fakeStream) SendMsg(m any) error {
	resp, err := received(m)
	if err != nil {
		return err
	}
	f.out <- resp
	return nil
}

// testFrame is the frame size deliver cuts messages into by default:
// gRPC's, 16 KiB (TestBodyInFrames and FuzzHandle cut them smaller).
const testFrame = 16 << 10

// poisonPool overwrites the buffers that come back to it with 0xEE: a body
// used after its frames were freed shows.
type poisonPool struct{}

func (poisonPool) Get(n int) *[]byte {
	// Above mem's pooling threshold whatever n is, so that mem.NewBuffer
	// counts references even for small frames.
	b := make([]byte, n, max(n, 2048))
	return &b
}

func (poisonPool) Put(b *[]byte) {
	for i := range *b {
		(*b)[i] = 0xEE
	}
}

// deliver does what gRPC does with a message sent to a stream that receives
// into m through wire.Codec: encodes it, reads it into frame-sized buffers
// from a pool, decodes them into m and frees them (a decoder that keeps a
// body holds its own references until Release).
func deliver(req *extprocv3.ProcessingRequest, m any, frame int) error {
	b, err := proto.Marshal(req)
	if err != nil {
		return err
	}
	var data mem.BufferSlice
	for len(b) > 0 {
		n := min(frame, len(b))
		buf := poisonPool{}.Get(n)
		copy(*buf, b[:n])
		data = append(data, mem.NewBuffer(buf, poisonPool{}))
		b = b[n:]
	}
	defer data.Free()
	return wire.Codec{}.Unmarshal(data, m)
}

// received decodes a reply as Envoy receives it from wire.Codec, then frees
// what the codec handed over as gRPC's transport does once it is written,
// overwriting it first: a reply buffer the processor still wrote to shows.
func received(m any) (*extprocv3.ProcessingResponse, error) {
	data, err := wire.Codec{}.Marshal(m)
	if err != nil {
		return nil, err
	}
	resp := &extprocv3.ProcessingResponse{}
	err = proto.Unmarshal(data.Materialize(), resp)
	for _, b := range data {
		if buf, ok := b.(mem.SliceBuffer); ok {
			for i := range buf {
				buf[i] = 0xEE
			}
		}
	}
	data.Free()
	return resp, err
}

// harness runs one Process stream against a fakeStream. Use it inside a
// synctest bubble: synctest.Wait tells "no reply" from "reply not yet sent".
type harness struct {
	t    *testing.T
	fs   *fakeStream
	done chan error
	err  error
	over bool
	// cancel cancels the stream's context, as Envoy resetting it does.
	cancel context.CancelFunc
}

// mustConfig builds a Config with config.New, as the loader does for a file.
func mustConfig(t testing.TB, c config.Config) *config.Config {
	t.Helper()
	cfg, err := config.New(c)
	if err != nil {
		t.Fatalf("config.New: %v", err)
	}
	return cfg
}

// htmlRuleSet is a rule set called name that rewrites text/html.
func htmlRuleSet(name string, rules ...matcher.Rule) *config.RuleSet {
	return &config.RuleSet{Name: name, ContentTypes: []string{config.DefaultContentType}, Rules: rules}
}

func literal(pattern, replace string) matcher.Rule {
	return matcher.Rule{Pattern: pattern, Literal: true, Replace: replace}
}

func regex(pattern, replace string) matcher.Rule {
	return matcher.Rule{Pattern: pattern, Replace: replace}
}

func newProcessor(t *testing.T, cfg *config.Config) (*Processor, *Metrics) {
	t.Helper()
	return newProcessorTB(t, cfg)
}

func newProcessorTB(t testing.TB, cfg *config.Config) (*Processor, *Metrics) {
	t.Helper()
	m := NewMetrics(prometheus.NewRegistry())
	return New(func() *config.Config { return cfg }, m, slog.New(slog.DiscardHandler)), m
}

// startStream starts p.Process; md is the stream's initial metadata.
func startStream(t *testing.T, p *Processor, md ...string) *harness {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if len(md) > 0 {
		ctx = metadata.NewIncomingContext(ctx, metadata.Pairs(md...))
	}
	h := &harness{t: t, cancel: cancel, done: make(chan error, 1), fs: &fakeStream{
		ctx:         ctx,
		in:          make(chan *extprocv3.ProcessingRequest, 64),
		out:         make(chan *extprocv3.ProcessingResponse, 64),
		panicOnRecv: make(chan struct{}),
	}}
	go func() { h.done <- p.Process(h.fs) }()
	return h
}

func headerMap(kv []string) *corev3.HeaderMap {
	hm := &corev3.HeaderMap{}
	for i := 0; i+1 < len(kv); i += 2 {
		hm.Headers = append(hm.Headers, &corev3.HeaderValue{Key: kv[i], RawValue: []byte(kv[i+1])})
	}
	return hm
}

func (h *harness) send(req *extprocv3.ProcessingRequest) { h.fs.in <- req }

// sendRequestHeaders sends request headers (key, value pairs) of a request
// without body.
func (h *harness) sendRequestHeaders(kv ...string) {
	h.send(&extprocv3.ProcessingRequest{Request: &extprocv3.ProcessingRequest_RequestHeaders{
		RequestHeaders: &extprocv3.HttpHeaders{Headers: headerMap(kv), EndOfStream: true}}})
}

// sendResponseHeaders sends response headers; eos says no body follows.
func (h *harness) sendResponseHeaders(eos bool, kv ...string) {
	h.send(&extprocv3.ProcessingRequest{Request: &extprocv3.ProcessingRequest_ResponseHeaders{
		ResponseHeaders: &extprocv3.HttpHeaders{Headers: headerMap(kv), EndOfStream: eos}}})
}

// sendBody sends one response body chunk.
func (h *harness) sendBody(chunk string, eos bool) {
	h.send(&extprocv3.ProcessingRequest{Request: &extprocv3.ProcessingRequest_ResponseBody{
		ResponseBody: &extprocv3.HttpBody{Body: []byte(chunk), EndOfStream: eos}}})
}

// next returns the next reply, failing if the stream is idle without one.
func (h *harness) next() *extprocv3.ProcessingResponse {
	h.t.Helper()
	synctest.Wait()
	select {
	case r := <-h.fs.out:
		return r
	default:
		h.t.Fatalf("no reply from the processor")
		return nil
	}
}

// wantNoReply fails if a reply is waiting.
func (h *harness) wantNoReply() {
	h.t.Helper()
	synctest.Wait()
	select {
	case r := <-h.fs.out:
		h.t.Fatalf("unexpected reply %v", r)
	default:
	}
}

// wantHeadersReply returns the CommonResponse of the next reply, which must
// answer request or response headers.
func (h *harness) wantHeadersReply() (*extprocv3.CommonResponse, *extprocv3.ProcessingResponse) {
	h.t.Helper()
	r := h.next()
	switch x := r.Response.(type) {
	case *extprocv3.ProcessingResponse_RequestHeaders:
		return x.RequestHeaders.GetResponse(), r
	case *extprocv3.ProcessingResponse_ResponseHeaders:
		return x.ResponseHeaders.GetResponse(), r
	}
	h.t.Fatalf("reply %T, want a headers reply", r.Response)
	return nil, nil
}

// wantModeOverride reads a response headers reply and checks its mode
// override restates both body modes and both trailer modes.
func (h *harness) wantModeOverride(body extprocfilterv3.ProcessingMode_BodySendMode) *extprocv3.CommonResponse {
	h.t.Helper()
	c, r := h.wantHeadersReply()
	if _, ok := r.Response.(*extprocv3.ProcessingResponse_ResponseHeaders); !ok {
		h.t.Fatalf("reply %T, want response headers reply", r.Response)
	}
	want := &extprocfilterv3.ProcessingMode{
		RequestBodyMode:     extprocfilterv3.ProcessingMode_NONE,
		ResponseBodyMode:    body,
		RequestTrailerMode:  extprocfilterv3.ProcessingMode_SKIP,
		ResponseTrailerMode: extprocfilterv3.ProcessingMode_SKIP,
	}
	if body == extprocfilterv3.ProcessingMode_FULL_DUPLEX_STREAMED {
		// Full duplex needs the trailers: a body with trailers ends there.
		want.ResponseTrailerMode = extprocfilterv3.ProcessingMode_SEND
	}
	if !proto.Equal(r.GetModeOverride(), want) {
		h.t.Fatalf("mode_override = %v, want %v", r.GetModeOverride(), want)
	}
	return c
}

// openResponse plays a GET of path on host and a 200 response of
// contentType, and checks the headers replies and the body mode chosen.
func (h *harness) openResponse(host, path, contentType string, mode extprocfilterv3.ProcessingMode_BodySendMode) {
	h.t.Helper()
	h.sendRequestHeaders(":method", "GET", ":authority", host, ":path", path)
	h.wantHeadersReply()
	h.sendResponseHeaders(false, ":status", "200", "content-type", contentType)
	h.wantModeOverride(mode)
}

// wantBodyReply reads a response body reply, which must carry an explicit
// full-duplex body (streamed_response), and returns the body.
func (h *harness) wantBodyReply() []byte {
	h.t.Helper()
	body, _ := h.wantBodyChunk()
	return body
}

// wantBodyChunk reads a full-duplex response body reply and returns its
// body and end_of_stream.
func (h *harness) wantBodyChunk() ([]byte, bool) {
	h.t.Helper()
	r := h.next()
	rb, ok := r.Response.(*extprocv3.ProcessingResponse_ResponseBody)
	if !ok {
		h.t.Fatalf("reply %T, want response body reply", r.Response)
	}
	m := rb.ResponseBody.GetResponse().GetBodyMutation().GetStreamedResponse()
	if m == nil {
		h.t.Fatalf("body reply without streamed_response (%v): a full-duplex body needs one", rb.ResponseBody)
	}
	return m.Body, m.EndOfStream
}

// wantPassThrough reads a body reply without mutation.
func (h *harness) wantPassThrough() {
	h.t.Helper()
	r := h.next()
	rb, ok := r.Response.(*extprocv3.ProcessingResponse_ResponseBody)
	if !ok || rb.ResponseBody.GetResponse().GetBodyMutation() != nil {
		h.t.Fatalf("reply %v, want a body reply without mutation", r)
	}
}

// wait returns Process's result; the stream must have ended.
func (h *harness) wait() error {
	h.t.Helper()
	if h.over {
		return h.err
	}
	synctest.Wait()
	select {
	case h.err = <-h.done:
		h.over = true
		return h.err
	default:
		h.t.Fatalf("stream still running")
		return nil
	}
}

// wantError checks that the stream ended with a gRPC status of code.
func (h *harness) wantError(code codes.Code) {
	h.t.Helper()
	err := h.wait()
	if status.Code(err) != code {
		h.t.Fatalf("stream ended with %v, want code %v", err, code)
	}
}

// closeOK half-closes the stream as Envoy does and wants a clean end.
func (h *harness) closeOK() {
	h.t.Helper()
	close(h.fs.in)
	if err := h.wait(); err != nil {
		h.t.Fatalf("stream ended with %v, want nil", err)
	}
}

// sum adds up every series of a counter vector; a series that is not a
// counter fails the test.
func sum(t *testing.T, c prometheus.Collector) float64 {
	t.Helper()
	ch := make(chan prometheus.Metric, 64)
	go func() { c.Collect(ch); close(ch) }()
	var total float64
	for m := range ch {
		var pb dto.Metric
		if err := m.Write(&pb); err != nil {
			t.Fatal(err)
		}
		if pb.Counter == nil {
			t.Fatalf("sum: %s is not a counter", m.Desc())
		}
		total += pb.GetCounter().GetValue()
	}
	return total
}
