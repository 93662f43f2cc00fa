//go:build e2e

package e2e

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"io"
	"strings"
	"testing"

	"github.com/andybalholm/brotli"

	"github.com/streamsub/streamsub/internal/demoorigin"
)

// TestCompressedOrigins: an origin that encodes its bodies whether asked or
// not is decoded by Envoy's decoder hop (gzip, br) and rewritten; clients
// get Envoy's compression when they ask for it; an encoding Envoy does not
// decode passes untouched and is counted.
func TestCompressedOrigins(t *testing.T) {
	s := startStack(t, "")
	c := newClient()
	want := standard.Replace(demoorigin.AlwaysHTML)
	if want == demoorigin.AlwaysHTML {
		t.Fatal("the oracle does not change AlwaysHTML")
	}
	tests := []struct {
		name, path, accept string
		wantEncoding       string
		want               string
	}{
		{"gzip origin, identity client", "/gzip-always", "", "", want},
		{"gzip origin, gzip client", "/gzip-always", "gzip", "gzip", want},
		{"br origin, br client", "/br-always", "br", "br", want},
		{"br origin, identity client", "/br-always", "identity", "", want},
		{"br origin, gzip client", "/br-always", "gzip", "gzip", want},
		{"gzip origin with content-length", "/gzip", "", "", standard.Replace(demoorigin.GzipHTML)},
		{"identity origin, gzip client", "/", "gzip", "gzip", standard.Replace(demoorigin.IndexHTML)},
		{"identity origin, br client", "/", "br", "br", standard.Replace(demoorigin.IndexHTML)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var hdr map[string][]string
			if tc.accept != "" {
				hdr = map[string][]string{"Accept-Encoding": {tc.accept}}
			}
			// streamsub's count: Envoy's access log counts full-duplex body
			// calls only some of the time.
			const streamed = `streamsub_bodies_rewritten_total{rule_set="standard"}`
			before := s.metric(t, streamed)
			resp, body := do(t, c, "GET", s.envoy.url+unique(tc.path), hdr)
			if resp.StatusCode != 200 {
				t.Fatalf("status %d", resp.StatusCode)
			}
			if ce := resp.Header.Get("Content-Encoding"); ce != tc.wantEncoding {
				t.Fatalf("content-encoding %q, want %q", ce, tc.wantEncoding)
			}
			plain := decode(t, tc.wantEncoding, body)
			if string(plain) != tc.want {
				t.Fatalf("body differs\n got %q\nwant %q", plain, tc.want)
			}
			if n := s.metric(t, streamed); n != before+1 {
				t.Errorf("the body did not reach streamsub: %s %v → %v", streamed, before, n)
			}
		})
	}

	t.Run("the origin is not asked for an encoding", func(t *testing.T) {
		_, body := do(t, c, "GET", s.envoy.url+unique("/headers"), map[string][]string{"Accept-Encoding": {"gzip, br"}})
		body = decode(t, "gzip", body)
		if strings.Contains(strings.ToLower(string(body)), "accept-encoding") {
			t.Errorf("origin saw accept-encoding:\n%s", body)
		}
	})

	t.Run("deflate passes untouched, counted", func(t *testing.T) {
		const skipped = `streamsub_bodies_skipped_total{reason="content_encoding"}`
		before := s.metric(t, skipped)
		path := unique("/deflate")
		resp, body := do(t, c, "GET", s.envoy.url+path, nil)
		if ce := resp.Header.Get("Content-Encoding"); ce != "deflate" {
			t.Fatalf("content-encoding %q, want deflate", ce)
		}
		if plain := decode(t, "deflate", body); string(plain) != demoorigin.DeflateHTML {
			t.Fatalf("body %q, want the origin's %q", plain, demoorigin.DeflateHTML)
		}
		if after := s.metric(t, skipped); after != before+1 {
			t.Errorf("%s went %v → %v, want +1", skipped, before, after)
		}
		if calls := s.bodyCalls(t, path); calls != "-" {
			t.Errorf("ext_proc body calls %s for a deflate body, want none (-)", calls)
		}
	})
}

// decode undoes a content-encoding ("" = identity).
func decode(t *testing.T, encoding string, body []byte) []byte {
	t.Helper()
	var r io.Reader
	var err error
	switch encoding {
	case "":
		return body
	case "gzip":
		r, err = gzip.NewReader(bytes.NewReader(body))
	case "br":
		r = brotli.NewReader(bytes.NewReader(body))
	case "deflate":
		r, err = zlib.NewReader(bytes.NewReader(body))
	default:
		t.Fatalf("unknown encoding %q", encoding)
	}
	if err != nil {
		t.Fatal(err)
	}
	plain, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("decoding %s: %v", encoding, err)
	}
	return plain
}
