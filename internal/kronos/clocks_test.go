package kronos

import (
	"errors"
	"testing"

	"github.com/weft-db/weft/internal/vclock"
)

// Dissertation §3.5.1 with cleanup: a clock event Cleanup released but that
// still lives (pinned by an edge, then by a client reference) keeps its place
// below later clocks — of its own gatekeeper and of others that have seen it
// — so a must ordering a later clock before an event that precedes it is
// refused. Once nothing reaches it, it is collected and leaves its chain.
// Before the fix, Cleanup dropped it from its chain at once, the later
// clocks were not linked above it, and both musts below were accepted:
// p → gk0@[1,0], and gk0@[1,0] < gk0@[3,1], gk1@[1,3] in vector-clock order.
func TestKronosDiss3_5_1ReleasedClockEventKeepsItsPlace(t *testing.T) {
	g := newGraph(t)
	ck := func(owner uint32, cs ...uint64) Ref { return ClockRef(owner, vclock.Clock{Counters: cs}) }
	p := g.CreateEvent()
	mustAssign(t, g, Assignment{ID(p), Before, ck(0, 1, 0), Must})
	e, ok, err := g.lookup(ck(0, 1, 0))
	if err != nil || !ok {
		t.Fatalf("gk0@[1,0]: %v %v", ok, err)
	}
	for gk := range uint32(2) {
		if _, _, err := g.Cleanup(gk, vclock.Clock{Counters: []uint64{2, 1}}); err != nil {
			t.Fatal(err)
		}
	}
	if !g.Exists(e) || g.Stats().ClockEvents != 0 {
		t.Fatalf("released gk0@[1,0] (#%d): exists %v, stats %+v", e, g.Exists(e), g.Stats())
	}
	check(t, g)
	for _, late := range []Ref{ck(0, 3, 1), ck(1, 1, 3)} {
		_, err := g.AssignOrder(nil, []Assignment{{late, Before, ID(p), Must}})
		var ce *ConflictError
		if !errors.As(err, &ce) || ce.Actual != After {
			t.Fatalf("%s must before #%d (which precedes released %s): %v, want a conflict holding after", late, p, ck(0, 1, 0), err)
		}
		mustAssign(t, g, Assignment{late, After, ID(p), Prefer})
		if o := query(t, g, e, mustLookup(t, g, late)); o != Before {
			t.Fatalf("released #%d vs %s: %s, want before", e, late, o)
		}
	}
	// The released event's clock names nothing any more.
	if o, err := g.QueryOrder(nil, []Pair{{ck(0, 1, 0), ID(p)}}); err != nil || o[0] != Unknown {
		t.Fatalf("query by a released clock: %v %v", o, err)
	}
	if _, err := g.AssignOrder(nil, []Assignment{{ck(0, 1, 0), Before, ID(p), Prefer}}); !errors.Is(err, ErrCollected) {
		t.Fatalf("assign by a released clock: %v", err)
	}
	// A client reference keeps it alive, and in place, once p is gone.
	if err := g.AcquireRefs([]EventID{e}); err != nil {
		t.Fatal(err)
	}
	if n, err := g.ReleaseRefs([]EventID{p}); err != nil || n != 1 {
		t.Fatalf("releasing p collected %d (%v), want p only", n, err)
	}
	check(t, g)
	q := g.CreateEvent()
	mustAssign(t, g, Assignment{ID(q), Before, ID(e), Must})
	if _, err := g.AssignOrder(nil, []Assignment{{ck(0, 5, 3), Before, ID(q), Must}}); !errors.Is(err, ErrMustConflict) {
		t.Fatalf("gk0@[5,3] must before #%d → released #%d: %v", q, e, err)
	}
	// Unreachable at last: collected, and gone from its chain.
	if n, err := g.ReleaseRefs([]EventID{q, e}); err != nil || n != 2 {
		t.Fatalf("releasing q and the released event collected %d (%v), want 2", n, err)
	}
	check(t, g)
	if len(g.clocks.released) != 0 {
		t.Fatalf("released entries still listed: %v", g.clocks.released)
	}
	for _, k := range g.clocks.keys {
		for _, en := range g.clocks.chains[k].entries {
			if en.id == e {
				t.Fatalf("collected #%d still in chain %v", e, k)
			}
		}
	}
	snap := g.AppendSnapshot(nil)
	if r, err := Restore(DefaultConfig(), snap); err != nil || string(r.AppendSnapshot(nil)) != string(snap) {
		t.Fatalf("snapshot round trip: %v", err)
	}
}

// A released entry that lives is part of the snapshot (told apart by its
// event, which holds no clock flag) and survives Restore in place; cleaning
// up everything and releasing every reference then leaves no chain.
func TestKronosDiss3_5_1ReleasedEntriesSurviveRestore(t *testing.T) {
	g := newGraph(t)
	ck := func(owner uint32, cs ...uint64) Ref { return ClockRef(owner, vclock.Clock{Counters: cs}) }
	p := g.CreateEvent()
	mustAssign(t, g, Assignment{ID(p), Before, ck(0, 1), Must}, Assignment{ck(0, 2), Before, ck(0, 4), Prefer})
	if rel, col, err := g.Cleanup(0, vclock.Clock{Counters: []uint64{3}}); err != nil || rel != 2 || col != 0 {
		t.Fatalf("cleanup released %d collected %d (%v), want 2 and 0 (p pins both)", rel, col, err)
	}
	r, err := Restore(DefaultConfig(), g.AppendSnapshot(nil))
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range []*Graph{g, r} {
		if ch := h.clocks.chains[chainKey{}]; ch == nil || len(ch.entries) != 3 || ch.rel != 2 || len(h.clocks.released) != 2 {
			t.Fatalf("chain gk0: %+v, released %v", ch, h.clocks.released)
		}
		if _, err := h.AssignOrder(nil, []Assignment{{ck(0, 5), Before, ID(p), Must}}); !errors.Is(err, ErrMustConflict) {
			t.Fatalf("gk0@[5] must before p: %v", err)
		}
		if _, _, err := h.Cleanup(0, vclock.Clock{Epoch: 1, Counters: []uint64{0}}); err != nil {
			t.Fatal(err)
		}
		if n, err := h.ReleaseRefs([]EventID{p}); err != nil || n != 4 {
			t.Fatalf("releasing p collected %d (%v), want 4", n, err)
		}
		if len(h.clocks.keys) != 0 || len(h.clocks.chains) != 0 || len(h.clocks.released) != 0 || len(h.clocks.width) != 0 {
			t.Fatalf("clock index not empty: %+v", h.clocks)
		}
		check(t, h)
	}
}

func mustLookup(t *testing.T, g *Graph, r Ref) EventID {
	t.Helper()
	id, ok, err := g.lookup(r)
	if err != nil || !ok {
		t.Fatalf("lookup %s: %v %v", r, ok, err)
	}
	return id
}
