package nginximport

import (
	"bytes"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/streamsub/streamsub/internal/compat"
	"github.com/streamsub/streamsub/nginxparse"
)

const compatFile = "../matcher/testdata/compat/replace-filter-cases.json"

// compatConf writes a corpus case as the nginx configuration it was run
// with: one server, one location with the case's replace_filter
// directives and settings.
func compatConf(c *compat.Case) string {
	var b strings.Builder
	b.WriteString("http {\n    server {\n        listen 127.0.0.1:8080;\n        location / {\n")
	line := func(d *nginxparse.Directive) { b.WriteString("            " + d.String() + ";\n") }
	if c.Types != nil {
		line(&nginxparse.Directive{Name: "replace_filter_types", Args: c.Types})
	}
	if c.MaxBufferedSize != nil {
		line(&nginxparse.Directive{Name: "replace_filter_max_buffered_size", Args: []string{fmt.Sprint(*c.MaxBufferedSize)}})
	}
	if c.Skip != nil {
		line(&nginxparse.Directive{Name: "replace_filter_skip", Args: []string{*c.Skip}})
	}
	if c.LastModified != "" {
		line(&nginxparse.Directive{Name: "replace_filter_last_modified", Args: []string{c.LastModified}})
	}
	for _, r := range c.Rules {
		d := &nginxparse.Directive{Name: "replace_filter", Args: []string{r.Regex, r.Replacement}}
		if r.Flags != "" {
			d.Args = append(d.Args, r.Flags)
		}
		line(d)
	}
	b.WriteString("        }\n    }\n}\n")
	return b.String()
}

// backquoted matches the quoted bits of a problem, to tally problems by kind.
var backquoted = regexp.MustCompile("`[^`]*`|\\$\\w+")

// TestCompatCorpus imports every case of the replace_filter compatibility
// corpus written as an nginx configuration, loads the result, and rewrites
// the case's body, in the chunks nginx received, with the rule set the
// import made the default: the output must be what replace_filter gave.
// Skipped, and counted by reason: the deliberate differences listed in
// internal/compat (those of sregex-only syntax must be reported as
// untranslatable), rules the import reports as untranslatable, rule sets
// nginx itself rejects, bodies nginx leaves alone for a reason outside the
// rule set (content-encoding), cases with no rule to import.
func TestCompatCorpus(t *testing.T) {
	cases, err := compat.Load(compatFile)
	if err != nil {
		t.Fatal(err)
	}
	skipped := map[string]int{}
	reproduced, sawUntranslatable := 0, false
	for _, c := range cases {
		why := compatSkip(c)
		if why != "" && compat.Differences[c.Source].Reason != compat.DiffSregexSyntax {
			skipped[why]++
			continue
		}
		conf := compatConf(c)
		res, err := Import(fstest.MapFS{"nginx.conf": {Data: []byte(conf)}}, "nginx.conf")
		if why != "" { // sregex-only syntax: must be reported, never translated silently
			if err != nil || len(res.Problems) == 0 {
				t.Errorf("%s: sregex-only syntax imported without a problem reported (error %v)\n%s", c.Where(), err, conf)
			}
			skipped[why+" (reported untranslatable)"]++
			continue
		}
		if err != nil {
			if strings.Contains(err.Error(), "nothing to import") && *c.Expected == c.Input {
				skipped["no rule applies (nothing to import; nginx left the body alone)"]++
				continue
			}
			t.Errorf("%s: %v\n%s", c.Where(), err, conf)
			continue
		}
		if len(res.Problems) > 0 {
			skipped["untranslatable: "+backquoted.ReplaceAllString(res.Problems[0].Msg, "…")]++
			sawUntranslatable = true
			continue
		}
		cfg := loadConfig(t, res.YAML, c.Source)
		rs := cfg.RuleSets[0]
		if !strings.HasSuffix(rs.Name, " location /") {
			t.Errorf("%s: the default rule set is %q, want the location's", c.Where(), rs.Name)
		}
		if c.LastModified != "" && rs.KeepLastModified != (c.LastModified == "keep") {
			t.Errorf("%s: replace_filter_last_modified %s, keep_last_modified %v", c.Where(), c.LastModified, rs.KeepLastModified)
		}
		got := []byte(c.Input)
		if c.ContentType == "" || rs.AcceptsContentType(c.ContentType) {
			chunks := c.Chunks
			if chunks == nil {
				chunks = []string{c.Input}
			}
			st := rs.Compiled.NewStream()
			var out []byte
			for _, ch := range chunks {
				out = st.Write(out, []byte(ch))
			}
			got = st.Close(out)
		}
		if !bytes.Equal(got, []byte(*c.Expected)) {
			t.Errorf("%s: got %q, want %q\n%s%s", c.Where(), got, *c.Expected, conf, res.YAML)
			continue
		}
		reproduced++
	}
	total := 0
	var reasons []string
	for why, n := range skipped {
		total += n
		reasons = append(reasons, fmt.Sprintf("%4d %s", n, why))
	}
	sort.Strings(reasons)
	t.Logf("compat corpus through import-nginx: %d cases, %d reproduced, %d skipped:\n%s",
		len(cases), reproduced, total, strings.Join(reasons, "\n"))
	if reproduced == 0 || !sawUntranslatable {
		t.Errorf("reproduced %d, untranslatable seen %v: the corpus did not exercise the import", reproduced, sawUntranslatable)
	}
}

// compatSkip returns why a case is not run, or "".
func compatSkip(c *compat.Case) string {
	switch d, listed := compat.Differences[c.Source]; {
	case c.ExpectConfigError:
		return "replace_filter rejects the rule set"
	case listed:
		return "deliberate difference: " + d.Reason
	case c.Encoded():
		return "content-encoding (decided before any rule set)"
	}
	return ""
}
