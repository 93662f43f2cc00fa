package config

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/streamsub/streamsub/matcher"
	configv1 "github.com/streamsub/streamsub/proto/streamsub/config/v1"
)

// DefaultContentType is the media type a rule set rewrites when neither it
// nor the rule sets it extends list any (semantics.md).
const DefaultContentType = "text/html"

// AnyContentType in content_types accepts every response, with or without
// a content-type.
const AnyContentType = "*"

// Config is a loaded, validated and compiled configuration file.
// It is immutable and safe for concurrent use.
type Config struct {
	// Source is the file name given to Load or Parse.
	Source string
	// RuleSets in declaration order; the first is the default. Never empty.
	RuleSets []*RuleSet
	// MaxBufferedBytes is the hold-back cap each rule set was compiled
	// with: the file's max_buffered_bytes, or matcher.DefaultMaxBufferedBytes
	// when it gives none.
	MaxBufferedBytes int
	// DFACacheBytes is the lazy DFA cache budget each rule set was compiled
	// with: the file's dfa_cache_bytes, or matcher.DefaultDFACacheBytes.
	DFACacheBytes int
	// RequestHeaders and ResponseHeaders are the internal headers to strip;
	// nil when the file lists none.
	RequestHeaders, ResponseHeaders *matcher.HeaderSet
	// Hosts is the file's host map with patterns normalised (lower case, no
	// trailing dot); nil when the file has none. Read-only.
	Hosts map[string]string

	byName    map[string]*RuleSet
	exact     map[string]*RuleSet // host → rule set
	wildcards map[string]*RuleSet // ".suffix" (from "*.suffix") → rule set
	fallback  *RuleSet            // "*", or the first rule set when there are no hosts
}

// RuleSet is one compiled rule set.
type RuleSet struct {
	Name string
	// Rules is the flattened list that was compiled: the rules of the
	// extended rule sets first (each ancestor once, depth first, in extends
	// order), then the set's own.
	Rules []matcher.Rule
	// Compiled is shared by every stream that uses this rule set.
	Compiled *matcher.RuleSet
	// ContentTypes are lower-case media types without parameters, or "*".
	ContentTypes []string
	// KeepLastModified keeps a rewritten response's last-modified header.
	KeepLastModified bool
	// Extends lists the rule sets this one extends, as written.
	Extends []string
}

// Load reads and parses the configuration file at path. A file that cannot
// be read gives the *os.PathError; a rejected file gives *Error values
// (see Parse).
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(data, path)
}

// Parse parses a configuration file's content; source names it in errors.
// It checks the YAML (or JSON) against the schema, validates everything,
// and compiles each rule set once. Every problem found is an *Error; when
// there are several they are joined with errors.Join.
func Parse(data []byte, source string) (*Config, error) {
	js, err := yamlToJSON(data, (&configv1.Config{}).ProtoReflect().Descriptor(), source)
	if err != nil {
		return nil, err
	}
	var pb configv1.Config
	if err := (protojson.UnmarshalOptions{DiscardUnknown: false}).Unmarshal(js, &pb); err != nil {
		return nil, &Error{Source: source, Err: err}
	}
	return build(&pb, source)
}

// FromProto validates and compiles a configuration that is already a
// message (for example from an admin API); source names it in errors.
func FromProto(pb *configv1.Config, source string) (*Config, error) {
	return build(pb, source)
}

// RuleSet returns the rule set called name, or nil.
func (c *Config) RuleSet(name string) *RuleSet {
	return c.byName[name]
}

// RuleSetForHost returns the rule set for a request's :authority (or Host):
// the port is ignored and case does not matter. An exact host wins over the
// longest matching "*.suffix" wildcard, which wins over "*"; nil when
// nothing matches. When the file has no hosts, every host gets the first
// rule set.
func (c *Config) RuleSetForHost(authority string) *RuleSet {
	host := strings.TrimSuffix(stripPort(authority), ".")
	// Lower-case into a stack buffer: map lookups keyed by string(bytes)
	// do not allocate, so neither does a request with "Example.COM".
	var buf [maxHostLen]byte
	var h []byte
	if len(host) <= len(buf) {
		h = buf[:len(host)]
		for i := 0; i < len(host); i++ {
			c := host[i]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			h[i] = c
		}
	} else {
		h = []byte(strings.ToLower(host))
	}
	if rs, ok := c.exact[string(h)]; ok {
		return rs
	}
	// Suffixes from the longest (".b.example.com" for "a.b.example.com") down.
	for i := 1; i < len(h); i++ {
		if h[i] == '.' {
			if rs, ok := c.wildcards[string(h[i:])]; ok {
				return rs
			}
		}
	}
	return c.fallback
}

// maxHostLen is the longest DNS name (253) with room for an IPv6 literal.
const maxHostLen = 256

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

// stripPort removes a ":port" from an authority ("[::1]:8080" → "[::1]").
// A bare IPv6 address (more than one colon, no brackets) is left alone.
func stripPort(authority string) string {
	if strings.HasPrefix(authority, "[") {
		if end := strings.IndexByte(authority, ']'); end >= 0 {
			return authority[:end+1]
		}
		return authority
	}
	if i := strings.IndexByte(authority, ':'); i >= 0 && strings.LastIndexByte(authority, ':') == i {
		return authority[:i]
	}
	return authority
}

// normalizeHost lower-cases a host and drops a trailing dot ("Example.COM."
// → "example.com").
func normalizeHost(host string) string {
	host = strings.TrimSuffix(host, ".")
	return strings.ToLower(host)
}

// errorf builds a plain error for an errorList.
func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

var errNoRuleSets = errors.New("no rule sets: want at least one under rule_sets")
