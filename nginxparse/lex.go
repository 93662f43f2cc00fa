package nginxparse

import (
	"fmt"
	"strings"
)

// tokenKind is what a token is.
type tokenKind int

const (
	tokWord      tokenKind = iota // a bare or quoted word, escapes resolved
	tokSemicolon                  // ;
	tokOpen                       // {
	tokClose                      // }
	tokEOF
)

// token is one lexical token and the line it starts on.
type token struct {
	kind tokenKind
	text string // the word, for tokWord
	line int
}

// lexer splits one file into tokens the way nginx's configuration reader
// does:
//   - a word is bare, or quoted with " or ' (then it may hold blanks, ; { }
//     # and line breaks); a quoted word must be followed by a blank, ; { or
//     ")" (dropped, as nginx does for `if (... "x")`);
//   - a backslash keeps the next character in the word whatever it is;
//     then \" \' \\ stand for the character, \t \r \n for tab, carriage
//     return and line feed, and any other pair is kept as written (so the
//     regex `\d` needs no doubling);
//   - "${" inside a bare word does not open a block (a variable);
//   - # starts a comment to the end of the line, where a word could start;
//   - lines are counted at line feeds.
type lexer struct {
	file string
	data string
	pos  int
	line int
}

func newLexer(file string, data []byte) *lexer {
	return &lexer{file: file, data: string(data), line: 1}
}

// errorf reports a problem at the lexer's current line.
func (lx *lexer) errorf(format string, args ...any) error {
	return &Error{Pos: Pos{File: lx.file, Line: lx.line}, Err: fmt.Errorf(format, args...)}
}

func (lx *lexer) errUnexpectedEOF() error {
	return lx.errorf(`unexpected end of file, expecting ";" or "}"`)
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// next returns the next token.
func (lx *lexer) next() (token, error) {
	for lx.pos < len(lx.data) {
		c := lx.data[lx.pos]
		switch c {
		case '\n':
			lx.line++
			lx.pos++
		case ' ', '\t', '\r':
			lx.pos++
		case '#':
			if end := strings.IndexByte(lx.data[lx.pos:], '\n'); end >= 0 {
				lx.pos += end
			} else {
				lx.pos = len(lx.data)
			}
		case ';':
			lx.pos++
			return token{kind: tokSemicolon, line: lx.line}, nil
		case '{':
			lx.pos++
			return token{kind: tokOpen, line: lx.line}, nil
		case '}':
			lx.pos++
			return token{kind: tokClose, line: lx.line}, nil
		case '"', '\'':
			return lx.quoted(c)
		default:
			return lx.bare()
		}
	}
	return token{kind: tokEOF, line: lx.line}, nil
}

// quoted reads a word quoted with q; lx.pos is at the opening quote.
func (lx *lexer) quoted(q byte) (token, error) {
	line := lx.line
	lx.pos++
	start := lx.pos
	for {
		if lx.pos >= len(lx.data) {
			return token{}, lx.errUnexpectedEOF()
		}
		c := lx.data[lx.pos]
		if c == '\n' {
			lx.line++
		}
		if c == '\\' {
			if lx.pos+1 >= len(lx.data) {
				return token{}, lx.errUnexpectedEOF()
			}
			if lx.data[lx.pos+1] == '\n' {
				lx.line++
			}
			lx.pos += 2
			continue
		}
		if c == q {
			break
		}
		lx.pos++
	}
	word := unescape(lx.data[start:lx.pos])
	lx.pos++
	if lx.pos < len(lx.data) {
		switch c := lx.data[lx.pos]; {
		case c == ')':
			lx.pos++
		case isBlank(c) || c == ';' || c == '{':
		default:
			return token{}, lx.errorf("unexpected %q after a quoted string", c)
		}
	}
	return token{kind: tokWord, text: word, line: line}, nil
}

// bare reads an unquoted word; lx.pos is at its first character.
func (lx *lexer) bare() (token, error) {
	line := lx.line
	start := lx.pos
	for lx.pos < len(lx.data) {
		c := lx.data[lx.pos]
		if isBlank(c) || c == ';' || c == '{' {
			break
		}
		switch {
		case c == '\\':
			if lx.pos+1 >= len(lx.data) {
				return token{}, lx.errUnexpectedEOF()
			}
			if lx.data[lx.pos+1] == '\n' {
				lx.line++
			}
			lx.pos += 2
		case c == '$' && lx.pos+1 < len(lx.data) && lx.data[lx.pos+1] == '{':
			lx.pos += 2
		default:
			lx.pos++
		}
	}
	return token{kind: tokWord, text: unescape(lx.data[start:lx.pos]), line: line}, nil
}

// unescape resolves the backslash pairs of a raw word (which holds only
// complete pairs).
func unescape(raw string) string {
	if strings.IndexByte(raw, '\\') < 0 {
		return raw
	}
	var b strings.Builder
	b.Grow(len(raw))
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c != '\\' || i+1 >= len(raw) {
			b.WriteByte(c)
			continue
		}
		switch e := raw[i+1]; e {
		case '"', '\'', '\\':
			b.WriteByte(e)
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'n':
			b.WriteByte('\n')
		default:
			b.WriteByte('\\')
			b.WriteByte(e)
		}
		i++
	}
	return b.String()
}

// skipLua skips the body of an OpenResty *_by_lua_block, whose { was just
// read: Lua code, with its own strings and comments, up to the } that
// closes the block.
func (lx *lexer) skipLua() error {
	depth := 1
	for lx.pos < len(lx.data) {
		c := lx.data[lx.pos]
		switch {
		case c == '\n':
			lx.line++
			lx.pos++
		case c == '{':
			depth++
			lx.pos++
		case c == '}':
			lx.pos++
			if depth--; depth == 0 {
				return nil
			}
		case c == '"' || c == '\'':
			if err := lx.skipLuaString(c); err != nil {
				return err
			}
		case strings.HasPrefix(lx.data[lx.pos:], "--"):
			lx.pos += 2
			if level, ok := luaLongOpen(lx.data[lx.pos:]); ok {
				if err := lx.skipLuaLong(level); err != nil {
					return err
				}
				continue
			}
			if end := strings.IndexByte(lx.data[lx.pos:], '\n'); end >= 0 {
				lx.pos += end
			} else {
				lx.pos = len(lx.data)
			}
		case c == '[':
			if level, ok := luaLongOpen(lx.data[lx.pos:]); ok {
				if err := lx.skipLuaLong(level); err != nil {
					return err
				}
				continue
			}
			lx.pos++
		default:
			lx.pos++
		}
	}
	return lx.errorf(`unexpected end of file in a Lua block, expecting "}"`)
}

// skipLuaString skips a Lua string quoted with q.
func (lx *lexer) skipLuaString(q byte) error {
	line := lx.line
	for lx.pos++; lx.pos < len(lx.data); lx.pos++ {
		switch lx.data[lx.pos] {
		case '\\':
			if lx.pos+1 < len(lx.data) && lx.data[lx.pos+1] == '\n' {
				lx.line++
			}
			lx.pos++
		case '\n':
			lx.line++
		case q:
			lx.pos++
			return nil
		}
	}
	return &Error{Pos: Pos{File: lx.file, Line: line}, Err: fmt.Errorf("unterminated Lua string")}
}

// luaLongOpen reports whether s starts with a Lua long bracket [[ or [=*[,
// and its level (the number of =).
func luaLongOpen(s string) (level int, ok bool) {
	if !strings.HasPrefix(s, "[") {
		return 0, false
	}
	level = 1
	for level < len(s) && s[level] == '=' {
		level++
	}
	if level < len(s) && s[level] == '[' {
		return level - 1, true
	}
	return 0, false
}

// skipLuaLong skips a long string or comment of the given level; lx.pos
// is at its opening bracket.
func (lx *lexer) skipLuaLong(level int) error {
	line := lx.line
	closing := "]" + strings.Repeat("=", level) + "]"
	lx.pos += level + 2
	end := strings.Index(lx.data[lx.pos:], closing)
	if end < 0 {
		return &Error{Pos: Pos{File: lx.file, Line: line}, Err: fmt.Errorf("unterminated Lua long bracket %q", "["+strings.Repeat("=", level)+"[")}
	}
	lx.line += strings.Count(lx.data[lx.pos:lx.pos+end], "\n")
	lx.pos += end + len(closing)
	return nil
}
