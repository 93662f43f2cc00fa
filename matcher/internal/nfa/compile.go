package nfa

import (
	"errors"
	"fmt"
	"regexp/syntax"
	"slices"
	"unicode"
)

// MaxStates is the largest NFA New builds (states, i.e. entries of the
// state table); bigger rule sets are rejected with ErrTooBig.
const MaxStates = 1 << 22

// ErrTooBig is returned by New when the NFA would exceed its limit; the
// error is a *TooBigError.
var ErrTooBig = errors.New("nfa: rule set too big")

// TooBigError reports the rule whose states took an NFA past its limit.
type TooBigError struct {
	Rule  int // index of the rule being compiled when the limit was reached
	Limit int // the limit, in states
}

func (e *TooBigError) Error() string {
	return fmt.Sprintf("rule %d: %v (more than %d states)", e.Rule, ErrTooBig, e.Limit)
}

// Is makes errors.Is(err, ErrTooBig) hold.
func (e *TooBigError) Is(target error) bool { return target == ErrTooBig }

// New compiles the parsed regular expressions res, one per rule in
// declaration order, into one NFA of at most MaxStates states. Each re is
// simplified first; capture group numbers and names are taken from the
// parsed form.
func New(res []*syntax.Regexp) (*NFA, error) { return NewLimited(res, MaxStates) }

// NewLimited is New with a limit of maxStates states (at most MaxStates):
// it stops adding states at the limit, so an NFA over budget costs no more
// than the budget to reject, and reports the rule that reached it in a
// *TooBigError.
func NewLimited(res []*syntax.Regexp, maxStates int) (*NFA, error) {
	c := &compiler{max: min(maxStates, MaxStates)}
	c.n = &NFA{}
	c.add(State{Kind: KindFail}) // StateID 0 is Fail
	c.n.rules = make([]RuleInfo, len(res))
	starts := make([]StateID, 0, len(res))
	for i, re := range res {
		rid := RuleID(i)
		info := RuleInfo{NumGroups: re.MaxCap(), Names: re.CapNames()}
		c.rule = rid
		f := c.cat(c.capture(0), c.cat(c.compile(re.Simplify()), c.capture(1)))
		if c.tooBig {
			return nil, &TooBigError{Rule: i, Limit: c.max}
		}
		if f.fail {
			info.Start = 0
		} else {
			m := c.add(State{Kind: KindMatch, Rule: rid})
			c.patch(f.out, m)
			info.Start = f.start
			starts = append(starts, f.start)
		}
		c.n.rules[i] = info
	}
	switch len(starts) {
	case 0:
		c.n.start = 0
	case 1:
		c.n.start = starts[0]
	default:
		c.n.start = c.add(State{Kind: KindUnion, Alts: starts})
	}
	if c.tooBig {
		return nil, &TooBigError{Rule: len(res) - 1, Limit: c.max}
	}
	return c.n, nil
}

// patch is a dangling edge: state s's Next (i == -1), or Alts[i] of a
// Union, or Trans[i].Next of a Sparse state.
type patch struct {
	s StateID
	i int32
}

// frag is a compiled fragment: entry state, dangling exits, and whether it
// can match the empty string (needed for Go's star construction).
type frag struct {
	start    StateID
	out      []patch
	nullable bool
	fail     bool // matches nothing (Go's frag{i: 0})
}

type compiler struct {
	n      *NFA
	rule   RuleID
	max    int // states allowed
	tooBig bool
}

func (c *compiler) add(s State) StateID {
	if len(c.n.states) >= c.max {
		c.tooBig = true
		return 0
	}
	if s.Kind == KindInvalid {
		c.n.hasInvalid = true
	}
	c.n.states = append(c.n.states, s)
	return StateID(len(c.n.states) - 1)
}

func (c *compiler) patch(l []patch, to StateID) {
	if c.tooBig {
		return
	}
	for _, p := range l {
		s := &c.n.states[p.s]
		switch {
		case p.i < 0:
			s.Next = to
		case s.Kind == KindUnion:
			s.Alts[p.i] = to
		default:
			s.Trans[p.i].Next = to
		}
	}
}

func failFrag() frag { return frag{fail: true} }

// nop is an epsilon state with one exit (Go's InstNop).
func (c *compiler) nop() frag {
	s := c.add(State{Kind: KindUnion, Alts: []StateID{0}})
	return frag{start: s, out: []patch{{s, 0}}, nullable: true}
}

func (c *compiler) capture(slot uint32) frag {
	s := c.add(State{Kind: KindCapture, Slot: slot, Rule: c.rule})
	return frag{start: s, out: []patch{{s, -1}}, nullable: true}
}

func (c *compiler) look(l Look) frag {
	s := c.add(State{Kind: KindLook, Look: l})
	return frag{start: s, out: []patch{{s, -1}}, nullable: true}
}

func (c *compiler) cat(f1, f2 frag) frag {
	if f1.fail || f2.fail {
		return failFrag()
	}
	c.patch(f1.out, f2.start)
	return frag{start: f1.start, out: f2.out, nullable: f1.nullable && f2.nullable}
}

// quest is f1? (greedy: prefer f1) or f1?? (prefer skipping it).
func (c *compiler) quest(f1 frag, nongreedy bool) frag {
	if f1.fail {
		return c.nop()
	}
	s := c.add(State{Kind: KindUnion, Alts: []StateID{f1.start, 0}})
	if c.tooBig {
		return failFrag()
	}
	hole := patch{s, 1}
	if nongreedy {
		c.n.states[s].Alts = []StateID{0, f1.start}
		hole = patch{s, 0}
	}
	out := append([]patch{hole}, f1.out...)
	return frag{start: s, out: out, nullable: true}
}

// loop is the main loop of a plus or star, as in regexp/syntax.
func (c *compiler) loop(f1 frag, nongreedy bool) frag {
	s := c.add(State{Kind: KindUnion, Alts: []StateID{f1.start, 0}})
	if c.tooBig {
		return failFrag()
	}
	hole := patch{s, 1}
	if nongreedy {
		c.n.states[s].Alts = []StateID{0, f1.start}
		hole = patch{s, 0}
	}
	c.patch(f1.out, s)
	return frag{start: s, out: []patch{hole}, nullable: true}
}

func (c *compiler) star(f1 frag, nongreedy bool) frag {
	if f1.fail {
		return c.nop()
	}
	if f1.nullable {
		// (f1+)? gets the priority order right (golang.org/issue/46123).
		return c.quest(c.plus(f1, nongreedy), nongreedy)
	}
	return c.loop(f1, nongreedy)
}

func (c *compiler) plus(f1 frag, nongreedy bool) frag {
	if f1.fail {
		return failFrag()
	}
	return frag{start: f1.start, out: c.loop(f1, nongreedy).out, nullable: f1.nullable}
}

var (
	anyRuneNotNL = []rune{0, '\n' - 1, '\n' + 1, unicode.MaxRune}
	anyRune      = []rune{0, unicode.MaxRune}
)

func (c *compiler) compile(re *syntax.Regexp) frag {
	if c.tooBig {
		return failFrag() // over the limit: the rest is not worth building
	}
	switch re.Op {
	case syntax.OpNoMatch:
		return failFrag()
	case syntax.OpEmptyMatch:
		return c.nop()
	case syntax.OpLiteral:
		if len(re.Rune) == 0 {
			return c.nop()
		}
		var f frag
		for j, r := range re.Rune {
			var f1 frag
			if re.Flags&syntax.FoldCase != 0 {
				f1 = c.class(foldOrbit(r))
			} else {
				f1 = c.class([]rune{r, r})
			}
			if j == 0 {
				f = f1
			} else {
				f = c.cat(f, f1)
			}
		}
		return f
	case syntax.OpCharClass:
		return c.class(re.Rune)
	case syntax.OpAnyCharNotNL:
		return c.class(anyRuneNotNL)
	case syntax.OpAnyChar:
		return c.class(anyRune)
	case syntax.OpBeginLine:
		return c.look(LookStartLine)
	case syntax.OpEndLine:
		return c.look(LookEndLine)
	case syntax.OpBeginText:
		return c.look(LookStartText)
	case syntax.OpEndText:
		return c.look(LookEndText)
	case syntax.OpWordBoundary:
		return c.look(LookWordBoundary)
	case syntax.OpNoWordBoundary:
		return c.look(LookNoWordBoundary)
	case syntax.OpCapture:
		bra := c.capture(uint32(re.Cap << 1))
		sub := c.compile(re.Sub[0])
		ket := c.capture(uint32(re.Cap<<1 | 1))
		return c.cat(c.cat(bra, sub), ket)
	case syntax.OpStar:
		return c.star(c.compile(re.Sub[0]), re.Flags&syntax.NonGreedy != 0)
	case syntax.OpPlus:
		return c.plus(c.compile(re.Sub[0]), re.Flags&syntax.NonGreedy != 0)
	case syntax.OpQuest:
		return c.quest(c.compile(re.Sub[0]), re.Flags&syntax.NonGreedy != 0)
	case syntax.OpConcat:
		if len(re.Sub) == 0 {
			return c.nop()
		}
		var f frag
		for i, sub := range re.Sub {
			if i == 0 {
				f = c.compile(sub)
			} else {
				f = c.cat(f, c.compile(sub))
			}
		}
		return f
	case syntax.OpAlternate:
		// Go nests binary alternations; one flat Union has the same order.
		var subs []frag
		for _, sub := range re.Sub {
			if f := c.compile(sub); !f.fail {
				subs = append(subs, f)
			}
		}
		switch len(subs) {
		case 0:
			return failFrag()
		case 1:
			return subs[0]
		}
		alts := make([]StateID, len(subs))
		f := frag{}
		for i, sf := range subs {
			alts[i] = sf.start
			f.out = append(f.out, sf.out...)
			f.nullable = f.nullable || sf.nullable
		}
		f.start = c.add(State{Kind: KindUnion, Alts: alts})
		return f
	}
	panic(fmt.Sprintf("nfa: unhandled regexp op %v", re.Op))
}

// foldOrbit returns the class (sorted range pairs) of r's simple case
// folding orbit, which is what Go's (?i) literal rune matches.
func foldOrbit(r rune) []rune {
	orbit := []rune{r}
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		orbit = append(orbit, f)
	}
	slices.Sort(orbit)
	var ranges []rune
	for _, o := range orbit {
		if n := len(ranges); n > 0 && ranges[n-1]+1 == o {
			ranges[n-1] = o
			continue
		}
		ranges = append(ranges, o, o)
	}
	return ranges
}

// trieNode is a node of the prefix trie of a class's UTF-8 sequences.
type trieNode struct {
	edges []trieEdge
}

type trieEdge struct {
	lo, hi byte
	child  *trieNode // nil: the edge completes a sequence
}

// class compiles a rune class (sorted, disjoint range pairs) to a byte
// automaton matching exactly one unit of Go's decoding in the class: the
// valid UTF-8 encodings of its runes and, if U+FFFD is in it, one invalid
// byte (KindInvalid).
func (c *compiler) class(ranges []rune) frag {
	var seqs []seq
	hasFFFD := false
	for i := 0; i+1 < len(ranges); i += 2 {
		seqs = appendSeqs(seqs, ranges[i], ranges[i+1])
		if ranges[i] <= utf8RuneError && utf8RuneError <= ranges[i+1] {
			hasFFFD = true
		}
	}
	if len(seqs) == 0 {
		return failFrag()
	}
	root := &trieNode{}
	for _, s := range seqs {
		cur := root
		for i := 0; i < s.n; i++ {
			last := len(cur.edges) - 1
			if i < s.n-1 && last >= 0 && cur.edges[last].lo == s.lo[i] && cur.edges[last].hi == s.hi[i] && cur.edges[last].child != nil {
				cur = cur.edges[last].child
				continue
			}
			if last >= 0 && cur.edges[last].hi >= s.lo[i] {
				panic(fmt.Sprintf("nfa: overlapping UTF-8 ranges %x-%x after %x-%x", s.lo[i], s.hi[i], cur.edges[last].lo, cur.edges[last].hi))
			}
			e := trieEdge{lo: s.lo[i], hi: s.hi[i]}
			if i < s.n-1 {
				e.child = &trieNode{}
			}
			cur.edges = append(cur.edges, e)
			cur = e.child
		}
	}
	var out []patch
	start := c.emitTrie(root, &out)
	if hasFFFD {
		inv := c.add(State{Kind: KindInvalid})
		out = append(out, patch{inv, -1})
		start = c.add(State{Kind: KindUnion, Alts: []StateID{start, inv}})
	}
	return frag{start: start, out: out}
}

const utf8RuneError = unicode.ReplacementChar

// emitTrie adds states for the trie rooted at n and returns its entry;
// edges that complete a sequence are appended to out as dangling exits.
func (c *compiler) emitTrie(n *trieNode, out *[]patch) StateID {
	if len(n.edges) == 1 {
		e := n.edges[0]
		s := c.add(State{Kind: KindRange, Lo: e.lo, Hi: e.hi})
		if e.child == nil {
			*out = append(*out, patch{s, -1})
		} else {
			next := c.emitTrie(e.child, out)
			if !c.tooBig {
				c.n.states[s].Next = next
			}
		}
		return s
	}
	trans := make([]Transition, len(n.edges))
	s := c.add(State{Kind: KindSparse, Trans: trans})
	for i, e := range n.edges {
		trans[i].Lo, trans[i].Hi = e.lo, e.hi
		if e.child == nil {
			*out = append(*out, patch{s, int32(i)})
		} else {
			trans[i].Next = c.emitTrie(e.child, out)
		}
	}
	return s
}
