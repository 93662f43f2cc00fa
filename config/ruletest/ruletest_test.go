package ruletest

import (
	"strings"
	"testing"

	"github.com/streamsub/streamsub/matcher"
)

func compile(t *testing.T, maxBuffered int, rules ...matcher.Rule) *matcher.RuleSet {
	t.Helper()
	rs, err := matcher.Compile(rules, matcher.Options{MaxBufferedBytes: maxBuffered})
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

func TestRun(t *testing.T) {
	host := compile(t, 0,
		matcher.Rule{Pattern: "https://www.example.com", Literal: true, Replace: "https://clone.example.net"},
		matcher.Rule{Pattern: `UA-(\d+)-1`, Replace: "UA-$1-2"})
	// A comment longer than the cap of 16 bytes is removed when the body
	// comes whole (within one chunk the span limit is 64 KiB) but
	// overflows the cap when the body is cut.
	comments := compile(t, 16, matcher.Rule{Pattern: `<!--.*?-->`, Replace: ""})
	page := `<a href="https://www.example.com/x">UA-42-1</a>`
	tests := []struct {
		name string
		rs   *matcher.RuleSet
		c    Case
		// Expected failure: the first failing chunking, how many others
		// fail, the offset and the cap overflow; "" when it passes.
		chunking   string
		others     int
		offset     int64
		overflowed bool
	}{
		{"passes", host, Case{Input: []byte(page), Want: []byte(`<a href="https://clone.example.net/x">UA-42-2</a>`), Rewrite: true}, "", 0, 0, false},
		{"empty body", host, Case{Input: nil, Want: nil, Rewrite: true}, "", 0, 0, false},
		{"wrong in every chunking", host, Case{Input: []byte(page), Want: []byte(`<a href="https://clone.example.net/x">UA-42-1</a>`), Rewrite: true},
			whole, len(chunkings) - 1, 44, false},
		{"want shorter", host, Case{Input: []byte("UA-1-1 tail"), Want: []byte("UA-1-2"), Rewrite: true}, whole, len(chunkings) - 1, 6, false},
		{"cap overflows when cut", comments, Case{Input: []byte("a<!-- a comment of more than sixteen bytes -->b"), Want: []byte("ab"), Rewrite: true},
			"1-byte chunks", len(chunkings) - 3, 1, true}, // whole and 64-byte chunks pass
		{"content type not rewritten, want unchanged", host, Case{Input: []byte(page), Want: []byte(page), ContentType: "image/png"}, "", 0, 0, false},
		{"content type not rewritten, want rewritten", host, Case{Input: []byte(page), Want: []byte(`<a href="https://clone.example.net/x">UA-42-2</a>`), ContentType: "image/png"},
			whole, 0, 17, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.c.Name = tc.name
			f := Run(tc.rs, tc.c)
			if tc.chunking == "" {
				if f != nil {
					t.Fatalf("failed: %v", f)
				}
				return
			}
			if f == nil {
				t.Fatal("passed")
			}
			if f.Test != tc.name || f.Chunking != tc.chunking || f.Others != tc.others || f.Diff.Offset != tc.offset || f.Overflowed != tc.overflowed {
				t.Errorf("failure %+v; want chunking %q, %d others, offset %d, overflowed %v", f, tc.chunking, tc.others, tc.offset, tc.overflowed)
			}
		})
	}
}

// TestFailureMessage checks what a failure says in each situation.
func TestFailureMessage(t *testing.T) {
	host := compile(t, 0, matcher.Rule{Pattern: "www.example.com", Literal: true, Replace: "clone.example.net"})
	comments := compile(t, 16, matcher.Rule{Pattern: `<!--.*?-->`, Replace: ""})
	tests := []struct {
		name string
		rs   *matcher.RuleSet
		c    Case
		want string
	}{
		{"every chunking", host, Case{Name: "home", Input: []byte("see www.example.com\n"), Want: []byte("see www.clone.net\n"), Rewrite: true},
			"test \"home\": output differs; first difference at offset 4:\n" +
				`  want: "see www.clone.net\n"` + "\n" +
				`  got:  "see clone.example.net\n"` + "\n" +
				strings.Repeat(" ", 13) + "^"},
		{"some chunkings", comments, Case{Name: "long comment", Input: []byte("a<!-- a comment of more than sixteen bytes -->b"), Want: []byte("ab"), Rewrite: true},
			"test \"long comment\": output differs in 1-byte chunks and 5 other chunking(s) (the hold-back cap, max_buffered_bytes, overflowed: " +
				"the rest of the body passed through unchanged); first difference at offset 1:"},
		{"content type", host, Case{Name: "png", Input: []byte("www.example.com"), Want: []byte("clone.example.net"), ContentType: "image/png"},
			`test "png": output differs (content type "image/png" is not rewritten by this rule set: the body passes through unchanged); first difference at offset 0:`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := Run(tc.rs, tc.c)
			if f == nil {
				t.Fatal("passed")
			}
			if got := f.Error(); !strings.HasPrefix(got, tc.want) {
				t.Errorf("got:\n%s\nwant it to start with:\n%s", got, tc.want)
			}
		})
	}
}
