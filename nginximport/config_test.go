package nginximport

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/streamsub/streamsub/config"
	"github.com/streamsub/streamsub/config/load"
)

// The only file of the package that knows the configuration loader: the
// generated files are checked with the loader `streamsub check` uses.

// loadConfig loads a generated configuration as streamsub check does,
// from a file named after source; a rejected file fails the test.
func loadConfig(t *testing.T, yaml []byte, source string) *config.Config {
	t.Helper()
	path := filepath.Join(t.TempDir(), filepath.Base(source))
	if err := os.WriteFile(path, yaml, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := load.File(path)
	if err != nil {
		t.Fatalf("%s is rejected by the configuration loader: %v\n%s", source, err, yaml)
	}
	return cfg
}
