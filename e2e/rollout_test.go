//go:build e2e

package e2e

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/streamsub/streamsub/internal/demoorigin"
)

// shadowConfig: every host gets "standard", shadowed by "standard-v2",
// which adds the brand rule and rewrites every content type (so the PNG,
// which "standard" skips, is streamed for the shadow alone). cap.test's
// live rule set is shadowed by one that holds a long comment back beyond
// the cap; slow.test's by one that matches the empty string at every
// position, so it runs on the exact engine, byte by byte.
const shadowConfig = `
rule_sets:
  - name: standard
    content_types: [text/html]
    rules:
      - {name: origin-url, literal: 'https://www.example.com', replace: 'https://clone.example.net'}
      - {name: origin-host, literal: 'www.example.com', replace: 'clone.example.net'}
      - {name: analytics, literal: 'UA-12345-1', replace: 'UA-99999-9'}
  - name: standard-v2
    extends: [standard]
    content_types: ['*']
    rules:
      - {name: brand, literal: 'Example Corp', replace: 'Clone Corp'}
  - name: host-only
    rules:
      - {name: origin-host, literal: 'www.example.com', replace: 'clone.example.net'}
  - name: host-only-slow
    extends: [host-only]
  - name: comments
    rules:
      - {name: comment, regex: '<!--.*?-->', replace: ''}
  - name: everywhere
    rules:
      - {name: every-position, regex: '(?:zz)?', replace: '$0'}
hosts: {"*": standard, "cap.test": host-only, "slow.test": host-only-slow}
shadows: {standard: standard-v2, host-only: comments, host-only-slow: everywhere}
max_buffered_bytes: 4096
`

// TestShadowThroughEnvoy: the client gets exactly the live rule set's
// output, whatever the shadow does (rewrite more, stream a body the live
// rule set skips, overflow its cap, run far slower), and the shadow's
// metrics count what it would have done.
func TestShadowThroughEnvoy(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "shadow.yaml")
	writeConfig(t, cfg, shadowConfig)
	s := startStack(t, cfg)
	c := newClient()
	get := func(t *testing.T, path, host string) []byte {
		t.Helper()
		var hdr map[string][]string
		if host != "" {
			hdr = map[string][]string{"Host": {host}}
		}
		resp, body := do(t, c, "GET", s.envoy.url+unique(path), hdr)
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s: status %d", path, resp.StatusCode)
		}
		return body
	}
	metric := func(name, ruleSet string, labels ...string) string {
		return name + "{" + strings.Join(append(labels, `rule_set="`+ruleSet+`"`), ",") + "}"
	}

	t.Run("live output, shadow counted rule by rule", func(t *testing.T) {
		const n = 5
		png := string(demoorigin.LogoPNG())
		for range n {
			if got := get(t, "/", ""); string(got) != standard.Replace(demoorigin.IndexHTML) {
				t.Fatalf("index: %q, want the live output", got)
			}
			// Streamed for the shadow only: the live side passes it as is,
			// content-length included (Envoy's body mode is NONE until
			// streamsub asks for STREAMED, so Envoy never dropped it).
			resp, got := do(t, c, "GET", s.envoy.url+unique("/logo.png"), nil)
			if !bytes.Equal(got, demoorigin.LogoPNG()) {
				t.Fatalf("PNG changed: %d bytes, want %d", len(got), len(png))
			}
			if cl := resp.Header.Get("Content-Length"); cl != strconv.Itoa(len(png)) {
				t.Errorf("PNG streamed for the shadow has content-length %q, want %d", cl, len(png))
			}
		}
		// What standard-v2 replaces in one index page and one PNG (the
		// URL rule wins over the host rule inside each URL).
		both := demoorigin.IndexHTML + png
		url := strings.Count(both, demoorigin.OriginURL)
		want := map[string]int{
			"origin-url":  url,
			"origin-host": strings.Count(both, demoorigin.OriginHost) - url,
			"analytics":   strings.Count(both, demoorigin.Analytics),
			"brand":       strings.Count(both, demoorigin.Brand),
		}
		waitFor(t, "shadow bodies counted", s.streamsub, 10*time.Second, func() error {
			if got := s.metric(t, metric("streamsub_shadow_bodies_total", "standard-v2")); got != 2*n {
				return fmt.Errorf("shadow bodies %v, want %d", got, 2*n)
			}
			return nil
		})
		for rule, per := range want {
			if per == 0 {
				t.Fatalf("the pages carry no match of rule %s: the check would be empty", rule)
			}
			name := metric("streamsub_shadow_replacements_total", "standard-v2", `rule="`+rule+`"`)
			if got := s.metric(t, name); got != float64(n*per) {
				t.Errorf("%s = %v, want %d", name, got, n*per)
			}
		}
		// Every index page differs (the brand), and every PNG (the live
		// side leaves it alone, the shadow would not).
		if got := s.metric(t, metric("streamsub_shadow_bodies_differing_total", "standard-v2")); got != 2*n {
			t.Errorf("differing bodies %v, want %d", got, 2*n)
		}
		if got := s.metric(t, metric("streamsub_shadow_chunk_processing_seconds_count", "standard-v2")); got < 2*n {
			t.Errorf("shadow chunk timings %v, want at least one per body (%d)", got, 2*n)
		}
		logs, err := os.ReadFile(s.streamsub.logPath)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(logs, []byte(`"msg":"shadow rule set output differs from the live output","rule_set":"standard-v2"`)) {
			t.Errorf("no difference logged for standard-v2")
		}
	})

	t.Run("shadow over its cap", func(t *testing.T) {
		const size = 64 << 10
		overflow := metric("streamsub_shadow_errors_total", "comments", `reason="cap_exceeded"`)
		before := s.metric(t, overflow)
		page := demoorigin.CommentPage(size)
		want := strings.ReplaceAll(page, demoorigin.OriginHost, "clone.example.net")
		if got := get(t, "/comment?size="+strconv.Itoa(size), "cap.test"); string(got) != want {
			t.Fatalf("body (%d bytes) is not the live output (%d bytes)", len(got), len(want))
		}
		waitFor(t, "shadow overflow counted", s.streamsub, 10*time.Second, func() error {
			if got := s.metric(t, overflow); got != before+1 {
				return fmt.Errorf("%s = %v, want %v", overflow, got, before+1)
			}
			return nil
		})
		if got := s.metric(t, `streamsub_stream_buffer_cap_exceeded_total{rule_set="host-only"}`); got != 0 {
			t.Errorf("the live rule set's cap overflow counted %v for the shadow's", got)
		}
	})

	t.Run("slow shadow", func(t *testing.T) {
		const size = 4 << 20
		var origin bytes.Buffer
		if err := demoorigin.Big(&origin, size, func() {}); err != nil {
			t.Fatal(err)
		}
		// One empty match per byte and one at the end, below: the body must
		// be ASCII (one byte a character) without "zz".
		if bytes.Contains(origin.Bytes(), []byte("zz")) || bytes.IndexFunc(origin.Bytes(), func(r rune) bool { return r >= 0x80 }) >= 0 {
			t.Fatal(`the body is not ASCII without "zz": the count below would be wrong`)
		}
		want := strings.ReplaceAll(origin.String(), demoorigin.OriginHost, "clone.example.net")
		if got := get(t, "/big?size="+strconv.Itoa(size), "slow.test"); string(got) != want {
			t.Fatalf("body (%d bytes) is not the live output (%d bytes)", len(got), len(want))
		}
		// The shadow replaced the empty match at every position: one more
		// than the body's length, as it saw it.
		waitFor(t, "slow shadow counted", s.streamsub, 10*time.Second, func() error {
			name := metric("streamsub_shadow_replacements_total", "everywhere", `rule="every-position"`)
			if got := s.metric(t, name); got != size+1 {
				return fmt.Errorf("%s = %v, want %d", name, got, size+1)
			}
			return nil
		})
	})
}

// selfTestedConfig is the demo's two clone rules with self-tests, live,
// and a next version with its own test in shadow.
const selfTestedConfig = `
rule_sets:
  - name: standard
    rules:
      - {name: origin-host, literal: 'www.example.com', replace: 'clone.example.net'}
    tests:
      - {name: host, input: '<a href="https://www.example.com/">', output: '<a href="https://clone.example.net/">'}
  - name: standard-v2
    extends: [standard]
    rules:
      - {name: brand, literal: 'Example Corp', replace: 'Clone Corp'}
    tests:
      - {name: brand, input: '<h1>Example Corp</h1>', output: '<h1>Clone Corp</h1>'}
hosts: {"*": LIVE}
shadows: {standard: standard-v2}
`

// TestSelfTestsThroughReload: a reload to a file whose self-test fails is
// refused (old rules stay, the failure is counted and logged naming the
// test); promoting the shadow to live is a reload like any other.
func TestSelfTestsThroughReload(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "streamsub.yaml")
	write := func(content string) { writeConfig(t, cfg, content) }
	write(strings.Replace(selfTestedConfig, "LIVE", "standard", 1))
	s := startStack(t, cfg)
	c := newClient()
	page := func() string {
		_, body := do(t, c, "GET", s.envoy.url+unique("/"), nil)
		return string(body)
	}
	hostOnly := strings.ReplaceAll(demoorigin.IndexHTML, demoorigin.OriginHost, "clone.example.net")
	if got := page(); got != hostOnly {
		t.Fatalf("at start: %q, want the standard rule set's output %q", got, hostOnly)
	}
	hup := func() {
		t.Helper()
		if err := s.streamsub.cmd.Process.Signal(syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
	}

	// The v2 brand test expects a typo: the file is refused.
	const failed = `streamsub_config_reloads_total{result="failed"}`
	before := s.metric(t, failed)
	write(strings.Replace(strings.Replace(selfTestedConfig, "LIVE", "standard-v2", 1), "<h1>Clone Corp</h1>", "<h1>Clone Crop</h1>", 1))
	hup()
	waitFor(t, "failed reload counted", s.streamsub, 30*time.Second, func() error {
		if n := s.metric(t, failed); n != before+1 {
			return fmt.Errorf("%s = %v, want %v", failed, n, before+1)
		}
		return nil
	})
	if got := page(); got != hostOnly {
		t.Errorf("after the refused reload: %q, want the old rules' output %q", got, hostOnly)
	}
	logs, err := os.ReadFile(s.streamsub.logPath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(logs, []byte(`rule set \"standard-v2\": test \"brand\": output differs`)) {
		t.Errorf("the refused reload's log does not name the failing test:\n%s", tail(logs, 2048))
	}

	// Promote the shadow: v2 goes live.
	write(strings.Replace(selfTestedConfig, "LIVE", "standard-v2", 1))
	hup()
	promoted := strings.ReplaceAll(hostOnly, demoorigin.Brand, "Clone Corp")
	waitFor(t, "v2 live", s.streamsub, 30*time.Second, func() error {
		if got := page(); got != promoted {
			return fmt.Errorf("body %.120q", got)
		}
		return nil
	})
}

// writeConfig writes a streamsub config file.
func writeConfig(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
