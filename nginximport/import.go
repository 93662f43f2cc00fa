// Package nginximport translates the body-rewriting rules of an nginx
// configuration into a streamsub configuration file: replace_filter
// (OpenResty's replace-filter-nginx-module), subs_filter
// (ngx_http_substitutions_filter_module) and sub_filter (ngx_http_sub_module)
// with their *_types, *_last_modified, sub_filter_once and
// replace_filter_max_buffered_size settings.
//
// nginx's inheritance is reproduced: a level (http, server, location) that
// has rules of a module replaces the outer level's rules of that module,
// settings are inherited one by one, and the rules shared by several
// locations become a rule set the others extend. server_name entries and
// default_server become the hosts map; a location whose rules differ from
// its server's becomes a rule set of its own, for Envoy's per-route
// metadata.
//
// What cannot be translated (syntax RE2 lacks, nginx variables, conditions)
// is a Problem naming the directive's file:line and the reason; what
// translates but may behave differently for some inputs is a Warning. The
// output always holds every translated rule, and the untranslated ones as
// comments: whether a Problem stops the import is the caller's choice.
package nginximport

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/streamsub/streamsub/nginxparse"
)

// Diagnostic is a problem or warning at a directive.
type Diagnostic struct {
	Pos nginxparse.Pos
	Msg string
}

func (d Diagnostic) String() string { return d.Pos.String() + ": " + d.Msg }

// Result is an imported configuration.
type Result struct {
	// YAML is the streamsub configuration, with a comment naming the
	// nginx directive of every rule and the untranslated ones commented out.
	YAML []byte
	// Problems are the directives that could not be translated.
	Problems []Diagnostic
	// Warnings are translations that may rewrite some bodies differently
	// from nginx, and directives that were ignored.
	Warnings []Diagnostic
	// RuleSets and Rules count what YAML holds (rules before extends).
	RuleSets, Rules int
}

// Import reads the nginx configuration in file name (and the files it
// includes) through files, and translates it. An error means the
// configuration could not be read or is not valid nginx (each *nginxparse.Error
// names file and line), or that it has no rule to import.
func Import(files nginxparse.Files, name string) (*Result, error) {
	dirs, err := nginxparse.ParseFile(files, name)
	if err != nil {
		return nil, err
	}
	im := &importer{
		source: name,
		http:   &level{kind: httpLevel, pos: nginxparse.Pos{File: name, Line: 1}},
		blocks: map[blockKey]*block{},
		seen:   map[Diagnostic]bool{},
	}
	im.top(dirs)
	if len(im.errs) > 0 {
		return nil, errors.Join(im.errs...)
	}
	if err := im.build(); err != nil {
		return nil, err
	}
	return im.result()
}

// importer holds the state of one import.
type importer struct {
	source  string
	http    *level
	servers []*level
	errs    []error

	blocks    map[blockKey]*block
	blockList []*block
	sets      []*ruleSet // in output order once build is done
	hosts     []hostEntry
	noRewrite *ruleSet
	perRoute  []routeSet
	maxBuf    *setting[int64]

	problems, warnings []Diagnostic
	seen               map[Diagnostic]bool
	// fileProblems are problems no rule set holds (rules inside if blocks).
	fileProblems []string
}

// top reads the main context: an http block, or, for a file without one
// (a conf.d file), the file itself as the http level.
func (im *importer) top(dirs []*nginxparse.Directive) {
	var http *nginxparse.Directive
	for _, d := range dirs {
		if d.Name != "http" || !d.Block {
			continue
		}
		if http != nil {
			im.errorf(d.Pos, `"http" directive is duplicate`)
			return
		}
		http = d
	}
	if http == nil {
		im.walk(dirs, im.http)
		return
	}
	for _, d := range dirs {
		if isModuleDirective(d.Name) {
			im.errorf(d.Pos, "%q directive is not allowed here (outside the http block)", d.Name)
		}
	}
	im.http.dir, im.http.pos = http, http.Pos
	im.walk(http.Children, im.http)
}

func (im *importer) errorf(pos nginxparse.Pos, format string, args ...any) {
	im.errs = append(im.errs, &nginxparse.Error{Pos: pos, Err: fmt.Errorf(format, args...)})
}

// warn records a warning once.
func (im *importer) warn(pos nginxparse.Pos, msg string) {
	d := Diagnostic{pos, msg}
	if !im.seen[d] {
		im.seen[d] = true
		im.warnings = append(im.warnings, d)
	}
}

// problem records an untranslatable directive once, and its comment in
// set (or in the file's head comment when set is nil).
func (im *importer) problem(set *ruleSet, d *nginxparse.Directive, why string) {
	diag := Diagnostic{d.Pos, why}
	comment := commentText(fmt.Sprintf("UNTRANSLATED %s %s: %s", d.Pos, d.String(), why))
	if set != nil {
		set.problems = appendUnique(set.problems, comment)
	} else {
		im.fileProblems = appendUnique(im.fileProblems, comment)
	}
	if !im.seen[diag] {
		im.seen[diag] = true
		im.problems = append(im.problems, diag)
	}
}

// commentText makes text safe for a one-line YAML comment: what is not
// printable is written as a Go escape (\n, \x01, \u2028).
func commentText(s string) string {
	var b strings.Builder
	for _, r := range strings.ToValidUTF8(s, "\uFFFD") {
		if unicode.IsPrint(r) {
			b.WriteRune(r)
		} else {
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		}
	}
	return b.String()
}

// result builds the Result once the rule sets are built.
func (im *importer) result() (*Result, error) {
	out, err := im.yaml()
	if err != nil {
		return nil, err
	}
	res := &Result{YAML: out, Problems: im.problems, Warnings: im.warnings, RuleSets: len(im.sets)}
	for _, s := range im.sets {
		for _, b := range s.own {
			res.Rules += b.translated()
		}
	}
	sortDiagnostics(res.Problems)
	sortDiagnostics(res.Warnings)
	return res, nil
}

// sortDiagnostics orders diagnostics by file, then line, keeping the order
// of those at one line.
func sortDiagnostics(ds []Diagnostic) {
	sort.SliceStable(ds, func(i, j int) bool {
		if ds[i].Pos.File != ds[j].Pos.File {
			return ds[i].Pos.File < ds[j].Pos.File
		}
		return ds[i].Pos.Line < ds[j].Pos.Line
	})
}
