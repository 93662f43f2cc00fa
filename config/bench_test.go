package config

import "testing"

// benchConfig is the host map of load's good.yaml: exact hosts, nested
// wildcards and "*".
func benchConfig(b *testing.B) *Config {
	return mustNew(b, Config{
		RuleSets: []*RuleSet{set("standard", "x"), set("shop-fr", "y"), set("legacy", "z")},
		Hosts: map[string]string{
			"fr.shop.example":   "shop-fr",
			"*.shop.example":    "standard",
			"*.eu.shop.example": "shop-fr",
			"legacy.example":    "legacy",
			"*":                 "standard",
		},
	})
}

// The per-request lookups: both must stay allocation-free.
func BenchmarkRuleSetForHost(b *testing.B) {
	cfg := benchConfig(b)
	for _, bc := range []struct{ name, authority string }{
		{"exact", "fr.shop.example"},
		{"exact-port-upper", "FR.Shop.Example:8443"},
		{"wildcard-deep", "a.b.c.eu.shop.example"},
		{"fallback", "www.unknown-host.example.org:443"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if cfg.RuleSetForHost(bc.authority) == nil {
					b.Fatal("nil rule set")
				}
			}
		})
	}
}

func BenchmarkAcceptsContentType(b *testing.B) {
	rs := &RuleSet{ContentTypes: []string{"text/html", "text/css", "application/javascript", "application/json"}}
	b.ReportAllocs()
	for b.Loop() {
		if !rs.AcceptsContentType("application/json; charset=UTF-8") {
			b.Fatal("rejected")
		}
	}
}
