package wire

import (
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/experimental"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/protoadapt"
)

// Codec is the gRPC codec (encoding.CodecV2) for a server whose ext_proc
// stream receives into Request and sends BodyReply; other protobuf
// messages (the health service's, the other ext_proc replies) are encoded
// and decoded as gRPC's own proto codec does, with buffers from DefaultPool.
type Codec struct{}

var _ encoding.CodecV2 = Codec{}

// Name is the content subtype of the protobuf codec it stands in for.
func (Codec) Name() string { return "proto" }

// Marshal encodes v.
func (Codec) Marshal(v any) (mem.BufferSlice, error) {
	if r, ok := v.(*BodyReply); ok {
		return r.encode(), nil
	}
	m := messageOf(v)
	if m == nil {
		return nil, fmt.Errorf("wire: cannot marshal %T: not a protobuf message", v)
	}
	size := proto.Size(m)
	opts := proto.MarshalOptions{UseCachedSize: true} // the size was just computed
	if mem.IsBelowBufferPoolingThreshold(size) {
		b, err := opts.Marshal(m)
		if err != nil {
			return nil, fmt.Errorf("wire: marshal %T: %w", v, err)
		}
		return mem.BufferSlice{mem.SliceBuffer(b)}, nil
	}
	buf := DefaultPool.Get(size)
	b, err := opts.MarshalAppend((*buf)[:0], m)
	if err != nil {
		DefaultPool.Put(buf)
		return nil, fmt.Errorf("wire: marshal %T: %w", v, err)
	}
	if !sameArray(b, *buf) {
		DefaultPool.Put(buf)
		return mem.BufferSlice{mem.SliceBuffer(b)}, nil
	}
	*buf = b
	return mem.BufferSlice{mem.NewBuffer(buf, DefaultPool)}, nil
}

// Unmarshal decodes data into v; gRPC frees data when it returns.
func (Codec) Unmarshal(data mem.BufferSlice, v any) error {
	if r, ok := v.(*Request); ok {
		return r.decode(data)
	}
	m := messageOf(v)
	if m == nil {
		return fmt.Errorf("wire: cannot unmarshal into %T: not a protobuf message", v)
	}
	buf := data.MaterializeToBuffer(DefaultPool)
	defer buf.Free()
	return proto.Unmarshal(buf.ReadOnlyData(), m)
}

// messageOf returns v as a protobuf (API v2) message, or nil.
func messageOf(v any) proto.Message {
	switch m := v.(type) {
	case proto.Message:
		return m
	case protoadapt.MessageV1:
		return protoadapt.MessageV2Of(m)
	}
	return nil
}

// ServerOptions install Codec on a gRPC server, and DefaultPool for the
// buffers its transport reads frames into. Both options are marked
// experimental in grpc-go.
func ServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.ForceServerCodecV2(Codec{}),
		experimental.BufferPool(DefaultPool),
	}
}
