//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/streamsub/streamsub/envoy"
	"github.com/streamsub/streamsub/internal/demoorigin"
)

// TestReloadThroughEnvoy edits streamsub's config and sends SIGHUP: new
// requests through Envoy use the new rules; a broken file is refused and
// the last good rules stay in force.
func TestReloadThroughEnvoy(t *testing.T) {
	root, err := envoy.ModuleRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	orig, err := os.ReadFile(filepath.Join(root, "examples", "streamsub.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(t.TempDir(), "streamsub.yaml")
	if err := os.WriteFile(cfg, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	s := startStack(t, cfg)
	c := newClient()
	page := func() string {
		_, body := do(t, c, "GET", s.envoy.url+unique("/"), nil)
		return string(body)
	}
	if got, want := page(), standard.Replace(demoorigin.IndexHTML); got != want {
		t.Fatalf("before reload: %q, want %q", got, want)
	}

	edited := strings.ReplaceAll(string(orig), "clone.example.net", "reloaded.example.net")
	reloaded := strings.NewReplacer(strings.Split(strings.ReplaceAll(
		strings.Join(standardRules, "\x00"), "clone.example.net", "reloaded.example.net"), "\x00")...)
	want := reloaded.Replace(demoorigin.IndexHTML)
	if err := os.WriteFile(cfg, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	hup := func() {
		if err := s.streamsub.cmd.Process.Signal(syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
	}
	hup()
	waitFor(t, "reloaded rules through Envoy", s.streamsub, 30*time.Second, func() error {
		if got := page(); got != want {
			return fmt.Errorf("body %.120q", got)
		}
		return nil
	})

	const failed = `streamsub_config_reloads_total{result="failed"}`
	before := s.metric(t, failed)
	if err := os.WriteFile(cfg, []byte("rule_sets: [{name: broken, rules: [{regex: '(', replace: x}]}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	hup()
	waitFor(t, "failed reload counted", s.streamsub, 30*time.Second, func() error {
		if n := s.metric(t, failed); n <= before {
			return fmt.Errorf("%s = %v", failed, n)
		}
		return nil
	})
	if got := page(); got != want {
		t.Errorf("after a broken reload: %q, want the last good rules %q", got, want)
	}
}
