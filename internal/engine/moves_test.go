package engine

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/value"
)

// mover moves the units of names to random shards of shards holding no
// copy of them, each move through a random one of ms, until stop closes,
// and returns the moves made.
func mover(t *testing.T, ms []Mover, shards int, names []string, stop <-chan struct{}) <-chan int {
	done := make(chan int, 1)
	go func() {
		rng := rand.New(rand.NewPCG(9, 9))
		moved := 0
		defer func() { done <- moved }()
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Duration(rng.IntN(20)) * time.Millisecond):
			}
			db := ms[rng.IntN(len(ms))]
			d := db.Directory()
			u := txn.UnitOf(names[rng.IntN(len(names))], d.Base())
			var to []int
			for s := 0; s < shards; s++ {
				if !slices.Contains(d.HomeOf(u).Held, uint32(s)) {
					to = append(to, s)
				}
			}
			if len(to) == 0 {
				continue
			}
			err := db.MoveUnit(context.Background(), u, to[rng.IntN(len(to))])
			switch {
			case err == nil:
				moved++
			case errors.Is(err, ErrAborted), errors.Is(err, ErrOverloaded), errors.Is(err, ErrBadRequest):
				// the unit changed under the move, or another move won
			default:
				t.Errorf("move: %v", err)
				return
			}
		}
	}()
	return done
}

// TestBankIsolationWhileMoving: the bank workload (transfers through two
// gatekeepers, readers summing every account at one snapshot with reads
// and with a program) while the accounts' units move between shards.
func TestBankIsolationWhileMoving(t *testing.T) {
	db := openTest(t, memConfig())
	var names []string
	for i := 0; i < 8; i++ {
		names = append(names, acct(i))
	}
	stop := make(chan struct{})
	done := mover(t, []Mover{db}, db.cfg.Shards, names, stop)
	bankIsolation(t, []API{db})
	close(stop)
	moved := <-done
	_, forwards := db.Moves()
	t.Logf("%d moves, %d forwarded reads", moved, forwards)
	if moved == 0 {
		t.Fatal("no unit moved")
	}
}

// TestRingInvariantWhileMoving: the ring workload (edges rewired by
// transactions, walked by programs at one snapshot) while the ring's
// vertices' units move.
func TestRingInvariantWhileMoving(t *testing.T) {
	db := openTest(t, memConfig())
	var names []string
	for i := 0; i < 12; i++ {
		names = append(names, node(i))
	}
	stop := make(chan struct{})
	done := mover(t, []Mover{db}, db.cfg.Shards, names, stop)
	ringInvariant(t, []API{db})
	close(stop)
	if moved := <-done; moved == 0 {
		t.Fatal("no unit moved")
	}
}

// TestMoveKeepsSnapshotsAndSurvivesReopen: after every unit moved, a
// snapshot taken before the moves still reads the old values (the shards
// the units left answer it), a new one reads the new values on the new
// shards, aliases resolve, a placement group moves as one, and a reopened
// store keeps the directory and the data.
func TestMoveKeepsSnapshotsAndSurvivesReopen(t *testing.T) {
	ctx := context.Background()
	cfg := DefaultConfig()
	cfg.DataDir = t.TempDir()
	db, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	names := moveEveryUnit(t, db, db, cfg.Shards)
	if _, forwards := db.Moves(); forwards == 0 {
		t.Error("no read was forwarded, yet every unit moved after the old snapshot")
	}
	moved := db.Directory().Moved()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db2, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	if db2.Directory().Moved() != moved {
		t.Fatalf("reopened with %d moved units, want %d", db2.Directory().Moved(), moved)
	}
	snap, _ := db2.Begin(ctx)
	checkMovedReads(t, db2, snap, names, 100, "after reopening")
	// A unit cannot go back to a shard still holding its old copy.
	u := txn.UnitOf("a", db2.Directory().Base())
	if err := db2.MoveUnit(ctx, u, int(db2.Directory().HomeOf(u).From)); !errors.Is(err, ErrBadRequest) {
		t.Errorf("moving back: %v, want ErrBadRequest", err)
	}
}

// moveEveryUnit writes a few vertices (two in one placement group) with
// aliases and an edge, takes a snapshot, updates them, moves every unit
// they and their aliases belong to one shard on (through m), and checks
// that the old snapshot reads the old values and a new one the new
// values. It returns the vertices' names.
func moveEveryUnit(t *testing.T, db API, m Mover, shards int) []string {
	t.Helper()
	ctx := context.Background()
	names := []string{"a", "b", "c", txn.GroupName("p", "x"), txn.GroupName("p", "y")}
	var ops []txn.Op
	for i, h := range names {
		ops = append(ops, txn.Op{Kind: txn.CreateVertex, Vertex: h}, txn.Op{Kind: txn.SetVertexProp, Vertex: h, Key: "n", Value: value.I64(int64(i))},
			txn.Op{Kind: txn.AddAlias, Vertex: h, Alias: "alias-" + fmt.Sprint(i)})
	}
	ops = append(ops, txn.Op{Kind: txn.CreateEdge, Vertex: "a", Dst: "b", Edge: "ab"})
	if _, err := db.Commit(ctx, nil, ops); err != nil {
		t.Fatal(err)
	}
	old, err := db.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var upd []txn.Op
	for i, h := range names {
		upd = append(upd, txn.Op{Kind: txn.SetVertexProp, Vertex: h, Key: "n", Value: value.I64(int64(100 + i))})
	}
	if _, err := db.Commit(ctx, nil, upd); err != nil {
		t.Fatal(err)
	}
	units := map[txn.Unit]bool{}
	for i, h := range names {
		units[txn.UnitOf(h, m.Directory().Base())] = true
		units[txn.UnitOf("alias-"+fmt.Sprint(i), m.Directory().Base())] = true
	}
	if len(units) != len(names)*2-1 { // the group's two vertices share a unit
		t.Fatalf("%d units for %d names and aliases", len(units), len(names)*2)
	}
	for u := range units {
		to := (int(m.Directory().HomeOf(u).Shard) + 1) % shards
		if err := m.MoveUnit(ctx, u, to); err != nil {
			t.Fatalf("moving %s: %v", u, err)
		}
		if got := m.Directory().HomeOf(u).Shard; int(got) != to {
			t.Fatalf("unit %s on %d after a move to %d", u, got, to)
		}
	}
	checkMovedReads(t, db, old, names, 0, "the snapshot before the moves")
	now, _ := db.Begin(ctx)
	checkMovedReads(t, db, now, names, 100, "a snapshot after the moves")
	return names
}

// checkMovedReads reads names (n = base + index) and their aliases one by
// one and in one batch at snap.
func checkMovedReads(t *testing.T, db API, snap Snapshot, names []string, base int64, what string) {
	t.Helper()
	ctx := context.Background()
	for i, h := range names {
		for _, ref := range []VertexRef{{Name: h}, {Name: "alias-" + fmt.Sprint(i), Alias: true}} {
			v, err := db.GetVertex(ctx, snap, ref, DefaultReadOptions())
			if err != nil {
				t.Fatalf("%s: %v: %v", what, ref, err)
			}
			if !v.Exists || v.Props["n"].Int() != base+int64(i) {
				t.Fatalf("%s: %v reads %+v, want n=%d", what, ref, v, base+int64(i))
			}
		}
	}
	refs := make([]VertexRef, len(names))
	for i, h := range names {
		refs[i] = VertexRef{Name: h}
	}
	vs, _, err := GetVertices(ctx, db, snap, refs, DefaultReadOptions())
	if err != nil {
		t.Fatalf("%s: batched: %v", what, err)
	}
	for i, v := range vs {
		if v.Props["n"].Int() != base+int64(i) {
			t.Fatalf("%s: batched read of %s: %+v", what, names[i], v)
		}
	}
}
