package nginximport

import (
	"bytes"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"
)

// Example is one page of an examples directory: a response body as the
// origin sends it and the body nginx sends for it, which the imported
// rule set must reproduce.
//
// An examples directory holds pairs of files NAME.input.EXT and
// NAME.expected.EXT side by side (not in subdirectories); EXT says the
// content type (exampleTypes). Files that are neither are ignored.
type Example struct {
	Name string
	// InputFile and ExpectedFile are the files' paths, for messages.
	InputFile, ExpectedFile string
	Input, Expected         []byte
	// ContentType is the response's content type: "" for HTML, which
	// every imported rule set rewrites.
	ContentType string
}

// exampleTypes maps the extensions an example may have to its content
// type ("" for HTML).
var exampleTypes = map[string]string{
	"html": "",
	"htm":  "",
	"css":  "text/css",
	"js":   "application/javascript",
	"json": "application/json",
	"xml":  "application/xml",
	"txt":  "text/plain",
	"svg":  "image/svg+xml",
}

// Example file roles, the middle part of a name.
const (
	inputRole    = "input"
	expectedRole = "expected"
)

// ReadExamples reads the examples of the directory fsys, named dir in
// paths and messages. It fails on a file of a pair without the other, an
// extension exampleTypes does not list, two pairs of one name, a body that
// is not UTF-8 (a configuration file is UTF-8 text), or no pair at all.
func ReadExamples(fsys fs.FS, dir string) ([]Example, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, fmt.Errorf("examples: %w", err)
	}
	type pair struct{ input, expected string }
	pairs := map[string]*pair{} // by NAME.EXT
	var errs []string
	for _, e := range entries {
		base, ext, ok := cutExt(e.Name())
		name, role, found := cutExt(base)
		if e.IsDir() || !ok || !found || role != inputRole && role != expectedRole {
			continue
		}
		if _, known := exampleTypes[ext]; !known {
			errs = append(errs, fmt.Sprintf("%s: unknown extension %q (want one of %s)", filepath.Join(dir, e.Name()), ext, knownExtensions()))
			continue
		}
		key := name + "." + ext
		if pairs[key] == nil {
			pairs[key] = &pair{}
		}
		if role == inputRole {
			pairs[key].input = e.Name()
		} else {
			pairs[key].expected = e.Name()
		}
	}
	keys := make([]string, 0, len(pairs))
	for k := range pairs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []Example
	names := map[string]string{} // NAME → its NAME.EXT
	for _, key := range keys {
		p := pairs[key]
		name, ext, _ := cutExt(key)
		switch {
		case p.input == "":
			errs = append(errs, fmt.Sprintf("%s: no %s.%s.%s beside it", filepath.Join(dir, p.expected), name, inputRole, ext))
			continue
		case p.expected == "":
			errs = append(errs, fmt.Sprintf("%s: no %s.%s.%s beside it", filepath.Join(dir, p.input), name, expectedRole, ext))
			continue
		case names[name] != "":
			errs = append(errs, fmt.Sprintf("%s: example %q is also %s: a test name must be unique", filepath.Join(dir, p.input), name, filepath.Join(dir, name+"."+inputRole+"."+names[name])))
			continue
		}
		names[name] = ext
		ex := Example{Name: name, ContentType: exampleTypes[ext],
			InputFile: filepath.Join(dir, p.input), ExpectedFile: filepath.Join(dir, p.expected)}
		for _, f := range []struct {
			file string
			body *[]byte
		}{{p.input, &ex.Input}, {p.expected, &ex.Expected}} {
			data, err := fs.ReadFile(fsys, f.file)
			if err != nil {
				return nil, fmt.Errorf("examples: %w", err)
			}
			if at := invalidUTF8(data); at >= 0 {
				errs = append(errs, fmt.Sprintf("%s: not UTF-8 (at byte %d): a test body must be UTF-8 text", filepath.Join(dir, f.file), at))
			}
			*f.body = data
		}
		out = append(out, ex)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("examples: %s", strings.Join(errs, "\n"))
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("examples: %s: no NAME.%s.EXT with its NAME.%s.EXT", dir, inputRole, expectedRole)
	}
	return out, nil
}

// Test is the self-test an example makes, with a comment naming its
// files: unchanged when nginx left the body alone.
func (e *Example) Test() Test {
	t := Test{Name: e.Name, Input: string(e.Input), ContentType: e.ContentType,
		Comment: fmt.Sprintf("Example %s → %s.", e.InputFile, e.ExpectedFile)}
	if bytes.Equal(e.Input, e.Expected) {
		t.Unchanged = true
	} else {
		t.Output = string(e.Expected)
	}
	return t
}

// invalidUTF8 returns the offset of the first byte of b that is not
// valid UTF-8, or -1.
func invalidUTF8(b []byte) int {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return -1
}

// cutExt splits "a.b.c" into "a.b" and "c".
func cutExt(name string) (base, ext string, ok bool) {
	i := strings.LastIndexByte(name, '.')
	if i <= 0 || i == len(name)-1 {
		return name, "", false
	}
	return name[:i], name[i+1:], true
}

// knownExtensions lists exampleTypes' keys.
func knownExtensions() string {
	var exts []string
	for e := range exampleTypes {
		exts = append(exts, "."+e)
	}
	sort.Strings(exts)
	return strings.Join(exts, " ")
}
