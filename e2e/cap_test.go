//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/streamsub/streamsub/internal/demoorigin"
)

// capConfig strips HTML comments with a lazy regex, so a long comment keeps
// a match pending and bytes held back, under a small max_buffered_bytes.
const capConfig = `
rule_sets:
  - name: capped
    rules:
      - {name: comments, regex: '<!--.*?-->', replace: ''}
      - {name: origin-host, literal: 'www.example.com', replace: 'clone.example.net'}
max_buffered_bytes: 4096
`

// TestHoldBackCap checks semantics.md "Streaming" through Envoy: a comment
// shorter than the cap is removed; a longer one makes streamsub flush what
// it holds unchanged and pass the rest of the body through, counted once.
func TestHoldBackCap(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "capped.yaml")
	if err := os.WriteFile(cfg, []byte(capConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startStack(t, cfg)
	c := newClient()
	const capped = `streamsub_stream_buffer_cap_exceeded_total{rule_set="capped"}`
	re := regexp.MustCompile(`(?s)<!--.*?-->|www\.example\.com`)
	oracle := func(in string) string {
		return re.ReplaceAllStringFunc(in, func(m string) string {
			if strings.HasPrefix(m, "<!--") {
				return ""
			}
			return "clone.example.net"
		})
	}
	firstLine := "<p>" + demoorigin.OriginHost + "</p>\n"

	for _, tc := range []struct {
		name     string
		size     int
		overflow bool
	}{
		{"comment under the cap", 3000, false},
		{"comment over the cap", 64 << 10, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := s.metric(t, capped)
			page := demoorigin.CommentPage(tc.size)
			resp, body := do(t, c, "GET", s.envoy.url+unique("/comment?size="+strconv.Itoa(tc.size)), nil)
			if resp.StatusCode != 200 {
				t.Fatalf("status %d", resp.StatusCode)
			}
			want := oracle(page)
			if tc.overflow {
				want = "<p>clone.example.net</p>\n" + page[len(firstLine):]
			}
			if string(body) != want {
				t.Fatalf("body (%d bytes) differs from the expected %d bytes\n got %.200q\nwant %.200q", len(body), len(want), body, want)
			}
			after := s.metric(t, capped)
			if tc.overflow && after != before+1 || !tc.overflow && after != before {
				t.Errorf("%s went %v → %v (overflow expected: %v)", capped, before, after, tc.overflow)
			}
		})
	}
}
