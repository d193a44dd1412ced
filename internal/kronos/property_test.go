package kronos

import (
	"bytes"
	"errors"
	"maps"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// Property tests of the core against the brute-force refModel (model_test.go)
// over long random operation sequences, driven by harness (harness_test.go).
// Sequences are about ten times -rapid.steps long (300 by default); run
// longer with e.g. -rapid.checks=2000 -rapid.steps=300.

// runHarness runs one random sequence of about 10×steps operations.
func runHarness(t *rapid.T, h *harness) {
	steps := rapidSteps()
	n := rapid.IntRange(5*steps, 15*steps).Draw(t, "ops")
	for range n {
		h.step(t)
	}
	h.checkAllPairs(t, h.gs[0])
}

// Kronos paper §2.2 (create_event, acquire_ref, release_ref, query_order,
// assign_order) and §2.1 (coherency, monotonicity): every answer and error
// of the core equals the brute-force model's, the graph stays acyclic, no
// BEFORE/AFTER answer ever changes while both events live, and a rejected
// call (an aborted batch included) leaves the snapshot bytes unchanged.
func TestKronos2_2APIMatchesModel(t *testing.T) {
	cov := &coverage{}
	rapid.Check(t, func(t *rapid.T) {
		runHarness(t, newHarness(t, false, cov))
	})
	t.Log(cov)
}

// Dissertation §3.5.1: events named by the vector clocks of 1–4 gatekeepers
// (monotone clocks, gossip, epochs, cleanup reports), mixed with id events.
// Vector-clock order is always graph order, a must against it is rejected,
// and everything else matches the model as for id events.
func TestKronosDiss3_5_1ClockEventsMatchModel(t *testing.T) {
	cov := &coverage{}
	rapid.Check(t, func(t *rapid.T) {
		runHarness(t, newHarness(t, true, cov))
	})
	t.Log(cov)
}

// Kronos paper §2.3: releasing every client reference (and cleaning up every
// clock) collects every event — strict GC eventually removes all — and frees
// every table chunk.
func TestKronos2_3ReleasingEveryReferenceCollectsAll(t *testing.T) {
	cov := &coverage{}
	rapid.Check(t, func(t *rapid.T) {
		h := newHarness(t, rapid.Bool().Draw(t, "clocks"), cov)
		n := rapid.IntRange(0, 5*rapidSteps()).Draw(t, "ops")
		for range n {
			h.step(t)
		}
		h.drain(t)
	})
	t.Log(cov)
}

// Kronos paper §2.3 and Figure 4, against an oracle independent of refModel:
// after each single release, an event exists iff it is referenced or
// reachable from a referenced event over the orders the graph accepted —
// a pinned event is never collected early, an unpinned one never late — and
// release_ref reports exactly the events that left.
func TestKronos2_3StrictGCKeepsExactlyTheReachable(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		g, _ := New(DefaultConfig())
		ids, _ := g.CreateEvents(nil, rapid.IntRange(1, 24).Draw(t, "events"))
		refs := map[EventID]int{}
		for _, id := range ids {
			refs[id] = 1
		}
		for range rapid.IntRange(0, 8).Draw(t, "acquires") {
			id := rapid.SampledFrom(ids).Draw(t, "acquire")
			if err := g.AcquireRefs([]EventID{id}); err != nil {
				t.Fatal(err)
			}
			refs[id]++
		}
		succ := map[EventID][]EventID{}
		for range rapid.IntRange(0, 3*len(ids)).Draw(t, "orders") {
			a := rapid.SampledFrom(ids).Draw(t, "a")
			b := rapid.SampledFrom(ids).Draw(t, "b")
			if a == b {
				continue
			}
			r, err := g.AssignOrder(nil, []Assignment{{ID(a), Before, ID(b), Prefer}})
			if err != nil {
				t.Fatal(err)
			}
			if r[0].Order == Before {
				succ[a] = append(succ[a], b)
			} else {
				succ[b] = append(succ[b], a)
			}
		}
		reachable := func() map[EventID]bool {
			live := map[EventID]bool{}
			var stack []EventID
			for id, n := range refs {
				if n > 0 {
					live[id] = true
					stack = append(stack, id)
				}
			}
			for len(stack) > 0 {
				v := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				for _, w := range succ[v] {
					if !live[w] {
						live[w] = true
						stack = append(stack, w)
					}
				}
			}
			return live
		}
		was := reachable()
		for {
			held := slices.Sorted(maps.Keys(refs))
			held = slices.DeleteFunc(held, func(id EventID) bool { return refs[id] == 0 })
			if len(held) == 0 {
				break
			}
			id := rapid.SampledFrom(held).Draw(t, "release")
			n, err := g.ReleaseRefs([]EventID{id})
			if err != nil {
				t.Fatal(err)
			}
			refs[id]--
			live := reachable()
			if n != len(was)-len(live) {
				t.Fatalf("release of %d collected %d, but %d events became unreachable", id, n, len(was)-len(live))
			}
			for _, e := range ids {
				if g.Exists(e) != live[e] {
					t.Fatalf("after releasing %d: event %d exists=%v, reachable from a referenced event=%v", id, e, g.Exists(e), live[e])
				}
			}
			if err := g.CheckInvariants(); err != nil {
				t.Fatal(err)
			}
			was = live
		}
		if st := g.Stats(); st.Events != 0 || st.Edges != 0 {
			t.Fatalf("everything released, but %+v", st)
		}
	})
}

// Kronos paper §2.2, atomic batches: a must pair that contradicts the graph,
// at any position of a batch of musts and prefers, rejects the whole batch
// with its index and the order the graph holds, and changes nothing; the
// same batch without it applies every pair.
func TestKronos2_2AtomicBatchesAllOrNothing(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		g, _ := New(DefaultConfig())
		ids, _ := g.CreateEvents(nil, rapid.IntRange(4, 16).Draw(t, "events"))
		for range rapid.IntRange(0, 2*len(ids)).Draw(t, "orders") {
			a, b := rapid.SampledFrom(ids).Draw(t, "a"), rapid.SampledFrom(ids).Draw(t, "b")
			if a != b {
				if _, err := g.AssignOrder(nil, []Assignment{{ID(a), Before, ID(b), Prefer}}); err != nil {
					t.Fatal(err)
				}
			}
		}
		// The contradiction: x → y is held, y → x is demanded.
		x, y := ids[0], ids[1]
		if o := queryRapid(t, g, x, y); o == Concurrent {
			mustAssignRapid(t, g, Assignment{ID(x), Before, ID(y), Must})
		} else if o == After {
			x, y = y, x
		}
		// The rest can never conflict: prefers anywhere, and musts along a
		// chain of fresh events.
		fresh, _ := g.CreateEvents(nil, 4)
		var batch []Assignment
		for i := range rapid.IntRange(0, 8).Draw(t, "batch") {
			if i < len(fresh)-1 && rapid.Bool().Draw(t, "must") {
				batch = append(batch, Assignment{ID(fresh[i]), Before, ID(fresh[i+1]), Must})
				continue
			}
			a, b := rapid.SampledFrom(ids).Draw(t, "a"), rapid.SampledFrom(fresh).Draw(t, "b")
			o := rapid.SampledFrom([]Order{Before, After}).Draw(t, "o")
			batch = append(batch, Assignment{ID(a), o, ID(b), Prefer})
		}
		at := rapid.IntRange(0, len(batch)).Draw(t, "at")
		bad := Assignment{ID(y), Before, ID(x), Must}
		if rapid.Bool().Draw(t, "flip") {
			bad = Assignment{ID(x), After, ID(y), Must}
		}
		withBad := slices.Insert(slices.Clone(batch), at, bad)
		snap, stats := g.AppendSnapshot(nil), g.Stats()
		_, err := g.AssignOrder(nil, withBad)
		var ce *ConflictError
		if !errors.As(err, &ce) || ce.Index != at || ce.Actual != bad.Order.Reverse() {
			t.Fatalf("batch %s: want conflict at %d holding %s, got %v", fmtAssignments(withBad), at, bad.Order.Reverse(), err)
		}
		if !bytes.Equal(snap, g.AppendSnapshot(nil)) || g.Stats() != stats {
			t.Fatal("aborted batch changed the graph")
		}
		if len(batch) == 0 {
			return
		}
		res, err := g.AssignOrder(nil, batch)
		if err != nil {
			t.Fatalf("batch without the contradiction: %v", err)
		}
		for i, a := range batch {
			if o := queryRapid(t, g, a.A.ID, a.B.ID); o != res[i].Order || !res[i].Reversed && o != a.Order {
				t.Fatalf("pair %d %+v: result %+v, graph holds %s", i, a, res[i], o)
			}
		}
		if err := g.CheckInvariants(); err != nil {
			t.Fatal(err)
		}
	})
}

// Kronos paper §2.4: the state machine is deterministic. A replica restored
// from a snapshot at a random point, then fed the same commands, answers
// identically and stays byte-identical to the original (checked after every
// command), also when its cache is configured differently.
func TestKronos2_4RestoredReplicaStaysIdentical(t *testing.T) {
	cov := &coverage{}
	rapid.Check(t, func(t *rapid.T) {
		h := newHarness(t, rapid.Bool().Draw(t, "clocks"), cov)
		steps := rapidSteps()
		for range rapid.IntRange(0, 5*steps).Draw(t, "before") {
			h.step(t)
		}
		cfg := h.cfg
		cfg.CacheSlots = rapid.SampledFrom([]int{0, 2, 1 << 10}).Draw(t, "replicaCache")
		h.gs = append(h.gs, h.restore(t, h.gs[0], cfg))
		for range rapid.IntRange(1, 5*steps).Draw(t, "after") {
			h.step(t)
		}
	})
	t.Log(cov)
}

// Kronos paper §2.5: caching traversal results never changes an answer.
// Cores with no cache, a one-slot cache (every answer evicts the last) and a
// large one run the same commands; every answer must equal the model's.
func TestKronos2_5CacheNeverChangesAnswers(t *testing.T) {
	cov := &coverage{}
	rapid.Check(t, func(t *rapid.T) {
		h := newHarness(t, rapid.Bool().Draw(t, "clocks"), cov)
		for _, slots := range []int{0, 1, 1 << 12} {
			g, err := New(Config{CacheSlots: slots, PairsMax: h.cfg.PairsMax})
			if err != nil {
				t.Fatal(err)
			}
			h.gs = append(h.gs, g)
		}
		for range rapid.IntRange(1, 5*rapidSteps()).Draw(t, "ops") {
			h.step(t)
		}
	})
	t.Log(cov)
}

func mustAssignRapid(t *rapid.T, g *Graph, as ...Assignment) {
	t.Helper()
	if _, err := g.AssignOrder(nil, as); err != nil {
		t.Fatal(err)
	}
}

func queryRapid(t *rapid.T, g *Graph, a, b EventID) Order {
	t.Helper()
	o, err := g.QueryOrder(nil, []Pair{{ID(a), ID(b)}})
	if err != nil {
		t.Fatal(err)
	}
	return o[0]
}
