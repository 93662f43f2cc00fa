package nginximport

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/streamsub/streamsub/nginxparse"
)

var update = flag.Bool("update", false, "rewrite the golden files of TestGolden")

// TestGolden imports every testdata/*.conf and compares the configuration
// with testdata/NAME.yaml and the diagnostics with testdata/NAME.diag
// (go test -update rewrites them). Every configuration must load with the
// loader `streamsub check` uses.
func TestGolden(t *testing.T) {
	confs, err := filepath.Glob("testdata/*.conf")
	if err != nil || len(confs) == 0 {
		t.Fatalf("no testdata/*.conf: %v", err)
	}
	for _, conf := range confs {
		name := strings.TrimSuffix(conf, ".conf")
		t.Run(filepath.Base(name), func(t *testing.T) {
			res, err := Import(nginxparse.OS, conf)
			if err != nil {
				t.Fatal(err)
			}
			loadConfig(t, res.YAML, name+".yaml")
			var diag bytes.Buffer
			for _, w := range res.Warnings {
				diag.WriteString("warning: " + w.String())
				if w.Affects != nil {
					fmt.Fprintf(&diag, " [affects %q]", w.Affects)
				}
				diag.WriteString("\n")
			}
			for _, p := range res.Problems {
				diag.WriteString("untranslated: " + p.String() + "\n")
			}
			golden(t, name+".yaml", res.YAML)
			golden(t, name+".diag", diag.Bytes())
		})
	}
}

// golden compares got with the file, or rewrites it under -update.
func golden(t *testing.T, file string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(file, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (go test -update rewrites it); got:\n%s", file, got)
	}
}
