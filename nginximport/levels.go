package nginximport

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/streamsub/streamsub/nginxparse"
)

// levelKind is the nginx context a level is: http, server or location.
type levelKind int

const (
	httpLevel levelKind = iota
	serverLevel
	locationLevel
)

// level is one http, server or location block with what it sets for each
// module itself; nginx's inheritance is resolved by looking up the chain
// of parents (lookup).
type level struct {
	kind   levelKind
	dir    *nginxparse.Directive // the block's directive; nil for a file of http-level directives
	pos    nginxparse.Pos
	parent *level
	server *level // the enclosing server; nil at http level
	depth  int
	mods   [numModules]moduleConf

	// Servers only.
	names     []*nginxparse.Directive // server_name directives
	dflt      *nginxparse.Directive   // the listen directive with default_server
	locations []*level                // every location inside, nested ones too, in order
}

// moduleConf is what one level sets itself for one module; nil fields are
// inherited.
type moduleConf struct {
	rules  []*nginxparse.Directive // replace_filter, subs_filter or sub_filter
	types  *setting[[]string]      // *_types, text/html first; ["*"] for any
	keep   *setting[bool]          // replace_filter_last_modified, sub_filter_last_modified
	once   *setting[bool]          // sub_filter_once
	maxBuf *setting[int64]         // replace_filter_max_buffered_size
	skip   *setting[string]        // replace_filter_skip
}

// setting is a value and the directive that sets it.
type setting[T any] struct {
	value T
	at    *nginxparse.Directive
}

// lookup finds a module setting the way nginx merges it: on the level
// itself, else on the nearest enclosing level that sets it. It returns
// the setting and the level it is on, or nil and nil.
func lookup[T any](l *level, m module, get func(*moduleConf) *setting[T]) (*setting[T], *level) {
	for ; l != nil; l = l.parent {
		if s := get(&l.mods[m]); s != nil {
			return s, l
		}
	}
	return nil, nil
}

// label names a level in rule set names and comments: "http", a server's
// first server name (or "server FILE:LINE"), a location as
// "SERVER location ARGS".
func (l *level) label() string {
	switch l.kind {
	case httpLevel:
		return "http"
	case serverLevel:
		for _, d := range l.names {
			for _, n := range d.Args {
				if patterns, _ := hostPatterns(n); len(patterns) > 0 {
					return patterns[0]
				}
			}
		}
		return "server " + l.pos.String()
	}
	return l.server.label() + " location " + strings.Join(l.dir.Args, " ")
}

// describe names a level with its position, for comments and warnings.
func (l *level) describe() string {
	switch l.kind {
	case httpLevel:
		if l.dir == nil {
			return "the top level of " + l.pos.File
		}
		return "http (" + l.pos.String() + ")"
	case serverLevel:
		return "server " + l.label() + " (" + l.pos.String() + ")"
	}
	return "location " + strings.Join(l.dir.Args, " ") + " of server " + l.server.label() + " (" + l.pos.String() + ")"
}

// directiveSpec describes a directive the importer reads.
type directiveSpec struct {
	mod              module
	minArgs, maxArgs int // maxArgs -1: any number
}

var directives = map[string]directiveSpec{
	"replace_filter":                   {replaceFilter, 2, 3},
	"replace_filter_types":             {replaceFilter, 1, -1},
	"replace_filter_max_buffered_size": {replaceFilter, 1, 1},
	"replace_filter_last_modified":     {replaceFilter, 1, 1},
	"replace_filter_skip":              {replaceFilter, 1, 1},
	"subs_filter":                      {subsFilter, 2, -1},
	"subs_filter_types":                {subsFilter, 1, -1},
	"sub_filter":                       {subFilter, 2, 2},
	"sub_filter_types":                 {subFilter, 1, -1},
	"sub_filter_once":                  {subFilter, 1, 1},
	"sub_filter_last_modified":         {subFilter, 1, 1},
}

// isModuleDirective reports whether name belongs to one of the three
// modules, read or not.
func isModuleDirective(name string) bool {
	_, ok := directives[name]
	return ok || strings.HasPrefix(name, "replace_filter") || strings.HasPrefix(name, "subs_filter") ||
		strings.HasPrefix(name, "sub_filter")
}

// walk records what the directives of level l set, and descends into its
// server and location blocks.
func (im *importer) walk(dirs []*nginxparse.Directive, l *level) {
	for _, d := range dirs {
		switch {
		case d.Name == "server" && l.kind == httpLevel && d.Block:
			s := im.newLevel(serverLevel, d, l)
			im.servers = append(im.servers, s)
			im.walk(d.Children, s)
		case d.Name == "location" && d.Block:
			switch {
			case l.kind == httpLevel:
				im.errorf(d.Pos, `"location" directive is not allowed here (outside a server block)`)
				continue
			case len(d.Args) == 0 || len(d.Args) > 2:
				im.errorf(d.Pos, `invalid number of arguments in "location" directive`)
				continue
			}
			loc := im.newLevel(locationLevel, d, l)
			l.server.locations = append(l.server.locations, loc)
			im.walk(d.Children, loc)
		case d.Name == "server_name" && l.kind == serverLevel:
			l.names = append(l.names, d)
		case d.Name == "listen" && l.kind == serverLevel:
			for _, a := range d.Args[min(1, len(d.Args)):] {
				if a == "default_server" || a == "default" {
					l.dflt = d
				}
			}
		case d.Name == "if" && d.Block:
			im.conditional(d, d.Children)
		case isModuleDirective(d.Name):
			im.moduleDirective(d, l)
		}
	}
}

// newLevel makes the level of a server or location block inside parent.
func (im *importer) newLevel(kind levelKind, d *nginxparse.Directive, parent *level) *level {
	l := &level{kind: kind, dir: d, pos: d.Pos, parent: parent, server: parent.server, depth: parent.depth + 1}
	if kind == serverLevel {
		l.server = l
	}
	return l
}

// conditional reports the module directives inside an if block (at any
// depth): streamsub has no per-request conditions.
func (im *importer) conditional(ifDir *nginxparse.Directive, dirs []*nginxparse.Directive) {
	for _, d := range dirs {
		if isModuleDirective(d.Name) {
			im.problem(nil, d, fmt.Sprintf("inside `if %s` (%s): streamsub cannot apply rules conditionally",
				strings.Join(ifDir.Args, " "), ifDir.Pos))
		}
		im.conditional(ifDir, d.Children)
	}
}

// moduleDirective records one directive of the three modules on level l.
func (im *importer) moduleDirective(d *nginxparse.Directive, l *level) {
	spec, ok := directives[d.Name]
	if !ok {
		im.warn(d.Pos, fmt.Sprintf("%q is not translated (ignored)", d.Name))
		return
	}
	if d.Block {
		im.errorf(d.Pos, "directive %q is not terminated by \";\"", d.Name)
		return
	}
	if len(d.Args) < spec.minArgs || spec.maxArgs >= 0 && len(d.Args) > spec.maxArgs {
		im.errorf(d.Pos, "invalid number of arguments in %q directive", d.Name)
		return
	}
	mc := &l.mods[spec.mod]
	duplicate := func() { im.errorf(d.Pos, "%q directive is duplicate", d.Name) }
	switch d.Name {
	case "replace_filter", "subs_filter", "sub_filter":
		if d.Name == "subs_filter" && len(d.Args) > 3 {
			im.warn(d.Pos, fmt.Sprintf("subs_filter: arguments after the flags ignored (as the module does): %q", d.Args[3:]))
		}
		if d.Name == "replace_filter" && len(d.Args) == 3 && strings.Trim(d.Args[2], "gi") != "" {
			im.errorf(d.Pos, "replace_filter: unknown flag in %q (want g, i)", d.Args[2])
			return
		}
		if d.Name == "sub_filter" && d.Args[0] == "" {
			im.errorf(d.Pos, "sub_filter: empty search pattern")
			return
		}
		mc.rules = append(mc.rules, d)
	case "replace_filter_types", "subs_filter_types", "sub_filter_types":
		// As nginx does: text/html always, types add up over several
		// directives at one level, and "*" means any type.
		if mc.types == nil {
			mc.types = &setting[[]string]{value: []string{defaultContentType}, at: d}
		}
		for _, t := range d.Args {
			switch t = strings.ToLower(t); {
			case t == anyContentType || len(mc.types.value) == 1 && mc.types.value[0] == anyContentType:
				mc.types.value = []string{anyContentType}
			case !validMediaType(t):
				im.warn(d.Pos, fmt.Sprintf("%s: %q is not a media type streamsub accepts (type/subtype); ignored", d.Name, t))
			default:
				mc.types.value = appendUnique(mc.types.value, t)
			}
		}
	case "replace_filter_max_buffered_size":
		if mc.maxBuf != nil {
			duplicate()
			return
		}
		n, err := parseSize(d.Args[0])
		if err != nil {
			im.errorf(d.Pos, "replace_filter_max_buffered_size: %v", err)
			return
		}
		mc.maxBuf = &setting[int64]{n, d}
	case "replace_filter_last_modified", "sub_filter_last_modified", "sub_filter_once":
		want := [2]string{"on", "off"}
		if d.Name == "replace_filter_last_modified" {
			want = [2]string{"keep", "clear"}
		}
		v := strings.ToLower(d.Args[0])
		if v != want[0] && v != want[1] {
			im.errorf(d.Pos, "invalid value %q in %q directive, it must be %q or %q", d.Args[0], d.Name, want[0], want[1])
			return
		}
		field := &mc.keep
		if d.Name == "sub_filter_once" {
			field = &mc.once
		}
		if *field != nil {
			duplicate()
			return
		}
		*field = &setting[bool]{v == want[0], d}
	case "replace_filter_skip":
		if mc.skip != nil {
			duplicate()
			return
		}
		mc.skip = &setting[string]{d.Args[0], d}
	}
}

// parseSize reads an nginx size: bytes, or a number with k or m (any
// case), as ngx_parse_size does.
func parseSize(s string) (int64, error) {
	num, unit := s, int64(1)
	if n := len(s); n > 0 {
		switch s[n-1] {
		case 'k', 'K':
			num, unit = s[:n-1], 1<<10
		case 'm', 'M':
			num, unit = s[:n-1], 1<<20
		case 'g', 'G':
			num, unit = s[:n-1], 1<<30
		}
	}
	v, err := strconv.ParseInt(num, 10, 64)
	if err != nil || v < 0 || v > (1<<40)/unit || !allDigits(num) {
		return 0, fmt.Errorf("invalid size %q (want bytes, or a number with k, m or g)", s)
	}
	return v * unit, nil
}

// Content types as the configuration schema has them.
const (
	defaultContentType = "text/html"
	anyContentType     = "*"
)

// validMediaType accepts what the configuration loader accepts in
// content_types: type/subtype, each an HTTP token without '*'.
func validMediaType(t string) bool {
	typ, sub, ok := strings.Cut(t, "/")
	return ok && isToken(typ) && isToken(sub)
}

func isToken(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isNameByte(c) && strings.IndexByte("!#$%&'+-.^`|~", c) < 0 {
			return false
		}
	}
	return s != ""
}

// appendUnique appends the items not yet in list.
func appendUnique(list []string, items ...string) []string {
	for _, it := range items {
		if !slices.Contains(list, it) {
			list = append(list, it)
		}
	}
	return list
}
