// Package nfa owns streamsub's byte-level Thompson NFA: the one automaton
// that every matching engine (the exact Pike VM, the lazy DFA) runs.
//
// An NFA is built by New from the parsed and simplified regular expressions
// of a rule set, in declaration order. It matches the alternation
// (r0)|(r1)|… with leftmost-first priority exactly as Go's regexp does:
// the structure of every quantifier and alternation mirrors
// regexp/syntax.Compile, so following a Union's Alts in order reproduces
// Go's thread priority. Match states carry the RuleID of their rule.
//
// The NFA is byte-level: every rune class is expanded into sequences of
// UTF-8 byte ranges (Russ Cox's "utf8 ranges" splitting; surrogates are
// never produced). Go's regexp decodes its input like utf8.DecodeRune, so
// a byte that does not begin a valid UTF-8 sequence is one unit equal to
// U+FFFD. Classes that contain U+FFFD therefore also get an Invalid state,
// whose transition consumes ONE byte b at position p only if the decoding
// at p is invalid there: b >= 0x80 and UnitLen(body[p:], atEOF) == 1. That
// decision needs up to three bytes after p (or knowing EOF), see UnitLen.
// An engine that cannot look ahead may over-approximate Invalid as "any
// byte >= 0x80" and let the exact engine decide.
//
// Searches are unanchored in the Go sense: a match may start only at a
// unit boundary of the decoding that begins at the search's restart point
// (UnitLen again), never inside a multi-byte sequence. Start returns the
// anchored start state; engines add it at each allowed start position.
//
// Empty-width assertions are Look states decided at a position p from the
// byte before p and the byte at p (-1 at the body's edges), so an engine
// processes position p only once byte p is known or EOF is known: all
// matches are delayed by one byte. Capture states are epsilon transitions
// that record a rule-local slot (2*group, 2*group+1; group 0 is the whole
// match); engines that need no captures treat them as plain epsilons.
//
// Every engine runs the NFA with the primitives of this package, so that
// they decide Invalid bytes and assertions alike: State.Step (what a
// consuming state accepts), Walker (epsilon closures in priority order,
// their Look states decided from a LookCtx, capture Slots tracked on
// request), StateSet, and Context (what assertions see of a neighbouring
// byte, for engines that precompute per context).
//
// An NFA is immutable after New and safe for concurrent use.
package nfa

import (
	"fmt"
	"strings"
)

// StateID identifies a state of an NFA: an index into its state table.
type StateID uint32

// RuleID identifies a rule: its position in declaration order. A lower
// RuleID has priority over a higher one when both match at the same start.
type RuleID uint32

// Kind is the kind of a State.
type Kind uint8

// State kinds. Range, Sparse and Invalid consume one byte; Union, Look and
// Capture are epsilon transitions; Match and Fail are terminal.
const (
	KindFail    Kind = iota // matches nothing; the thread dies
	KindRange               // consumes one byte in [Lo, Hi], then goes to Next
	KindSparse              // consumes one byte in one of Trans (sorted, disjoint), then goes to its Next
	KindInvalid             // consumes one byte that begins no valid UTF-8 unit at its position (see UnitLen), then Next
	KindUnion               // epsilon to each of Alts, in priority order (first = preferred)
	KindLook                // epsilon to Next if assertion Look holds at the current position
	KindCapture             // epsilon to Next, recording the current position in rule-local Slot
	KindMatch               // rule Rule matches here
)

var kindNames = [...]string{"fail", "range", "sparse", "invalid", "union", "look", "capture", "match"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", k)
}

// Transition is one byte-range edge of a Sparse state.
type Transition struct {
	Lo, Hi byte
	Next   StateID
}

// State is one NFA state. Which fields are meaningful depends on Kind.
type State struct {
	Kind  Kind
	Look  Look         // Look: the assertion
	Lo    byte         // Range: lowest byte accepted
	Hi    byte         // Range: highest byte accepted
	Slot  uint32       // Capture: rule-local slot, 2*group (start) or 2*group+1 (end)
	Rule  RuleID       // Match, Capture: the rule the state belongs to
	Next  StateID      // Range, Invalid, Look, Capture: successor
	Trans []Transition // Sparse: byte-range edges, sorted by Lo, disjoint
	Alts  []StateID    // Union: successors in priority order
}

// RuleInfo describes the capture groups of one rule.
type RuleInfo struct {
	Start     StateID  // anchored start of this rule alone (its group-0 Capture)
	NumGroups int      // capture groups, not counting group 0
	Names     []string // Names[i] names group i ("" if unnamed); len NumGroups+1
}

// NFA is a compiled byte-level Thompson NFA for an ordered rule set.
//
// Invariants: states[0] is a Fail state; every StateID stored in a state is
// a valid index; each rule's states are reachable only through its Start,
// so its Match and Capture states carry its RuleID.
type NFA struct {
	states     []State
	start      StateID
	rules      []RuleInfo
	hasInvalid bool
}

// Len returns the number of states; StateIDs are in [0, Len()).
func (n *NFA) Len() int { return len(n.states) }

// State returns the state with the given id. The result must not be modified.
func (n *NFA) State(id StateID) *State { return &n.states[id] }

// States returns the state table, indexed by StateID, for engines that
// walk it in their inner loops. It must not be modified.
func (n *NFA) States() []State { return n.states }

// Start returns the anchored start state of the alternation of all rules.
func (n *NFA) Start() StateID { return n.start }

// NumRules returns the number of rules.
func (n *NFA) NumRules() int { return len(n.rules) }

// Rule returns the description of rule r.
func (n *NFA) Rule(r RuleID) RuleInfo { return n.rules[r] }

// HasInvalid reports whether some state is of kind Invalid, i.e. whether a
// rule can match invalid UTF-8 bytes.
func (n *NFA) HasInvalid() bool { return n.hasInvalid }

// String returns a compact dump of the NFA, one state per line:
//
//	^003 range 61-63 >4
//
// where ^ marks the start state. Kinds print as: fail; range LO-HI >NEXT;
// sparse{LO-HI>N ...}; invalid >NEXT; union(A,B,...); look(^) >NEXT;
// cap(RULE.SLOT) >NEXT; match(RULE). Bytes are two hex digits.
func (n *NFA) String() string {
	var b strings.Builder
	for i := range n.states {
		mark := " "
		if StateID(i) == n.start {
			mark = "^"
		}
		fmt.Fprintf(&b, "%s%03d %s\n", mark, i, n.states[i].String())
	}
	return b.String()
}

// String returns the state in the format of NFA.String.
func (s *State) String() string {
	switch s.Kind {
	case KindFail:
		return "fail"
	case KindRange:
		return fmt.Sprintf("range %02x-%02x >%d", s.Lo, s.Hi, s.Next)
	case KindSparse:
		var b strings.Builder
		b.WriteString("sparse{")
		for i, t := range s.Trans {
			if i > 0 {
				b.WriteByte(' ')
			}
			fmt.Fprintf(&b, "%02x-%02x>%d", t.Lo, t.Hi, t.Next)
		}
		b.WriteByte('}')
		return b.String()
	case KindInvalid:
		return fmt.Sprintf("invalid >%d", s.Next)
	case KindUnion:
		var b strings.Builder
		b.WriteString("union(")
		for i, a := range s.Alts {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "%d", a)
		}
		b.WriteByte(')')
		return b.String()
	case KindLook:
		return fmt.Sprintf("look(%s) >%d", s.Look, s.Next)
	case KindCapture:
		return fmt.Sprintf("cap(%d.%d) >%d", s.Rule, s.Slot, s.Next)
	case KindMatch:
		return fmt.Sprintf("match(%d)", s.Rule)
	}
	return s.Kind.String()
}
