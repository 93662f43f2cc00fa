package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/streamsub/streamsub/config"
	"github.com/streamsub/streamsub/config/load"
	"github.com/streamsub/streamsub/internal/demoorigin"
	"github.com/streamsub/streamsub/internal/nginxconf"
	"github.com/streamsub/streamsub/matcher"
)

// TestLoadConfig: the benchmark's configuration (scripts/load.yaml) is one
// nginxconf accepts, and its rule set is the example's "standard" set
// without the rules sub_filter cannot run: the same literal rules, in the
// same order, for the same content types.
func TestLoadConfig(t *testing.T) {
	root := filepath.Join("..", "..", "..", "..")
	path := filepath.Join(root, "scripts", "load.yaml")
	p := nginxconf.Params{Origin: "127.0.0.1:8080", SubListen: "127.0.0.1:1", SubsListen: "127.0.0.1:2",
		Dir: t.TempDir(), SubsModule: "/m.so", Workers: 2}
	out := filepath.Join(t.TempDir(), "nginx.conf")
	if err := run(&p, path, "127.0.0.1:10000", "", out); err != nil {
		t.Fatalf("nginxconf refuses %s: %v", path, err)
	}
	conf, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(conf), "clone.example.net") {
		t.Errorf("nginx.conf carries no rule:\n%s", conf)
	}

	example, err := load.File(filepath.Join(root, "examples", "streamsub.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	std := example.RuleSet("standard")
	var want []matcher.Rule
	for _, r := range std.Rules {
		if nginxconf.CheckRules([]matcher.Rule{r}) == nil {
			want = append(want, r)
		}
	}
	if p.RuleSet != "standard" || !slices.Equal(p.Rules, want) || !slices.Equal(p.ContentTypes, std.ContentTypes) {
		t.Errorf("%s: rule set %q, rules %+v, types %q; want standard, %+v, %q", path, p.RuleSet, p.Rules, p.ContentTypes, want, std.ContentTypes)
	}
}

// TestPassthroughRuleSet: the benchmark's floor, scripts/load.yaml's rule
// set "passthrough" (host passthrough.test), streams the same bodies as the
// rule set the other requests get (same content types) and leaves the
// generated /big page unchanged, which "standard" does not.
func TestPassthroughRuleSet(t *testing.T) {
	cfg, err := load.File(filepath.Join("..", "..", "..", "..", "scripts", "load.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var page bytes.Buffer
	if err := demoorigin.Big(&page, 4<<20, func() {}); err != nil {
		t.Fatal(err)
	}
	rewrite := func(rs *config.RuleSet) ([]byte, int) {
		st := rs.Compiled.NewStream()
		out := st.Close(st.Write(nil, page.Bytes()))
		return out, st.Stats().Replacements
	}
	floor, std := cfg.RuleSet(cfg.Hosts["passthrough.test"]), cfg.RuleSet(cfg.Hosts["*"])
	if floor == nil || std == nil || floor == std {
		t.Fatalf("hosts %v: want passthrough.test and * mapped to two rule sets", cfg.Hosts)
	}
	if out, n := rewrite(floor); !bytes.Equal(out, page.Bytes()) || n != 0 {
		t.Errorf("%s: %d replacements, output equal %v; want 0 and the page unchanged", floor.Name, n, bytes.Equal(out, page.Bytes()))
	}
	if out, n := rewrite(std); bytes.Equal(out, page.Bytes()) || n == 0 {
		t.Errorf("%s: %d replacements; the page should change", std.Name, n)
	}
	if !slices.Equal(floor.ContentTypes, std.ContentTypes) {
		t.Errorf("%s streams other bodies than %s: content types %q vs %q", floor.Name, std.Name, floor.ContentTypes, std.ContentTypes)
	}
}
