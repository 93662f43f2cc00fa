package config

import (
	"errors"
	"fmt"
	"strings"

	"github.com/streamsub/streamsub/headerrewrite"
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

	// ResponseHeaders names the response headers whose values are
	// rewritten, each value whole (any case); none when empty.
	ResponseHeaders []string
	// HeaderRules rewrite the ResponseHeaders' values; when empty, Rules
	// do (their compiled form is shared with the body).
	HeaderRules []matcher.Rule
	// RequestHeaders names the request headers whose values
	// RequestHeaderRules rewrite before the request reaches the origin;
	// nothing is rewritten when either is empty.
	RequestHeaders     []string
	RequestHeaderRules []matcher.Rule
	// ResponseRewriter and RequestRewriter are set by New: nil when the
	// rule set rewrites no header in that direction.
	ResponseRewriter, RequestRewriter *headerrewrite.Rewriter
}

// Kinds of header rules, as *matcher.RuleError.Kind names them.
const (
	KindHeaderRule        = "header rule"
	KindRequestHeaderRule = "request header rule"
)

// compileHeaders builds the rule set's header rewriters (compiled is
// Rules's compiled form). A rule whose template would put CR, LF or NUL in
// every value is an error naming it.
func (rs *RuleSet) compileHeaders(compiled *matcher.RuleSet, opts matcher.Options, maxValue int) []error {
	var errs []error
	if len(rs.ResponseHeaders) > 0 {
		rules, kind := rs.HeaderRules, KindHeaderRule
		if len(rules) == 0 {
			rules, kind = rs.Rules, ""
		}
		var err error
		if rs.ResponseRewriter, err = newRewriter(rs.Name, kind, rs.ResponseHeaders, rules, compiled, opts, maxValue); err != nil {
			errs = append(errs, err)
		}
	}
	if len(rs.RequestHeaders) > 0 && len(rs.RequestHeaderRules) > 0 {
		var err error
		if rs.RequestRewriter, err = newRewriter(rs.Name, KindRequestHeaderRule, rs.RequestHeaders, rs.RequestHeaderRules, nil, opts, maxValue); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// newRewriter checks the templates of rules (of kind, in rule set set) and
// returns a rewriter of names with them: compiled when kind is the body
// rules', else compiled here.
func newRewriter(set, kind string, names []string, rules []matcher.Rule, compiled *matcher.RuleSet, opts matcher.Options, maxValue int) (*headerrewrite.Rewriter, error) {
	var errs []error
	for i, r := range rules {
		if err := headerrewrite.CheckTemplate(r.Replace); err != nil {
			if kind == "" {
				err = fmt.Errorf("%w (these rules also rewrite the response headers: give the rule set header rules of its own)", err)
			}
			errs = append(errs, &matcher.RuleError{Set: set, Kind: kind, Index: i, Name: r.Name, Err: err})
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if kind != "" {
		var err error
		if compiled, err = matcher.Compile(rules, opts); err != nil {
			var re *matcher.RuleError
			if errors.As(err, &re) {
				out := *re
				out.Kind = kind
				err = &out
			}
			return nil, ruleSetError(set, err)
		}
	}
	return headerrewrite.New(names, compiled, maxValue), nil
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
