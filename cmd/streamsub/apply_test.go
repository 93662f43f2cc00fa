package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/streamsub/streamsub/config/load"
)

// applyConfig has one rule of each kind: a literal, a regex, a regex whose
// template uses a group; and a second rule set chosen with -ruleset.
const applyConfig = `
rule_sets:
  - name: clone
    rules:
      - {name: analytics, literal: UA-12345-1, replace: UA-99999-9}
      - {name: origin, regex: 'https?://www\.example\.com', replace: 'https://clone.example.net', ignore_case: true}
      - {name: price, regex: '(\d+) USD', replace: '$1 EUR'}
  - name: shout
    rules:
      - {literal: costs, replace: COSTS}
  - name: comments
    rules:
      - {name: tag, regex: '<!--.*?-->', replace: ''}
`

const (
	applyBody = `<a href="HTTP://www.example.com/x">UA-12345-1 costs 10 USD, 2 USD off</a>`
	// applyBody rewritten by hand with the "clone" rules.
	applyWant = `<a href="https://clone.example.net/x">UA-99999-9 costs 10 EUR, 2 EUR off</a>`
)

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func runApplyWith(args []string, stdin string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = apply(args, strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

// TestApplyRewrites checks the rewrite is the same for every way of
// feeding the body: the default chunk, tiny chunks, listed sizes with empty
// chunks, from stdin and from a file, to stdout and to -o.
func TestApplyRewrites(t *testing.T) {
	cfg := writeFile(t, "streamsub.yaml", applyConfig)
	input := writeFile(t, "body.html", applyBody)
	tests := []struct {
		name string
		args []string
	}{
		{"default chunk", nil},
		{"chunk-size 1", []string{"-chunk-size", "1"}},
		{"chunk-size 3", []string{"-chunk-size", "3"}},
		{"chunk-size 7", []string{"-chunk-size", "7"}},
		{"chunk-sizes with empty chunks", []string{"-chunk-sizes", "0,5,0,1,13"}},
		{"chunk-sizes longer than the body", []string{"-chunk-sizes", "20,1000,4"}},
		{"named rule set", []string{"-ruleset", "clone", "-chunk-size", "2"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"-config", cfg}, tc.args...)
			code, out, errOut := runApplyWith(args, applyBody)
			if code != 0 || out != applyWant {
				t.Errorf("stdin: exit %d, stderr %q\n got: %s\nwant: %s", code, errOut, out, applyWant)
			}
			code, out, errOut = runApplyWith(append(args, input), "")
			if code != 0 || out != applyWant {
				t.Errorf("file: exit %d, stderr %q\n got: %s\nwant: %s", code, errOut, out, applyWant)
			}
		})
	}

	outPath := filepath.Join(t.TempDir(), "out.html")
	code, out, errOut := runApplyWith([]string{"-config", cfg, "-o", outPath, "-stats", input}, "")
	got, _ := os.ReadFile(outPath)
	if code != 0 || out != "" || string(got) != applyWant {
		t.Errorf("-o: exit %d, stdout %q, file %q", code, out, got)
	}
	if want := `rule set "clone": 4 replacement(s)`; !strings.Contains(errOut, want) {
		t.Errorf("-stats: stderr %q, want %q", errOut, want)
	}

	code, out, _ = runApplyWith([]string{"-config", cfg, "-ruleset", "shout"}, applyBody)
	if want := strings.Replace(applyBody, "costs", "COSTS", 1); code != 0 || out != want {
		t.Errorf("-ruleset shout: exit %d, got %s, want %s", code, out, want)
	}
}

func TestApplyReportsOverflow(t *testing.T) {
	cfg := writeFile(t, "streamsub.yaml", applyConfig+"max_buffered_bytes: 16\n")
	// The comment never closes, so the pending match outgrows the 16-byte cap.
	body := "a <!-- " + strings.Repeat("x", 100) + " b"
	code, out, errOut := runApplyWith([]string{"-config", cfg, "-ruleset", "comments", "-chunk-size", "4"}, body)
	if code != 0 || out != body {
		t.Errorf("exit %d, output %q; want 0 and the body unchanged", code, out)
	}
	if want := `rule set "comments": a pending match needed more than max_buffered_bytes (16)`; !strings.Contains(errOut, want) {
		t.Errorf("stderr %q, want it to contain %q", errOut, want)
	}
	// Without overflow nothing is said.
	code, out, errOut = runApplyWith([]string{"-config", cfg, "-ruleset", "comments", "-chunk-size", "4"}, "a <!-- c --> b")
	if code != 0 || errOut != "" || out != "a  b" {
		t.Errorf("no overflow: exit %d, output %q, stderr %q; want 0, \"a  b\", nothing", code, out, errOut)
	}
}

func TestApplyExitCodes(t *testing.T) {
	cfg := writeFile(t, "streamsub.yaml", applyConfig)
	bad := writeFile(t, "bad.yaml", "rule_sets:\n  - name: shop-fr\n    rules:\n      - {name: ga-id, regex: '(a', replace: x}\n")
	missing := filepath.Join(t.TempDir(), "missing")
	tests := []struct {
		name       string
		args       []string
		code       int
		stderrHas  string
		stdoutWant string
	}{
		{"rejected config", []string{"-config", bad}, 2,
			bad + ": rule set \"shop-fr\": rule 0 (\"ga-id\"): error parsing regexp: missing closing ): `(a`", ""},
		{"unknown rule set", []string{"-config", cfg, "-ruleset", "nope"}, 2,
			`unknown rule set "nope" (have "clone", "shout", "comments")`, ""},
		{"no -config", nil, 2, "-config is required", ""},
		{"unknown flag", []string{"-config", cfg, "-bogus"}, 2, "flag provided but not defined", ""},
		{"zero chunk size", []string{"-config", cfg, "-chunk-size", "0"}, 2, "-chunk-size 0: want a positive size", ""},
		{"negative chunk size", []string{"-config", cfg, "-chunk-size", "-1"}, 2, "want a positive size", ""},
		{"empty chunk sizes", []string{"-config", cfg, "-chunk-sizes", ""}, 2, `"" is not a size`, ""},
		{"both chunk flags", []string{"-config", cfg, "-chunk-size", "2", "-chunk-sizes", "1,2"}, 2, "not both", ""},
		{"bad chunk sizes", []string{"-config", cfg, "-chunk-sizes", "1,x"}, 2, `"x" is not a size`, ""},
		{"negative chunk size in list", []string{"-config", cfg, "-chunk-sizes", "1,-2"}, 2, `"-2" is not a size`, ""},
		{"two input files", []string{"-config", cfg, "a", "b"}, 2, "at most one input file", ""},
		{"missing config", []string{"-config", missing}, 1, "no such file or directory", ""},
		{"missing input", []string{"-config", cfg, missing}, 1, "no such file or directory", ""},
		{"unwritable output", []string{"-config", cfg, "-o", filepath.Join(missing, "out")}, 1, "no such file or directory", ""},
		{"help", []string{"-h"}, 0, "usage: streamsub apply", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runApplyWith(tc.args, applyBody)
			if code != tc.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, tc.code, errOut)
			}
			if !strings.Contains(errOut, tc.stderrHas) {
				t.Errorf("stderr %q, want it to contain %q", errOut, tc.stderrHas)
			}
			if out != tc.stdoutWant {
				t.Errorf("stdout %q, want %q", out, tc.stdoutWant)
			}
		})
	}
}

func TestParseSizes(t *testing.T) {
	tests := []struct {
		in   string
		want []int
	}{
		{"1", []int{1}},
		{"0,5, 7", []int{0, 5, 7}},
		{"", nil},
		{"1,,2", nil},
		{"-1", nil},
		{"1.5", nil},
	}
	for _, tc := range tests {
		got, err := parseSizes(tc.in)
		if tc.want == nil {
			if err == nil {
				t.Errorf("parseSizes(%q) = %v, want an error", tc.in, got)
			}
			continue
		}
		if err != nil || !slicesEqual(got, tc.want) {
			t.Errorf("parseSizes(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

func slicesEqual(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestApplyLargeBody feeds a body of several read blocks through the
// pipelined reader/rewriter/writer and compares it with the same rule set
// applied to the whole body in one Write: blocks must come out in order and
// recycled buffers must not leak bytes from one block into another.
func TestApplyLargeBody(t *testing.T) {
	cfg := writeFile(t, "streamsub.yaml", applyConfig)
	var body strings.Builder
	for i := 0; body.Len() < 3*readBlock+12345; i++ {
		fmt.Fprintf(&body, "<p>%d: %s costs %d USD</p>\n", i, []string{"UA-12345-1", "https://www.example.com/a", "plain text"}[i%3], i)
	}
	input := writeFile(t, "big.html", body.String())
	loaded, err := load.File(cfg)
	if err != nil {
		t.Fatal(err)
	}
	st := loaded.RuleSets[0].Compiled.NewStream()
	want := string(st.Close(st.Write(nil, []byte(body.String()))))
	for _, chunk := range []string{"16384", "1000", "65536"} {
		code, out, errOut := runApplyWith([]string{"-config", cfg, "-chunk-size", chunk, input}, "")
		if code != 0 || out != want {
			t.Errorf("-chunk-size %s: exit %d, stderr %q, output of %d bytes differs from the whole-body rewrite (%d bytes)",
				chunk, code, errOut, len(out), len(want))
		}
	}
	if want == body.String() {
		t.Fatal("the rule set changed nothing: the comparison proves nothing")
	}
}

// TestApplyOutputFile checks -o: an existing longer file ends up holding
// exactly the new output (also for an empty body), -o naming the input is
// refused, and a device such as /dev/null is written without truncation.
func TestApplyOutputFile(t *testing.T) {
	cfg := writeFile(t, "streamsub.yaml", applyConfig)
	input := writeFile(t, "body.html", applyBody)
	empty := writeFile(t, "empty.html", "")
	for _, tc := range []struct{ in, want string }{{input, applyWant}, {empty, ""}} {
		out := writeFile(t, "out.html", strings.Repeat("stale output\n", 1000))
		code, _, errOut := runApplyWith([]string{"-config", cfg, "-o", out, tc.in}, "")
		got, err := os.ReadFile(out)
		if code != 0 || err != nil || string(got) != tc.want {
			t.Errorf("%s over a longer file: exit %d, stderr %q, file %q (%v); want %q", tc.in, code, errOut, got, err, tc.want)
		}
	}
	// -o naming the input is refused before anything is written.
	code, _, errOut := runApplyWith([]string{"-config", cfg, "-o", input, input}, "")
	if got, _ := os.ReadFile(input); code != exitRejected || !strings.Contains(errOut, "is the input file") || string(got) != applyBody {
		t.Errorf("-o = input: exit %d, stderr %q, input now %q", code, errOut, got)
	}
	if _, err := os.Stat(os.DevNull); err == nil {
		if code, _, errOut := runApplyWith([]string{"-config", cfg, "-o", os.DevNull, input}, ""); code != 0 {
			t.Errorf("-o %s: exit %d, stderr %q", os.DevNull, code, errOut)
		}
	}
}

// failingReader returns its data and then an error.
type failingReader struct{ data *strings.Reader }

func (r *failingReader) Read(p []byte) (int, error) {
	if r.data.Len() == 0 {
		return 0, errors.New("connection reset")
	}
	return r.data.Read(p)
}

// TestApplyReadErrorCutsOutput: after a read error the -o file holds only
// what was written, none of its old content.
func TestApplyReadErrorCutsOutput(t *testing.T) {
	cfg := writeFile(t, "streamsub.yaml", applyConfig)
	out := writeFile(t, "out.html", strings.Repeat("stale output\n", 100000))
	in := &failingReader{strings.NewReader(strings.Repeat(applyBody+"\n", 2*readBlock/len(applyBody)))}
	var errOut bytes.Buffer
	code := apply([]string{"-config", cfg, "-o", out}, in, io.Discard, &errOut)
	got, err := os.ReadFile(out)
	if code != exitIO || !strings.Contains(errOut.String(), "connection reset") || err != nil || strings.Contains(string(got), "stale") {
		t.Errorf("exit %d, stderr %q, %d bytes left with stale content: %v (%v)", code, errOut.String(), len(got), strings.Contains(string(got), "stale"), err)
	}
}

// failingWriter accepts limit bytes and then fails every write.
type failingWriter struct{ limit int }

func (w *failingWriter) Write(p []byte) (int, error) {
	if len(p) > w.limit {
		n := w.limit
		w.limit = 0
		return n, errors.New("disk full")
	}
	w.limit -= len(p)
	return len(p), nil
}

func TestApplyReportsWriteError(t *testing.T) {
	cfg := writeFile(t, "streamsub.yaml", applyConfig)
	body := strings.Repeat(applyBody+"\n", 2*readBlock/len(applyBody))
	var errOut bytes.Buffer
	code := apply([]string{"-config", cfg, "-chunk-size", "4096"}, strings.NewReader(body), &failingWriter{limit: readBlock / 2}, &errOut)
	if want := "writing the output: disk full"; code != exitIO || !strings.Contains(errOut.String(), want) {
		t.Errorf("exit %d, stderr %q; want %d and %q", code, errOut.String(), exitIO, want)
	}
}

// headerConfig rewrites response headers with the body rules, except for
// "own", which has header rules of its own, and maps referer back.
const headerConfig = `
rule_sets:
  - name: clone
    rules:
      - {name: origin, regex: 'https?://www\.example\.com', replace: 'https://clone.example.net'}
      - {name: copy, regex: 'copy:(\S*)', replace: 'copied:$1'}
    request_header_rules:
      - {literal: clone.example.net, replace: www.example.com}
  - name: own
    response_headers: [location]
    header_rules: [{literal: www.example.com, replace: header.example.net}]
max_header_value_bytes: 60
`

func TestApplyHeaders(t *testing.T) {
	cfg := writeFile(t, "streamsub.yaml", headerConfig)
	input := writeFile(t, "body.html", `<a href="https://www.example.com/x">`)
	tests := []struct {
		name       string
		args       []string
		stdout     string
		stderrHas  string
		wantStderr bool
	}{
		{"response headers, in order; others unchanged", []string{
			"-header", "Location: https://www.example.com/x",
			"-header", "Set-Cookie: a=1",
			"-header", "X-Other: https://www.example.com",
			"-header", "set-cookie: b=https://www.example.com",
		}, "Location: https://clone.example.net/x\nSet-Cookie: a=1\nX-Other: https://www.example.com\nset-cookie: b=https://clone.example.net\n", "", false},
		{"request headers first", []string{
			"-header", "Link: <https://www.example.com/a>",
			"-request-header", "Referer: https://clone.example.net/a",
			"-request-header", "Cookie: clone.example.net",
		}, "Referer: https://www.example.com/a\nCookie: clone.example.net\nLink: <https://clone.example.net/a>\n", "", false},
		{"own header rules", []string{"-ruleset", "own", "-header", "Location: https://www.example.com/"},
			"Location: https://header.example.net/\n", "", false},
		{"too long: the original stays", []string{"-header", "Location: copy:" + strings.Repeat("x", 60)},
			"Location: copy:" + strings.Repeat("x", 60) + "\n",
			`streamsub apply: rule set "clone": Location: rewritten value refused (too_long); the original stays`, true},
		{"headers and a body", []string{"-header", "Location: http://www.example.com/", input},
			"Location: https://clone.example.net/\n\n" + `<a href="https://clone.example.net/x">`, "", false},
		{"stats", []string{"-stats", "-header", "Location: https://www.example.com/https://www.example.com"},
			"Location: https://clone.example.net/https://clone.example.net\n",
			`streamsub apply: rule set "clone": 2 header replacement(s)`, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runApplyWith(append([]string{"-config", cfg}, tc.args...), "stdin is not read")
			if code != 0 || out != tc.stdout {
				t.Errorf("exit %d, stderr %q\n got: %q\nwant: %q", code, errOut, out, tc.stdout)
			}
			if tc.wantStderr != (errOut != "") || !strings.Contains(errOut, tc.stderrHas) {
				t.Errorf("stderr %q, want %q", errOut, tc.stderrHas)
			}
		})
	}
	for _, bad := range []string{"Location", ": x", "Two Words: x"} {
		if code, _, errOut := runApplyWith([]string{"-config", cfg, "-header", bad}, ""); code != 2 || !strings.Contains(errOut, `want "Name: value"`) {
			t.Errorf("-header %q: exit %d, stderr %q", bad, code, errOut)
		}
	}
}
