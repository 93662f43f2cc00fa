package matcher

import "strings"

// HeaderSet recognises internal header names: exact names and name
// prefixes, compared ASCII case-insensitively. It is immutable and safe for
// concurrent use.
//
// TEMPORARY map-based implementation; the trie (design.md §4) replaces it.
type HeaderSet struct {
	exact    map[string]struct{}
	prefixes []string
}

// NewHeaderSet builds a HeaderSet from exact names and prefixes.
func NewHeaderSet(names, prefixes []string) *HeaderSet {
	hs := &HeaderSet{exact: make(map[string]struct{}, len(names))}
	for _, n := range names {
		hs.exact[strings.ToLower(n)] = struct{}{}
	}
	for _, p := range prefixes {
		hs.prefixes = append(hs.prefixes, strings.ToLower(p))
	}
	return hs
}

// Contains reports whether name is in the set: equal to one of its names
// or starting with one of its prefixes, ignoring ASCII case.
func (hs *HeaderSet) Contains(name string) bool {
	if hs == nil {
		return false
	}
	l := strings.ToLower(name)
	if _, ok := hs.exact[l]; ok {
		return true
	}
	for _, p := range hs.prefixes {
		if strings.HasPrefix(l, p) {
			return true
		}
	}
	return false
}
