package nginxparse

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// format writes a directive tree back as nginx text, every word through
// Quote.
func format(dirs []*Directive) string {
	return writeTree(dirs, (*Directive).String, " {\n", "}\n", ";\n")
}

// hasLua reports whether a tree holds a Lua block, whose code is not kept.
func hasLua(dirs []*Directive) bool {
	for _, d := range dirs {
		if strings.HasSuffix(d.Name, "_by_lua_block") || hasLua(d.Children) {
			return true
		}
	}
	return false
}

// FuzzParse checks that the parser never panics, that every error is an
// *Error with a line inside the input, and that a parsed tree written back
// with Quote parses to the same tree.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"http {\n server {\n  server_name a.example *.b.example;\n  location / {\n   replace_filter '\\d+' \"[$&]\" gi;\n  }\n }\n}\n",
		`sub_filter '; { } # "' "it's \"x\"";`,
		"a b\\;c ${x}{ d; }",
		`if ($a = "b") { c; }`,
		"content_by_lua_block { s = [[}]] -- }\n t = '{' }\n",
		"a 'b\n\nc' # d\n;",
		"a 'b'c;",
		"} {",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dirs, err := Parse("f.conf", data)
		if err != nil {
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not an *Error", err)
			}
			if lines := 1 + strings.Count(string(data), "\n"); pe.Pos.File != "f.conf" || pe.Pos.Line < 1 || pe.Pos.Line > lines {
				t.Fatalf("error %v: position outside the input's %d line(s)", err, lines)
			}
			return
		}
		if hasLua(dirs) {
			return
		}
		text := format(dirs)
		again, err := Parse("f.conf", []byte(text))
		if err != nil {
			t.Fatalf("re-parsing the formatted tree: %v\n%s", err, text)
		}
		if !reflect.DeepEqual(withoutPos(again), withoutPos(dirs)) {
			t.Fatalf("round trip changed the tree\n got %s\nwant %s\ntext %q", dump(again), dump(dirs), text)
		}
	})
}

// withoutPos returns copies of dirs with every position cleared
// (formatting moves lines).
func withoutPos(dirs []*Directive) []*Directive {
	var out []*Directive
	for _, d := range dirs {
		c := *d
		c.Pos = Pos{}
		c.Children = withoutPos(d.Children)
		out = append(out, &c)
	}
	return out
}
