package nginximport

import (
	"fmt"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// Test is a self-test to write into a rule set of the output: an entry of
// its `tests:` (config.proto RuleTest).
type Test struct {
	Name  string
	Input string
	// Output is the body expected; not written when Unchanged.
	Output    string
	Unchanged bool
	// ContentType is the response's content type; "" for one the rule
	// set rewrites.
	ContentType string
	// Comment, when not "", is written on the line before the test.
	Comment string
}

// AddTests appends tests to the rule set named ruleSet ("" for the first,
// the default) and notes as comments above the rule set, and writes YAML
// again. The tests are not run here: the configuration loader runs them.
func (r *Result) AddTests(ruleSet string, tests []Test, notes []string) error {
	set := r.ruleSetNode(ruleSet)
	if set == nil {
		return fmt.Errorf("no rule set %q in the imported configuration (it has %s)", ruleSet, quotedList(r.Names))
	}
	if len(tests) > 0 {
		list := value(set, "tests")
		if list == nil {
			list = &yaml.Node{Kind: yaml.SequenceNode}
			add(set, "tests", list)
		}
		for _, t := range tests {
			list.Content = append(list.Content, testNode(t))
		}
	}
	for _, n := range notes {
		set.HeadComment = strings.TrimPrefix(set.HeadComment+"\n"+commentText(n), "\n")
	}
	out, err := encode(r.doc)
	if err != nil {
		return err
	}
	r.YAML = out
	return nil
}

// ruleSetNode finds the mapping of the rule set named name ("" for the
// first) in the document, or returns nil.
func (r *Result) ruleSetNode(name string) *yaml.Node {
	if name == "" && len(r.Names) > 0 {
		name = r.Names[0]
	}
	sets := value(r.doc.Content[0], "rule_sets")
	for _, s := range sets.Content {
		if n := value(s, "name"); n != nil && n.Value == name {
			return s
		}
	}
	return nil
}

// value returns the value of key in mapping m, or nil.
func value(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// testNode writes one test: name, input, then output or unchanged, then
// the content type. Multi-line bodies come out as YAML block scalars
// where YAML allows it.
func testNode(t Test) *yaml.Node {
	m := mapping(yaml.Style(0))
	add(m, "name", str(t.Name))
	add(m, "input", str(t.Input))
	if t.Unchanged {
		add(m, "unchanged", boolean(true))
	} else {
		add(m, "output", str(t.Output))
	}
	if t.ContentType != "" {
		add(m, "content_type", str(t.ContentType))
	}
	if t.Comment != "" {
		m.HeadComment = commentText(t.Comment)
	}
	return m
}

// quotedList writes names as "a", "b" and "c".
func quotedList(names []string) string {
	q := slices.Clone(names)
	for i, n := range q {
		q[i] = fmt.Sprintf("%q", n)
	}
	return andList(q)
}
