package config

import "strings"

// RuleSetForHost returns the rule set for a request's :authority (or Host):
// the port is ignored and case does not matter. An exact host wins over the
// longest matching "*.suffix" wildcard, which wins over "*"; nil when
// nothing matches. When the config has no hosts, every host gets the first
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
// → "example.com"): the form of Hosts keys.
func normalizeHost(host string) string {
	host = strings.TrimSuffix(host, ".")
	return strings.ToLower(host)
}

// buildHostIndex fills the lookup tables of RuleSetForHost from Hosts,
// whose names New has checked.
func (c *Config) buildHostIndex() {
	if len(c.Hosts) == 0 {
		c.fallback = c.RuleSets[0]
		return
	}
	c.exact = map[string]*RuleSet{}
	c.wildcards = map[string]*RuleSet{}
	for pattern, name := range c.Hosts {
		rs := c.byName[name]
		switch {
		case pattern == "*":
			c.fallback = rs
		case strings.HasPrefix(pattern, "*."):
			c.wildcards[pattern[1:]] = rs
		default:
			c.exact[pattern] = rs
		}
	}
}
