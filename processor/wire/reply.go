package wire

import (
	"encoding/binary"

	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// BodyReply is the reply to a response body chunk that replaces the chunk
// with a body (possibly empty): a ProcessingResponse with response_body →
// response → body_mutation → streamed_response (body, end_of_stream) and
// nothing else, the full-duplex form. Build the body in Buffer's slice, set
// it with SetBody and send the reply with SendMsg; the body then belongs to
// gRPC. A BodyReply belongs to one goroutine and is reused for every chunk
// of its stream.
type BodyReply struct {
	msg    extprocv3.ProcessingResponse
	oneof  extprocv3.ProcessingResponse_ResponseBody
	resp   extprocv3.BodyResponse
	common extprocv3.CommonResponse
	mut    extprocv3.BodyMutation
	data   extprocv3.BodyMutation_StreamedResponse
	body   extprocv3.StreamedBodyResponse

	buf *[]byte // the pooled buffer handed out by Buffer, until encoded
}

// NewBodyReply returns a BodyReply with an empty body.
func NewBodyReply() *BodyReply {
	r := &BodyReply{}
	r.data.StreamedResponse = &r.body
	r.mut.Mutation = &r.data
	r.common.BodyMutation = &r.mut
	r.resp.Response = &r.common
	r.oneof.ResponseBody = &r.resp
	r.msg.Response = &r.oneof
	return r
}

// Buffer returns an empty slice with room for at least n bytes, from
// DefaultPool, in which to build the next body.
func (r *BodyReply) Buffer(n int) []byte {
	n = max(n, 1)
	if r.buf != nil && cap(*r.buf) < n {
		DefaultPool.Put(r.buf)
		r.buf = nil
	}
	if r.buf == nil {
		r.buf = DefaultPool.Get(n)
	}
	return (*r.buf)[:0]
}

// SetBody makes b the body of the reply, eos whether it ends the response
// body: b is the slice Buffer returned with the body appended to it
// (append may have moved it elsewhere). Once the reply is sent, b belongs
// to gRPC and must not be modified.
func (r *BodyReply) SetBody(b []byte, eos bool) { r.body.Body, r.body.EndOfStream = b, eos }

// Body returns the body set.
func (r *BodyReply) Body() []byte { return r.body.Body }

// ProtoReflect makes a BodyReply the protobuf message it holds, for codecs
// other than Codec.
func (r *BodyReply) ProtoReflect() protoreflect.Message { return r.msg.ProtoReflect() }

// encode returns the reply's wire form: its framing, then the body itself,
// which gRPC's transport returns to DefaultPool once written when it is the
// buffer Buffer handed out, then end_of_stream. The reply is left with an
// empty body.
func (r *BodyReply) encode() mem.BufferSlice {
	body, eos := r.body.Body, r.body.EndOfStream
	r.body.Body, r.body.EndOfStream = nil, false
	var bodyBuf mem.Buffer
	if r.buf != nil && sameArray(body, *r.buf) {
		*r.buf = body
		bodyBuf = mem.NewBuffer(r.buf, DefaultPool)
	} else {
		// The body outgrew the buffer (or is none of it): it goes as it is,
		// left to the garbage collector.
		if r.buf != nil {
			DefaultPool.Put(r.buf)
		}
		bodyBuf = mem.SliceBuffer(body)
	}
	r.buf = nil

	// ProcessingResponse.response_body (4) → BodyResponse.response (1) →
	// CommonResponse.body_mutation (3) → BodyMutation.streamed_response (3)
	// → StreamedBodyResponse: body (1), end_of_stream (2); proto3 leaves
	// out an empty body and a false end_of_stream.
	var tail []byte
	if eos {
		tail = protowire.AppendVarint(protowire.AppendTag(nil, 2, protowire.VarintType), 1)
	}
	bodyLen := 0
	if len(body) > 0 {
		bodyLen = protowire.SizeTag(1) + protowire.SizeBytes(len(body))
	}
	streamedLen := bodyLen + len(tail)
	mutLen := protowire.SizeTag(3) + protowire.SizeBytes(streamedLen)
	commonLen := protowire.SizeTag(3) + protowire.SizeBytes(mutLen)
	respLen := protowire.SizeTag(1) + protowire.SizeBytes(commonLen)
	head := make([]byte, 0, 5+5*binary.MaxVarintLen64)
	head = protowire.AppendTag(head, 4, protowire.BytesType)
	head = protowire.AppendVarint(head, uint64(respLen))
	head = protowire.AppendTag(head, 1, protowire.BytesType)
	head = protowire.AppendVarint(head, uint64(commonLen))
	head = protowire.AppendTag(head, 3, protowire.BytesType)
	head = protowire.AppendVarint(head, uint64(mutLen))
	head = protowire.AppendTag(head, 3, protowire.BytesType)
	head = protowire.AppendVarint(head, uint64(streamedLen))
	if len(body) == 0 {
		bodyBuf.Free()
		return mem.BufferSlice{mem.SliceBuffer(append(head, tail...))}
	}
	head = protowire.AppendTag(head, 1, protowire.BytesType)
	head = protowire.AppendVarint(head, uint64(len(body)))
	out := mem.BufferSlice{mem.SliceBuffer(head), bodyBuf}
	if eos {
		out = append(out, mem.SliceBuffer(tail))
	}
	return out
}

// sameArray reports whether a and b share their backing array's end (a is
// a re-slice of b from its start, or b of a).
func sameArray(a, b []byte) bool {
	return cap(a) > 0 && cap(b) > 0 && &a[:cap(a)][cap(a)-1] == &b[:cap(b)][cap(b)-1]
}
