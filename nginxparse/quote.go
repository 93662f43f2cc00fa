package nginxparse

import "strings"

// Quote returns s written as one nginx word that the parser reads back as
// s: bare when that is unambiguous, else in single quotes with ' and the
// backslashes that would start an escape written with a backslash.
func Quote(s string) string {
	if isBare(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('\'')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\'':
			b.WriteString(`\'`)
		case c == '\\' && (i+1 == len(s) || strings.IndexByte(`"'\trn`, s[i+1]) >= 0):
			b.WriteString(`\\`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('\'')
	return b.String()
}

// isBare reports whether s can be written without quotes.
func isBare(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
			strings.IndexByte("_-./:=~^!@%&+,*?|<>()[]", c) >= 0) {
			return false
		}
	}
	return true
}

// String writes the directive's name and arguments as nginx reads them
// (without its block or the closing semicolon).
func (d *Directive) String() string {
	var b strings.Builder
	b.WriteString(Quote(d.Name))
	for _, a := range d.Args {
		b.WriteByte(' ')
		b.WriteString(Quote(a))
	}
	return b.String()
}
