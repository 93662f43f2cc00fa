package nginximport

import (
	"fmt"
	"strings"
)

// blockKey identifies a block: the level that has the rules, the module,
// and for sub_filter the sub_filter_once in force where they apply (it
// changes every rule).
type blockKey struct {
	def  *level
	mod  module
	once bool
}

// block is the rule list of one module on one level, translated: what a
// location inherits from the level that has it.
type block struct {
	blockKey
	id    int
	rules []*rule
	sets  []*ruleSet // the rule sets whose rules include it
	// group is the rule set holding the rules when several sets share them.
	group *ruleSet
}

// translated counts the rules that were translated.
func (b *block) translated() int {
	n := 0
	for _, r := range b.rules {
		if r.problem == "" {
			n++
		}
	}
	return n
}

// block returns the translated block for key, making it on first use.
func (im *importer) block(key blockKey) *block {
	if b, ok := im.blocks[key]; ok {
		return b
	}
	b := &block{blockKey: key, id: len(im.blockList)}
	for _, d := range key.def.mods[key.mod].rules {
		var r *rule
		switch key.mod {
		case replaceFilter:
			r = translateReplaceFilter(d)
		case subsFilter:
			var warnings []string
			r, warnings = translateSubsFilter(d)
			for _, w := range warnings {
				im.warn(d.Pos, w)
			}
			if r.problem == "" && canMatchNewline(r) {
				im.warnBlock(b, d.Pos, "subs_filter works line by line, so this rule never matched across a line feed in nginx; in streamsub it can")
			}
		case subFilter:
			r = translateSubFilter(d, key.once)
			if r.problem == "" && foldsBeyondASCII(r.pattern) {
				im.warnBlock(b, d.Pos, fmt.Sprintf("sub_filter ignores ASCII case only; translated as an ignore_case literal, %q also matches Unicode case variants (Go's folding: K for k, ſ for s, accented capitals)", r.pattern))
			}
		}
		b.rules = append(b.rules, r)
	}
	im.blockWarnings(b)
	im.blocks[key] = b
	im.blockList = append(im.blockList, b)
	return b
}

// blockWarnings reports how a module applies a list of rules where that
// differs from streamsub's one leftmost-first pass.
func (im *importer) blockWarnings(b *block) {
	var ok []*rule
	for _, r := range b.rules {
		if r.problem == "" {
			ok = append(ok, r)
		}
	}
	if len(ok) == 0 {
		return
	}
	switch b.mod {
	case subsFilter:
		im.warn(ok[0].dir.Pos, "subs_filter rewrites only responses with status 200; streamsub rewrites every response with a body")
		im.subsFilterWarnings(b, ok)
	case subFilter:
		im.subFilterWarnings(b, ok)
	}
}

// subsFilterWarnings reports where applying subs_filter rules one after
// another, each on the previous one's output, can differ from one pass:
// when a rule is a regex (whose matches cannot be told apart from the
// others' here), or a rule's string overlaps an earlier rule's string
// (one pass takes the leftmost match, nginx the earlier rule's) or
// replacement (nginx matches text an earlier rule wrote, or that its
// replacement joins). Fixed strings that do none of this give the same
// output both ways.
func (im *importer) subsFilterWarnings(b *block, rules []*rule) {
	if len(rules) < 2 {
		return
	}
	first := rules[0].dir.Pos
	for _, r := range rules {
		if !r.literal {
			im.warnBlock(b, first, fmt.Sprintf("these %d subs_filter rules run one after another in nginx, each on the previous one's output, and the one at %s is a regex; streamsub applies them in one pass (leftmost match first, then the earlier rule), so text one rule writes or overlaps is matched differently", len(rules), r.dir.Pos))
			return
		}
	}
	for j := 1; j < len(rules); j++ {
		for _, earlier := range rules[:j] {
			var msg string
			switch meet(earlier, rules[j]) {
			case meetMatches:
				msg = fmt.Sprintf("matches of this subs_filter rule and of the one at %s can overlap: nginx runs the rules one after another (the earlier rule's match wins), streamsub makes one pass (the leftmost match wins)", earlier.dir.Pos)
			case meetOutput:
				msg = fmt.Sprintf("in nginx this subs_filter rule runs on the output of the one at %s, whose replacement can make or break a match of this rule's string; streamsub makes one pass and never matches text it wrote", earlier.dir.Pos)
			default:
				continue
			}
			im.warnBlock(b, rules[j].dir.Pos, msg)
			break
		}
	}
}

// How two fixed-string rules applied one after another can give another
// output than one pass with both.
const (
	meetNever   = iota
	meetMatches // their matches can overlap
	meetOutput  // the first one's replacement can make or break a match of the second
)

// meet tells how applying fixed-string rule first to a text, then second
// to the output, can differ from streamsub's one pass with both: when
// their strings can overlap (nginx takes first's match, one pass the
// leftmost), or first's replacement can make a match of second's string
// (or, empty, join text into one) or break one. Otherwise the two give the
// same output. Case is ignored, which can only add warnings.
func meet(first, second *rule) int {
	p := strings.ToLower(second.pattern)
	switch {
	case overlap(strings.ToLower(first.pattern), p):
		return meetMatches
	case overlap(strings.ToLower(first.replace), p):
		return meetOutput
	}
	return meetNever
}

// subFilterWarnings reports where sub_filter_once makes sub_filter and
// streamsub differ: nginx stops looking for a string once it replaced it,
// where a streamsub once rule keeps consuming its later matches, which can
// hide an overlapping match of another string. (Which string wins at one
// position agrees: nginx tries them sorted stably by a byte all strings
// that can match there share, so in declaration order, as streamsub.)
func (im *importer) subFilterWarnings(b *block, rules []*rule) {
	if !b.once {
		return
	}
	for j := range rules {
		var others []string
		for i := range j {
			if overlap(strings.ToLower(rules[i].pattern), strings.ToLower(rules[j].pattern)) {
				others = append(others, fmt.Sprintf("%q (%s)", rules[i].pattern, rules[i].dir.Pos))
			}
		}
		if len(others) > 0 {
			im.warnBlock(b, rules[j].dir.Pos, fmt.Sprintf("with sub_filter_once on, nginx stops looking for a string once it replaced it; streamsub keeps matching it (unchanged), so matches of this string and of %s that overlap can differ", strings.Join(others, ", ")))
		}
	}
}

// overlap reports whether matches of a and b can overlap in a text: one
// contains the other (an empty string is in every text), or an end of one
// is a start of the other.
func overlap(a, b string) bool {
	if strings.Contains(a, b) || strings.Contains(b, a) {
		return true
	}
	for k := 1; k < min(len(a), len(b)); k++ {
		if a[len(a)-k:] == b[:k] || b[len(b)-k:] == a[:k] {
			return true
		}
	}
	return false
}
