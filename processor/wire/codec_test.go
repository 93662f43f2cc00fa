package wire

import (
	"bytes"
	"strings"
	"testing"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
)

// frames cuts b into buffers of n bytes, as gRPC's transport hands a
// message to the codec.
func frames(b []byte, n int) mem.BufferSlice {
	var s mem.BufferSlice
	for len(b) > 0 {
		k := min(n, len(b))
		s = append(s, mem.SliceBuffer(b[:k:k]))
		b = b[k:]
	}
	return s
}

// asDecoded returns what r holds as one ProcessingRequest, its body joined.
func asDecoded(r *Request) *extprocv3.ProcessingRequest {
	m := proto.Clone(r.Msg()).(*extprocv3.ProcessingRequest)
	if b := m.GetResponseBody(); b != nil && r.inPlace {
		b.Body = bytes.Join(r.Body(), nil)
	}
	return m
}

func responseBody(body string, eos bool) *extprocv3.ProcessingRequest {
	return &extprocv3.ProcessingRequest{Request: &extprocv3.ProcessingRequest_ResponseBody{
		ResponseBody: &extprocv3.HttpBody{Body: []byte(body), EndOfStream: eos}}}
}

// appendField appends a length-delimited field to b.
func appendField(b []byte, num protowire.Number, v []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

func TestRequestDecode(t *testing.T) {
	long := strings.Repeat("<p>www.example.com</p>", 3000)
	withObs := responseBody("x", false)
	withObs.ObservabilityMode = true
	// What Envoy 1.40 sends: an empty metadata_context with every message.
	envoys := responseBody("<html>", true)
	envoys.MetadataContext = &corev3.Metadata{}
	withMetadata := responseBody("x", false)
	withMetadata.MetadataContext = &corev3.Metadata{FilterMetadata: map[string]*structpb.Struct{"f": {}}}
	headers := &extprocv3.ProcessingRequest{Request: &extprocv3.ProcessingRequest_RequestHeaders{
		RequestHeaders: &extprocv3.HttpHeaders{Headers: &corev3.HeaderMap{Headers: []*corev3.HeaderValue{
			{Key: ":authority", RawValue: []byte("site.test")}}}}}}
	reqBody := &extprocv3.ProcessingRequest{Request: &extprocv3.ProcessingRequest_RequestBody{
		RequestBody: &extprocv3.HttpBody{Body: []byte("form"), EndOfStream: true}}}
	allFlags := responseBody("y", true)
	allFlags.GetResponseBody().EndOfStreamWithoutMessage = true
	allFlags.GetResponseBody().GrpcMessageCompressed = true
	allFlags.GetResponseBody().DrainComplete = true
	enc := func(m *extprocv3.ProcessingRequest) []byte {
		b, err := proto.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	// Two body fields in one HttpBody: protobuf keeps the last.
	twoBodies := appendField(nil, fieldResponseBody,
		appendField(appendField(nil, fieldBody, []byte("first")), fieldBody, []byte("second")))
	// An HttpBody field the decoder does not know (99).
	unknown := appendField(nil, fieldResponseBody,
		appendField(appendField(nil, fieldBody, []byte("z")), 99, []byte("?")))
	// A body whose length runs past the message.
	truncated := enc(responseBody("0123456789", true))
	truncated = truncated[:len(truncated)-3]

	tests := []struct {
		name    string
		wire    []byte
		inPlace bool
		wantErr bool
	}{
		{"body", enc(responseBody("hello", false)), true, false},
		{"last body", enc(responseBody("tail", true)), true, false},
		{"empty end of stream", enc(responseBody("", true)), true, false},
		{"long body", enc(responseBody(long, false)), true, false},
		{"observability mode", enc(withObs), true, false},
		{"empty metadata context", enc(envoys), true, false},
		{"metadata context", enc(withMetadata), false, false},
		{"every HttpBody flag", enc(allFlags), true, false},
		{"request headers", enc(headers), false, false},
		{"request body", enc(reqBody), false, false},
		{"two body fields", twoBodies, false, false},
		{"unknown field", unknown, false, false},
		{"empty message", nil, false, false},
		{"truncated", truncated, false, true},
	}
	for _, tt := range tests {
		var want extprocv3.ProcessingRequest
		wantErr := proto.Unmarshal(tt.wire, &want) != nil
		if wantErr != tt.wantErr {
			t.Fatalf("%s: the test's message does not decode as it says (error %v)", tt.name, wantErr)
		}
		for _, n := range []int{1, 2, 3, 7, 16 << 10} {
			var r Request
			err := Codec{}.Unmarshal(frames(tt.wire, n), &r)
			if (err != nil) != tt.wantErr {
				t.Errorf("%s, %d-byte frames: error %v, want error %v", tt.name, n, err, tt.wantErr)
				continue
			}
			if err != nil {
				continue
			}
			if r.inPlace != tt.inPlace {
				t.Errorf("%s, %d-byte frames: decoded in place %v, want %v", tt.name, n, r.inPlace, tt.inPlace)
			}
			if got := asDecoded(&r); !proto.Equal(got, &want) {
				t.Errorf("%s, %d-byte frames: decoded %v, want %v", tt.name, n, got, &want)
			}
			body := want.GetResponseBody().GetBody()
			if want.GetRequestBody() != nil {
				body = want.GetRequestBody().GetBody()
			}
			if got := bytes.Join(r.Body(), nil); !bytes.Equal(got, body) {
				t.Errorf("%s, %d-byte frames: Body() %.40q, want %.40q", tt.name, n, got, body)
			}
			if r.inPlace && n == 1 && len(r.Body()) != len(body) {
				// One segment per one-byte frame: the body was not copied.
				t.Errorf("%s, 1-byte frames: %d segments for %d bytes", tt.name, len(r.Body()), len(body))
			}
			r.Release()
			if len(r.Body()) != 0 || r.Msg().Request != nil {
				t.Errorf("%s: a message is left after Release: %v, %d segments", tt.name, r.Msg(), len(r.Body()))
			}
		}
	}
}

// TestRequestHoldsFrames: a body decoded in place keeps its frames
// referenced until Release, then frees each once.
func TestRequestHoldsFrames(t *testing.T) {
	b, err := proto.Marshal(responseBody(strings.Repeat("abc", 2000), true))
	if err != nil {
		t.Fatal(err)
	}
	var pool countingPool
	var data mem.BufferSlice
	for len(b) > 0 {
		n := min(len(b), 2048)
		buf := pool.Get(n)
		copy(*buf, b[:n])
		data = append(data, mem.NewBuffer(buf, &pool))
		b = b[n:]
	}
	var r Request
	if err := (Codec{}).Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	data.Free() // what gRPC does once Unmarshal returns
	if pool.put != 0 {
		t.Fatalf("%d frames freed while the body is in use", pool.put)
	}
	if got := len(bytes.Join(r.Body(), nil)); got != 6000 {
		t.Fatalf("body of %d bytes, want 6000", got)
	}
	r.Release()
	if pool.put != len(data) {
		t.Fatalf("%d of %d frames freed after Release", pool.put, len(data))
	}
	r.Release() // twice is harmless
	if pool.put != len(data) {
		t.Fatalf("a second Release freed frames again (%d)", pool.put)
	}
}

type countingPool struct{ put int }

func (p *countingPool) Get(n int) *[]byte {
	b := make([]byte, n, max(n, 2048)) // above mem's pooling threshold
	return &b
}

func (p *countingPool) Put(*[]byte) { p.put++ }

// FuzzRequestDecode: whatever the bytes and however they are cut into
// frames, Codec decodes a Request exactly as proto.Unmarshal decodes a
// ProcessingRequest, and fails where it fails.
func FuzzRequestDecode(f *testing.F) {
	envoys := responseBody("hello www.example.com", true)
	envoys.MetadataContext = &corev3.Metadata{}
	for _, m := range []*extprocv3.ProcessingRequest{envoys, responseBody("", false),
		{Request: &extprocv3.ProcessingRequest_ResponseHeaders{ResponseHeaders: &extprocv3.HttpHeaders{EndOfStream: true}}}} {
		b, err := proto.Marshal(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, uint8(3))
	}
	f.Add([]byte{0x2a, 0x03, 0x0a, 0x01, 'x', 0x50, 0x01}, uint8(1))
	f.Add([]byte{0x2a, 0x02, 0x10, 0xff}, uint8(0))
	f.Fuzz(func(t *testing.T, b []byte, frame uint8) {
		var want extprocv3.ProcessingRequest
		wantErr := proto.Unmarshal(b, &want)
		var r Request
		err := Codec{}.Unmarshal(frames(b, int(frame)+1), &r)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("error %v, protobuf's %v", err, wantErr)
		}
		if err != nil {
			return
		}
		if got := asDecoded(&r); !proto.Equal(got, &want) {
			t.Fatalf("decoded %v, protobuf decodes %v", got, &want)
		}
	})
}

func TestBodyReplyEncode(t *testing.T) {
	for _, n := range []int{0, 1, 127, 128, 16383, 16384, 300 << 10, 2 << 20} {
		for _, eos := range []bool{false, true} {
			body := bytes.Repeat([]byte{'b'}, n)
			want, err := proto.Marshal(&extprocv3.ProcessingResponse{Response: &extprocv3.ProcessingResponse_ResponseBody{
				ResponseBody: &extprocv3.BodyResponse{Response: &extprocv3.CommonResponse{
					BodyMutation: &extprocv3.BodyMutation{Mutation: &extprocv3.BodyMutation_StreamedResponse{
						StreamedResponse: &extprocv3.StreamedBodyResponse{Body: body, EndOfStream: eos}}}}}}})
			if err != nil {
				t.Fatal(err)
			}
			for _, grow := range []bool{false, true} {
				r := NewBodyReply()
				out := r.Buffer(n / 2)
				if !grow {
					out = r.Buffer(n)
				}
				out = append(out, body...) // past the buffer's room when grow
				r.SetBody(out, eos)
				// Through protobuf (another codec) and through Codec.
				viaProto, err := proto.Marshal(r)
				if err != nil {
					t.Fatal(err)
				}
				data, err := Codec{}.Marshal(r)
				if err != nil {
					t.Fatal(err)
				}
				got := data.Materialize()
				data.Free()
				if !bytes.Equal(viaProto, want) || !bytes.Equal(got, want) {
					t.Errorf("%d-byte body, eos %v (grown %v): encoded %d / %d bytes, want %d", n, eos, grow, len(viaProto), len(got), len(want))
				}
				if len(r.Body()) != 0 || r.buf != nil {
					t.Errorf("%d-byte body: the reply keeps its body after encoding", n)
				}
			}
		}
	}
}

// TestEmptyBodyReply: an empty output still goes out as an explicit, empty
// streamed body: no mutation at all would leave Envoy waiting for it.
func TestEmptyBodyReply(t *testing.T) {
	r := NewBodyReply()
	r.SetBody(r.Buffer(100), false)
	data, err := Codec{}.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var back extprocv3.ProcessingResponse
	if err := proto.Unmarshal(data.Materialize(), &back); err != nil {
		t.Fatal(err)
	}
	m := back.GetResponseBody().GetResponse().GetBodyMutation().GetMutation()
	if b, ok := m.(*extprocv3.BodyMutation_StreamedResponse); !ok || len(b.StreamedResponse.GetBody()) != 0 {
		t.Fatalf("decoded mutation %#v, want an empty streamed_response", m)
	}
}

// TestCodecOtherMessages: messages other than Request and BodyReply (the
// health service's, header replies) go through as protobuf encodes them.
func TestCodecOtherMessages(t *testing.T) {
	big := &extprocv3.ProcessingResponse{Response: &extprocv3.ProcessingResponse_ImmediateResponse{
		ImmediateResponse: &extprocv3.ImmediateResponse{Body: bytes.Repeat([]byte("z"), 40000)}}}
	for _, m := range []proto.Message{&healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING}, big} {
		data, err := Codec{}.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := proto.Marshal(m)
		if got := data.Materialize(); !bytes.Equal(got, want) {
			t.Errorf("%T: encoded %d bytes, want %d", m, len(got), len(want))
		}
		back := m.ProtoReflect().New().Interface()
		if err := (Codec{}).Unmarshal(frames(want, 5), back); err != nil || !proto.Equal(back, m) {
			t.Errorf("%T: decoded %v (error %v)", m, back, err)
		}
		data.Free()
	}
	if _, err := (Codec{}).Marshal("not a message"); err == nil {
		t.Error("Marshal of a string: no error")
	}
	if err := (Codec{}).Unmarshal(nil, new(int)); err == nil {
		t.Error("Unmarshal into an int: no error")
	}
}

// TestChunkAllocs: once warm, decoding a body chunk in place allocates
// nothing, and encoding its reply allocates only the framing and gRPC's
// buffer header.
func TestChunkAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop items: allocation counts do not hold (the run without -race checks them)")
	}
	b, err := proto.Marshal(responseBody(strings.Repeat("x", 100<<10), false))
	if err != nil {
		t.Fatal(err)
	}
	data := frames(b, 16<<10)
	var r Request
	reply := NewBodyReply()
	if n := testing.AllocsPerRun(50, func() {
		if err := (Codec{}).Unmarshal(data, &r); err != nil {
			t.Fatal(err)
		}
		r.Release()
	}); n != 0 {
		t.Errorf("decode: %v allocations per chunk, want 0", n)
	}
	if n := testing.AllocsPerRun(50, func() {
		reply.SetBody(append(reply.Buffer(100<<10), 'x'), false)
		out, err := Codec{}.Marshal(reply)
		if err != nil {
			t.Fatal(err)
		}
		out.Free()
	}); n > 3 {
		t.Errorf("encode: %v allocations per chunk, want at most 3", n)
	}
}
