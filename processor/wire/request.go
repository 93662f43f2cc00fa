package wire

import (
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Request receives ProcessingRequests: pass it to a stream's RecvMsg, one
// message at a time. It belongs to one goroutine.
//
// Received through Codec, a response body chunk is decoded in place (see
// the package comment); its bytes are valid until Release or the next
// receive. Through any other codec, Request is filled as the protobuf
// message it holds.
type Request struct {
	msg extprocv3.ProcessingRequest

	// The in-place decoder's parts of msg, reused.
	respBody extprocv3.ProcessingRequest_ResponseBody
	httpBody extprocv3.HttpBody
	metadata corev3.Metadata // Envoy sends an empty metadata_context with every message
	inPlace  bool            // msg was decoded in place: its body is in body
	body     [][]byte        // the body's segments, in the buffers of held
	held     mem.BufferSlice
	one      [1][]byte // Body's result for a body decoded by the protobuf runtime
}

// Msg returns the message last received. Decoded in place, its body field
// is empty: the body is in Body.
func (r *Request) Msg() *extprocv3.ProcessingRequest { return &r.msg }

// Body returns the body of the request or response body chunk last
// received, in segments (none for an empty chunk), whichever way it was
// decoded. They are valid until Release or the next receive and must not be
// modified.
func (r *Request) Body() [][]byte {
	if r.inPlace && r.msg.Request == &r.respBody && r.respBody.ResponseBody == &r.httpBody {
		return r.body
	}
	var b []byte
	switch m := r.msg.Request.(type) {
	case *extprocv3.ProcessingRequest_ResponseBody:
		b = m.ResponseBody.GetBody()
	case *extprocv3.ProcessingRequest_RequestBody:
		b = m.RequestBody.GetBody()
	}
	if len(b) == 0 {
		return nil
	}
	r.one[0] = b
	return r.one[:]
}

// Release forgets the last message and gives its buffers back to gRPC's
// pool: its body must not be used afterwards.
func (r *Request) Release() {
	r.msg.Reset()
	r.held.Free()
	clear(r.held)
	r.held = r.held[:0]
	clear(r.body)
	r.body = r.body[:0]
	r.one[0] = nil
	r.inPlace = false
}

// ProtoReflect makes a Request the protobuf message it holds, for codecs
// other than Codec.
func (r *Request) ProtoReflect() protoreflect.Message { return r.msg.ProtoReflect() }

// decode receives data, which gRPC frees when decode returns: a body chunk
// it recognises keeps a reference to its buffers instead of copying them.
func (r *Request) decode(data mem.BufferSlice) error {
	r.Release()
	if b, ok := r.decodeBody(data); ok {
		r.httpBody.Reset()
		r.httpBody.EndOfStream = b.endOfStream
		r.httpBody.EndOfStreamWithoutMessage = b.endOfStreamWithoutMessage
		r.httpBody.GrpcMessageCompressed = b.grpcMessageCompressed
		r.httpBody.DrainComplete = b.drainComplete
		r.respBody.ResponseBody = &r.httpBody
		r.msg.Request = &r.respBody
		r.msg.ObservabilityMode = b.observability
		if b.metadata {
			r.metadata.Reset()
			r.msg.MetadataContext = &r.metadata
		}
		r.inPlace = true
		for _, buf := range data {
			buf.Ref()
			r.held = append(r.held, buf)
		}
		return nil
	}
	clear(r.body)
	r.body = r.body[:0]
	buf := data.MaterializeToBuffer(DefaultPool)
	defer buf.Free()
	return proto.Unmarshal(buf.ReadOnlyData(), &r.msg)
}

// bodyFields are the fields of a response body message besides the body.
type bodyFields struct {
	endOfStream, endOfStreamWithoutMessage, grpcMessageCompressed, drainComplete bool
	observability, metadata                                                      bool
}

// ProcessingRequest and HttpBody field numbers the in-place decoder knows.
const (
	fieldResponseBody      = 5  // ProcessingRequest.response_body (HttpBody)
	fieldMetadataContext   = 8  // ProcessingRequest.metadata_context (Metadata)
	fieldObservabilityMode = 10 // ProcessingRequest.observability_mode
	fieldBody              = 1  // HttpBody.body
	fieldEndOfStream       = 2  // HttpBody.end_of_stream
	fieldEndOfStreamNoMsg  = 3  // HttpBody.end_of_stream_without_message
	fieldGrpcCompressed    = 4  // HttpBody.grpc_message_compressed
	fieldDrainComplete     = 5  // HttpBody.drain_complete
)

// decodeBody decodes a ProcessingRequest made of exactly one response_body
// (with at most one body field), any observability_mode fields and empty
// metadata_context fields, appending the body's segments to r.body. Anything else (another field,
// a repeated body, a malformed varint or length) is not decoded here: ok is
// false, and the protobuf runtime decodes the message (or reports it).
func (r *Request) decodeBody(data mem.BufferSlice) (f bodyFields, ok bool) {
	rd := reader{bufs: data, left: data.Len()}
	var sawBody bool
	for rd.left > 0 {
		num, typ, ok := rd.tag()
		if !ok {
			return f, false
		}
		switch {
		case num == fieldResponseBody && typ == protowire.BytesType && !sawBody:
			sawBody = true
			n, ok := rd.varint()
			if !ok || n > uint64(rd.left) {
				return f, false
			}
			if !r.decodeHTTPBody(&rd, rd.left-int(n), &f) {
				return f, false
			}
		case num == fieldMetadataContext && typ == protowire.BytesType:
			if n, ok := rd.varint(); !ok || n != 0 {
				return f, false
			}
			f.metadata = true
		case num == fieldObservabilityMode && typ == protowire.VarintType:
			v, ok := rd.varint()
			if !ok {
				return f, false
			}
			f.observability = v != 0
		default:
			return f, false
		}
	}
	return f, sawBody
}

// decodeHTTPBody decodes an HttpBody that ends where rd has end bytes left.
func (r *Request) decodeHTTPBody(rd *reader, end int, f *bodyFields) bool {
	sawBytes := false
	for rd.left > end {
		num, typ, ok := rd.tag()
		if !ok || rd.left < end {
			return false
		}
		if num == fieldBody && typ == protowire.BytesType && !sawBytes {
			sawBytes = true
			n, ok := rd.varint()
			if !ok || rd.left < end || n > uint64(rd.left-end) {
				return false
			}
			r.body = rd.segments(int(n), r.body)
			continue
		}
		var dst *bool
		switch num {
		case fieldEndOfStream:
			dst = &f.endOfStream
		case fieldEndOfStreamNoMsg:
			dst = &f.endOfStreamWithoutMessage
		case fieldGrpcCompressed:
			dst = &f.grpcMessageCompressed
		case fieldDrainComplete:
			dst = &f.drainComplete
		}
		if dst == nil || typ != protowire.VarintType {
			return false
		}
		v, ok := rd.varint()
		if !ok || rd.left < end {
			return false
		}
		*dst = v != 0
	}
	return rd.left == end
}

// reader reads a message across the buffers gRPC received it in.
type reader struct {
	bufs mem.BufferSlice
	next int    // index of the next buffer
	cur  []byte // the unread rest of the current buffer
	left int    // bytes left in the message
}

func (rd *reader) byte() (byte, bool) {
	for len(rd.cur) == 0 {
		if rd.next == len(rd.bufs) {
			return 0, false
		}
		rd.cur = rd.bufs[rd.next].ReadOnlyData()
		rd.next++
	}
	b := rd.cur[0]
	rd.cur = rd.cur[1:]
	rd.left--
	return b, true
}

// varint reads a base-128 varint as protowire.ConsumeVarint does: at most
// ten bytes, the tenth at most 1.
func (rd *reader) varint() (uint64, bool) {
	var v uint64
	for i := 0; i < 10; i++ {
		b, ok := rd.byte()
		if !ok {
			return 0, false
		}
		v |= uint64(b&0x7f) << (7 * i)
		if b < 0x80 {
			return v, i < 9 || b <= 1
		}
	}
	return 0, false
}

// tag reads a field's key.
func (rd *reader) tag() (protowire.Number, protowire.Type, bool) {
	v, ok := rd.varint()
	if !ok || v>>3 == 0 || v>>3 > uint64(protowire.MaxValidNumber) {
		return 0, 0, false
	}
	return protowire.Number(v >> 3), protowire.Type(v & 7), true
}

// segments appends the next n bytes to dst as sub-slices of the buffers;
// n is at most left.
func (rd *reader) segments(n int, dst [][]byte) [][]byte {
	rd.left -= n
	for n > 0 {
		for len(rd.cur) == 0 {
			rd.cur = rd.bufs[rd.next].ReadOnlyData()
			rd.next++
		}
		k := min(n, len(rd.cur))
		dst = append(dst, rd.cur[:k:k])
		rd.cur = rd.cur[k:]
		n -= k
	}
	return dst
}
