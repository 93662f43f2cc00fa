package nginximport

import (
	"fmt"
	"strings"

	"github.com/streamsub/streamsub/nginxparse"
)

// routeSet is a location whose rule set no host selects.
type routeSet struct {
	loc *level
	set *ruleSet
	// unnamed: the server's own rule set, which none of its names selects
	// (they are taken by earlier servers, or it has none).
	unnamed bool
}

// hostEntry is one key of the hosts map.
type hostEntry struct {
	pattern string
	set     *ruleSet // nil: the server has no rules
	note    string   // a line comment
}

// hostMap builds the hosts map from server_name and default_server, and
// warns about locations whose rule set no host selects.
func (im *importer) hostMap(setOf map[*level]*ruleSet) {
	if len(im.servers) == 0 {
		return
	}
	type origin struct {
		server *level
		pos    nginxparse.Pos
	}
	index := map[string]origin{}
	selected := map[*level]bool{} // servers some host selects
	var dflt, first *level
	for _, s := range im.servers {
		main := s
		if loc := mainLocation(s); loc != nil {
			main = loc
		}
		set := setOf[main]
		for _, d := range s.names {
			for _, name := range d.Args {
				patterns, why := hostPatterns(name)
				if why != "" {
					im.warn(d.Pos, fmt.Sprintf("server name %q: %s; not in the hosts map", name, why))
				}
				for _, p := range patterns {
					if at, dup := index[p]; dup {
						if at.server != s {
							im.warn(d.Pos, fmt.Sprintf("server name %q is also in %s; nginx uses that one, and so does the import", name, at.pos))
						}
						continue
					}
					index[p] = origin{s, d.Pos}
					im.hosts = append(im.hosts, hostEntry{pattern: p, set: set})
					selected[s] = true
				}
			}
		}
		if s.dflt != nil && dflt == nil {
			dflt = s
		} else if s.dflt != nil {
			im.warn(s.dflt.Pos, fmt.Sprintf("a second default server (the first is at %s); streamsub has one \"*\"", dflt.dflt.Pos))
		}
		if first == nil {
			first = s
		}
		for _, loc := range append([]*level{s}, s.locations...) {
			if ls := setOf[loc]; ls != nil && ls != set && (loc != s || mainLocation(s) == nil) {
				im.perRoute = append(im.perRoute, routeSet{loc, ls, false})
			}
		}
	}
	note := "default_server"
	if dflt == nil {
		dflt, note = first, "the first server: nginx's default for other hosts"
	}
	main := dflt
	if loc := mainLocation(dflt); loc != nil {
		main = loc
	}
	hasDefault := false
	if set := setOf[main]; set != nil {
		im.hosts = append(im.hosts, hostEntry{pattern: "*", set: set, note: note + " (" + dflt.pos.String() + ")"})
		hasDefault, selected[dflt] = true, true
	}
	for _, s := range im.servers {
		main := s
		if loc := mainLocation(s); loc != nil {
			main = loc
		}
		if set := setOf[main]; set != nil && !selected[s] {
			im.perRoute = append(im.perRoute, routeSet{main, set, true})
		}
	}
	// Hosts of servers without rules are not rewritten: leave them out,
	// unless "*" or a wildcard would take them, or no host is mapped at
	// all (then every host would get the first rule set).
	needNone, mapped := hasDefault, 0
	for _, h := range im.hosts {
		needNone = needNone || strings.HasPrefix(h.pattern, "*.")
		if h.set != nil {
			mapped++
		}
	}
	var kept []hostEntry
	for _, h := range im.hosts {
		if h.set == nil {
			if !needNone {
				continue
			}
			h.set = im.none()
		}
		kept = append(kept, h)
	}
	if mapped == 0 {
		kept = append(kept, hostEntry{pattern: "*", set: im.none(), note: "no server's own requests are rewritten"})
	}
	im.hosts = kept
}

// none returns the empty rule set for hosts whose server has no rules.
func (im *importer) none() *ruleSet {
	if im.noRewrite == nil {
		im.noRewrite = &ruleSet{origin: nil, types: []string{defaultContentType}}
	}
	return im.noRewrite
}

// hostPatterns turns a server_name entry into hosts map keys, or says why
// it cannot be one. "" and "_" (catch-all conventions) give none.
func hostPatterns(name string) ([]string, string) {
	n := strings.TrimSuffix(strings.ToLower(name), ".")
	switch {
	case n == "" || n == "_":
		return nil, ""
	case strings.HasPrefix(n, "~"):
		return nil, "a regular expression"
	case strings.Contains(n, "$"):
		return nil, "a variable"
	case strings.HasSuffix(n, ".*"):
		return nil, "a wildcard at the end"
	case strings.HasPrefix(n, "."): // example.com and every host below it
		if !validHost(n[1:]) {
			return nil, "not a host name"
		}
		return []string{n[1:], "*" + n}, ""
	case strings.HasPrefix(n, "*."):
		if !validHost(n[2:]) {
			return nil, "not a host name"
		}
		return []string{n}, ""
	case !validHost(n):
		return nil, "not a host name"
	}
	return []string{n}, ""
}

// validHost accepts a DNS name (letters, digits, - and _ in dot-separated
// labels) or an IPv6 literal in brackets.
func validHost(h string) bool {
	if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
		return !strings.ContainsAny(h[1:len(h)-1], "[]")
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for i := 0; i < len(label); i++ {
			if c := label[i]; !isNameByte(c) && c != '-' || 'A' <= c && c <= 'Z' {
				return false
			}
		}
	}
	return true
}
