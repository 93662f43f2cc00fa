package e2e

import (
	"path/filepath"
	"testing"

	"github.com/streamsub/streamsub/config/load"
)

// TestExampleConfig loads the shipped demo config with streamsub's own
// loader and checks the rule-set choices the e2e tests and the demo rely on.
// It needs no Envoy, so it runs without the e2e tag.
func TestExampleConfig(t *testing.T) {
	c, err := load.File(filepath.Join("..", "examples", "streamsub.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	hosts := []struct{ authority, want string }{
		{"partner.example.test", "partner"},
		{"partner.example.test:10000", "partner"},
		{"127.0.0.1:10000", "standard"},
		{"beta.example.test", "standard"}, // beta comes from Envoy metadata, not the host map
	}
	for _, h := range hosts {
		rs := c.RuleSetForHost(h.authority)
		if rs == nil || rs.Name != h.want {
			t.Errorf("RuleSetForHost(%q) = %v, want %s", h.authority, rs, h.want)
		}
	}
	for _, name := range []string{"standard", "partner", "beta"} {
		if c.RuleSet(name) == nil {
			t.Errorf("rule set %q missing", name)
		}
	}
	if n := len(c.RuleSet("partner").Rules); n != len(c.RuleSet("standard").Rules)+1 {
		t.Errorf("partner has %d rules, want standard's plus one", n)
	}
	for _, name := range []string{"standard", "partner"} {
		rs := c.RuleSet(name)
		if rs.ResponseRewriter == nil || rs.ResponseRewriter.Rules() != rs.Compiled || !rs.ResponseRewriter.Applies("set-cookie") {
			t.Errorf("%s: response headers not rewritten by the body rules", name)
		}
		if rs.RequestRewriter == nil || !rs.RequestRewriter.Applies("referer") || !rs.RequestRewriter.Applies("origin") {
			t.Errorf("%s: referer and origin not mapped back", name)
		}
	}
	for _, h := range []string{"x-debug-token", "X-Internal-Route"} {
		if !c.RequestHeaders.Contains(h) {
			t.Errorf("request header %s not stripped", h)
		}
	}
	for _, h := range []string{"x-origin-debug", "x-internal-trace"} {
		if !c.ResponseHeaders.Contains(h) {
			t.Errorf("response header %s not stripped", h)
		}
	}
	if c.ResponseHeaders.Contains("x-public") {
		t.Error("x-public would be stripped")
	}
	// The static files of the demo origin are rewritten (so remembered).
	for _, ct := range []string{"text/css", "application/javascript"} {
		if !c.RuleSet("standard").AcceptsContentType(ct) {
			t.Errorf("standard does not rewrite %s", ct)
		}
	}
	if c.Remember.Entries == 0 {
		t.Error("remember is off")
	}
}
