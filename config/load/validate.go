package load

import (
	"cmp"
	"errors"
	"fmt"
	"net/netip"
	"regexp/syntax"
	"strings"

	"github.com/streamsub/streamsub/config"
	"github.com/streamsub/streamsub/headerrewrite"
	"github.com/streamsub/streamsub/matcher"
	configv1 "github.com/streamsub/streamsub/proto/streamsub/config/v1"
)

// build validates pb completely, then flattens its rule sets and hands
// them to config.New to compile. Problems are collected (up to maxErrors)
// so one run shows them all; nothing is compiled unless the file is valid.
//
// Then it runs the rule sets' self-tests (tests:) on the compiled rules; a
// file in which one fails is rejected too, the failure named at the test.
func build(pb *configv1.Config, source string, pos positions) (*config.Config, error) {
	errs := &errorList{source: source}

	if pb.GetMaxBufferedBytes() < 0 {
		errs.add(errorf("max_buffered_bytes: must not be negative, got %d", pb.GetMaxBufferedBytes()))
	}
	if pb.GetMaxHeaderValueBytes() < 0 {
		errs.add(errorf("max_header_value_bytes: must not be negative, got %d", pb.GetMaxHeaderValueBytes()))
	}
	if n := pb.GetDfaCacheBytes(); n != 0 && (n < matcher.MinDFACacheBytes || n > matcher.MaxDFACacheBytes) {
		errs.add(errorf("dfa_cache_bytes: want 0 (default %d) or %d..%d, got %d",
			matcher.DefaultDFACacheBytes, matcher.MinDFACacheBytes, matcher.MaxDFACacheBytes, n))
	}
	// Each rule alone is checked against the budget too (checkRule), so an
	// oversized rule costs no more than the budget before it is rejected.
	limits := matcher.Options{MaxNFAStates: matcher.DefaultMaxNFAStates}
	switch n := pb.GetMaxNfaStates(); {
	case n < 0 || n > matcher.MaxNFAStates:
		errs.add(errorf("max_nfa_states: want 0 (default %d) or 1..%d, got %d",
			matcher.DefaultMaxNFAStates, matcher.MaxNFAStates, n))
		limits.MaxNFAStates = matcher.MaxNFAStates
	case n > 0:
		limits.MaxNFAStates = int(n)
	}

	sets := pb.GetRuleSets()
	if len(sets) == 0 {
		errs.add(errNoRuleSets)
	}
	index := map[string]int{} // rule set name → position in sets
	for i, s := range sets {
		switch first, dup := index[s.GetName()]; {
		case s.GetName() == "":
			errs.add(errorf("rule_sets[%d]: empty name", i))
		case dup:
			errs.add(errorf("rule_sets[%d]: duplicate rule set name %q (also rule_sets[%d])", i, s.GetName(), first))
		default:
			index[s.GetName()] = i
		}
	}
	for i, s := range sets {
		checkRuleSet(errs, s, i, index, limits)
		checkTests(errs, s, i, pos)
	}
	checkCycles(errs, sets, index)
	hosts := checkHosts(errs, pb.GetHosts(), index)
	shadows, sample := checkShadows(errs, pb, index)
	hf := pb.GetHeaderFilter()
	request := headerSet(errs, "header_filter.request", hf.GetRequest())
	response := headerSet(errs, "header_filter.response", hf.GetResponse())
	remember := checkRemember(errs, pb.GetRemember())
	if err := errs.err(); err != nil {
		return nil, err
	}
	f := flattener{sets: sets, index: index, done: map[string]*config.RuleSet{}}
	ruleSets := make([]*config.RuleSet, len(sets))
	for i, s := range sets {
		ruleSets[i] = f.ruleSet(s.GetName())
		ruleSets[i].Tests = len(s.GetTests())
	}
	cfg, err := config.New(config.Config{
		Source:              source,
		RuleSets:            ruleSets,
		MaxBufferedBytes:    int(pb.GetMaxBufferedBytes()),
		DFACacheBytes:       int(pb.GetDfaCacheBytes()),
		MaxNFAStates:        limits.MaxNFAStates,
		MaxHeaderValueBytes: int(pb.GetMaxHeaderValueBytes()),
		RequestHeaders:      request,
		ResponseHeaders:     response,
		Hosts:               hosts,
		Shadows:             shadows,
		ShadowSample:        sample,
		Remember:            remember,
	})
	if err != nil {
		// A rule inherited by several rule sets fails in each: report it
		// once, where it is written.
		seen := map[string]bool{}
		for _, e := range joined(err) {
			e = f.whereWritten(e)
			if !seen[e.Error()] {
				seen[e.Error()] = true
				errs.add(e)
			}
		}
		return nil, errs.err()
	}
	runTests(errs, cfg, sets, pos)
	if err := errs.err(); err != nil {
		return nil, err
	}
	return cfg, nil
}

// joined returns the errors that errors.Join put in err, or err alone.
func joined(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// checkRuleSet validates one rule set's own fields and rules.
func checkRuleSet(errs *errorList, s *configv1.RuleSet, i int, index map[string]int, limits matcher.Options) {
	who := ruleSetWho(s, i)
	seen := map[string]bool{}
	for _, e := range s.GetExtends() {
		switch _, ok := index[e]; {
		case seen[e]:
			errs.add(errorf("%s: extends lists %q twice", who, e))
		case !ok:
			errs.add(errorf("%s: extends: unknown rule set %q", who, e))
		}
		seen[e] = true
	}
	for j, ct := range s.GetContentTypes() {
		if !validMediaType(ct) {
			errs.add(errorf("%s: content_types[%d]: invalid media type %q; want type/subtype without parameters, or \"*\"", who, j, ct))
		}
	}
	checkRules(errs, s.GetName(), "", s.GetRules(), nil, limits)
	checkRules(errs, s.GetName(), config.KindHeaderRule, s.GetHeaderRules(), headerrewrite.CheckTemplate, limits)
	checkRules(errs, s.GetName(), config.KindRequestHeaderRule, s.GetRequestHeaderRules(), headerrewrite.CheckTemplate, limits)
	if s.RewriteResponseHeaders != nil && !s.GetRewriteResponseHeaders() && len(s.GetResponseHeaders()) > 0 {
		errs.add(errorf("%s: response_headers lists headers, but rewrite_response_headers is false", who))
	}
	for j, n := range s.GetResponseHeaders() {
		if err := checkHeaderName(n); err != nil {
			errs.add(errorf("%s: response_headers[%d]: %w", who, j, err))
		}
	}
	for j, n := range s.GetRequestHeaders() {
		err := checkHeaderName(n)
		if err == nil && strings.EqualFold(n, "host") {
			err = errors.New(`"host" is Envoy's to rewrite (host_rewrite_literal on the route)`)
		}
		if err != nil {
			errs.add(errorf("%s: request_headers[%d]: %w", who, j, err))
		}
	}
}

// checkRules validates one list of rules of rule set set (kind names the
// list in messages, "" for the body rules): each rule alone (within the
// automaton budget of limits), its template with checkTemplate when given,
// and unique names.
func checkRules(errs *errorList, set, kind string, rules []*configv1.Rule, checkTemplate func(string) error, limits matcher.Options) {
	names := map[string]int{}
	for j, r := range rules {
		err := checkRule(r, limits)
		if err == nil && checkTemplate != nil {
			err = checkTemplate(r.GetReplace())
		}
		if err != nil {
			errs.add(&matcher.RuleError{Set: set, Kind: kind, Index: j, Name: r.GetName(), Err: err})
		}
		if n := r.GetName(); n != "" {
			if first, dup := names[n]; dup {
				errs.add(&matcher.RuleError{Set: set, Kind: kind, Index: j, Name: n,
					Err: fmt.Errorf("duplicate rule name (also %s %d)", cmp.Or(kind, "rule"), first)})
			} else {
				names[n] = j
			}
		}
	}
}

// ruleSetWho names rule set s, sets[i], in messages: by name, or by
// position when it has none.
func ruleSetWho(s *configv1.RuleSet, i int) string {
	if s.GetName() == "" {
		return fmt.Sprintf("rule_sets[%d]", i)
	}
	return fmt.Sprintf("rule set %q", s.GetName())
}

// checkRule validates one rule: exactly one of regex and literal (which
// matcher.Rule cannot express), then whatever matcher.Check (= Compile) rejects in the
// rule alone (regex syntax, so backreferences and look-around; template;
// empty literal; an automaton over the budget of limits). Checking rules
// one by one reports every bad rule once, where it is written, however many
// rule sets inherit it.
func checkRule(r *configv1.Rule, limits matcher.Options) error {
	switch {
	case r.Regex != nil && r.Literal != nil:
		return errors.New("both regex and literal are set; want exactly one")
	case r.Regex == nil && r.Literal == nil:
		return errors.New("neither regex nor literal is set; want exactly one")
	}
	err := matcher.Check([]matcher.Rule{toMatcherRule(r)}, limits)
	var re *matcher.RuleError
	if errors.As(err, &re) {
		return explainSyntaxError(re.Err)
	}
	return err
}

func toMatcherRule(r *configv1.Rule) matcher.Rule {
	rule := matcher.Rule{
		Name:       r.GetName(),
		Pattern:    r.GetRegex(),
		Replace:    r.GetReplace(),
		IgnoreCase: r.GetIgnoreCase(),
		Once:       r.GetOnce(),
	}
	if r.Literal != nil {
		rule.Pattern, rule.Literal = r.GetLiteral(), true
	}
	return rule
}

// explainSyntaxError adds why to the regexp/syntax errors that a regex
// written for Perl or PCRE meets; the *syntax.Error stays in the chain.
func explainSyntaxError(err error) error {
	var se *syntax.Error
	if !errors.As(err, &se) {
		return err
	}
	switch {
	case se.Code == syntax.ErrInvalidEscape && len(se.Expr) == 2 && '1' <= se.Expr[1] && se.Expr[1] <= '9':
		return fmt.Errorf("%w (backreferences are not supported)", err)
	case (se.Code == syntax.ErrInvalidPerlOp || se.Code == syntax.ErrInvalidNamedCapture) && (strings.HasPrefix(se.Expr, "(?=") || strings.HasPrefix(se.Expr, "(?!") ||
		strings.HasPrefix(se.Expr, "(?<=") || strings.HasPrefix(se.Expr, "(?<!")):
		return fmt.Errorf("%w (look-around is not supported)", err)
	}
	return err // "error parsing regexp: <what>: `<where>`"
}

// checkCycles reports extends cycles, each named from the rule set where
// the depth-first walk in declaration order closes it.
func checkCycles(errs *errorList, sets []*configv1.RuleSet, index map[string]int) {
	const (
		unvisited = iota
		onStack
		finished
	)
	state := map[string]int{}
	var stack []string
	var visit func(name string)
	visit = func(name string) {
		state[name] = onStack
		stack = append(stack, name)
		for _, p := range sets[index[name]].GetExtends() {
			if _, ok := index[p]; !ok {
				continue // reported by checkRuleSet
			}
			switch state[p] {
			case unvisited:
				visit(p)
			case onStack:
				start := len(stack) - 1
				for stack[start] != p {
					start--
				}
				cycle := append(append([]string(nil), stack[start:]...), p)
				errs.add(errorf("rule set %q: extends cycle: %s", p, strings.Join(cycle, " -> ")))
			}
		}
		stack = stack[:len(stack)-1]
		state[name] = finished
	}
	for _, s := range sets {
		if i, ok := index[s.GetName()]; ok && sets[i] == s && state[s.GetName()] == unvisited {
			visit(s.GetName())
		}
	}
}

// checkHosts validates the host map and returns it normalised.
func checkHosts(errs *errorList, hosts map[string]string, index map[string]int) map[string]string {
	if len(hosts) == 0 {
		return nil
	}
	out := make(map[string]string, len(hosts))
	from := map[string]string{} // normalised → key as written
	for _, h := range sortedKeys(hosts) {
		name := hosts[h]
		if _, ok := index[name]; !ok {
			errs.add(errorf("hosts[%q]: unknown rule set %q", h, name))
		}
		norm, err := normalizeHostPattern(h)
		if err != nil {
			errs.add(errorf("hosts[%q]: invalid host pattern: %w", h, err))
			continue
		}
		if first, dup := from[norm]; dup {
			errs.add(errorf("hosts[%q]: same host as hosts[%q]", h, first))
			continue
		}
		from[norm] = h
		out[norm] = name
	}
	return out
}

// normalizeHostPattern checks a hosts key and returns it lower-cased
// without a trailing dot.
func normalizeHostPattern(p string) (string, error) {
	if p == "*" {
		return p, nil
	}
	norm := strings.ToLower(strings.TrimSuffix(p, "."))
	host := norm
	if rest, ok := strings.CutPrefix(norm, "*."); ok {
		host = rest
	}
	switch {
	case norm == "":
		return "", errors.New(`empty; want a host, "*.suffix" or "*"`)
	case strings.HasPrefix(host, "["):
		if !strings.HasSuffix(host, "]") {
			return "", errors.New("unterminated IPv6 literal, or a port; hosts are matched without port")
		}
		if _, err := netip.ParseAddr(host[1 : len(host)-1]); err != nil || host != norm {
			return "", errors.New("invalid IPv6 literal")
		}
	case strings.Contains(host, "*"):
		return "", errors.New(`"*" only as a whole label at the start ("*.example.com") or alone`)
	case strings.Contains(host, ":"):
		return "", errors.New("has a port or a bare IPv6 address; hosts are matched without port, IPv6 in brackets")
	default:
		for _, label := range strings.Split(host, ".") {
			if label == "" || len(label) > 63 {
				return "", errors.New("empty or over-long label")
			}
			for i := 0; i < len(label); i++ {
				if c := label[i]; !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
					return "", fmt.Errorf("character %q is not allowed in a host name", c)
				}
			}
		}
	}
	return norm, nil
}

// headerSet validates one header list and builds its set (nil when empty).
func headerSet(errs *errorList, path string, l *configv1.HeaderList) *matcher.HeaderSet {
	var names, prefixes []string
	for i, n := range l.GetRemove() {
		if err := checkHeaderName(n); err != nil {
			errs.add(errorf("%s.remove[%d]: %w", path, i, err))
			continue
		}
		names = append(names, strings.ToLower(n))
	}
	for i, p := range l.GetRemovePrefixes() {
		if p == "" {
			errs.add(errorf("%s.remove_prefixes[%d]: empty header prefix", path, i))
			continue
		}
		if err := checkHeaderName(p); err != nil {
			errs.add(errorf("%s.remove_prefixes[%d]: %w", path, i, err))
			continue
		}
		prefixes = append(prefixes, strings.ToLower(p))
	}
	if len(names) == 0 && len(prefixes) == 0 {
		return nil
	}
	return matcher.NewHeaderSet(names, prefixes)
}

// checkHeaderName accepts an HTTP field name (RFC 9110 token), not a
// pseudo-header.
func checkHeaderName(n string) error {
	if n == "" {
		return errors.New("empty header name")
	}
	if n[0] == ':' {
		return fmt.Errorf("%q is a pseudo-header; Envoy never lets those be removed or set", n)
	}
	for i := 0; i < len(n); i++ {
		if !isTokenChar(n[i]) {
			return fmt.Errorf("invalid header name %q: character %q is not allowed", n, n[i])
		}
	}
	return nil
}

func isTokenChar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return c < 0x80 && strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

// validMediaType accepts "*" or a lower- or upper-case "type/subtype" of
// tokens, with no parameters and no wildcard.
func validMediaType(mt string) bool {
	if mt == config.AnyContentType {
		return true
	}
	typ, sub, ok := strings.Cut(mt, "/")
	if !ok || typ == "" || sub == "" {
		return false
	}
	for _, part := range []string{typ, sub} {
		for i := 0; i < len(part); i++ {
			if c := part[i]; !isTokenChar(c) || c == '*' {
				return false
			}
		}
	}
	return true
}

// flattener resolves extends (validated, acyclic) into RuleSets, each once.
type flattener struct {
	sets  []*configv1.RuleSet
	index map[string]int
	done  map[string]*config.RuleSet
	// origin of each flattened rule, by rule kind ("" for the body rules,
	// config.KindHeaderRule, config.KindRequestHeaderRule) and rule set
	// name: the rule set and index where it is written, so that a compile
	// error on an inherited rule names where it is written.
	origin map[originKey][]ruleOrigin
}

type originKey struct{ kind, set string }

type ruleOrigin struct {
	set   string
	index int
}

// ruleSet returns the flattened rule set called name, not yet compiled.
func (f *flattener) ruleSet(name string) *config.RuleSet {
	if rs, ok := f.done[name]; ok {
		return rs
	}
	s := f.sets[f.index[name]]
	rs := &config.RuleSet{Name: name, Extends: s.GetExtends()}

	// Ancestors depth first in extends order, each once, then the set itself.
	var order []string
	seen := map[string]bool{}
	var visit func(n string)
	visit = func(n string) {
		seen[n] = true
		for _, p := range f.sets[f.index[n]].GetExtends() {
			if !seen[p] {
				visit(p)
			}
		}
		order = append(order, n)
	}
	visit(name)
	rs.Rules = f.flatten(name, "", order, (*configv1.RuleSet).GetRules)
	rs.HeaderRules = f.flatten(name, config.KindHeaderRule, order, (*configv1.RuleSet).GetHeaderRules)
	rs.RequestHeaderRules = f.flatten(name, config.KindRequestHeaderRule, order, (*configv1.RuleSet).GetRequestHeaderRules)

	// Settings not given are inherited from the parents.
	var parents []*config.RuleSet
	for _, p := range s.GetExtends() {
		parents = append(parents, f.ruleSet(p))
	}
	rs.ContentTypes = inherited(s.GetContentTypes(), parents, func(p *config.RuleSet) []string { return p.ContentTypes }, []string{config.DefaultContentType})
	if s.KeepLastModified != nil {
		rs.KeepLastModified = s.GetKeepLastModified()
	} else {
		rs.KeepLastModified = len(parents) > 0
		for _, p := range parents {
			rs.KeepLastModified = rs.KeepLastModified && p.KeepLastModified
		}
	}
	rewrite := len(parents) == 0
	for _, p := range parents {
		rewrite = rewrite || len(p.ResponseHeaders) > 0
	}
	if s.RewriteResponseHeaders != nil {
		rewrite = s.GetRewriteResponseHeaders()
	}
	if rewrite {
		rs.ResponseHeaders = inherited(s.GetResponseHeaders(), parents, func(p *config.RuleSet) []string { return p.ResponseHeaders }, headerrewrite.DefaultResponseHeaders)
	}
	if len(rs.RequestHeaderRules) > 0 {
		rs.RequestHeaders = inherited(s.GetRequestHeaders(), parents, func(p *config.RuleSet) []string { return p.RequestHeaders }, headerrewrite.DefaultRequestHeaders)
	}
	f.done[name] = rs
	return rs
}

// flatten returns the rules of kind (those get returns) of the rule sets in
// order, the ancestors of name and name itself, and records where each is
// written.
func (f *flattener) flatten(name, kind string, order []string, get func(*configv1.RuleSet) []*configv1.Rule) []matcher.Rule {
	var rules []matcher.Rule
	var origins []ruleOrigin
	for _, n := range order {
		for j, r := range get(f.sets[f.index[n]]) {
			rules = append(rules, toMatcherRule(r))
			origins = append(origins, ruleOrigin{set: n, index: j})
		}
	}
	if f.origin == nil {
		f.origin = map[originKey][]ruleOrigin{}
	}
	f.origin[originKey{kind, name}] = origins
	return rules
}

// inherited returns a rule set's list setting: its own items (lower case,
// each once), else the union of its parents', else def.
func inherited(own []string, parents []*config.RuleSet, of func(*config.RuleSet) []string, def []string) []string {
	if len(own) > 0 {
		return lowerUnique(nil, own)
	}
	var out []string
	for _, p := range parents {
		out = lowerUnique(out, of(p))
	}
	if len(out) == 0 {
		out = lowerUnique(nil, def)
	}
	return out
}

// lowerUnique appends the lower-cased items not yet in dst.
func lowerUnique(dst, items []string) []string {
	for _, it := range items {
		it = strings.ToLower(it)
		dup := false
		for _, d := range dst {
			dup = dup || d == it
		}
		if !dup {
			dst = append(dst, it)
		}
	}
	return dst
}

// whereWritten renames the rule in a *matcher.RuleError from config.New
// (its index in the flattened rule set) to where it is written; other
// errors are returned as they are.
func (f *flattener) whereWritten(err error) error {
	var re *matcher.RuleError
	if !errors.As(err, &re) {
		return err
	}
	out := *re
	if o := f.origin[originKey{re.Kind, re.Set}]; re.Index >= 0 && re.Index < len(o) {
		if errors.Is(re.Err, matcher.ErrTooBig) && o[re.Index].set != re.Set {
			// The budget is the whole rule set's: name it, and where the
			// inherited rule that reached it is written.
			out.Err = fmt.Errorf("%w (the rule is written in rule set %q as rule %d)", re.Err, o[re.Index].set, o[re.Index].index)
			return &out
		}
		out.Set, out.Index = o[re.Index].set, o[re.Index].index
	}
	return &out
}
