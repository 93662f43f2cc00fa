package nginximport

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/streamsub/streamsub/headerrewrite"
	"github.com/streamsub/streamsub/nginxparse"
)

// replaceFilterDefaultBuffer is replace_filter_max_buffered_size's default
// (8k).
const replaceFilterDefaultBuffer = 8 << 10

// ruleSet is one rule set of the output.
type ruleSet struct {
	name   string
	key    string
	scopes []*level // the locations (or servers) whose requests it rewrites
	blocks []*block // its rules, in order
	types  []string
	keep   bool
	origin *level // the innermost level whose directives shaped it; names it
	// skipVar is a replace_filter_skip with a variable in force.
	skipVar *nginxparse.Directive

	extends  []*ruleSet
	own      []*block // the blocks written in the set itself
	group    bool     // made only to be extended
	problems []string
}

// build computes the rule sets, the hosts map and max_buffered_bytes.
func (im *importer) build() error {
	scopes := im.scopes()
	byKey := map[string]*ruleSet{}
	setOf := map[*level]*ruleSet{}
	var sets []*ruleSet
	for _, sc := range scopes {
		s := im.effective(sc)
		if s == nil {
			continue
		}
		if have, ok := byKey[s.key]; ok {
			have.scopes = append(have.scopes, sc)
			setOf[sc] = have
			continue
		}
		byKey[s.key] = s
		setOf[sc] = s
		sets = append(sets, s)
	}
	im.unusedRules()
	if len(sets) == 0 {
		return fmt.Errorf("%s: no replace_filter, subs_filter or sub_filter rule applies to any request: nothing to import", im.source)
	}
	for _, s := range sets {
		im.setWarnings(s)
		for _, b := range s.blocks {
			if !slices.Contains(b.sets, s) {
				b.sets = append(b.sets, s)
			}
		}
	}
	groups := im.split(sets)
	im.hostMap(setOf)
	im.order(sets, groups)
	im.bufferCap(sets)
	im.name()
	for _, s := range im.sets {
		im.setProblems(s)
	}
	im.headerRules()
	for _, r := range im.perRoute {
		what := "requests here get rule set %q, not the one of the server's hosts"
		if r.unnamed {
			what = "no host selects rule set %q (the server's names are taken by earlier servers, or it has none)"
		}
		im.warn(r.loc.pos, fmt.Sprintf(what+"; streamsub chooses by host: select it on the Envoy route with the x-streamsub-ruleset metadata", r.set.name))
	}
	return nil
}

// scopes lists the levels whose settings decide a request's rules: every
// location, and each server that lacks a `location /` (its other requests
// use the server's own); with no server at all, the http level.
func (im *importer) scopes() []*level {
	if len(im.servers) == 0 {
		return []*level{im.http}
	}
	var out []*level
	for _, s := range im.servers {
		if mainLocation(s) == nil {
			out = append(out, s)
		}
		out = append(out, s.locations...)
	}
	return out
}

// mainLocation returns a server's `location /`, which every request that
// no other location takes ends in, or nil.
func mainLocation(s *level) *level {
	for _, l := range s.locations {
		if l.parent == s && (slices.Equal(l.dir.Args, []string{"/"}) || slices.Equal(l.dir.Args, []string{"^~", "/"})) {
			return l
		}
	}
	return nil
}

// effective resolves what applies to the requests of scope l, as a rule
// set not yet split into extends; nil when no rule applies.
func (im *importer) effective(l *level) *ruleSet {
	s := &ruleSet{scopes: []*level{l}, keep: true}
	shape := func(at *level) {
		if at != nil && (s.origin == nil || at.depth > s.origin.depth) {
			s.origin = at
		}
	}
	var modTypes [][]string
	for m := range numModules {
		var def *level
		for x := l; x != nil && def == nil; x = x.parent {
			if x.mods[m].rules != nil {
				def = x
			}
		}
		if def == nil {
			continue
		}
		if m == replaceFilter {
			if skip, at := lookup(l, m, func(c *moduleConf) *setting[string] { return c.skip }); skip != nil {
				shape(at)
				switch {
				case strings.Contains(skip.value, "$"):
					s.skipVar = skip.at
				case skip.value != "" && skip.value != "0":
					continue // replace_filter is off here
				}
			}
		}
		once := false
		if m == subFilter {
			once = true
			if o, at := lookup(l, m, func(c *moduleConf) *setting[bool] { return c.once }); o != nil {
				once = o.value
				shape(at)
			}
		}
		shape(def)
		s.blocks = append(s.blocks, im.block(blockKey{def, m, once}))
		types := []string{defaultContentType}
		if t, at := lookup(l, m, func(c *moduleConf) *setting[[]string] { return c.types }); t != nil {
			types = t.value
			shape(at)
		}
		modTypes = append(modTypes, types)
		keep := false
		if m != subsFilter { // subs_filter always clears last-modified
			if k, at := lookup(l, m, func(c *moduleConf) *setting[bool] { return c.keep }); k != nil {
				keep = k.value
				shape(at)
			}
		}
		s.keep = s.keep && keep
	}
	if len(s.blocks) == 0 {
		return nil
	}
	// Outer levels first, then by module: the shared rules lead, so that
	// they can be an extended rule set.
	sort.SliceStable(s.blocks, func(i, j int) bool { return s.blocks[i].def.depth < s.blocks[j].def.depth })
	s.types = unionTypes(modTypes)
	var key strings.Builder
	for _, b := range s.blocks {
		key.WriteString(strconv.Itoa(b.id) + ",")
	}
	fmt.Fprintf(&key, "|%q|%v|%p", s.types, s.keep, s.skipVar)
	s.key = key.String()
	return s
}

// unionTypes merges the content types of several modules' lists.
func unionTypes(lists [][]string) []string {
	var out []string
	for _, l := range lists {
		if slices.Contains(l, anyContentType) {
			return []string{anyContentType}
		}
		out = appendUnique(out, l...)
	}
	return out
}

// setWarnings reports what nginx does differently with the modules a rule
// set mixes.
func (im *importer) setWarnings(s *ruleSet) {
	if len(s.blocks) < 2 {
		return
	}
	pos := s.scopes[0].pos
	var mods []string
	for _, b := range s.blocks {
		mods = append(mods, b.mod.String())
	}
	if why := modulesMeet(s.blocks); why != "" {
		im.warnSet(s, pos, fmt.Sprintf("rules of %s apply here: nginx runs the modules one after another, each on the previous one's output, where streamsub applies all rules in one pass; this can differ because %s", andList(mods), why))
	}
	var first []string
	for i, b := range s.blocks {
		types := []string{defaultContentType}
		if t, _ := lookup(s.scopes[0], b.mod, func(c *moduleConf) *setting[[]string] { return c.types }); t != nil {
			types = t.value
		}
		if i == 0 {
			first = types
		} else if !sameSet(first, types) {
			im.warnSet(s, pos, fmt.Sprintf("the modules here rewrite different content types; the rule set rewrites all of them with all its rules: %s", strings.Join(s.types, ", ")))
			return
		}
	}
}

// modulesMeet says how running the blocks' modules one after another (in
// an order this does not assume) can give another output than one pass,
// or returns "" when it cannot: every rule is a fixed string of sub_filter
// or subs_filter, and no rule of one module meets a rule of another in
// either order. replace_filter's place in the chain is not known here.
func modulesMeet(blocks []*block) string {
	for i, a := range blocks {
		if a.mod == replaceFilter {
			return "replace_filter's rules are regexes (the import compares fixed strings only)"
		}
		for _, b := range blocks[i+1:] {
			if b.mod == replaceFilter {
				return "replace_filter's rules are regexes (the import compares fixed strings only)"
			}
			for _, ra := range a.rules {
				for _, rb := range b.rules {
					switch {
					case ra.problem != "" || rb.problem != "":
					case !ra.literal:
						return fmt.Sprintf("the rule at %s is a regex (the import compares fixed strings only)", ra.dir.Pos)
					case !rb.literal:
						return fmt.Sprintf("the rule at %s is a regex (the import compares fixed strings only)", rb.dir.Pos)
					case meet(ra, rb) != meetNever || meet(rb, ra) != meetNever:
						return fmt.Sprintf("the rules at %s and %s can meet (their strings overlap, or one's replacement makes or breaks a match of the other)", ra.dir.Pos, rb.dir.Pos)
					}
				}
			}
		}
	}
	return ""
}

// andList joins items as "a, b and c".
func andList(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}

// unusedRules warns about rule lists no request reaches: every location
// below has its own, or replace_filter_skip turns them off.
func (im *importer) unusedRules() {
	var levels []*level
	levels = append(levels, im.http)
	for _, s := range im.servers {
		levels = append(append(levels, s), s.locations...)
	}
	for _, l := range levels {
		for m := range numModules {
			rules := l.mods[m].rules
			if rules == nil {
				continue
			}
			used := false
			for _, b := range im.blockList {
				used = used || b.def == l && b.mod == m
			}
			if !used {
				im.warn(rules[0].Pos, fmt.Sprintf("the %d %s rule(s) of %s apply to no request (every location below has its own, or replace_filter_skip turns them off); not imported", len(rules), m, l.describe()))
			}
		}
	}
}

// split decides, for each rule set, which of its blocks it extends (as a
// rule set of their own, when several sets share them) and which it
// writes itself: the longest tail of blocks that no other set uses. It
// returns the rule sets made only to be extended.
func (im *importer) split(sets []*ruleSet) []*ruleSet {
	var groups []*ruleSet
	groupOf := func(b *block) *ruleSet {
		if b.group != nil {
			return b.group
		}
		for _, s := range sets { // a set that is exactly this block
			if len(s.blocks) == 1 && s.blocks[0] == b {
				b.group = s
				return s
			}
		}
		g := &ruleSet{blocks: []*block{b}, own: []*block{b}, origin: b.def, group: true, scopes: nil}
		g.types = []string{defaultContentType}
		if t, _ := lookup(b.def, b.mod, func(c *moduleConf) *setting[[]string] { return c.types }); t != nil {
			g.types = t.value
		}
		if k, _ := lookup(b.def, b.mod, func(c *moduleConf) *setting[bool] { return c.keep }); k != nil && b.mod != subsFilter {
			g.keep = k.value
		}
		b.group = g
		groups = append(groups, g)
		return g
	}
	for _, s := range sets {
		k := len(s.blocks)
		for k > 0 && len(s.blocks[k-1].sets) == 1 {
			k--
		}
		s.own = s.blocks[k:]
		for _, b := range s.blocks[:k] {
			if g := groupOf(b); g != s {
				s.extends = append(s.extends, g)
			} else {
				s.own = s.blocks
			}
		}
	}
	return groups
}

// order puts the rule sets in output order: the default first (the one
// "*" selects, which every host gets when the hosts map can be left out),
// the others as their locations appear, the shared ones, the empty one.
func (im *importer) order(sets, groups []*ruleSet) {
	var first *ruleSet
	for _, h := range im.hosts {
		if h.pattern == "*" {
			first = h.set
		}
	}
	same := first != nil
	for _, h := range im.hosts {
		same = same && h.set == first
	}
	if same && first != im.noRewrite {
		im.hosts = nil
	}
	if first == nil || first == im.noRewrite {
		first = sets[0]
	}
	im.sets = append(im.sets, first)
	for _, s := range slices.Concat(sets, groups) {
		if s != first {
			im.sets = append(im.sets, s)
		}
	}
	if im.noRewrite != nil && im.hosts != nil {
		im.sets = append(im.sets, im.noRewrite)
	}
}

// bufferCap chooses max_buffered_bytes from replace_filter_max_buffered_size
// where replace_filter rules apply: one value for the whole file.
func (im *importer) bufferCap(sets []*ruleSet) {
	var chosen *setting[int64]
	var others []*setting[int64]
	for _, s := range sets {
		for _, b := range s.blocks {
			if b.mod != replaceFilter {
				continue
			}
			for _, sc := range s.scopes {
				v, _ := lookup(sc, replaceFilter, func(c *moduleConf) *setting[int64] { return c.maxBuf })
				if v == nil {
					v = &setting[int64]{value: replaceFilterDefaultBuffer}
				}
				if v.value == 0 {
					im.warn(v.at.Pos, "replace_filter_max_buffered_size 0 (hold nothing back) cannot be expressed; streamsub holds back what a pending match needs, up to max_buffered_bytes")
					continue
				}
				switch {
				case chosen == nil:
					chosen = v
				case v.value > chosen.value:
					others, chosen = append(others, chosen), v
				case v.value < chosen.value:
					others = append(others, v)
				}
			}
		}
	}
	for _, o := range others {
		if o.at != nil {
			im.warn(o.at.Pos, fmt.Sprintf("max_buffered_bytes is one value for the whole file; the import uses the largest, %d", chosen.value))
		} else {
			im.warn(chosen.at.Pos, fmt.Sprintf("max_buffered_bytes is one value for the whole file; the import uses the largest, %d, also where replace_filter_max_buffered_size is left at its default (8k)", chosen.value))
		}
	}
	im.maxBuf = chosen
}

// name gives every rule set a unique name: the label of the level that
// shaped it, "LEVEL MODULE" for a shared block, "no-rewrite" for the
// empty set.
func (im *importer) name() {
	used := map[string]bool{}
	for _, s := range im.sets {
		base := s.name0()
		name := base
		for n := 2; used[name]; n++ {
			name = base + " #" + strconv.Itoa(n)
		}
		used[name] = true
		s.name = name
	}
}

// name0 is a rule set's name before duplicates are told apart.
func (s *ruleSet) name0() string {
	switch {
	case s.name != "":
		return s.name
	case s.origin == nil:
		return "no-rewrite"
	case s.group:
		return s.blocks[0].def.label() + " " + s.blocks[0].mod.String()
	}
	return s.origin.label()
}

// setProblems records the untranslated directives a rule set's own blocks
// hold, and a replace_filter_skip with a variable.
func (im *importer) setProblems(s *ruleSet) {
	if s.skipVar != nil {
		im.problem(s, s.skipVar, "replace_filter_skip with a variable: streamsub cannot skip per request; the rules always apply")
	}
	for _, b := range s.own {
		for _, r := range b.rules {
			if r.problem != "" {
				im.problem(s, r.dir, r.problem)
			}
		}
	}
}

// headerRules decides whether the rule sets need header_rules of their
// own. Without them a rule set's body rules also rewrite the response
// headers, and the loader refuses a template that puts CR, LF or NUL in
// every match ("</p>\n" is a common nginx replacement). nginx's modules
// never rewrote headers, so such a rule keeps to bodies, with a warning.
func (im *importer) headerRules() {
	for _, s := range im.sets {
		for _, b := range s.own {
			for _, r := range b.rules {
				if r.problem == "" && !r.headerSafe() {
					im.ownHeaderRules = true
					im.warnSet(s, r.dir.Pos, "the replacement holds a line break or NUL, which a header value cannot carry: the rule rewrites bodies only (the rule sets get header_rules without it)")
				}
			}
		}
	}
}

// headerSafe reports whether the rule may also rewrite header values.
func (r *rule) headerSafe() bool { return headerrewrite.CheckTemplate(r.replace) == nil }

// rewritesHeaders reports whether, with header_rules of their own, a rule
// set's effective rules (its ancestors' and its own) leave any rule to
// rewrite the response headers with.
func (s *ruleSet) rewritesHeaders() bool {
	for _, b := range s.blocks {
		for _, r := range b.rules {
			if r.problem == "" && r.headerSafe() {
				return true
			}
		}
	}
	return false
}
