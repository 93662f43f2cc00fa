package main

import (
	"bytes"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBinaryApplyAndCheck runs the built command, so registration, flag
// handling and exit codes are checked through os.Exit as scripts see them.
func TestBinaryApplyAndCheck(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary; skipped with -short")
	}
	bin := filepath.Join(t.TempDir(), "streamsub")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cfg := writeFile(t, "streamsub.yaml", applyConfig)
	bad := writeFile(t, "bad.yaml", "rule_sets: []\n")
	run := func(stdin string, args ...string) (int, string, string) {
		cmd := exec.Command(bin, args...)
		cmd.Stdin = strings.NewReader(stdin)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		var exit *exec.ExitError
		switch {
		case err == nil:
			return 0, out.String(), errOut.String()
		case errors.As(err, &exit):
			return exit.ExitCode(), out.String(), errOut.String()
		}
		t.Fatalf("running %s: %v", bin, err)
		return -1, "", ""
	}

	if code, out, errOut := run(applyBody, "apply", "-config", cfg, "-chunk-size", "5"); code != 0 || out != applyWant {
		t.Errorf("apply: exit %d, stderr %q\n got: %s\nwant: %s", code, errOut, out, applyWant)
	}
	if code, _, errOut := run("", "apply", "-config", bad); code != 2 || !strings.Contains(errOut, bad+": no rule sets") {
		t.Errorf("apply with a rejected config: exit %d, stderr %q; want 2 and the file named", code, errOut)
	}
	if code, _, _ := run("", "apply", "-config", cfg, filepath.Join(t.TempDir(), "missing")); code != 1 {
		t.Errorf("apply with a missing input: exit %d, want 1", code)
	}
	if code, out, _ := run("", "check", "-config", cfg); code != 0 || !strings.HasPrefix(out, cfg+": ok: 3 rule set(s)") {
		t.Errorf("check: exit %d, stdout %q", code, out)
	}
	if code, _, _ := run("", "check", "-config", bad); code != 2 {
		t.Errorf("check of a rejected config: exit %d, want 2", code)
	}
}
