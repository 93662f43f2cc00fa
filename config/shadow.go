package config

import (
	"fmt"
	"maps"
	"slices"
)

// Shadow returns the shadow rule set of rs: the rule set that runs beside
// it on the same body without changing what the client receives, or nil.
func (c *Config) Shadow(rs *RuleSet) *RuleSet {
	if rs == nil || len(c.Shadows) == 0 {
		return nil
	}
	return c.byName[c.Shadows[rs.Name]]
}

// checkShadows checks Shadows and ShadowSample (New has filled byName),
// copies Shadows and turns a ShadowSample of 0 into 1.
func (c *Config) checkShadows() []error {
	var errs []error
	c.Shadows = maps.Clone(c.Shadows)
	for _, live := range slices.Sorted(maps.Keys(c.Shadows)) {
		shadow := c.Shadows[live]
		switch {
		case c.byName[live] == nil:
			errs = append(errs, fmt.Errorf("shadows[%q]: unknown rule set %q", live, live))
		case c.byName[shadow] == nil:
			errs = append(errs, fmt.Errorf("shadows[%q]: unknown rule set %q", live, shadow))
		case shadow == live:
			errs = append(errs, fmt.Errorf("shadows[%q]: a rule set cannot shadow itself", live))
		}
	}
	switch {
	case c.ShadowSample == 0:
		c.ShadowSample = 1
	case !(c.ShadowSample > 0 && c.ShadowSample <= 1): // also NaN
		errs = append(errs, fmt.Errorf("shadow sample %v: want a fraction in (0, 1]", c.ShadowSample))
	}
	return errs
}
