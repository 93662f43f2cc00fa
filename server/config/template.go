package config

import (
	"fmt"
	"slices"
	"unicode/utf8"
)

// checkTemplate reports the first problem in a replacement template
// (semantics.md "Templates": $& $0 $N ${N} ${name} $$; any other "$" is an
// error). groupNames are the rule's named groups; a ${name} that is not
// one of them is reported as a likely typo.
func checkTemplate(tmpl string, groupNames []string) error {
	for i := 0; i < len(tmpl); i++ {
		if tmpl[i] != '$' {
			continue
		}
		if i+1 == len(tmpl) {
			return fmt.Errorf(`replace %q: "$" at the end (offset %d); write "$$" for a literal "$"`, tmpl, i)
		}
		switch c := tmpl[i+1]; {
		case c == '$' || c == '&':
			i++
		case '0' <= c && c <= '9':
			for i+1 < len(tmpl) && '0' <= tmpl[i+1] && tmpl[i+1] <= '9' {
				i++
			}
		case c == '{':
			end := i + 2
			for end < len(tmpl) && tmpl[end] != '}' {
				end++
			}
			if end == len(tmpl) {
				return fmt.Errorf(`replace %q: unterminated "${" at offset %d`, tmpl, i)
			}
			ref := tmpl[i+2 : end]
			if err := checkReference(ref, groupNames); err != nil {
				return fmt.Errorf("replace %q: %w at offset %d", tmpl, err, i)
			}
			i = end
		default:
			r, _ := utf8.DecodeRuneInString(tmpl[i+1:])
			return fmt.Errorf(`replace %q: "$%c" at offset %d is not a reference ($& $0 $N ${N} ${name} $$); write "$$" for a literal "$"`,
				tmpl, r, i)
		}
	}
	return nil
}

// checkReference checks the inside of a ${...} reference.
func checkReference(ref string, groupNames []string) error {
	if ref == "" {
		return fmt.Errorf(`empty "${}"`)
	}
	digits := true
	for i := 0; i < len(ref); i++ {
		c := ref[i]
		switch {
		case '0' <= c && c <= '9':
		case c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
			digits = false
		default:
			return fmt.Errorf("invalid group name %q in \"${%s}\"", ref, ref)
		}
	}
	if digits || slices.Contains(groupNames, ref) {
		return nil
	}
	return fmt.Errorf("no group named %q for \"${%s}\"", ref, ref)
}
