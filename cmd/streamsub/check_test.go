package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	good := writeFile(t, "streamsub.yaml", applyConfig+`
  - name: more
    extends: [clone]
    content_types: ["*"]
    rules: [{literal: a, replace: b}]
    tests:
      - {name: both rules, input: 'a UA-12345-1', output: 'b UA-99999-9'}
      - {name: any type, content_type: image/png, input: 'a', output: 'b'}
    response_headers: [location]
    header_rules: [{literal: a, replace: b}]
    request_header_rules: [{literal: b, replace: a}]
hosts: {"*.example": more}
shadows: {clone: more}
header_filter: {request: {remove: [x-debug]}}
max_buffered_bytes: 16
remember: {entries: 50, ttl: 90s}
`)
	bad := writeFile(t, "bad.yaml", "rule_sets:\n  - name: s\n    rules:\n      - {literal: a, regx: b}\n")
	failing := writeFile(t, "failing.yaml", "rule_sets:\n  - name: s\n    rules: [{literal: a, replace: b}]\n"+
		"    tests:\n      - {name: passes, input: xa, output: xb}\n      - {name: typo, input: xaxa, output: xbxa}\n")
	tests := []struct {
		name      string
		args      []string
		code      int
		stdoutHas []string
		stderrHas string
	}{
		{"valid", []string{"-config", good}, 0, []string{
			good + ": ok: 4 rule set(s), 9 rule(s) after extends, max_buffered_bytes 16\n",
			"  clone       3 rule(s)  content types text/html  response headers 8 (body rules)\n",
			"  more        4 rule(s)  extends clone  content types *  response headers 1 (1 header rule(s))  request headers referer, origin (1 rule(s))  2 test(s) passed\n",
			"  hosts: *.example → more\n",
			"  shadows: clone → more (sample 1)\n",
			"  header filter: request yes; response none\n",
			"  remember: 50 entries for 1m30s, verify 1 in 100\n",
		}, ""},
		{"rejected", []string{"-config", bad}, 2, nil,
			bad + ":4:22: rule_sets[0].rules[0].regx: unknown field (known: name, regex, literal, replace, once, ignore_case)"},
		{"failing test", []string{"-config", failing}, 2, nil,
			failing + ":6:9: rule set \"s\": test \"typo\": output differs; first difference at offset 3:\n" +
				`  want: "xbxa"` + "\n" +
				`  got:  "xbxb"` + "\n" +
				strings.Repeat(" ", 12) + "^\n" +
				"streamsub check: " + failing + ": configuration rejected\n"},
		{"missing file", []string{"-config", filepath.Join(t.TempDir(), "nope.yaml")}, 1, nil, "no such file or directory"},
		{"no -config", nil, 2, nil, "want exactly -config FILE"},
		{"extra argument", []string{"-config", good, "x"}, 2, nil, "want exactly -config FILE"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := check(tc.args, &out, &errOut)
			if code != tc.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, tc.code, errOut.String())
			}
			for _, want := range tc.stdoutHas {
				if !strings.Contains(out.String(), want) {
					t.Errorf("stdout:\n%s\nwant it to contain %q", out.String(), want)
				}
			}
			if tc.stdoutHas == nil && out.Len() > 0 {
				t.Errorf("stdout %q, want none", out.String())
			}
			if !strings.Contains(errOut.String(), tc.stderrHas) {
				t.Errorf("stderr %q, want it to contain %q", errOut.String(), tc.stderrHas)
			}
		})
	}
}

// TestCheckExample validates the shipped example configuration, so a
// schema change that breaks it fails here.
func TestCheckExample(t *testing.T) {
	example := filepath.Join("..", "..", "examples", "streamsub.yaml")
	var out, errOut bytes.Buffer
	if code := check([]string{"-config", example}, &out, &errOut); code != 0 {
		t.Fatalf("check %s: exit %d\n%s", example, code, errOut.String())
	}
}

// TestCheckCost: check reports each rule set's automaton size and warns
// about a rule set that rewrites slowly (this one manages well under a
// tenth of slowRate on any machine), and only about that one.
func TestCheckCost(t *testing.T) {
	cfg := writeFile(t, "costly.yaml", `
rule_sets:
  - name: costly
    rules:
      - {name: e-runs, regex: '(?s)(?:.{0,100}?e){8}Z', replace: X}
  - name: cheap
    rules:
      - {literal: www.example.com, replace: x}
max_nfa_states: 50000
`)
	var out, errOut bytes.Buffer
	if code := check([]string{"-config", cfg}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	for _, want := range []string{"cost (max_nfa_states 50000;", " costly 17613 NFA states ~", "; cheap 19 NFA states ~",
		"warning: rule set \"costly\" rewrites ~"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("stdout:\n%s\nwant it to contain %q", out.String(), want)
		}
	}
	if n := strings.Count(out.String(), "warning:"); n != 1 {
		t.Errorf("%d warnings, want 1 (costly):\n%s", n, out.String())
	}
}
