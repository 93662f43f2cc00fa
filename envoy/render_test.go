package envoy

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the committed renderings from the template")

// TestRenderingsInSync fails when a committed rendering differs from what the
// template produces, so the template stays the single source.
func TestRenderingsInSync(t *testing.T) {
	for file, p := range Renderings {
		t.Run(file, func(t *testing.T) {
			got, err := Render(p)
			if err != nil {
				t.Fatal(err)
			}
			if *update {
				if err := os.WriteFile(file, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (run go test ./envoy/ -update)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s is stale: run go test ./envoy/ -update", file)
			}
		})
	}
}

func TestRenderRejectsBadClusterType(t *testing.T) {
	p := Local()
	p.ClusterType = "LOGICAL"
	if _, err := Render(p); err == nil {
		t.Fatal("Render accepted cluster type LOGICAL")
	}
}

// TestValidate runs `envoy --mode validate` on every shipped config and on a
// test-style rendering (disallow_is_error on, free ports).
func TestValidate(t *testing.T) {
	bin := BinaryOrSkip(t)
	files := map[string]string{}
	for file := range Renderings {
		files[file] = file
	}
	p := Local()
	p.Name, p.DisallowIsError, p.ListenPort, p.AdminPort = "e2e", true, 20000, 20001
	b, err := Render(p)
	if err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(t.TempDir(), "e2e.yaml")
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		t.Fatal(err)
	}
	files["e2e rendering"] = tmp
	for name, path := range files {
		t.Run(name, func(t *testing.T) {
			out, err := exec.Command(bin, "--mode", "validate", "--disable-hot-restart", "-c", path).CombinedOutput()
			if err != nil {
				t.Fatalf("envoy --mode validate -c %s: %v\n%s", path, err, out)
			}
		})
	}
}
