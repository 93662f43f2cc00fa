// Package wire is the gRPC codec of streamsub's ext_proc streams, built to
// move body chunks without copying them.
//
//   - A ProcessingRequest that carries a response body chunk, received into a
//     Request, is decoded in place: the body stays in the buffers gRPC read
//     its HTTP/2 frames into and is handed over as segments (Request.Body),
//     until the Request is released or receives the next message.
//   - A BodyReply takes over the pooled buffer its body was written into:
//     encoding it writes a few bytes of protobuf framing and hands the body
//     itself to gRPC's transport, which returns it to the pool once written.
//   - Every other message, and any request the in-place decoder does not
//     recognise field by field, goes through the protobuf runtime, with
//     buffers from Pool instead of gRPC's default pool, which zeroes every
//     buffer it hands out (a megabyte for each message above 32 KiB).
//
// Install it with Codec and Pool (ServerOptions); without it, Request and
// BodyReply are ordinary protobuf messages (they forward ProtoReflect to
// the message they hold), so the processor works with gRPC's default codec
// too, copying as that codec does.
package wire
