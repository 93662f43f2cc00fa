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
// comments: whether a Problem stops the import is the caller's choice. A
// warning about how rules rewrite names the rule sets it affects, so that
// a caller can tell which bodies may differ from nginx's.
//
// ReadExamples and Result.AddTests turn pages nginx served (a body from
// the origin and nginx's output for it) into self-tests of a rule set.
package nginximport

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"

	yaml "go.yaml.in/yaml/v3"

	"github.com/streamsub/streamsub/nginxparse"
)

// Diagnostic is a problem or warning at a directive.
type Diagnostic struct {
	Pos nginxparse.Pos
	Msg string
	// Affects names, for a warning about how rules match and replace, the
	// rule sets whose rewritten bodies may differ from nginx's because of
	// it, in output order. It is nil for problems and for warnings about
	// which responses are rewritten (status), the hosts map, the
	// hold-back buffer and ignored directives.
	Affects []string
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
	// Names are the names of the rule sets, in output order: the first is
	// the default.
	Names []string

	doc *yaml.Node // what YAML encodes, for AddTests
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
		seen:   map[diagKey]*warning{},

		seenProblem: map[diagKey]bool{},
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
	// ownHeaderRules is set when some rule's replacement holds a byte a
	// header value cannot carry: every rule set then writes header_rules
	// (its other rules), since its body rules cannot rewrite headers.
	ownHeaderRules bool

	problems []Diagnostic
	warnings []*warning
	seen     map[diagKey]*warning
	// seenProblem records the problems, to record each once.
	seenProblem map[diagKey]bool
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

// diagKey identifies a diagnostic, to record each once.
type diagKey struct {
	pos nginxparse.Pos
	msg string
}

// warning is a warning and what it is about: the blocks and rule sets
// whose rules it concerns, resolved to rule set names in result.
type warning struct {
	Diagnostic
	blocks []*block
	sets   []*ruleSet
}

// warn records a warning once; its Affects stays nil.
func (im *importer) warn(pos nginxparse.Pos, msg string) *warning {
	k := diagKey{pos, msg}
	w := im.seen[k]
	if w == nil {
		w = &warning{Diagnostic: Diagnostic{Pos: pos, Msg: msg}}
		im.seen[k] = w
		im.warnings = append(im.warnings, w)
	}
	return w
}

// warnBlock records a warning about how the rules of b match and replace:
// it affects every rule set that includes b.
func (im *importer) warnBlock(b *block, pos nginxparse.Pos, msg string) {
	w := im.warn(pos, msg)
	w.blocks = append(w.blocks, b)
}

// warnSet records a warning about how the rules of s match and replace.
func (im *importer) warnSet(s *ruleSet, pos nginxparse.Pos, msg string) {
	w := im.warn(pos, msg)
	w.sets = append(w.sets, s)
}

// affects names the rule sets a warning concerns, in output order: those
// it names, those that include its blocks, and the shared rule set that
// holds a block.
func (im *importer) affects(w *warning) []string {
	var names []string
	for _, s := range im.sets {
		hit := slices.Contains(w.sets, s)
		for _, b := range w.blocks {
			hit = hit || b.group == s || slices.Contains(b.sets, s)
		}
		if hit {
			names = append(names, s.name)
		}
	}
	return names
}

// problem records an untranslatable directive once, and its comment in
// set (or in the file's head comment when set is nil).
func (im *importer) problem(set *ruleSet, d *nginxparse.Directive, why string) {
	diag := Diagnostic{Pos: d.Pos, Msg: why}
	comment := commentText(fmt.Sprintf("UNTRANSLATED %s %s: %s", d.Pos, d.String(), why))
	if set != nil {
		set.problems = appendUnique(set.problems, comment)
	} else {
		im.fileProblems = appendUnique(im.fileProblems, comment)
	}
	if k := (diagKey{d.Pos, why}); !im.seenProblem[k] {
		im.seenProblem[k] = true
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
	doc := im.document()
	out, err := encode(doc)
	if err != nil {
		return nil, err
	}
	res := &Result{YAML: out, Problems: im.problems, RuleSets: len(im.sets), doc: doc}
	for _, s := range im.sets {
		res.Names = append(res.Names, s.name)
	}
	for _, w := range im.warnings {
		d := w.Diagnostic
		d.Affects = im.affects(w)
		res.Warnings = append(res.Warnings, d)
	}
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
