package goregexp

import (
	"testing"

	"github.com/streamsub/streamsub/matcher"
)

func TestRewrite(t *testing.T) {
	tests := []struct {
		rules      []matcher.Rule
		body, want string
	}{
		{[]matcher.Rule{{Pattern: "a", Replace: "X"}, {Pattern: "ab", Replace: "Y"}}, "abab", "XbXb"},
		{[]matcher.Rule{{Pattern: "ab", Replace: "X", Once: true}, {Pattern: "b", Replace: "Y"}}, "abab", "Xab"},
		{[]matcher.Rule{{Pattern: "x", Replace: "1"}, {Pattern: "(a+)(b)", Replace: "<$2$1${1}0$$$&>"}}, "xaab", "1<baaaa0$aab>"},
		{[]matcher.Rule{{Pattern: "a.c", Literal: true, Replace: "L"}, {Pattern: "EXAMPLE", IgnoreCase: true, Replace: "e"}}, "abc a.c Example", "abc L e"},
		{[]matcher.Rule{{Pattern: "^b", Replace: "B"}}, "ab\nba", "ab\nBa"},
		{[]matcher.Rule{{Pattern: "(?P<u>[a-z]+)@x", Replace: "${u}@y $9"}}, "me@x", "me@y "},
	}
	for _, tt := range tests {
		rw, err := Compile(tt.rules)
		if err != nil {
			t.Fatalf("%v: %v", tt.rules, err)
		}
		if got := string(rw.Rewrite(nil, []byte(tt.body))); got != tt.want {
			t.Errorf("%v on %q = %q, want %q", tt.rules, tt.body, got, tt.want)
		}
	}
}

func TestCompileErrors(t *testing.T) {
	for _, r := range []matcher.Rule{{Pattern: "(", Replace: ""}, {Pattern: "a", Replace: "$x"}, {Pattern: "a", Replace: "${1"}} {
		if _, err := Compile([]matcher.Rule{r}); err == nil {
			t.Errorf("%+v: want error", r)
		}
	}
}
