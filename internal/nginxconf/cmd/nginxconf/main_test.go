package main

import (
	"bytes"
	"maps"
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

// TestPassthroughConfig: the benchmark's floor (scripts/passthrough.yaml)
// streams the same bodies as scripts/load.yaml (same rule set name, content
// types and host map) and leaves the generated /big page unchanged, which
// load.yaml does not.
func TestPassthroughConfig(t *testing.T) {
	root := filepath.Join("..", "..", "..", "..")
	floor, err := load.File(filepath.Join(root, "scripts", "passthrough.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	bench, err := load.File(filepath.Join(root, "scripts", "load.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var page bytes.Buffer
	if err := demoorigin.Big(&page, 4<<20, func() {}); err != nil {
		t.Fatal(err)
	}
	rewrite := func(cfg *config.Config) ([]byte, int) {
		rs := cfg.RuleSet("standard")
		if rs == nil {
			t.Fatal("no rule set standard")
		}
		st := rs.Compiled.NewStream()
		out := st.Close(st.Write(nil, page.Bytes()))
		return out, st.Stats().Replacements
	}
	if out, n := rewrite(floor); !bytes.Equal(out, page.Bytes()) || n != 0 {
		t.Errorf("passthrough.yaml: %d replacements, output equal %v; want 0 and the page unchanged", n, bytes.Equal(out, page.Bytes()))
	}
	if out, n := rewrite(bench); bytes.Equal(out, page.Bytes()) || n == 0 {
		t.Errorf("load.yaml: %d replacements; the page should change", n)
	}
	if f, b := floor.RuleSet("standard"), bench.RuleSet("standard"); !slices.Equal(f.ContentTypes, b.ContentTypes) ||
		!maps.Equal(floor.Hosts, bench.Hosts) {
		t.Errorf("passthrough.yaml streams other bodies than load.yaml: types %q vs %q, hosts %v vs %v",
			f.ContentTypes, b.ContentTypes, floor.Hosts, bench.Hosts)
	}
}
