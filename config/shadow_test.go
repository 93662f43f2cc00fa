package config

import (
	"math"
	"slices"
	"strings"
	"testing"
)

func TestShadow(t *testing.T) {
	cfg := mustNew(t, Config{
		RuleSets: []*RuleSet{set("live", "x"), set("next", "y"), set("other", "z")},
		Shadows:  map[string]string{"live": "next"},
	})
	tests := []struct{ live, want string }{
		{"live", "next"},
		{"next", ""}, // a shadow has no shadow of its own here
		{"other", ""},
	}
	for _, tc := range tests {
		got := cfg.Shadow(cfg.RuleSet(tc.live))
		if name := nameOf(got); name != tc.want {
			t.Errorf("Shadow(%s) = %q, want %q", tc.live, name, tc.want)
		}
	}
	if cfg.Shadow(nil) != nil {
		t.Error("Shadow(nil) != nil")
	}
	if cfg.ShadowSample != 1 {
		t.Errorf("ShadowSample = %v, want 1 for 0", cfg.ShadowSample)
	}
	if half := mustNew(t, Config{RuleSets: []*RuleSet{set("a")}, ShadowSample: 0.5}); half.ShadowSample != 0.5 {
		t.Errorf("ShadowSample = %v, want 0.5", half.ShadowSample)
	}
}

func nameOf(rs *RuleSet) string {
	if rs == nil {
		return ""
	}
	return rs.Name
}

func TestShadowRejects(t *testing.T) {
	sets := []*RuleSet{set("a"), set("b")}
	tests := []struct {
		name string
		c    Config
		want []string
	}{
		{"names", Config{RuleSets: sets, Shadows: map[string]string{"a": "a", "b": "c", "x": "a"}}, []string{
			`shadows["a"]: a rule set cannot shadow itself`,
			`shadows["b"]: unknown rule set "c"`,
			`shadows["x"]: unknown rule set "x"`,
		}},
		{"sample above 1", Config{RuleSets: sets, ShadowSample: 1.5}, []string{"shadow sample 1.5: want a fraction in (0, 1]"}},
		{"negative sample", Config{RuleSets: sets, ShadowSample: -0.1}, []string{"shadow sample -0.1: want a fraction in (0, 1]"}},
		{"NaN sample", Config{RuleSets: sets, ShadowSample: math.NaN()}, []string{"shadow sample NaN: want a fraction in (0, 1]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.c)
			if err == nil {
				t.Fatal("New accepted it")
			}
			if got := strings.Split(err.Error(), "\n"); !slices.Equal(got, tt.want) {
				t.Errorf("got:\n%s\nwant:\n%s", err, strings.Join(tt.want, "\n"))
			}
		})
	}
}
