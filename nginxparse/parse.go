// Package nginxparse reads nginx configuration files into a tree of
// directives, each with the file and line it is written on.
//
// It tokenizes as nginx does (bare and quoted words, backslash escapes,
// comments, "${var}" in bare words), follows `include` (relative paths
// against the directory of the main file, nginx's configuration prefix,
// whichever file includes them; globs as nginx expands them, in sorted
// order, a glob that matches nothing being no error) and
// skips the Lua code of OpenResty's *_by_lua_block directives. It knows no
// directive's meaning beyond include: that is the caller's business.
//
// Every syntax error is an *Error carrying the file and line.
package nginxparse

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Pos is where a directive is written: file name (as given, or joined to
// the main file's directory) and 1-based line.
type Pos struct {
	File string
	Line int
}

func (p Pos) String() string { return p.File + ":" + strconv.Itoa(p.Line) }

// Directive is one directive: a name, its arguments and, for a block
// directive, the directives inside its braces.
type Directive struct {
	Name string
	Args []string
	Pos  Pos
	// Block reports whether the directive has a { } block. Children are
	// the directives inside it (always none for a *_by_lua_block).
	Block    bool
	Children []*Directive
}

// Error is a syntax error, an include that cannot be read or an include
// cycle, at a position.
type Error struct {
	Pos Pos
	Err error
}

func (e *Error) Error() string { return e.Pos.String() + ": " + e.Err.Error() }

func (e *Error) Unwrap() error { return e.Err }

// Files reads the files of a configuration: OS for real files; an
// fstest.MapFS satisfies it too.
type Files interface {
	ReadFile(name string) ([]byte, error)
	// Glob returns the names matching pattern in sorted order.
	Glob(pattern string) ([]string, error)
}

// OS reads files from the operating system.
var OS Files = osFiles{}

type osFiles struct{}

func (osFiles) ReadFile(name string) ([]byte, error)  { return os.ReadFile(name) }
func (osFiles) Glob(pattern string) ([]string, error) { return filepath.Glob(pattern) }

// Limits that keep a hostile or broken configuration from exhausting the
// stack: nginx itself has none, real configurations stay far below.
const (
	maxBlockDepth   = 64 // nested blocks in one file
	maxIncludeDepth = 32 // files including files
)

// ParseFile reads the configuration file name and every file it includes.
// A file that cannot be read is reported as the *os.PathError (for an
// include, wrapped in an *Error at the include directive); every other
// problem is an *Error.
func ParseFile(files Files, name string) ([]*Directive, error) {
	data, err := files.ReadFile(name)
	if err != nil {
		return nil, err
	}
	p := &parser{files: files, stack: []string{name}, prefix: filepath.Dir(name)}
	return p.file(name, data)
}

// Parse parses one file's content; name is used in positions. `include`
// directives are returned as they are, not followed.
func Parse(name string, data []byte) ([]*Directive, error) {
	return (&parser{}).file(name, data)
}

// parser builds the directive tree of a file and, when files is set, of
// the files it includes.
type parser struct {
	files Files
	stack []string // the files being parsed, outermost first
	// prefix is the main file's directory, against which nginx resolves
	// relative include paths (its conf prefix).
	prefix string
}

func (p *parser) file(name string, data []byte) ([]*Directive, error) {
	return p.block(newLexer(name, data), 0)
}

// block reads directives up to the end of the file (depth 0) or up to the
// } that closes the enclosing block.
func (p *parser) block(lx *lexer, depth int) ([]*Directive, error) {
	var out []*Directive
	for {
		tok, err := lx.next()
		if err != nil {
			return nil, err
		}
		switch tok.kind {
		case tokEOF:
			if depth > 0 {
				return nil, lx.errorf(`unexpected end of file, expecting "}"`)
			}
			return out, nil
		case tokClose:
			if depth == 0 {
				return nil, lx.errorf(`unexpected "}"`)
			}
			return out, nil
		case tokSemicolon:
			return nil, lx.errorf(`unexpected ";"`)
		case tokOpen:
			return nil, lx.errorf(`unexpected "{"`)
		}
		d := &Directive{Name: tok.text, Pos: Pos{File: lx.file, Line: tok.line}}
		if err := p.rest(lx, d, depth); err != nil {
			return nil, err
		}
		if d.Name == "include" && !d.Block && p.files != nil {
			inc, err := p.include(d)
			if err != nil {
				return nil, err
			}
			out = append(out, inc...)
			continue
		}
		out = append(out, d)
	}
}

// rest reads a directive's arguments and its block, if any.
func (p *parser) rest(lx *lexer, d *Directive, depth int) error {
	for {
		tok, err := lx.next()
		if err != nil {
			return err
		}
		switch tok.kind {
		case tokWord:
			d.Args = append(d.Args, tok.text)
		case tokSemicolon:
			return nil
		case tokOpen:
			d.Block = true
			if strings.HasSuffix(d.Name, "_by_lua_block") {
				return lx.skipLua()
			}
			if depth+1 > maxBlockDepth {
				return lx.errorf("blocks nested more than %d deep", maxBlockDepth)
			}
			d.Children, err = p.block(lx, depth+1)
			return err
		case tokClose:
			return lx.errorf(`unexpected "}"`)
		case tokEOF:
			return lx.errUnexpectedEOF()
		}
	}
}

// include parses the files an include directive names, in place.
func (p *parser) include(d *Directive) ([]*Directive, error) {
	fail := func(err error) error { return &Error{Pos: d.Pos, Err: err} }
	if len(d.Args) != 1 {
		return nil, fail(fmt.Errorf(`invalid number of arguments in "include" directive: want 1, got %d`, len(d.Args)))
	}
	pattern := d.Args[0]
	if !filepath.IsAbs(pattern) {
		pattern = filepath.Join(p.prefix, pattern)
	}
	names := []string{pattern}
	if strings.ContainsAny(pattern, "*?[") {
		var err error
		if names, err = p.files.Glob(pattern); err != nil {
			return nil, fail(fmt.Errorf("include %q: %w", d.Args[0], err))
		}
	}
	if len(p.stack) >= maxIncludeDepth {
		return nil, fail(fmt.Errorf("includes nested more than %d deep", maxIncludeDepth))
	}
	var out []*Directive
	for _, name := range names {
		for i, open := range p.stack {
			if open == name {
				cycle := append(append([]string(nil), p.stack[i:]...), name)
				return nil, fail(errors.New("include cycle: " + strings.Join(cycle, " -> ")))
			}
		}
		data, err := p.files.ReadFile(name)
		if err != nil {
			return nil, fail(fmt.Errorf("include %q: %w", d.Args[0], err))
		}
		p.stack = append(p.stack, name)
		dirs, err := p.file(name, data)
		p.stack = p.stack[:len(p.stack)-1]
		if err != nil {
			return nil, err
		}
		out = append(out, dirs...)
	}
	return out, nil
}
