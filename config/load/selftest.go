package load

import (
	"fmt"
	"mime"
	"strconv"

	"github.com/streamsub/streamsub/config"
	"github.com/streamsub/streamsub/config/ruletest"
	configv1 "github.com/streamsub/streamsub/proto/streamsub/config/v1"
)

// testPath is the field path of test j of sets[i], as the YAML walker
// records positions.
func testPath(i, j int) string {
	return "rule_sets[" + strconv.Itoa(i) + "].tests[" + strconv.Itoa(j) + "]"
}

// checkTests validates the tests of rule set s, sets[i]: each has a name,
// unique in the set, exactly one of output and unchanged, and a
// content_type that parses.
func checkTests(errs *errorList, s *configv1.RuleSet, i int, pos positions) {
	names := map[string]int{}
	for j, tc := range s.GetTests() {
		at := pos[testPath(i, j)]
		who := fmt.Sprintf("%s: test %q", ruleSetWho(s, i), tc.GetName())
		switch first, dup := names[tc.GetName()]; {
		case tc.GetName() == "":
			who = fmt.Sprintf("%s: tests[%d]", ruleSetWho(s, i), j)
			errs.addAt(at, errorf("%s: empty name", who))
		case dup:
			errs.addAt(at, errorf("%s: duplicate test name (also tests[%d])", who, first))
		default:
			names[tc.GetName()] = j
		}
		switch {
		case tc.Output != nil && tc.GetUnchanged():
			errs.addAt(at, errorf("%s: both output and unchanged: true are set; want exactly one", who))
		case tc.Output == nil && !tc.GetUnchanged():
			errs.addAt(at, errorf("%s: neither output nor unchanged: true is set; want exactly one", who))
		}
		if ct := tc.GetContentType(); ct != "" {
			if _, _, err := mime.ParseMediaType(ct); err != nil {
				errs.addAt(at, errorf("%s: content_type %q: %w", who, ct, err))
			}
		}
	}
}

// runTests runs the tests of every rule set of the compiled cfg (sets as
// validated by checkTests) and reports each failure at its test.
func runTests(errs *errorList, cfg *config.Config, sets []*configv1.RuleSet, pos positions) {
	for i, s := range sets {
		rs := cfg.RuleSet(s.GetName())
		for j, tc := range s.GetTests() {
			c := ruletest.Case{
				Name:        tc.GetName(),
				Input:       []byte(tc.GetInput()),
				Want:        []byte(tc.GetOutput()),
				ContentType: tc.GetContentType(),
				// No content type given: one the rule set rewrites.
				Rewrite: tc.GetContentType() == "" || rs.AcceptsContentType(tc.GetContentType()),
			}
			if tc.GetUnchanged() {
				c.Want = c.Input
			}
			if f := ruletest.Run(rs.Compiled, c); f != nil {
				errs.addAt(pos[testPath(i, j)], fmt.Errorf("rule set %q: %w", rs.Name, f))
			}
		}
	}
}

// checkShadows validates the shadows map and shadow_sample, and returns
// what config.New takes: no shadows at all when the sample is 0.
func checkShadows(errs *errorList, pb *configv1.Config, index map[string]int) (map[string]string, float64) {
	shadows := pb.GetShadows()
	for _, live := range sortedKeys(shadows) {
		shadow := shadows[live]
		if _, ok := index[live]; !ok {
			errs.add(errorf("shadows[%q]: unknown rule set %q", live, live))
		}
		if _, ok := index[shadow]; !ok {
			errs.add(errorf("shadows[%q]: unknown rule set %q", live, shadow))
		}
		if shadow == live {
			errs.add(errorf("shadows[%q]: a rule set cannot shadow itself", live))
		}
	}
	sample := 1.0
	if pb.ShadowSample != nil {
		sample = pb.GetShadowSample()
		if !(sample >= 0 && sample <= 1) {
			errs.add(errorf("shadow_sample: want a fraction from 0 to 1, got %v", sample))
		}
	}
	if sample == 0 {
		return nil, 0
	}
	return shadows, sample
}
