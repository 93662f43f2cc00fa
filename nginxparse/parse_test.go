package nginxparse

import (
	"errors"
	"io/fs"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
)

// dump writes a directive tree compactly: name@line[arg|arg]; or
// name@line[...]{...}.
func dump(dirs []*Directive) string {
	return writeTree(dirs, func(d *Directive) string {
		s := d.Name + "@" + strconv.Itoa(d.Pos.Line)
		if len(d.Args) > 0 {
			s += "[" + strings.Join(d.Args, "|") + "]"
		}
		return s
	}, "{", "}", ";")
}

// writeTree writes each directive as head(d), then opening, its children and
// closing for a block, or end.
func writeTree(dirs []*Directive, head func(*Directive) string, opening, closing, end string) string {
	var b strings.Builder
	var walk func([]*Directive)
	walk = func(ds []*Directive) {
		for _, d := range ds {
			b.WriteString(head(d))
			if d.Block {
				b.WriteString(opening)
				walk(d.Children)
				b.WriteString(closing)
			} else {
				b.WriteString(end)
			}
		}
	}
	walk(dirs)
	return b.String()
}

func TestParse(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"empty", "", ""},
		{"only comments", "# a\n  # b", ""},
		{"directive", "worker_processes 2;", "worker_processes@1[2];"},
		{"blocks and lines", "http {\n  server {\n    listen 80;\n  }\n}\n",
			"http@1{server@2{listen@3[80];}}"},
		{"empty block", "location / {}", "location@1[/]{}"},
		{"single quotes keep ; { } #", `sub_filter '; { } # x' "y";`, "sub_filter@1[; { } # x|y];"},
		{"double quotes keep '", `a "it's";`, "a@1[it's];"},
		{"escaped quotes", `a 'it\'s' "say \"hi\"";`, `a@1[it's|say "hi"];`},
		{"backslash escapes", `a "\\" "\t" "\n" "\r";`, "a@1[\\|\t|\n|\r];"},
		{"other escapes kept", `replace_filter '\d+\.\w' x;`, `replace_filter@1[\d+\.\w|x];`},
		{"escaped ; and blank stay escaped", `a b\;c\ d;`, `a@1[b\;c\ d];`},
		{"escaped backslash before a quote", `a 'x\\' y;`, `a@1[x\|y];`},
		{"comment after a directive", "a b; # c;\nd;", "a@1[b];d@2;"},
		{"# inside a word", "a b#c;", "a@1[b#c];"},
		{"} inside a bare word", "a b};", "a@1[b}];"},
		{"quote inside a bare word", `a b"c;`, `a@1[b"c];`},
		{"${var} in a bare word", "set $x ${host}s;", "set@1[$x|${host}s];"},
		{"block right after a word", "location /x{a;}", "location@1[/x]{a@1;}"},
		{"quoted string before a block", `location '/x'{a;}`, "location@1[/x]{a@1;}"},
		{"quoted string before ;", `a 'b';`, "a@1[b];"},
		{"parenthesis after a quoted string", `if ($a = "b") { c; }`, "if@1[($a|=|b]{c@1;}"},
		{"multi-line quoted string", "a 'x\ny'\nz;\nb;", "a@1[x\ny|z];b@4;"},
		{"empty quoted string", `a '' "";`, "a@1[|];"},
		{"name on a later line", "\n\n  a\n  b;", "a@3[b];"},
		{"carriage returns", "a b;\r\nc d;\r\n", "a@1[b];c@2[d];"},
		{"lua block", "content_by_lua_block {\n  local t = {a = '}'} -- }\n  s = [[\n}]] --[==[ } ]==]\n  if x then ngx.say(\"{\") end\n}\nnext;",
			"content_by_lua_block@1{}next@7;"},
		{"include not followed", "include x/*.conf;", "include@1[x/*.conf];"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dirs, err := Parse("t.conf", []byte(tc.in))
			if err != nil {
				t.Fatalf("Parse(%q): %v", tc.in, err)
			}
			if got := dump(dirs); got != tc.want {
				t.Errorf("Parse(%q)\n got %s\nwant %s", tc.in, got, tc.want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, in string
		line     int
		msg      string
	}{
		{"unterminated directive", "a b", 1, `unexpected end of file, expecting ";" or "}"`},
		{"unclosed block", "http {\n a;\n", 3, `unexpected end of file, expecting "}"`},
		{"stray }", "a;\n}", 2, `unexpected "}"`},
		{"} ends a directive", "http { a }", 1, `unexpected "}"`},
		{"; without a name", "a;\n;", 2, `unexpected ";"`},
		{"{ without a name", "{ a; }", 1, `unexpected "{"`},
		{"text after a quote", `a 'b'c;`, 1, `unexpected 'c' after a quoted string`},
		{"} after a quote", `http { a 'b'}`, 1, `unexpected '}' after a quoted string`},
		{"unterminated quote", "a 'b;\n\n", 3, `unexpected end of file`},
		{"backslash at the end", `a b\`, 1, `unexpected end of file`},
		{"backslash at the end of a quote", `a 'b\`, 1, `unexpected end of file`},
		{"unclosed lua block", "x_by_lua_block {\n if a then\n", 3, `unexpected end of file in a Lua block`},
		{"unterminated lua string", "x_by_lua_block {\n s = 'abc\n", 2, `unterminated Lua string`},
		{"unterminated lua long string", "x_by_lua_block {\n s = [==[ ]] \n}", 2, `unterminated Lua long bracket "[==["`},
		{"too deep", strings.Repeat("a {", maxBlockDepth+1), 1, "blocks nested more than"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("t.conf", []byte(tc.in))
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("Parse(%q) = %v, want an *Error", tc.in, err)
			}
			if pe.Pos.File != "t.conf" || pe.Pos.Line != tc.line || !strings.Contains(pe.Err.Error(), tc.msg) {
				t.Errorf("Parse(%q) = %v, want t.conf:%d: ...%s...", tc.in, err, tc.line, tc.msg)
			}
		})
	}
}

func TestParseFileIncludes(t *testing.T) {
	files := fstest.MapFS{
		"conf/nginx.conf": {Data: []byte("http {\n  include mime.types;\n  include sites/*.conf;\n  include none/*.conf;\n}\n")},
		"conf/mime.types": {Data: []byte("types { text/html html; }\n")},
		// Relative to the main file's directory, as nginx resolves it.
		"conf/sites/b.conf":               {Data: []byte("server { server_name b; include snippets/common.conf; }\n")},
		"conf/sites/snippets/common.conf": {Data: []byte("not this one {")},
		"conf/sites/a.conf":               {Data: []byte("\nserver { server_name a; }\n")},
		"conf/sites/skip.txt":             {Data: []byte("not nginx {")},
		"conf/snippets/common.conf":       {Data: []byte("# shared\nsub_filter x y;\n")},
	}
	dirs, err := ParseFile(files, "conf/nginx.conf")
	if err != nil {
		t.Fatal(err)
	}
	want := "http@1{types@1{text/html@1[html];}server@2{server_name@2[a];}server@1{server_name@1[b];sub_filter@2[x|y];}}"
	if got := dump(dirs); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	// Positions name the file each directive is written in.
	sub := dirs[0].Children[2].Children[1]
	if sub.Pos.String() != "conf/snippets/common.conf:2" {
		t.Errorf("sub_filter at %s, want conf/snippets/common.conf:2", sub.Pos)
	}
}

func TestParseFileIncludeErrors(t *testing.T) {
	tests := []struct {
		name       string
		files      fstest.MapFS
		want       string // error message
		isNotExist bool
	}{
		{"missing file", fstest.MapFS{"n.conf": {Data: []byte("a;\ninclude x.conf;")}},
			`n.conf:2: include "x.conf": open x.conf: file does not exist`, true},
		{"cycle", fstest.MapFS{
			"n.conf":   {Data: []byte("include d/a.conf;")},
			"d/a.conf": {Data: []byte("\ninclude d/b.conf;")},
			"d/b.conf": {Data: []byte("include n.conf;")},
		}, "d/b.conf:1: include cycle: n.conf -> d/a.conf -> d/b.conf -> n.conf", false},
		{"self through a glob", fstest.MapFS{"n.conf": {Data: []byte("include *.conf;")}},
			"n.conf:1: include cycle: n.conf -> n.conf", false},
		{"arguments", fstest.MapFS{"n.conf": {Data: []byte("include a b;")}},
			`n.conf:1: invalid number of arguments in "include" directive: want 1, got 2`, false},
		{"bad glob", fstest.MapFS{"n.conf": {Data: []byte("include [;")}},
			`n.conf:1: include "[": syntax error in pattern`, false},
		{"syntax error in an included file", fstest.MapFS{
			"n.conf": {Data: []byte("include i.conf;")},
			"i.conf": {Data: []byte("a {\n")},
		}, `i.conf:2: unexpected end of file, expecting "}"`, false},
		{"} closing an outer block", fstest.MapFS{
			"n.conf": {Data: []byte("http { include i.conf; }")},
			"i.conf": {Data: []byte("a; }")},
		}, `i.conf:1: unexpected "}"`, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseFile(tc.files, "n.conf")
			if err == nil || err.Error() != tc.want {
				t.Fatalf("got error %v\nwant       %s", err, tc.want)
			}
			if !errors.As(err, new(*Error)) {
				t.Errorf("%v is not an *Error", err)
			}
			if got := errors.Is(err, fs.ErrNotExist); got != tc.isNotExist {
				t.Errorf("errors.Is(err, fs.ErrNotExist) = %v, want %v", got, tc.isNotExist)
			}
		})
	}
	if _, err := ParseFile(fstest.MapFS{}, "n.conf"); !errors.Is(err, fs.ErrNotExist) || errors.As(err, new(*Error)) {
		t.Errorf("missing top file: %v, want a plain not-exist error", err)
	}
}

func TestQuote(t *testing.T) {
	tests := []struct{ in, want string }{
		{"abc", "abc"},
		{"/a/b.html", "/a/b.html"},
		{"", "''"},
		{"a b", "'a b'"},
		{`\d+`, `'\d+'`},
		{`it's`, `'it\'s'`},
		{`a\`, `'a\\'`},
		{`\\d`, `'\\\d'`},
		{`\n`, `'\\n'`},
		{"\n", "'\n'"},
		{"$host", "'$host'"},
		{"a;b{c}", "'a;b{c}'"},
	}
	for _, tc := range tests {
		if got := Quote(tc.in); got != tc.want {
			t.Errorf("Quote(%q) = %s, want %s", tc.in, got, tc.want)
		}
		dirs, err := Parse("q.conf", []byte("d "+Quote(tc.in)+";"))
		if err != nil || len(dirs) != 1 || len(dirs[0].Args) != 1 || dirs[0].Args[0] != tc.in {
			t.Errorf("reading back Quote(%q) = %s: %v %s", tc.in, Quote(tc.in), err, dump(dirs))
		}
	}
}

func TestDirectiveString(t *testing.T) {
	d := &Directive{Name: "replace_filter", Args: []string{`a(?=b)`, "x y", "g"}}
	if got, want := d.String(), `replace_filter a(?=b) 'x y' g`; got != want {
		t.Errorf("String() = %s, want %s", got, want)
	}
}
