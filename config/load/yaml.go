package load

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	"google.golang.org/protobuf/reflect/protoreflect"

	configv1 "github.com/streamsub/streamsub/proto/streamsub/config/v1"
)

// maxNodes bounds the YAML nodes visited, aliases counted each time they
// are used, so that a file of aliases to aliases cannot expand without end.
const maxNodes = 1 << 20

// yamlToJSON parses data as one YAML document (JSON is YAML too) and
// converts it to the JSON that protojson expects for md. On the way it
// checks every key and value kind against md, so an unknown field or a
// wrong kind is reported with its field path and file position, which
// protojson's own errors do not give.
//
// It also returns where the messages of the positioned types are written.
func yamlToJSON(data []byte, md protoreflect.MessageDescriptor, source string) ([]byte, positions, error) {
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) { // empty file: an empty config
			return []byte("{}"), nil, nil
		}
		return nil, nil, yamlError(source, err)
	}
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case err == nil:
		return nil, nil, &Error{Source: source, Line: next.Line, Column: next.Column,
			Err: errors.New("a second YAML document; want one document per file")}
	case !errors.Is(err, io.EOF):
		return nil, nil, yamlError(source, err)
	}
	root := &doc
	if root.Kind == yaml.DocumentNode {
		if len(root.Content) == 0 {
			return []byte("{}"), nil, nil
		}
		root = root.Content[0]
	}
	w := walker{source: source, budget: maxNodes, pos: positions{}}
	v, err := w.message(root, md, "")
	if err != nil {
		return nil, nil, err
	}
	if v == nil {
		return []byte("{}"), w.pos, nil
	}
	js, err := json.Marshal(v)
	return js, w.pos, err
}

// walker converts YAML nodes to JSON values following a message descriptor.
type walker struct {
	source string
	budget int
	pos    positions
}

// positions maps the field path of a message ("rule_sets[0].tests[1]")
// to where it is written, for the positioned types: problems the loader
// finds in them after the YAML is gone still name a line.
type positions map[string]position

// position is a 1-based line and column; zero when unknown.
type position struct{ line, column int }

// positioned lists the message types whose positions the walker records.
var positioned = map[protoreflect.FullName]bool{
	(*configv1.RuleTest)(nil).ProtoReflect().Descriptor().FullName(): true,
}

func (w *walker) errorf(n *yaml.Node, path, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if path != "" {
		msg = path + ": " + msg
	}
	return &Error{Source: w.source, Line: n.Line, Column: n.Column, Err: errors.New(msg)}
}

// resolve follows aliases and charges the node budget.
func (w *walker) resolve(n *yaml.Node, path string) (*yaml.Node, error) {
	for i := 0; n.Kind == yaml.AliasNode; i++ {
		if n.Alias == nil || i > 100 {
			return nil, w.errorf(n, path, "unresolvable alias")
		}
		n = n.Alias
	}
	w.budget--
	if w.budget < 0 {
		return nil, w.errorf(n, path, "too many YAML nodes (aliases expand to more than %d)", maxNodes)
	}
	return n, nil
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// describe names what a node holds, for "want X, got Y" messages.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if n.ShortTag() == "!!str" {
			return strconv.Quote(n.Value)
		}
		return n.Value
	}
	return "a YAML node of kind " + strconv.Itoa(int(n.Kind))
}

// pair is one key and value of a mapping.
type pair struct{ key, value *yaml.Node }

// pairs lists a mapping's entries with `<<` merge keys applied (explicit
// keys win) and reports duplicate keys.
func (w *walker) pairs(n *yaml.Node, path string) ([]pair, error) {
	var out, merged []pair
	seen := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, err := w.resolve(n.Content[i], path)
		if err != nil {
			return nil, err
		}
		if k.Kind != yaml.ScalarNode {
			return nil, w.errorf(k, path, "mapping key is %s; want a string", describe(k))
		}
		if k.ShortTag() == "!!merge" {
			v, err := w.resolve(n.Content[i+1], path)
			if err != nil {
				return nil, err
			}
			sources := []*yaml.Node{v}
			if v.Kind == yaml.SequenceNode {
				sources = v.Content
			}
			for _, s := range sources {
				if s, err = w.resolve(s, path); err != nil {
					return nil, err
				}
				if s.Kind != yaml.MappingNode {
					return nil, w.errorf(s, path, "merge key value is %s; want a mapping", describe(s))
				}
				ps, err := w.pairs(s, path)
				if err != nil {
					return nil, err
				}
				merged = append(merged, ps...)
			}
			continue
		}
		if first, dup := seen[k.Value]; dup {
			return nil, w.errorf(k, joinPath(path, k.Value), "duplicate key (first at line %d)", first.Line)
		}
		seen[k.Value] = k
		out = append(out, pair{k, n.Content[i+1]})
	}
	for _, p := range merged {
		if _, ok := seen[p.key.Value]; !ok {
			seen[p.key.Value] = p.key
			out = append(out, p)
		}
	}
	return out, nil
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// message converts a mapping for md; a null node gives nil (field unset).
func (w *walker) message(n *yaml.Node, md protoreflect.MessageDescriptor, path string) (map[string]any, error) {
	n, err := w.resolve(n, path)
	if err != nil {
		return nil, err
	}
	if isNull(n) {
		return nil, nil
	}
	if n.Kind != yaml.MappingNode {
		return nil, w.errorf(n, path, "want a mapping, got %s", describe(n))
	}
	if positioned[md.FullName()] {
		w.pos[path] = position{n.Line, n.Column}
	}
	ps, err := w.pairs(n, path)
	if err != nil {
		return nil, err
	}
	out := make(map[string]any, len(ps))
	for _, p := range ps {
		fd := md.Fields().ByName(protoreflect.Name(p.key.Value))
		if fd == nil {
			fd = md.Fields().ByJSONName(p.key.Value)
		}
		fpath := joinPath(path, p.key.Value)
		if fd == nil {
			return nil, w.errorf(p.key, fpath, "unknown field (known: %s)", fieldNames(md))
		}
		v, err := w.field(p.value, fd, fpath)
		if err != nil {
			return nil, err
		}
		if v != nil {
			if _, dup := out[string(fd.Name())]; dup {
				return nil, w.errorf(p.key, fpath, "field %s given twice", fd.Name())
			}
			out[string(fd.Name())] = v
		}
	}
	return out, nil
}

func fieldNames(md protoreflect.MessageDescriptor) string {
	fs := md.Fields()
	names := make([]string, fs.Len())
	for i := range names {
		names[i] = string(fs.Get(i).Name())
	}
	return strings.Join(names, ", ")
}

// field converts the value of one field; nil means unset.
func (w *walker) field(n *yaml.Node, fd protoreflect.FieldDescriptor, path string) (any, error) {
	n, err := w.resolve(n, path)
	if err != nil {
		return nil, err
	}
	if isNull(n) {
		return nil, nil
	}
	switch {
	case fd.IsMap():
		if n.Kind != yaml.MappingNode {
			return nil, w.errorf(n, path, "want a mapping, got %s", describe(n))
		}
		ps, err := w.pairs(n, path)
		if err != nil {
			return nil, err
		}
		out := make(map[string]any, len(ps))
		for _, p := range ps {
			epath := fmt.Sprintf("%s[%q]", path, p.key.Value)
			v, err := w.singular(p.value, fd.MapValue(), epath)
			if err != nil {
				return nil, err
			}
			if v == nil {
				return nil, w.errorf(p.value, epath, "want a value, got null")
			}
			out[p.key.Value] = v
		}
		return out, nil
	case fd.IsList():
		if n.Kind != yaml.SequenceNode {
			return nil, w.errorf(n, path, "want a list, got %s", describe(n))
		}
		out := make([]any, 0, len(n.Content))
		for i, e := range n.Content {
			epath := path + "[" + strconv.Itoa(i) + "]"
			v, err := w.singular(e, fd, epath)
			if err != nil {
				return nil, err
			}
			if v == nil {
				return nil, w.errorf(e, epath, "want a value, got null")
			}
			out = append(out, v)
		}
		return out, nil
	}
	return w.singular(n, fd, path)
}

// singular converts one scalar or message value of fd's kind.
func (w *walker) singular(n *yaml.Node, fd protoreflect.FieldDescriptor, path string) (any, error) {
	n, err := w.resolve(n, path)
	if err != nil {
		return nil, err
	}
	if isNull(n) {
		return nil, nil
	}
	if fd.Kind() == protoreflect.MessageKind {
		v, err := w.message(n, fd.Message(), path)
		if v == nil && err == nil {
			return nil, nil
		}
		return v, err
	}
	if n.Kind != yaml.ScalarNode {
		return nil, w.errorf(n, path, "want a %s, got %s", kindName(fd.Kind()), describe(n))
	}
	switch fd.Kind() {
	case protoreflect.StringKind:
		// The text as written: `replace: 1.50` means the string "1.50".
		return n.Value, nil
	case protoreflect.BoolKind:
		var b bool
		if n.ShortTag() != "!!bool" || n.Decode(&b) != nil {
			return nil, w.errorf(n, path, "want true or false, got %s", describe(n))
		}
		return b, nil
	case protoreflect.Int32Kind, protoreflect.Int64Kind, protoreflect.Sint32Kind,
		protoreflect.Sint64Kind, protoreflect.Sfixed32Kind, protoreflect.Sfixed64Kind:
		var i int64
		if n.ShortTag() != "!!int" || n.Decode(&i) != nil {
			return nil, w.errorf(n, path, "want an integer, got %s", describe(n))
		}
		return i, nil
	case protoreflect.DoubleKind:
		var f float64
		if tag := n.ShortTag(); tag != "!!float" && tag != "!!int" || n.Decode(&f) != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, w.errorf(n, path, "want a number, got %s", describe(n))
		}
		return f, nil
	}
	return nil, w.errorf(n, path, "field kind %s is not supported in YAML", fd.Kind())
}

func kindName(k protoreflect.Kind) string {
	switch k {
	case protoreflect.StringKind:
		return "string"
	case protoreflect.BoolKind:
		return "boolean"
	}
	return "number"
}

// sortedKeys returns m's keys in order, for deterministic messages.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
