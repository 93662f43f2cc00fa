package nginximport

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// document builds the configuration file, in the schema of
// proto/streamsub/config/v1, with comments.
func (im *importer) document() *yaml.Node {
	root := mapping(yaml.Style(0))
	sets := &yaml.Node{Kind: yaml.SequenceNode}
	for _, s := range im.sets {
		sets.Content = append(sets.Content, im.setNode(s))
	}
	add(root, "rule_sets", sets)
	if len(im.hosts) > 0 {
		hosts := mapping(yaml.Style(0))
		for _, h := range im.hosts {
			k := str(h.pattern)
			k.LineComment = commentText(h.note)
			hosts.Content = append(hosts.Content, k, str(h.set.name))
		}
		add(root, "hosts", hosts)
	}
	if im.maxBuf != nil {
		n := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.FormatInt(im.maxBuf.value, 10)}
		n.LineComment = "replace_filter_max_buffered_size default (8k)"
		if im.maxBuf.at != nil {
			n.LineComment = commentText("replace_filter_max_buffered_size at " + im.maxBuf.at.Pos.String())
		}
		add(root, "max_buffered_bytes", n)
	}
	head := []string{
		"Imported from " + commentText(im.source) + " by `streamsub import-nginx`.",
		"The comment after each rule names the nginx directive it was translated from.",
	}
	return &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{root},
		HeadComment: strings.Join(append(head, im.fileProblems...), "\n")}
}

// encode writes a document built by document.
func encode(doc *yaml.Node) ([]byte, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, fmt.Errorf("writing the configuration: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("writing the configuration: %w", err)
	}
	return buf.Bytes(), nil
}

// setNode writes one rule set: the fields it does not inherit, and its own
// rules.
func (im *importer) setNode(s *ruleSet) *yaml.Node {
	m := mapping(yaml.Style(0))
	add(m, "name", str(s.name))
	inheritedTypes, inheritedKeep := []string{defaultContentType}, false
	if len(s.extends) > 0 {
		var names []*yaml.Node
		inheritedTypes, inheritedKeep = nil, true
		for _, p := range s.extends {
			names = append(names, str(p.name))
			inheritedTypes = appendUnique(inheritedTypes, p.types...)
			inheritedKeep = inheritedKeep && p.keep
		}
		add(m, "extends", &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle, Content: names})
	}
	if !sameSet(s.types, inheritedTypes) {
		types := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
		for _, t := range s.types {
			types.Content = append(types.Content, str(t))
		}
		add(m, "content_types", types)
	}
	if s.keep != inheritedKeep {
		add(m, "keep_last_modified", boolean(s.keep))
	}
	add(m, "rules", rulesNode(s, func(*rule) bool { return true }))
	if im.ownHeaderRules {
		// Header rules flatten like body rules (ancestors' first), so the
		// safe rules of every set, written in each, give every set the
		// safe subset of its effective rules.
		if headers := rulesNode(s, (*rule).headerSafe); len(headers.Content) > 0 {
			add(m, "header_rules", headers)
		}
		inherited := len(s.extends) == 0
		for _, p := range s.extends {
			inherited = inherited || p.rewritesHeaders()
		}
		if want := s.rewritesHeaders(); want != inherited {
			add(m, "rewrite_response_headers", boolean(want))
		}
	}
	m.HeadComment = strings.Join(append([]string{commentText(im.setComment(s))}, s.problems...), "\n")
	return m
}

// rulesNode writes the translated rules of s's own blocks that keep
// selects.
func rulesNode(s *ruleSet, keep func(*rule) bool) *yaml.Node {
	rules := &yaml.Node{Kind: yaml.SequenceNode}
	for _, b := range s.own {
		for _, r := range b.rules {
			if r.problem == "" && keep(r) {
				rules.Content = append(rules.Content, ruleNode(r))
			}
		}
	}
	if len(rules.Content) == 0 {
		rules.Style = yaml.FlowStyle
	}
	return rules
}

// setComment says where a rule set comes from.
func (im *importer) setComment(s *ruleSet) string {
	switch {
	case s == im.noRewrite:
		return "For the hosts of servers without rules: nothing is rewritten."
	case s.group:
		b := s.blocks[0]
		var users []string
		for _, u := range b.sets {
			users = append(users, u.name)
		}
		return fmt.Sprintf("The %s rules of %s, shared by: %s.", b.mod, b.def.describe(), strings.Join(users, ", "))
	}
	const most = 4
	var where []string
	for i, sc := range s.scopes {
		if i == most {
			where = append(where, fmt.Sprintf("and %d more", len(s.scopes)-most))
			break
		}
		where = append(where, sc.describe())
	}
	c := "For " + strings.Join(where, ", ") + "."
	if b := s.blocks[0]; len(s.blocks) == 1 && b.group == s {
		var users []string
		for _, u := range b.sets {
			if u != s {
				users = append(users, u.name)
			}
		}
		c += " Extended by: " + strings.Join(users, ", ") + "."
	}
	return c
}

// ruleNode writes one rule on one line, with its origin as a comment.
func ruleNode(r *rule) *yaml.Node {
	n := mapping(yaml.FlowStyle)
	if r.literal {
		add(n, "literal", str(r.pattern))
	} else {
		add(n, "regex", str(r.pattern))
	}
	add(n, "replace", str(r.replace))
	if r.ignoreCase {
		add(n, "ignore_case", boolean(true))
	}
	if r.once {
		add(n, "once", boolean(true))
	}
	n.LineComment = commentText(r.dir.Pos.String() + " " + r.dir.Name)
	return n
}

func mapping(style yaml.Style) *yaml.Node { return &yaml.Node{Kind: yaml.MappingNode, Style: style} }

func add(m *yaml.Node, key string, value *yaml.Node) {
	m.Content = append(m.Content, str(key), value)
}

// str is a string scalar. The YAML library writes a multi-line string as a
// block scalar, which its own parser rejects when the first line starts
// with a tab: such a string is double-quoted.
func str(v string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v}
	if strings.HasPrefix(v, "\t") && strings.Contains(v, "\n") {
		n.Style = yaml.DoubleQuotedStyle
	}
	return n
}

func boolean(v bool) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(v)}
}

// sameSet reports whether a and b hold the same strings.
func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}
