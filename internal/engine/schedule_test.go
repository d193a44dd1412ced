package engine

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/weft-db/weft/internal/gatekeeper"
	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/value"
	"github.com/weft-db/weft/internal/vclock"
)

// gates is a scheduler for the shells' yield points (schedule.go): a test
// arms a gate at a point, the first goroutine to reach it announces itself
// and waits there until the test opens the gate; every other goroutine
// passes.
type gates struct {
	mu    sync.Mutex
	armed []*gate
}

type gate struct {
	p       yieldPoint
	gk, arg int
	arrived chan struct{} // closed when a goroutine waits at the gate
	open    chan struct{} // closed by the test to let it go on
}

func (gs *gates) arm(p yieldPoint, gk, arg int) *gate {
	g := &gate{p: p, gk: gk, arg: arg, arrived: make(chan struct{}), open: make(chan struct{})}
	gs.mu.Lock()
	gs.armed = append(gs.armed, g)
	gs.mu.Unlock()
	return g
}

func (gs *gates) yield(p yieldPoint, gk, arg int) {
	gs.mu.Lock()
	var hit *gate
	for i, g := range gs.armed {
		if g.p == p && g.gk == gk && g.arg == arg {
			hit = g
			gs.armed = append(gs.armed[:i], gs.armed[i+1:]...)
			break
		}
	}
	gs.mu.Unlock()
	if hit != nil {
		close(hit.arrived)
		<-hit.open
	}
}

// wait waits until a goroutine stands at the gate.
func (g *gate) wait(t *testing.T) {
	t.Helper()
	select {
	case <-g.arrived:
	case <-time.After(30 * time.Second):
		t.Fatalf("nothing reached yield point %d of gatekeeper %d (%d)", g.p, g.gk, g.arg)
	}
}

// partialSyncScenario is the schedule of TestReadPointAfterPartialSync,
// with bugs pl planted; it returns T's outcome and the reads that missed it.
//
// TestReadPointAfterPartialSync (dissertation §3.5.3; found by review, item
// 1 of the issue on one shell per role): with three gatekeepers A, C, B,
// A's clock sync loads C's published clock, is preempted, and loads B's
// only after B stamped a transaction T whose stamp had merged a newer clock
// of C. A then stamps the read point P and a transaction X that reads the
// vertex T writes; X reaches its commit section first, so Kronos orders
// X before T, and X stays in flight (its resolve is late). T is
// acknowledged. A read that begins after that acknowledgement must see T.
// With clocks merged counter by counter and points checked against the
// others' own counters only, P matched T on B's entry, was concurrent with
// it, and Kronos held P < X < T: the read missed T.
func partialSyncScenario(t *testing.T, pl plants) (tErr error, stale int) {
	t.Helper()
	cfg := memConfig()
	cfg.Gatekeepers, cfg.Shards = 3, 2
	cfg.plants = pl
	db := openTest(t, cfg)
	gs := &gates{}
	db.yield = gs.yield // nothing runs on the DB yet
	const A, C, B = 0, 1, 2
	v, w := twoShards(t, db)
	ctx := context.Background()
	set := func(h string, n int64) txn.Op {
		return txn.Op{Kind: txn.SetVertexProp, Vertex: h, Key: "n", Value: value.I64(n)}
	}
	if _, err := db.gks[A].commit(ctx, nil, []txn.Op{{Kind: txn.CreateVertex, Vertex: v}, {Kind: txn.CreateVertex, Vertex: w},
		set(v, 1), set(w, 1)}); err != nil {
		t.Fatal(err)
	}
	// X's read of v, at a snapshot before T.
	s0, key := db.gks[C].stampRead()
	db.gks[C].endRead(key)
	before, err := db.GetVertex(ctx, encodeSnapshot(s0), VertexRef{Name: v}, DefaultReadOptions())
	if err != nil || before.Props["n"].Int() != 1 {
		t.Fatalf("v before T: %+v %v", before, err)
	}

	// 1. A starts X; its sync stops before loading B's clock (C's is loaded).
	syncGate := gs.arm(yieldSyncLoad, A, B)
	resolveGate := gs.arm(yieldResolve, A, 0)
	xDone := make(chan error, 1)
	go func() {
		_, err := db.gks[A].commit(ctx, []txn.Read{before.Read}, []txn.Op{set(w, 2)})
		xDone <- err
	}()
	syncGate.wait(t)
	// 2. C stamps (a fresh read: nothing is in flight), publishing a newer
	// counter.
	_, key = db.gks[C].stampRead()
	db.gks[C].endRead(key)
	// 3. B stamps T (merging C's newer counter) and stops before its commit
	// section.
	criticalGate := gs.arm(yieldCritical, B, 0)
	tDone := make(chan error, 1)
	go func() {
		_, err := db.gks[B].commit(ctx, nil, []txn.Op{set(v, 2)})
		tDone <- err
	}()
	criticalGate.wait(t)
	// 4. A's sync goes on (B's clock now shows T), X is stamped after the
	// point P, commits first and stops before its resolve: in flight.
	close(syncGate.open)
	resolveGate.wait(t)
	// 5. T's commit section orders T after X's access of v; T is handed
	// off and acknowledged (or, where X's stamp follows T's, aborted).
	close(criticalGate.open)
	tErr = <-tDone
	if tErr == nil {
		// 6. A read that begins now must see T.
		for g := range db.gks {
			s, key := db.gks[g].stampRead()
			got, err := db.GetVertex(ctx, encodeSnapshot(s), VertexRef{Name: v}, DefaultReadOptions())
			db.gks[g].endRead(key)
			if err != nil {
				t.Fatal(err)
			}
			if n := got.Props["n"].Int(); n != 2 {
				t.Logf("a read through gatekeeper %d at %s, begun after T was acknowledged, read n=%d: T is missing", g, s, n)
				stale++
			}
		}
	} else if !errors.Is(tErr, ErrAborted) {
		t.Fatalf("T: %v", tErr)
	}
	close(resolveGate.open)
	if err := <-xDone; err != nil {
		t.Fatalf("X: %v", err)
	}
	t.Logf("T: %v; reads at read points: %d", tErr, db.group.PointReads())
	return tErr, stale
}

func TestReadPointAfterPartialSync(t *testing.T) {
	if _, stale := partialSyncScenario(t, plants{}); stale > 0 {
		t.Fatalf("%d reads missed an acknowledged transaction", stale)
	}
}

// TestReadPointRuleAlone: with the clocks still merged counter by counter
// (planted), the whole-clock read-point rule alone refuses the point that
// does not follow T, and T is acknowledged and seen.
func TestReadPointRuleAlone(t *testing.T) {
	tErr, stale := partialSyncScenario(t, plants{shell: gatekeeper.Plants{PartialSync: true}})
	if tErr != nil {
		t.Fatalf("T: %v (with counter-by-counter sync, X is concurrent with T and ordered before it)", tErr)
	}
	if stale > 0 {
		t.Fatalf("%d reads missed an acknowledged transaction", stale)
	}
}

// TestPlantedPartialSyncIsCaught: the old code — counter-by-counter sync
// and the own-counter read-point rule, planted — misses T.
func TestPlantedPartialSyncIsCaught(t *testing.T) {
	if _, stale := partialSyncScenario(t, plants{shell: gatekeeper.Plants{PartialSync: true, OwnCounterPoints: true}}); stale == 0 {
		t.Fatal("the planted partial sync with the own-counter rule read no stale value")
	}
}

// pointBelowWatermark is the schedule of item 3 of the one-shell issue: a
// read through gatekeeper 0 chooses gatekeeper 1's read point P (the
// point of a commit X held in its durable step) while a watermark pass
// runs; the pass reads gatekeeper 0's reads before the read registers P,
// X resolves (withdrawing P), and the pass reads gatekeeper 1's after:
// with a history retention of 0, the watermark passes P. It returns the
// stamp the read registered, whether the watermark is at or below it once
// the pass is over, and the outcome of reading v at that stamp on v's
// shard after the pass.
func pointBelowWatermark(t *testing.T, pl plants) (s vclock.Stamp, p vclock.Stamp, readable bool, readErr error) {
	t.Helper()
	cfg := memConfig()
	cfg.Gatekeepers, cfg.Shards = 2, 2
	cfg.HistoryRetention, cfg.GCEvery = 0, time.Hour // passes run by hand
	cfg.plants = pl
	db := openTest(t, cfg)
	gs := &gates{}
	db.yield = gs.yield
	v, w := twoShards(t, db)
	ctx := context.Background()
	set := func(h string, n int64) txn.Op {
		return txn.Op{Kind: txn.SetVertexProp, Vertex: h, Key: "n", Value: value.I64(n)}
	}
	if _, err := db.gks[0].commit(ctx, nil, []txn.Op{{Kind: txn.CreateVertex, Vertex: v}, {Kind: txn.CreateVertex, Vertex: w},
		set(v, 1), set(w, 1)}); err != nil {
		t.Fatal(err)
	}
	// X, held in its durable step: gatekeeper 1 offers its point.
	hs := &heldStore{Store: db.st, entered: make(chan chan struct{})}
	db.st = hs
	hs.hold.Store(true)
	xDone := make(chan error, 1)
	go func() {
		_, err := db.gks[1].commit(ctx, nil, []txn.Op{set(w, 2)})
		xDone <- err
	}()
	releaseX := <-hs.entered
	hs.hold.Store(false)
	pt := db.gks[1].shell.OfferedPoint()
	if pt == nil {
		t.Fatal("gatekeeper 1 offers no read point with X in flight")
	}
	p = *pt
	// Gatekeeper 0 merges X's clock (no hand-off: P stays usable), and two
	// passes move every queue's position past P.
	db.gks[0].shell.Stamp(func(vclock.Stamp) {})
	past := func(queue int) func() bool { // every shard's queue of that gatekeeper is past P
		return func() bool {
			for _, sh := range db.shards {
				pos := sh.Position(queue)
				if pos.IsZero() || pos.Clock.Counters[1] <= p.Clock.Counters[1] {
					return false
				}
			}
			return true
		}
	}
	db.advanceWatermark(time.Now())
	waitFor(t, past(0))
	// The pass, held before it reads gatekeeper 1.
	gcGate := gs.arm(yieldGCInflight, -1, 1)
	gcDone := make(chan struct{})
	go func() {
		db.advanceWatermark(time.Now())
		close(gcDone)
	}()
	gcGate.wait(t)
	s, key := db.gks[0].stampRead()
	close(releaseX)
	if err := <-xDone; err != nil {
		t.Fatal(err)
	}
	// Gatekeeper 1, idle now, moves its queues on both shards past X
	// before the pass reads their positions.
	for i, sh := range db.shards {
		if db.gks[1].requestNop(uint32(i), vclock.Clock{}) {
			sh.Wake()
		}
	}
	waitFor(t, past(1))
	close(gcGate.open)
	<-gcDone
	readable = db.readable(s)
	readErr = db.read(ctx, db.shardOf(v), s, func(r *reader) {})
	db.gks[0].endRead(key)
	return s, p, readable, readErr
}

func TestReadPointBelowWatermark(t *testing.T) {
	s, p, readable, err := pointBelowWatermark(t, plants{})
	if vclock.CompareStamps(s, p) == vclock.Equal {
		t.Errorf("the read registered the point %s chosen while a watermark pass ran", p)
	}
	if !readable || err != nil {
		t.Errorf("a registered read at %s: readable %v, read %v", s, readable, err)
	}
}

// TestShardRefusesBelowWatermark: with the re-check planted away, the read
// registers P below the watermark; its shard refuses it (ErrSnapshotTooOld)
// instead of reading collected versions. With that refusal planted away
// too, the read runs below the watermark.
func TestShardRefusesBelowWatermark(t *testing.T) {
	s, p, readable, err := pointBelowWatermark(t, plants{shell: gatekeeper.Plants{NoPointRecheck: true}})
	if vclock.CompareStamps(s, p) != vclock.Equal || readable {
		t.Fatalf("planted: the read registered %s (point %s), readable %v: the schedule did not put it below the watermark", s, p, readable)
	}
	if !errors.Is(err, ErrSnapshotTooOld) {
		t.Fatalf("a read below its shard's watermark answered %v, want ErrSnapshotTooOld", err)
	}
	_, _, _, err = pointBelowWatermark(t, plants{shell: gatekeeper.Plants{NoPointRecheck: true}, noShardWatermark: true})
	if err != nil {
		t.Fatalf("planted twice: %v", err)
	}
}
