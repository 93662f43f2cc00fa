package matcher

// The replace_filter compatibility corpus (testdata/compat/README.md): every
// case the body engine can check runs whole, in its recorded chunks and one
// byte at a time, and must give the output nginx's replace_filter gave —
// except the cases listed one by one in compat.Differences, each for a
// deliberate difference of semantics.md.

import (
	"bytes"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/streamsub/streamsub/internal/compat"
)

const compatFile = "testdata/compat/replace-filter-cases.json"

// compatDefaultCap is replace_filter_max_buffered_size when a case does not
// set it (replace_filter's default).
const compatDefaultCap = 8192

// loadCompat reads the corpus.
func loadCompat(t testing.TB) []*compat.Case {
	t.Helper()
	cases, err := compat.Load(compatFile)
	if err != nil {
		t.Fatal(err)
	}
	return cases
}

// compatRules maps a case's rules: regex → Pattern, replacement → Replace
// (nginx variables substituted by their recorded values), no g → Once,
// i → IgnoreCase.
func compatRules(c *compat.Case) []Rule {
	var rules []Rule
	for _, r := range c.Rules {
		rules = append(rules, Rule{
			Pattern:    r.Regex,
			Replace:    substituteVars(r.Replacement, c.Vars),
			Once:       !strings.Contains(r.Flags, "g"),
			IgnoreCase: strings.Contains(r.Flags, "i"),
		})
	}
	return rules
}

var nginxVar = regexp.MustCompile(`\$\$|\$[A-Za-z_][A-Za-z0-9_]*`)

// substituteVars replaces the nginx variables of vars in a replace_filter
// template by their values (as constants of our template syntax); $$ stays.
func substituteVars(tmpl string, vars map[string]string) string {
	if len(vars) == 0 {
		return tmpl
	}
	return nginxVar.ReplaceAllStringFunc(tmpl, func(v string) string {
		if val, ok := vars[v[1:]]; ok {
			return strings.ReplaceAll(val, "$", "$$")
		}
		return v
	})
}

// usesVars reports whether a case's templates refer to nginx variables.
func usesVars(c *compat.Case) bool {
	for _, r := range c.Rules {
		for _, v := range nginxVar.FindAllString(r.Replacement, -1) {
			if _, ok := c.Vars[v[1:]]; ok {
				return true
			}
		}
	}
	return false
}

// compatRun rewrites body, fed in chunks, with one compiled rule set.
type compatRun func(chunks [][]byte) (out []byte, overflowed bool)

// compatCompiler compiles a case's rules with the given hold-back cap.
type compatCompiler func(rules []Rule, opts Options) (compatRun, error)

func engineCompiler(rules []Rule, opts Options) (compatRun, error) {
	rs, err := Compile(rules, opts)
	if err != nil {
		return nil, err
	}
	return func(chunks [][]byte) ([]byte, bool) {
		out, stats := rewrite(rs.NewStream(), chunks)
		return out, stats.Overflowed
	}, nil
}

func referenceCompiler(rules []Rule, _ Options) (compatRun, error) {
	rw, err := newRefRewriter(rules)
	if err != nil {
		return nil, err
	}
	return func(chunks [][]byte) ([]byte, bool) {
		return rw.rewrite(bytes.Join(chunks, nil)), false
	}, nil
}

// compatChunkings returns the three ways a case's body is fed: whole, in
// its recorded chunks, one byte at a time.
func compatChunkings(c *compat.Case) (whole, recorded, bytewise [][]byte) {
	body := []byte(c.Input)
	whole = [][]byte{body}
	recorded = whole
	if c.Chunks != nil {
		recorded = [][]byte{}
		for _, ch := range c.Chunks {
			recorded = append(recorded, []byte(ch))
		}
		if !bytes.Equal(bytes.Join(recorded, nil), body) {
			panic(fmt.Sprintf("%s: chunks do not add up to the input", c.Where()))
		}
	}
	for i := range body {
		bytewise = append(bytewise, body[i:i+1])
	}
	return whole, recorded, bytewise
}

// checkCompat runs one eligible case and returns what went wrong, if
// anything: problems without a cap, and capProblems, the checks at
// replace_filter's cap. withCap says whether the compiler enforces
// Options.MaxBufferedBytes.
func checkCompat(c *compat.Case, compile compatCompiler, withCap bool) (problems, capProblems []string) {
	rules := compatRules(c)
	run, err := compile(rules, Options{})
	if c.ExpectConfigError {
		if err == nil {
			return []string{"rule set accepted, replace_filter rejects it"}, nil
		}
		return nil, nil
	}
	if err != nil {
		return []string{fmt.Sprintf("Compile: %v", err)}, nil
	}
	want := []byte(*c.Expected)
	whole, recorded, bytewise := compatChunkings(c)
	overflowCase := c.ErrorLog != ""
	if overflowCase {
		// replace_filter gave up on this body: expected is what it did in
		// the recorded chunks at its cap. Without a cap the whole body is
		// rewritten, the same for every chunking.
		if !withCap {
			return nil, nil
		}
		ref, err := refRewrite(rules, []byte(c.Input))
		if err != nil {
			return []string{fmt.Sprintf("reference: %v", err)}, nil
		}
		for _, ch := range []struct {
			name   string
			chunks [][]byte
		}{{"whole", whole}, {"bytewise", bytewise}} {
			if got, of := run(ch.chunks); !bytes.Equal(got, ref) || of {
				problems = append(problems, fmt.Sprintf("%s, default cap: got %q (overflowed %v), reference %q", ch.name, got, of, ref))
			}
		}
	} else {
		for _, ch := range []struct {
			name   string
			chunks [][]byte
		}{{"whole", whole}, {"recorded chunks", recorded}, {"bytewise", bytewise}} {
			got, of := run(ch.chunks)
			if !bytes.Equal(got, want) || of {
				problems = append(problems, fmt.Sprintf("%s: got %q (overflowed %v), want %q", ch.name, got, of, want))
			}
		}
	}
	if !withCap {
		return problems, nil
	}
	// At replace_filter's cap, in the recorded chunks, we must overflow
	// exactly when it did and give the same output.
	capacity := compatDefaultCap
	if c.MaxBufferedSize != nil {
		capacity = *c.MaxBufferedSize
	}
	if capacity == 0 {
		// replace_filter_max_buffered_size 0 allows no held-back byte at
		// all; Options cannot express it (0 means the default). Without an
		// overflow the cap played no part and the checks above suffice.
		if overflowCase {
			capProblems = append(capProblems, "replace_filter_max_buffered_size 0 is not expressible as Options.MaxBufferedBytes")
		}
		return problems, capProblems
	}
	runCap, err := compile(rules, Options{MaxBufferedBytes: capacity})
	if err != nil {
		return append(problems, fmt.Sprintf("Compile with cap %d: %v", capacity, err)), nil
	}
	if got, of := runCap(recorded); !bytes.Equal(got, want) || of != overflowCase {
		capProblems = append(capProblems, fmt.Sprintf("recorded chunks at cap %d: got %q (overflowed %v), want %q (overflowed %v)", capacity, got, of, want, overflowCase))
	}
	return problems, capProblems
}

// disagreesWithReference tells how the compiler's output differs from the
// reference rewriter's on a case's whole body (both must accept or both
// reject the rules), or "".
func disagreesWithReference(c *compat.Case, compile compatCompiler) string {
	rules := compatRules(c)
	run, err := compile(rules, Options{})
	ref, refErr := refRewrite(rules, []byte(c.Input))
	switch {
	case (err == nil) != (refErr == nil):
		return fmt.Sprintf("Compile error %v, reference error %v", err, refErr)
	case err != nil:
		return ""
	}
	if got, _ := run([][]byte{[]byte(c.Input)}); !bytes.Equal(got, ref) {
		return fmt.Sprintf("got %q, reference %q", got, ref)
	}
	return ""
}

// compatTally counts the outcome of a corpus run for the summary line.
type compatTally struct {
	total, eligible, passed int
	listed                  map[string]int
	ineligible              map[string]int
	substituted             int
}

func (ty *compatTally) String() string {
	return fmt.Sprintf("total %d, eligible %d, passed %d, listed differences %s, ineligible %s (nginx variables substituted in %d)",
		ty.total, ty.eligible, ty.passed, countsString(ty.listed), countsString(ty.ineligible), ty.substituted)
}

func countsString(m map[string]int) string {
	var keys []string
	n := 0
	for k, v := range m {
		keys = append(keys, fmt.Sprintf("%q: %d", k, v))
		n += v
	}
	sort.Strings(keys)
	return fmt.Sprintf("%d {%s}", n, strings.Join(keys, ", "))
}

// runCompat runs the corpus through one compiler. A case fails if it fails
// unlisted, or passes although listed (so the list cannot rot). skip says
// which listed reasons do not apply to this compiler.
func runCompat(t *testing.T, compile compatCompiler, withCap bool, skip map[string]bool) {
	cases := loadCompat(t)
	ty := compatTally{total: len(cases), listed: map[string]int{}, ineligible: map[string]int{}}
	seen := map[string]bool{}
	for _, c := range cases {
		if seen[c.Source] {
			t.Fatalf("%s: duplicate source; key the difference list by source and index", c.Where())
		}
		seen[c.Source] = true
		if why := c.Ineligible(); why != "" {
			ty.ineligible[why]++
			continue
		}
		if c.ErrorLog != "" && !withCap {
			ty.ineligible["needs the hold-back cap"]++
			continue
		}
		ty.eligible++
		if usesVars(c) {
			ty.substituted++
		}
		diff, listed := compat.Differences[c.Source]
		if listed && skip[diff.Reason] {
			listed = false
		}
		problems, capProblems := checkCompat(c, compile, withCap)
		if !listed || diff.Reason == compat.DiffCap {
			// A cap difference excuses only the checks at the cap.
			if len(problems) > 0 {
				t.Errorf("%s: %s\n\trules %+v input %q chunks %q%s", c.Where(), strings.Join(problems, "\n\t"),
					c.Rules, c.Input, c.Chunks, compatReferenceNote(c))
			}
		}
		switch {
		case !listed && len(capProblems) > 0:
			t.Errorf("%s: %s\n\trules %+v input %q chunks %q", c.Where(), strings.Join(capProblems, "\n\t"),
				c.Rules, c.Input, c.Chunks)
		case !listed:
			if len(problems) == 0 {
				ty.passed++
			}
		case diff.Reason == compat.DiffCap && len(capProblems) == 0,
			diff.Reason != compat.DiffCap && len(problems)+len(capProblems) == 0:
			t.Errorf("%s: listed as %q but passes; remove it from compat.Differences", c.Where(), diff.Reason)
		case diff.Reason != compat.DiffCap && disagreesWithReference(c, compile) != "":
			// A deliberate difference is one where we do what Go's
			// regexp does; disagreeing with it is a bug.
			t.Errorf("%s: listed as %q, but the output differs from the reference rewriter's: %s",
				c.Where(), diff.Reason, disagreesWithReference(c, compile))
		default:
			ty.listed[diff.Reason]++
		}
	}
	t.Logf("compat corpus: %s", &ty)
}

// compatReferenceNote tells whether the reference rewriter agrees with
// replace_filter on a failing case: if it does, the engine is wrong.
func compatReferenceNote(c *compat.Case) string {
	if c.ExpectConfigError || c.ErrorLog != "" {
		return "" // the reference has no cap
	}
	ref, err := refRewrite(compatRules(c), []byte(c.Input))
	switch {
	case err != nil:
		return fmt.Sprintf("\n\treference: %v", err)
	case bytes.Equal(ref, []byte(*c.Expected)):
		return "\n\treference agrees with replace_filter: ENGINE BUG"
	default:
		return fmt.Sprintf("\n\treference gives %q", ref)
	}
}

// TestCompat runs the corpus through the engine.
func TestCompat(t *testing.T) {
	runCompat(t, engineCompiler, true, nil)
}

// TestReferenceCompat runs the corpus through the reference rewriter. It
// has no hold-back cap, so cap differences do not apply to it.
func TestReferenceCompat(t *testing.T) {
	runCompat(t, referenceCompiler, false, map[string]bool{compat.DiffCap: true})
}

// TestCompatDifferencesExist guards against entries for sources that are not
// in the corpus.
func TestCompatDifferencesExist(t *testing.T) {
	have := map[string]bool{}
	for _, c := range loadCompat(t) {
		have[c.Source] = true
	}
	for src := range compat.Differences {
		if !have[src] {
			t.Errorf("compat.Differences: %q is not a case of %s", src, compatFile)
		}
	}
}
