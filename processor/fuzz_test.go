package processor

import (
	"bytes"
	"errors"
	"testing"

	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"

	"github.com/streamsub/streamsub/config"
)

// FuzzHandle feeds arbitrary message sequences to one stream's state
// machine. Whatever Envoy sends, the stream must never panic, must answer
// each message with exactly one reply of the matching kind or end with a
// stream error, and a rewritten body must come out as the matcher makes it
// of the same chunks, every chunk answered with an explicit body.
//
// Input: the frame size, one byte, then a sequence of ops; each op is one byte (the message kind, low 3
// bits; end_of_stream, bit 3; which header set, bits 4-5) followed, for
// bodies, by a length byte and that many body bytes.
func FuzzHandle(f *testing.F) {
	f.Add([]byte{12, 0x00, 0x01, 0x0a, 3, 'f', 'o', 'o'})
	f.Add([]byte{2, 0x00, 0x01, 0x02, 2, 'f', 'o', 0x0a, 1, 'o'})
	f.Add([]byte{0, 0x02, 1, 'x'})
	f.Add([]byte{255, 0x00, 0x11, 0x03, 0x04, 0x05, 0x01})
	f.Add([]byte{6, 0x00, 0x21, 0x02, 3, 'a', 'a', 'b', 0x0a, 0})
	f.Add([]byte{16, 0x07})
	// "anything" shadows "standard": the shadow runs beside rewritten
	// bodies, and streams bodies of other content types on its own.
	c := *testCfg(f)
	c.Shadows = map[string]string{"standard": "anything"}
	cfg := mustConfig(f, config.Config{RuleSets: c.RuleSets, Hosts: c.Hosts, RequestHeaders: c.RequestHeaders,
		ResponseHeaders: c.ResponseHeaders, Shadows: c.Shadows})
	p, _ := newProcessorTB(f, cfg)
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		// The first byte: the frame size messages are cut into (1-256).
		frame := int(data[0]) + 1
		data = data[1:]
		s := newStream()
		s.start(p, &fakeStream{ctx: t.Context()})
		defer s.finish()
		var in [][]byte
		var out []byte
		for len(data) > 0 {
			op := data[0]
			data = data[1:]
			req, body := fuzzRequest(op, &data)
			wasRewriting := s.ms != nil
			if err := deliver(req, s.in, frame); err != nil {
				t.Fatalf("deliver: %v", err)
			}
			reply, err := s.handle()
			if err != nil {
				var se *streamError
				if !errors.As(err, &se) {
					t.Fatalf("error %v is not a stream error", err)
				}
				return
			}
			// Sent in this order, then the message received is released,
			// as the stream loop does.
			var before *extprocv3.ProcessingResponse
			if s.before != nil {
				if before, err = received(s.before); err != nil {
					t.Fatalf("reply ahead of the reply to %v: %v", req, err)
				}
				s.before = nil
			}
			resp, err := received(reply)
			s.in.Release()
			if err != nil {
				t.Fatalf("reply to %v: %v", req, err)
			}
			if !sameKind(req, resp) {
				t.Fatalf("reply %T to request %T", resp.Response, req.Request)
			}
			_, isBody := req.Request.(*extprocv3.ProcessingRequest_ResponseBody)
			bodyReply := resp
			if before != nil {
				// Trailers end a rewritten body: its tail goes first.
				bodyReply = before
			} else if !isBody {
				bodyReply = nil
			}
			if bodyReply != nil && wasRewriting {
				if isBody {
					in = append(in, body)
				}
				m := bodyReply.GetResponseBody().GetResponse().GetBodyMutation().GetStreamedResponse()
				if m == nil {
					t.Fatalf("rewritten chunk answered without a streamed body")
				}
				out = append(out, m.Body...)
				if s.phase == phaseDone {
					ms := s.rs.Compiled.NewStream()
					var want []byte
					for _, c := range in {
						want = ms.Write(want, c)
					}
					want = ms.Close(want)
					if !bytes.Equal(out, want) {
						t.Fatalf("body %q, matcher gives %q for chunks %q", out, want, in)
					}
				}
			}
		}
	})
}

// fuzzRequest decodes one op (and its body bytes from *data).
func fuzzRequest(op byte, data *[]byte) (*extprocv3.ProcessingRequest, []byte) {
	eos := op&0x08 != 0
	variant := (op >> 4) & 3
	switch op & 7 {
	case 0:
		hosts := []string{"site.test", "keep.test", "other.test", "SITE.test:8080"}
		methods := []string{"GET", "HEAD", "POST", ""}
		return &extprocv3.ProcessingRequest{Request: &extprocv3.ProcessingRequest_RequestHeaders{
			RequestHeaders: &extprocv3.HttpHeaders{EndOfStream: eos, Headers: headerMap([]string{
				":method", methods[variant], ":authority", hosts[variant], ":path", "/",
				"X-Internal-A", "1", "x-internal-a", "2", "host", "h"})}}}, nil
	case 1:
		sets := [][]string{
			{":status", "200", "content-type", "text/html", "etag", `"e"`, "content-length", "3"},
			{":status", "204", "content-type", "text/html"},
			{":status", "200", "content-type", "text/css", "content-encoding", "gzip"},
			{":status", "x", "x-powered-by", "p", "X-Origin-A", "b"},
		}
		return &extprocv3.ProcessingRequest{Request: &extprocv3.ProcessingRequest_ResponseHeaders{
			ResponseHeaders: &extprocv3.HttpHeaders{EndOfStream: eos, Headers: headerMap(sets[variant])}}}, nil
	case 2, 3:
		var body []byte
		if len(*data) > 0 {
			n := int((*data)[0])
			*data = (*data)[1:]
			n = min(n, len(*data))
			body, *data = (*data)[:n], (*data)[n:]
		}
		if op&7 == 3 {
			return &extprocv3.ProcessingRequest{Request: &extprocv3.ProcessingRequest_RequestBody{
				RequestBody: &extprocv3.HttpBody{Body: body, EndOfStream: eos}}}, body
		}
		return &extprocv3.ProcessingRequest{Request: &extprocv3.ProcessingRequest_ResponseBody{
			ResponseBody: &extprocv3.HttpBody{Body: body, EndOfStream: eos}}}, body
	case 4:
		return &extprocv3.ProcessingRequest{Request: &extprocv3.ProcessingRequest_RequestTrailers{
			RequestTrailers: &extprocv3.HttpTrailers{}}}, nil
	case 5:
		return &extprocv3.ProcessingRequest{Request: &extprocv3.ProcessingRequest_ResponseTrailers{
			ResponseTrailers: &extprocv3.HttpTrailers{}}}, nil
	case 6:
		// A oneof member set to nil: the getters must cope.
		return &extprocv3.ProcessingRequest{Request: &extprocv3.ProcessingRequest_ResponseHeaders{}}, nil
	}
	return &extprocv3.ProcessingRequest{}, nil
}

// sameKind reports whether resp answers req's kind of message.
func sameKind(req *extprocv3.ProcessingRequest, resp *extprocv3.ProcessingResponse) bool {
	switch req.Request.(type) {
	case *extprocv3.ProcessingRequest_RequestHeaders:
		return resp.GetRequestHeaders() != nil
	case *extprocv3.ProcessingRequest_ResponseHeaders:
		return resp.GetResponseHeaders() != nil
	case *extprocv3.ProcessingRequest_RequestBody:
		return resp.GetRequestBody() != nil
	case *extprocv3.ProcessingRequest_ResponseBody:
		return resp.GetResponseBody() != nil
	case *extprocv3.ProcessingRequest_RequestTrailers:
		return resp.GetRequestTrailers() != nil
	case *extprocv3.ProcessingRequest_ResponseTrailers:
		return resp.GetResponseTrailers() != nil
	}
	return false
}
