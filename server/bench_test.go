package server

import (
	"bytes"
	"testing"
)

// BenchmarkProcessRoundTrip sends 16 KiB response body chunks through a
// real gRPC Process stream over loopback and waits for each reply: the
// service's cost per chunk including gRPC (Envoy pipelines chunks instead).
// Compare with processor's BenchmarkResponseBody (same chunk, no gRPC).
func BenchmarkProcessRoundTrip(b *testing.B) {
	ts := startServerTB(b, nil)
	pc := ts.process(b, b.Context())
	roundTrip(b, pc, requestHeaders(":method", "GET", ":authority", "site.test", ":path", "/"))
	roundTrip(b, pc, responseHeaders(":status", "200", "content-type", "text/html"))
	chunk := bytes.Repeat([]byte("<li><a href=\"/x\">foo aab item</a></li>\n"), 16<<10/40)
	req := body(string(chunk), false)
	b.SetBytes(int64(len(chunk)))
	b.ReportAllocs()
	for b.Loop() {
		r := roundTrip(b, pc, req)
		if r.GetResponseBody().GetResponse().GetBodyMutation().GetStreamedResponse() == nil {
			b.Fatalf("reply %v without body", r)
		}
	}
	roundTrip(b, pc, body("", true))
	pc.CloseSend()
}
