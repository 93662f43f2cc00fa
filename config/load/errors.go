package load

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
)

// Error is one problem with the content of a configuration file. Its message
// starts with the file, then the position when it is known (YAML syntax and
// schema errors), then the culprit:
//
//	config.yaml:7:9: rule_sets[1].rules[0].regx: unknown field (known: name, regex, ...)
//	config.yaml: rule set "shop-fr": rule 2 ("ga-id"): error parsing regexp: missing closing ): `(a`
//
// Rule problems wrap a *matcher.RuleError (Set filled in), so errors.As
// finds it. File reports several problems at once with
// errors.Join; errors.As(err, new(*Error)) tells a rejected file from an
// I/O error.
type Error struct {
	Source       string // the file name, as given to File
	Line, Column int    // 1-based position in the file; 0 when unknown
	Err          error
}

func (e *Error) Error() string {
	s := e.Source
	if e.Line > 0 {
		s += ":" + strconv.Itoa(e.Line)
		if e.Column > 0 {
			s += ":" + strconv.Itoa(e.Column)
		}
	}
	return s + ": " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// maxErrors bounds how many problems one File reports; the rest are
// summarised in one line.
const maxErrors = 20

// errorList collects the problems of one file.
type errorList struct {
	source string
	errs   []error
	extra  int // problems beyond maxErrors
}

func (l *errorList) add(err error) { l.addAt(position{}, err) }

// addAt adds a problem found at p (zero: where is not known).
func (l *errorList) addAt(p position, err error) {
	if len(l.errs) == maxErrors {
		l.extra++
		return
	}
	l.errs = append(l.errs, &Error{Source: l.source, Line: p.line, Column: p.column, Err: err})
}

func (l *errorList) err() error {
	if l.extra > 0 {
		l.errs = append(l.errs, &Error{Source: l.source,
			Err: errors.New("and " + strconv.Itoa(l.extra) + " more problem(s)")})
	}
	switch len(l.errs) {
	case 0:
		return nil
	case 1:
		return l.errs[0]
	}
	return errors.Join(l.errs...)
}

// errorf builds a plain error for an errorList.
func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

var errNoRuleSets = errors.New("no rule sets: want at least one under rule_sets")

// yamlLine matches the position prefix of a YAML parser message.
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// yamlError turns a YAML parser error into an *Error, keeping its line.
func yamlError(source string, err error) *Error {
	msg := err.Error()
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		return &Error{Source: source, Line: line, Err: errors.New("invalid YAML: " + m[2])}
	}
	if len(msg) > len("yaml: ") && msg[:len("yaml: ")] == "yaml: " {
		msg = msg[len("yaml: "):]
	}
	return &Error{Source: source, Err: errors.New("invalid YAML: " + msg)}
}
