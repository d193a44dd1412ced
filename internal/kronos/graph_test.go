package kronos

import (
	"errors"
	"testing"

	"github.com/weft-db/weft/internal/vclock"
)

func newGraph(t testing.TB) *Graph {
	t.Helper()
	g, err := New(DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func mustAssign(t *testing.T, g *Graph, as ...Assignment) []AssignResult {
	t.Helper()
	r, err := g.AssignOrder(nil, as)
	if err != nil {
		t.Fatal(err)
	}
	check(t, g)
	return r
}

func check(t *testing.T, g *Graph) {
	t.Helper()
	if err := g.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
}

func query(t *testing.T, g *Graph, a, b EventID) Order {
	t.Helper()
	o, err := g.QueryOrder(nil, []Pair{{ID(a), ID(b)}})
	if err != nil {
		t.Fatal(err)
	}
	return o[0]
}

// Kronos paper §2.2: must before prefer, atomic batches, prefer reversal.
func TestAssignOrderSemantics(t *testing.T) {
	g := newGraph(t)
	a, b, c := g.CreateEvent(), g.CreateEvent(), g.CreateEvent()
	if o := query(t, g, a, b); o != Concurrent {
		t.Fatalf("fresh events: %s", o)
	}
	r := mustAssign(t, g, Assignment{ID(a), Before, ID(b), Must})
	if r[0] != (AssignResult{Order: Before}) || query(t, g, a, b) != Before || query(t, g, b, a) != After {
		t.Fatalf("a→b not recorded: %+v", r)
	}
	// A prefer listed first still yields to a later must.
	r = mustAssign(t, g, Assignment{ID(c), Before, ID(a), Prefer}, Assignment{ID(b), Before, ID(c), Must})
	if r[0] != (AssignResult{Order: After, Reversed: true}) || r[1].Order != Before {
		t.Fatalf("must-first batch: %+v", r)
	}
	if query(t, g, a, c) != Before {
		t.Fatal("transitivity a→b→c lost")
	}
	// A contradicted must aborts everything, including earlier pairs.
	d := g.CreateEvent()
	before := g.Stats()
	_, err := g.AssignOrder(nil, []Assignment{{ID(a), Before, ID(d), Must}, {ID(c), Before, ID(a), Must}})
	var ce *ConflictError
	if !errors.As(err, &ce) || ce.Index != 1 || ce.Actual != After || !errors.Is(err, ErrMustConflict) {
		t.Fatalf("want conflict at pair 1 holding after, got %v", err)
	}
	if g.Stats() != before || query(t, g, a, d) != Concurrent {
		t.Fatal("aborted batch changed the graph")
	}
	check(t, g)
}

func TestBadRequestsChangeNothing(t *testing.T) {
	g := newGraph(t)
	a, b := g.CreateEvent(), g.CreateEvent()
	before := g.Stats()
	for name, err := range map[string]error{
		"self":         errOf(g.AssignOrder(nil, []Assignment{{ID(a), Before, ID(a), Must}})),
		"unknown":      errOf(g.AssignOrder(nil, []Assignment{{ID(a), Before, ID(b), Must}, {ID(a), Before, ID(99), Prefer}})),
		"bad order":    errOf(g.AssignOrder(nil, []Assignment{{ID(a), Concurrent, ID(b), Must}})),
		"bad strength": errOf(g.AssignOrder(nil, []Assignment{{ID(a), Before, ID(b), 0}})),
		"empty":        errOf(g.AssignOrder(nil, nil)),
		"zero id":      errOf(g.QueryOrder(nil, []Pair{{ID(0), ID(a)}})),
		"underflow":    errOf(g.ReleaseRefs([]EventID{a, a})),
		"unknown ref":  g.AcquireRefs([]EventID{a, 77}),
	} {
		if err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if g.Stats() != before || query(t, g, a, b) != Concurrent {
		t.Fatal("a rejected request changed the graph")
	}
	check(t, g)
}

func errOf[T any](_ T, err error) error { return err }

// Kronos paper §2.3, Figure 4: A pins B, C, D; releasing A collects all four.
func TestStrictGCFigure4(t *testing.T) {
	g := newGraph(t)
	a, b, c, d := g.CreateEvent(), g.CreateEvent(), g.CreateEvent(), g.CreateEvent()
	mustAssign(t, g, Assignment{ID(a), Before, ID(b), Must}, Assignment{ID(b), Before, ID(c), Must}, Assignment{ID(a), Before, ID(d), Must})
	if n, err := g.ReleaseRefs([]EventID{b, c, d}); err != nil || n != 0 {
		t.Fatalf("pinned events collected: %d %v", n, err)
	}
	if query(t, g, a, c) != Before {
		t.Fatal("pinned event lost its order")
	}
	if n, err := g.ReleaseRefs([]EventID{a}); err != nil || n != 4 {
		t.Fatalf("releasing A collected %d, want 4 (%v)", n, err)
	}
	if g.Stats().Events != 0 || query(t, g, a, c) != Unknown {
		t.Fatalf("graph not empty: %+v", g.Stats())
	}
	check(t, g)
}

func TestClockEventsAgreeWithVectorClocks(t *testing.T) {
	g := newGraph(t)
	ck := func(owner uint32, cs ...uint64) Ref { return ClockRef(owner, vclock.Clock{Counters: cs}) }
	// Concurrent clocks of two gatekeepers are ordered by assignment.
	r := mustAssign(t, g, Assignment{ck(0, 1, 0), After, ck(1, 0, 1), Prefer})
	if r[0].Order != After {
		t.Fatalf("%+v", r)
	}
	// Same-gatekeeper clocks are ordered by their counters without any edge asked.
	mustAssign(t, g, Assignment{ck(0, 3, 0), Before, ck(1, 0, 5), Prefer})
	o, err := g.QueryOrder(nil, []Pair{{ck(0, 1, 0), ck(0, 3, 0)}, {ck(1, 0, 1), ck(0, 3, 0)}, {ck(1, 0, 1), ck(1, 0, 5)}})
	if err != nil || o[0] != Before || o[1] != Before || o[2] != Before {
		t.Fatalf("chain order: %v %v", o, err)
	}
	// gk1's (3,6) has seen gk0's (3,0), so it cannot be ordered before gk0's (1,0).
	_, err = g.AssignOrder(nil, []Assignment{{ck(1, 3, 6), Before, ck(0, 1, 0), Must}})
	if !errors.Is(err, ErrMustConflict) {
		t.Fatalf("vector-clock order contradicted: %v", err)
	}
	// A clock that contradicts its chain is rejected.
	_, err = g.AssignOrder(nil, []Assignment{{ck(0, 2, 9), Before, ck(1, 0, 5), Prefer}})
	if !errors.Is(err, ErrClockInvalid) {
		t.Fatalf("non-monotone clock accepted: %v", err)
	}
	check(t, g)
	// Cleanup: once both gatekeepers report, events below the minimum go.
	if rel, _, err := g.Cleanup(0, vclock.Clock{Counters: []uint64{4, 4}}); err != nil || rel != 0 {
		t.Fatalf("cleanup with one report released %d (%v)", rel, err)
	}
	rel, col, err := g.Cleanup(1, vclock.Clock{Counters: []uint64{4, 2}})
	if err != nil || rel != 3 || col != 3 { // (1,0), (3,0), (0,1) are below (4,2); (0,5) is not
		t.Fatalf("cleanup released %d collected %d (%v), want 3 and 3", rel, col, err)
	}
	check(t, g)
	if _, err := g.AssignOrder(nil, []Assignment{{ck(0, 1, 0), Before, ck(1, 0, 5), Prefer}}); !errors.Is(err, ErrCollected) {
		t.Fatalf("clock below watermark accepted: %v", err)
	}
}

func TestSnapshotRoundTrip(t *testing.T) {
	g := newGraph(t)
	var ids []EventID
	for range 5000 {
		ids = append(ids, g.CreateEvent())
	}
	for i := 1; i < len(ids); i += 3 {
		mustAssignQuiet(t, g, Assignment{ID(ids[i-1]), Before, ID(ids[i]), Prefer})
	}
	if _, err := g.ReleaseRefs(ids[:4000]); err != nil {
		t.Fatal(err)
	}
	mustAssignQuiet(t, g, Assignment{ClockRef(0, vclock.Clock{Epoch: 2, Counters: []uint64{1, 0}}), Before, ID(ids[4500]), Must})
	snap := g.AppendSnapshot(nil)
	h, err := Restore(DefaultConfig(), snap)
	if err != nil {
		t.Fatal(err)
	}
	if string(h.AppendSnapshot(nil)) != string(snap) || h.Stats() != g.Stats() {
		t.Fatal("restored graph differs")
	}
	for i := 1; i < len(snap); i += len(snap) / 50 {
		if _, err := Restore(DefaultConfig(), snap[:i]); err == nil {
			t.Fatalf("truncated snapshot (%d bytes) accepted", i)
		}
	}
}

func mustAssignQuiet(t *testing.T, g *Graph, as ...Assignment) {
	t.Helper()
	if _, err := g.AssignOrder(nil, as); err != nil {
		t.Fatal(err)
	}
}
