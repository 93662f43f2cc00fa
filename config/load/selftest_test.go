package load

import (
	"path/filepath"
	"testing"
)

// TestSelfTestsAndShadows: good.yaml's tests pass (a parent's test is not
// run against the rule sets that extend it) and its shadows reach the
// config.
func TestSelfTestsAndShadows(t *testing.T) {
	cfg, err := File(filepath.Join(testdata, "good.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]int{"standard": 4, "shop-fr": 1, "legacy": 0} {
		if got := cfg.RuleSet(name).Tests; got != want {
			t.Errorf("rule set %s: %d tests, want %d", name, got, want)
		}
	}
	for live, want := range map[string]string{"standard": "shop-fr", "shop-fr": "", "legacy": ""} {
		got := cfg.Shadow(cfg.RuleSet(live))
		if got == nil && want != "" || got != nil && got.Name != want {
			t.Errorf("Shadow(%s) = %v, want %q", live, got, want)
		}
	}
	if cfg.ShadowSample != 0.25 {
		t.Errorf("ShadowSample = %v, want 0.25", cfg.ShadowSample)
	}
}

func TestShadowSample(t *testing.T) {
	const sets = `
rule_sets:
  - {name: a, rules: [{literal: x, replace: y}]}
  - {name: b, rules: [{literal: x, replace: z}]}
shadows: {a: b}
`
	tests := []struct {
		setting string
		shadows bool
		sample  float64
	}{
		{"", true, 1},
		{"shadow_sample: 1", true, 1},
		{"shadow_sample: 0.1", true, 0.1},
		{"shadow_sample: 0", false, 1}, // the shadows are checked, but none runs
	}
	for _, tc := range tests {
		cfg := mustParse(t, sets+tc.setting)
		if got := cfg.Shadow(cfg.RuleSet("a")) != nil; got != tc.shadows || cfg.ShadowSample != tc.sample {
			t.Errorf("%q: shadow %v, sample %v; want %v, %v", tc.setting, got, cfg.ShadowSample, tc.shadows, tc.sample)
		}
	}
}
