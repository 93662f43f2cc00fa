package htmlgen

import (
	"fmt"
	"strconv"
	"strings"
)

// ConfigYAML returns a streamsub configuration (schema of
// proto/streamsub/config/v1) with w as its only rule set, for `streamsub
// apply`. Patterns and templates are written as double-quoted YAML strings.
func ConfigYAML(w Workload) string {
	var b strings.Builder
	fmt.Fprintf(&b, "rule_sets:\n  - name: %s\n    rules:\n", w.Name)
	for _, r := range w.Rules {
		kind := "regex"
		if r.Literal {
			kind = "literal"
		}
		fmt.Fprintf(&b, "      - {%s: %s, replace: %s", kind, strconv.Quote(r.Pattern), strconv.Quote(r.Replace))
		if r.Name != "" {
			fmt.Fprintf(&b, ", name: %s", strconv.Quote(r.Name))
		}
		if r.IgnoreCase {
			b.WriteString(", ignore_case: true")
		}
		if r.Once {
			b.WriteString(", once: true")
		}
		b.WriteString("}\n")
	}
	return b.String()
}

// ByName returns the workload called name: clone, literals or regexes.
func ByName(name string) (Workload, bool) {
	for _, w := range []Workload{Clone(), Literals(), Regexes()} {
		if w.Name == name {
			return w, true
		}
	}
	return Workload{}, false
}
