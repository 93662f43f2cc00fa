// Package processor owns one Envoy ext_proc Process stream at a time: the
// per-stream state machine that strips internal headers, decides whether a
// response body is rewritten, switches a body it rewrites to
// FULL_DUPLEX_STREAMED (so that Envoy resets the response, rather than fail
// open, when the stream fails mid-body), and feeds its chunks through a
// matcher.Stream in bounded slices, answering one reply per chunk, in order,
// and stopping when Envoy gives up on the stream.
//
// It knows the ext_proc v3 protocol and the config types, nothing of gRPC
// servers, listeners, reloading or automata: the server wires it up and the
// matcher does the bytes. design.md §2 lists the Envoy facts it relies on.
//
// With remember on in the config, it also remembers which rules matched the
// last body of a response with a validator (remember.go), and skips the next
// one like any other when none did and the validator is unchanged.
//
// Concurrency: a Processor is safe for concurrent use; each Process call
// runs one stream whose state is owned by the calling goroutine alone. The
// memory is shared by all streams, behind one mutex.
package processor
