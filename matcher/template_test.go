package matcher

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestParseTemplate(t *testing.T) {
	// names: group 0, 1 unnamed, 2 "year", 3 unnamed.
	names := []string{"", "", "year", ""}
	tests := []struct {
		src        string
		canonical  string // String() of the parsed template
		needGroups bool
		err        string // substring of the error, "" = valid
	}{
		{src: "", canonical: ""},
		{src: "plain text", canonical: "plain text"},
		{src: "$&", canonical: "${0}"},
		{src: "$0", canonical: "${0}"},
		{src: "${0}", canonical: "${0}"},
		{src: "[$1]", canonical: "[${1}]", needGroups: true},
		{src: "$10", canonical: "${10}"}, // greedy digits: group 10, beyond the rule's
		{src: "${1}0", canonical: "${1}0", needGroups: true},
		{src: "$3$2", canonical: "${3}${2}", needGroups: true},
		{src: "$4", canonical: "${4}"}, // beyond the rule's groups: ""
		{src: "${year}", canonical: "${2}", needGroups: true},
		{src: "$$", canonical: "$$"},
		{src: "$$1", canonical: "$$1"},
		{src: `a\1\$&`, canonical: `a\1\${0}`}, // backslash is not special
		{src: "$007", canonical: "${7}"},
		{src: "$99999999999999999999999", canonical: fmt.Sprintf("${%d}", maxGroupRef)},
		{src: "$", err: "'$' at the end"},
		{src: "ab$", err: "at offset 2"},
		{src: "$x", err: `'$' followed by 'x'`},
		{src: "$ ", err: `'$' followed by ' '`},
		{src: "${", err: "unterminated"},
		{src: "${1", err: "unterminated"},
		{src: "${}", err: "empty"},
		{src: "${nope}", err: `unknown group name "nope"`},
		{src: "${year", err: "unterminated"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q", tt.src), func(t *testing.T) {
			tmpl, err := parseTemplate(tt.src, names)
			if tt.err != "" {
				var te *TemplateError
				if !errors.As(err, &te) || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error = %v, want a *TemplateError containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("error = %v", err)
			}
			if got := tmpl.String(); got != tt.canonical {
				t.Errorf("String() = %q, want %q", got, tt.canonical)
			}
			if tmpl.needGroups != tt.needGroups {
				t.Errorf("needGroups = %v, want %v", tmpl.needGroups, tt.needGroups)
			}
		})
	}
}

func TestExpandTemplate(t *testing.T) {
	names := []string{"", "", "x"}
	match := []byte("hello world")
	slots := []int{0, 11, 0, 5, -1, -1} // group 1 = "hello", group 2 did not participate
	tests := []struct{ src, want string }{
		{"[$&]", "[hello world]"},
		{"$1-$2-$3", "hello--"},
		{"${x}|${1}0|$$", "|hello0|$"},
		{"$0$0", "hello worldhello world"},
	}
	for _, tt := range tests {
		tmpl, err := parseTemplate(tt.src, names)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(tmpl.expand(nil, match, slots)); got != tt.want {
			t.Errorf("expand(%q) = %q, want %q", tt.src, got, tt.want)
		}
	}
}

// FuzzTemplate: parsing never panics; a valid template's canonical form
// parses to the same canonical form and expands identically; a template
// without '$' expands to itself.
func FuzzTemplate(f *testing.F) {
	for _, s := range []string{"", "x", "$&", "$0", "$1$2", "${1}0", "${name}", "$$", "$", "${", "$x", "a\\$1", "$10", "${}"} {
		f.Add(s)
	}
	names := []string{"", "", "name"}
	match := []byte("abcdef")
	slots := []int{0, 6, 1, 3, -1, -1}
	f.Fuzz(func(t *testing.T, src string) {
		tmpl, err := parseTemplate(src, names)
		if err != nil {
			var te *TemplateError
			if !errors.As(err, &te) || te.Offset < 0 || te.Offset >= len(src) || src[te.Offset] != '$' {
				t.Fatalf("parseTemplate(%q): bad error %#v", src, err)
			}
			return
		}
		want := tmpl.expand(nil, match, slots)
		canon := tmpl.String()
		again, err := parseTemplate(canon, names)
		if err != nil {
			t.Fatalf("canonical %q of %q does not parse: %v", canon, src, err)
		}
		if again.String() != canon {
			t.Fatalf("canonical form not stable: %q -> %q -> %q", src, canon, again.String())
		}
		if got := again.expand(nil, match, slots); string(got) != string(want) {
			t.Fatalf("%q expands to %q, its canonical form %q to %q", src, want, canon, got)
		}
		if !strings.Contains(src, "$") && string(want) != src {
			t.Fatalf("%q without '$' expands to %q", src, want)
		}
	})
}
