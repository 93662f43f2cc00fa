package nfa

// LookCtx decides the Look states of a closure: it says what is known of
// the bytes around the closure's position.
type LookCtx struct {
	// Before and After are the bytes before and after the position (Edge
	// at the body's start or end); After may be Unknown, and then a closure
	// that meets an assertion on it stops (Walker.Closure).
	Before, After int
	// All makes every assertion hold whatever the bytes: the
	// over-approximation of the lazy DFA and the start sets.
	All bool
}

// AllLooks is the LookCtx in which every assertion holds.
var AllLooks = LookCtx{All: true}

// Slots are the capture slots a closure carries for one thread, for
// Walker.Closure: while the closure follows a Capture state whose slot is
// below len(Cur), Cur[slot] is Pos; each state the closure appends gets a
// copy of Cur appended to Out (len(Cur) ints per state).
type Slots struct {
	Cur []int
	Pos int
	Out []int
}

// Thread is a thread of a search: an NFA state, and the offset where the
// thread's match started (0 for engines that do not track it).
type Thread struct {
	ID    StateID
	Start int64
}

// Walker takes epsilon closures over an NFA for one engine: the only
// place that follows Union, Capture and Look states. Create it with
// NewWalker, then call Reset before the closures of each position; its
// scratch is sized to the NFA, so a closure allocates nothing (but the
// first with capture Slots, which sizes the undo stack). A Walker belongs
// to one goroutine.
type Walker struct {
	states []State
	at     LookCtx
	// Out holds the threads the closures since Reset reached, in priority
	// order: the consuming and match states, each with the start of the
	// thread it was reached from. A caller may truncate it, or swap in
	// another slice of its own (empty, of capacity >= the NFA's size).
	Out []Thread
	// Seen holds the states visited since Reset: a closure skips them (at
	// one position, a higher-priority thread owns them). Callers may ask
	// it what was visited.
	Seen     StateSet
	stack    []StateID
	undo     []undo
	captures int // Capture states: the undo stack's bound
}

// undo restores a capture slot once the closure below its Capture state
// is done: when the DFS stack is back to depth.
type undo struct {
	depth int32
	slot  uint32
	val   int
}

// NewWalker returns a walker for n.
func NewWalker(n *NFA) Walker {
	w := Walker{states: n.states, Out: make([]Thread, 0, len(n.states)), Seen: NewStateSet(len(n.states))}
	// The DFS stack holds each Union's lower alternatives at most once per
	// Reset, the undo stack one entry per Capture state.
	stack := 1
	for i := range n.states {
		stack += len(n.states[i].Alts)
		if n.states[i].Kind == KindCapture {
			w.captures++
		}
	}
	w.stack = make([]StateID, 0, stack)
	return w
}

// Reset starts the closures of a new position, whose Look states at
// decides: it empties Out and Seen.
func (w *Walker) Reset(at LookCtx) {
	w.at = at
	w.Out = w.Out[:0]
	w.Seen.Clear()
}

// Closure appends to Out, in priority order, the consuming and match
// states reachable from t's state by epsilon transitions at the position
// of the last Reset, with t's start, skipping (and marking) the states in
// Seen. With caps, it tracks the capture slots of the thread (see Slots);
// caps may be nil. It returns false, with Out holding part of the closure,
// when the byte after the position is Unknown and an assertion depends on
// it.
//
// The order is that of a DFS which follows a Union's Alts in order: Go's
// thread priority (package doc). A match state does not cut the states
// after it; the caller does.
func (w *Walker) Closure(t Thread, caps *Slots) bool {
	if caps != nil && w.undo == nil {
		w.undo = make([]undo, 0, w.captures)
	}
	id := t.ID
	stack := w.stack[:0]
	for {
		for w.Seen.Insert(id) {
			st := &w.states[id]
			switch st.Kind {
			case KindUnion:
				for j := len(st.Alts) - 1; j > 0; j-- {
					stack = append(stack, st.Alts[j])
				}
				id = st.Alts[0]
				continue
			case KindCapture:
				if caps != nil && int(st.Slot) < len(caps.Cur) {
					w.undo = append(w.undo, undo{depth: int32(len(stack)), slot: st.Slot, val: caps.Cur[st.Slot]})
					caps.Cur[st.Slot] = caps.Pos
				}
				id = st.Next
				continue
			case KindLook:
				if !w.at.All {
					if w.at.After == Unknown && st.Look&lookNeedsAfter != 0 {
						w.undo = w.undo[:0]
						return false
					}
					if !st.Look.Holds(w.at.Before, w.at.After) {
						break // the thread dies
					}
				}
				id = st.Next
				continue
			case KindFail:
			default:
				w.Out = append(w.Out, Thread{ID: id, Start: t.Start})
				if caps != nil {
					caps.Out = append(caps.Out, caps.Cur...)
				}
			}
			break
		}
		if caps != nil {
			for len(w.undo) > 0 && int(w.undo[len(w.undo)-1].depth) == len(stack) {
				u := w.undo[len(w.undo)-1]
				w.undo = w.undo[:len(w.undo)-1]
				caps.Cur[u.slot] = u.val
			}
		}
		if len(stack) == 0 {
			break
		}
		id = stack[len(stack)-1]
		stack = stack[:len(stack)-1]
	}
	if cap(stack) > cap(w.stack) {
		w.stack = stack // grown (NewWalker's bound makes that rare)
	}
	return true
}
