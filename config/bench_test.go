package config

import (
	"os"
	"path/filepath"
	"testing"
)

// The per-request lookups: both must stay allocation-free.
func BenchmarkRuleSetForHost(b *testing.B) {
	cfg, err := Load(filepath.Join(testdata, "good.yaml"))
	if err != nil {
		b.Fatal(err)
	}
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
	cfg, err := Load(filepath.Join(testdata, "good.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	rs := cfg.RuleSet("standard")
	b.ReportAllocs()
	for b.Loop() {
		if !rs.AcceptsContentType("application/json; charset=UTF-8") {
			b.Fatal("rejected")
		}
	}
}

// BenchmarkParse is the cost of one (re)load of the example-sized file.
func BenchmarkParse(b *testing.B) {
	data, err := os.ReadFile(filepath.Join(testdata, "good.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(data, "good.yaml"); err != nil {
			b.Fatal(err)
		}
	}
}
