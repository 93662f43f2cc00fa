package config

import (
	"strings"

	"github.com/streamsub/streamsub/matcher"
)

// DefaultContentType is the media type a rule set rewrites when neither it
// nor the rule sets it extends list any (semantics.md).
const DefaultContentType = "text/html"

// AnyContentType in ContentTypes accepts every response, with or without
// a content-type.
const AnyContentType = "*"

// RuleSet is one rule set of a Config.
type RuleSet struct {
	Name string
	// Rules is the flattened list compiled into Compiled: for a rule set
	// read from a file, the rules of the extended rule sets first (each
	// ancestor once, depth first, in extends order), then the set's own.
	Rules []matcher.Rule
	// Compiled is set by New and shared by every stream that uses this
	// rule set.
	Compiled *matcher.RuleSet
	// ContentTypes are media types without parameters, or AnyContentType;
	// matched without regard to case. Never empty in a Config.
	ContentTypes []string
	// KeepLastModified keeps a rewritten response's last-modified header.
	KeepLastModified bool
	// Extends lists the rule sets this one extends, as written; it is only
	// descriptive (Rules holds the inherited rules).
	Extends []string
	// Tests counts the self-tests the file gives this rule set, all of
	// which passed when it was loaded (config/load); descriptive.
	Tests int
}

// AcceptsContentType reports whether the rule set rewrites a response with
// this content-type header value; parameters (";charset=...") are ignored,
// and so is case.
func (rs *RuleSet) AcceptsContentType(contentType string) bool {
	mt, _, _ := strings.Cut(contentType, ";")
	mt = strings.TrimSpace(mt)
	for _, ct := range rs.ContentTypes {
		if ct == AnyContentType || strings.EqualFold(ct, mt) {
			return true
		}
	}
	return false
}
