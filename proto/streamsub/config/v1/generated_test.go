package configv1_test

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestGeneratedCodeIsFresh regenerates every .pb.go under proto/ into a
// temporary tree with scripts/protogen.sh and fails when a committed file
// differs, is missing or is extra. Without protoc it skips, except in CI
// (CI=true), where the Makefile installs protoc first.
func TestGeneratedCodeIsFresh(t *testing.T) {
	if testing.Short() {
		t.Skip("builds protoc-gen-go; skipped with -short")
	}
	if _, err := exec.LookPath("protoc"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("protoc is not installed (Debian package protobuf-compiler): %v", err)
		}
		t.Skipf("protoc is not installed (Debian package protobuf-compiler); run scripts/protogen.sh")
	}
	root, err := filepath.Abs("../../../..")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()

	// Build the plugin at the exact version go.mod pins, without touching .bin.
	plugin := filepath.Join(tmp, "protoc-gen-go")
	build := exec.Command("go", "build", "-o", plugin, "google.golang.org/protobuf/cmd/protoc-gen-go")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building protoc-gen-go: %v\n%s", err, out)
	}

	outDir := filepath.Join(tmp, "out")
	gen := exec.Command("bash", filepath.Join(root, "scripts", "protogen.sh"))
	gen.Dir = root
	gen.Env = append(os.Environ(), "PROTOGEN_OUT="+outDir, "PROTOC_GEN_GO="+plugin)
	if out, err := gen.CombinedOutput(); err != nil {
		t.Fatalf("scripts/protogen.sh: %v\n%s", err, out)
	}

	want := pbGoFiles(t, filepath.Join(outDir, "proto"))
	have := pbGoFiles(t, filepath.Join(root, "proto"))
	if len(want) == 0 {
		t.Fatal("protogen.sh generated no .pb.go files")
	}
	for rel, w := range want {
		h, ok := have[rel]
		switch {
		case !ok:
			t.Errorf("proto/%s is not committed; run scripts/protogen.sh", rel)
		case !bytes.Equal(dropProtocVersion(h), dropProtocVersion(w)):
			t.Errorf("proto/%s is stale; run scripts/protogen.sh", rel)
		}
	}
	for rel := range have {
		if _, ok := want[rel]; !ok {
			t.Errorf("proto/%s has no .proto source any more; delete it", rel)
		}
	}
}

// pbGoFiles reads every *.pb.go under dir, keyed by slash path relative to dir.
func pbGoFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".pb.go") {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		files[filepath.ToSlash(rel)] = data
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// dropProtocVersion removes the "// \tprotoc vX" header line: the code does
// not depend on it, and a machine with another Debian protoc build must not
// fail the check for it alone.
func dropProtocVersion(src []byte) []byte {
	var out [][]byte
	for _, line := range bytes.Split(src, []byte("\n")) {
		if bytes.HasPrefix(line, []byte("// \tprotoc ")) {
			continue
		}
		out = append(out, line)
	}
	return bytes.Join(out, []byte("\n"))
}
