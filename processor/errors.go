package processor

import (
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Error tokens: label values of streamsub_stream_errors_total and the
// "error" attribute of log records.
const (
	errOutOfOrder     = "out_of_order"         // a message that the stream's phase does not allow
	errUnknownMessage = "unknown_message"      // a ProcessingRequest with no known request type
	errPanic          = "panic"                // recovered at the stream boundary
	errRecv           = "recv_failed"          // Recv failed other than by EOF/cancel
	errSend           = "send_failed"          // Send failed
	errBodyLost       = "held_back_bytes_lost" // a rewritten body ended early while bytes were held back
	errAbandoned      = "body_abandoned"       // a rewritten body's stream ended before the body (Envoy gave up)
	errInternal       = "internal"             // handle returned an error that is not a *streamError
)

// streamError ends one Process stream with a gRPC status. It never ends the
// server.
type streamError struct {
	code  codes.Code
	token string
	msg   string
}

func (e *streamError) Error() string { return e.token + ": " + e.msg }

// GRPCStatus lets grpc-go send e's code and message.
func (e *streamError) GRPCStatus() *status.Status {
	return status.New(e.code, e.Error())
}

func outOfOrder(format string, args ...any) error {
	return &streamError{code: codes.FailedPrecondition, token: errOutOfOrder, msg: fmt.Sprintf(format, args...)}
}
