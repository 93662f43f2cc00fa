package nfa

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// closureString runs one closure from the start of n and prints the
// states it reached, in order: a byte range "61-62" for a consuming state,
// "match" for a match state; "stopped" when it needed the byte after.
func closureString(w *Walker, n *NFA, at LookCtx) string {
	w.Reset(at)
	ok := w.Closure(Thread{ID: n.Start(), Start: 7}, nil)
	var parts []string
	for _, t := range w.Out {
		if t.Start != 7 {
			return fmt.Sprintf("thread %v lost its start", t)
		}
		st := n.State(t.ID)
		switch st.Kind {
		case KindMatch:
			parts = append(parts, "match")
		case KindInvalid:
			parts = append(parts, "invalid")
		default:
			for e := range st.Edges() {
				parts = append(parts, fmt.Sprintf("%02x-%02x", e.Lo, e.Hi))
			}
		}
	}
	if !ok {
		parts = append(parts, "stopped")
	}
	return strings.Join(parts, " ")
}

// TestWalkerClosure checks the order of a closure (Go's thread priority),
// its Look decisions and its stop on an assertion about an unknown byte.
func TestWalkerClosure(t *testing.T) {
	mid := LookCtx{Before: 'x', After: 'y'}
	tests := []struct {
		rules []string
		at    LookCtx
		want  string
	}{
		{[]string{"a", "b", "c"}, mid, "61-61 62-62 63-63"},
		{[]string{"c", "b", "a"}, mid, "63-63 62-62 61-61"},
		{[]string{"a*b"}, mid, "61-61 62-62"},
		{[]string{"a*?b"}, mid, "62-62 61-61"}, // lazy: skipping the star comes first
		{[]string{"a?"}, mid, "61-61 match"},
		{[]string{"a??"}, mid, "match 61-61"},
		{[]string{"^a", "b"}, LookCtx{Before: Edge, After: 'a'}, "61-61 62-62"},
		{[]string{"^a", "b"}, mid, "62-62"},
		{[]string{`\ba`, "b"}, LookCtx{Before: ' ', After: Unknown}, "stopped"},
		{[]string{"b", `\ba`}, LookCtx{Before: ' ', After: Unknown}, "62-62 stopped"},
		{[]string{"^a", `\Bb`}, LookCtx{Before: 'x', After: Unknown}, "stopped"},
		{[]string{`(?:^|\b|\z)a`, "b"}, AllLooks, "61-61 62-62"},
		{[]string{`\x{FFFD}`}, mid, "ef-ef invalid"},
	}
	for _, tt := range tests {
		n := mustNew(t, tt.rules...)
		w := NewWalker(n)
		if got := closureString(&w, n, tt.at); got != tt.want {
			t.Errorf("%q at %+v: closure %q, want %q", tt.rules, tt.at, got, tt.want)
		}
	}
}

// TestWalkerSeen checks that a closure skips the states an earlier one of
// the same position reached, and that Reset forgets them.
func TestWalkerSeen(t *testing.T) {
	n := mustNew(t, "a", "b")
	w := NewWalker(n)
	w.Reset(LookCtx{Before: Edge, After: 'a'})
	w.Closure(Thread{ID: n.Start()}, nil)
	first := len(w.Out)
	w.Closure(Thread{ID: n.Start()}, nil)
	if first != 2 || len(w.Out) != first {
		t.Errorf("closures of one position reached %d then %d states, want 2 then none", first, len(w.Out)-first)
	}
	w.Reset(LookCtx{Before: Edge, After: 'a'})
	if w.Closure(Thread{ID: n.Start()}, nil); len(w.Out) != 2 {
		t.Errorf("after Reset: %d states, want 2", len(w.Out))
	}
}

// TestWalkerSlots checks capture tracking: each state reached gets the
// slots of its path, and a slot set on one branch is undone for the next.
func TestWalkerSlots(t *testing.T) {
	n := mustNew(t, "(a)|(b)|c")
	w := NewWalker(n)
	caps := Slots{Cur: []int{-1, -1, -1, -1, -1, -1}, Pos: 5}
	w.Reset(LookCtx{Before: Edge, After: 'a'})
	w.Closure(Thread{ID: n.Rule(0).Start}, &caps)
	want := [][]int{{5, -1, 5, -1, -1, -1}, {5, -1, -1, -1, 5, -1}, {5, -1, -1, -1, -1, -1}}
	if len(w.Out) != len(want) || len(caps.Out) != 6*len(want) {
		t.Fatalf("%d states, %d slots; want %d states of 6 slots", len(w.Out), len(caps.Out), len(want))
	}
	for i, ws := range want {
		if got := caps.Out[6*i : 6*i+6]; !slices.Equal(got, ws) {
			t.Errorf("state %d (%s): slots %v, want %v", i, n.State(w.Out[i].ID), got, ws)
		}
	}
	if !slices.Equal(caps.Cur, []int{-1, -1, -1, -1, -1, -1}) {
		t.Errorf("slots after the closure %v, want them restored", caps.Cur)
	}
}

// TestContextOf checks that a context's byte stands for every byte of it:
// each assertion holds for the one exactly when it holds for the other.
func TestContextOf(t *testing.T) {
	for c := Edge; c < 256; c++ {
		x := ContextOf(c)
		for _, l := range lookNames {
			for other := Edge; other < 256; other++ {
				if l.l.Holds(c, other) != l.l.Holds(x.Byte(), other) || l.l.Holds(other, c) != l.l.Holds(other, x.Byte()) {
					t.Fatalf("%s next to %#x: byte %#x of its context %d decides differently", l.name, other, c, x)
				}
			}
		}
	}
}
