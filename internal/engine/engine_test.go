package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/value"
)

func openTest(t *testing.T, cfg Config) *DB {
	t.Helper()
	db, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func memConfig() Config {
	c := DefaultConfig()
	c.Sync = false
	return c
}

func commit(t *testing.T, db *DB, ops ...txn.Op) *CommitResult {
	t.Helper()
	res, err := db.Commit(context.Background(), nil, ops)
	if err != nil {
		t.Fatalf("commit %+v: %v", ops, err)
	}
	return res
}

func TestCommitReadAndPrograms(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, memConfig())
	commit(t, db,
		txn.Op{Kind: txn.CreateVertex, Vertex: "a"},
		txn.Op{Kind: txn.CreateVertex, Vertex: "b"},
		txn.Op{Kind: txn.CreateVertex, Vertex: "c"},
		txn.Op{Kind: txn.CreateEdge, Vertex: "a", Dst: "b", Edge: "ab"},
		txn.Op{Kind: txn.CreateEdge, Vertex: "b", Dst: "c", Edge: "bc"},
		txn.Op{Kind: txn.SetVertexProp, Vertex: "a", Key: "name", Value: value.Str("Ada")},
		txn.Op{Kind: txn.AddAlias, Vertex: "a", Alias: "ada"},
	)
	snap, err := db.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	v, err := db.GetVertex(ctx, snap, VertexRef{Name: "ada", Alias: true}, DefaultReadOptions())
	if err != nil {
		t.Fatal(err)
	}
	if !v.Exists || v.Handle != "a" || v.Props["name"].Str() != "Ada" || len(v.Edges) != 1 || v.Edges[0].Dst != "b" || len(v.Aliases) != 1 {
		t.Fatalf("vertex %+v", v)
	}
	out, err := db.Run(ctx, "reachability", json.RawMessage(`{"src":"a","dest":"c"}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	var reach struct {
		Reachable bool `json:"reachable"`
	}
	if err := json.Unmarshal(out, &reach); err != nil || !reach.Reachable {
		t.Fatalf("reachability %s %v", out, err)
	}
	// An old snapshot does not see a later write; a new one does.
	commit(t, db, txn.Op{Kind: txn.DeleteEdge, Vertex: "b", Edge: "bc"})
	out, err = db.Run(ctx, "reachability", json.RawMessage(`{"src":"a","dest":"c"}`), &snap)
	if err != nil || json.Unmarshal(out, &reach) != nil || !reach.Reachable {
		t.Fatalf("historic reachability %s %v", out, err)
	}
	out, err = db.Run(ctx, "reachability", json.RawMessage(`{"src":"a","dest":"c"}`), nil)
	if err != nil || json.Unmarshal(out, &reach) != nil || reach.Reachable {
		t.Fatalf("reachability after delete %s %v", out, err)
	}
	// Optimistic validation: a read that changed aborts the commit.
	old := v.Read
	commit(t, db, txn.Op{Kind: txn.SetVertexProp, Vertex: "a", Key: "name", Value: value.Str("Lovelace")})
	_, err = db.Commit(ctx, []txn.Read{old}, []txn.Op{{Kind: txn.CreateVertex, Vertex: "d"}})
	if !errors.Is(err, ErrAborted) {
		t.Fatalf("stale read: %v", err)
	}
	// Bad input: a clear error and nothing changes.
	if _, err := db.Commit(ctx, nil, []txn.Op{{Kind: txn.CreateVertex, Vertex: "e"}, {Kind: txn.CreateEdge, Vertex: "e", Dst: "nope"}}); !errors.Is(err, txn.ErrNotFound) {
		t.Fatalf("bad edge: %v", err)
	}
	snap2, _ := db.Begin(ctx)
	if v, err := db.GetVertex(ctx, snap2, VertexRef{Name: "e"}, DefaultReadOptions()); err != nil || v.Exists {
		t.Fatalf("vertex e after failed commit: %+v %v", v, err)
	}
	st := waitStatus(t, db, func(st *Status) bool { return st.Vertices == 3 && st.Edges == 1 })
	if st.Vertices != 3 || st.Edges != 1 {
		t.Fatalf("status %+v", st)
	}
}

func TestRestartKeepsEverything(t *testing.T) {
	ctx := context.Background()
	cfg := DefaultConfig()
	cfg.DataDir = t.TempDir()
	db, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	commit(t, db, txn.Op{Kind: txn.CreateVertex, Vertex: "a"}, txn.Op{Kind: txn.CreateVertex, Vertex: "b"},
		txn.Op{Kind: txn.CreateEdge, Vertex: "a", Dst: "b", Edge: "e1"},
		txn.Op{Kind: txn.SetEdgeProp, Vertex: "a", Edge: "e1", Key: "w", Value: value.F64(2.5)},
		txn.Op{Kind: txn.AddAlias, Vertex: "b", Alias: "bee"})
	commit(t, db, txn.Op{Kind: txn.CreateVertex, Vertex: "gone"})
	commit(t, db, txn.Op{Kind: txn.DeleteVertex, Vertex: "gone"})
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = openTest(t, cfg)
	snap, _ := db.Begin(ctx)
	v, err := db.GetVertex(ctx, snap, VertexRef{Name: "a"}, DefaultReadOptions())
	if err != nil || !v.Exists || len(v.Edges) != 1 || v.Edges[0].Props["w"].Float() != 2.5 {
		t.Fatalf("a after restart: %+v %v", v, err)
	}
	b, err := db.GetVertex(ctx, snap, VertexRef{Name: "bee", Alias: true}, DefaultReadOptions())
	if err != nil || b.Handle != "b" || !b.Exists {
		t.Fatalf("alias after restart: %+v %v", b, err)
	}
	g, err := db.GetVertex(ctx, snap, VertexRef{Name: "gone"}, DefaultReadOptions())
	if err != nil || g.Exists {
		t.Fatalf("deleted vertex after restart: %+v %v", g, err)
	}
	// Reads after restart validate: a commit with them succeeds.
	if _, err := db.Commit(ctx, []txn.Read{v.Read, g.Read, *b.AliasRead}, []txn.Op{{Kind: txn.CreateVertex, Vertex: "gone"}}); err != nil {
		t.Fatal(err)
	}
	_ = time.Second
}

// TestGarbageCollectionWatermark: versions older than the retention and
// every in-flight read are collected; a read at a snapshot below the
// watermark answers ErrSnapshotTooOld (retryable) instead of a wrong
// answer, and fresh snapshots read the latest values.
func TestGarbageCollectionWatermark(t *testing.T) {
	ctx := context.Background()
	cfg := memConfig()
	cfg.HistoryRetention = 0
	cfg.GCEvery = 20 * time.Millisecond
	db := openTest(t, cfg)
	commit(t, db, txn.Op{Kind: txn.CreateVertex, Vertex: "a"}, txn.Op{Kind: txn.SetVertexProp, Vertex: "a", Key: "v", Value: value.I64(1)})
	old, _ := db.Begin(ctx)
	for i := 2; i <= 5; i++ {
		commit(t, db, txn.Op{Kind: txn.SetVertexProp, Vertex: "a", Key: "v", Value: value.I64(int64(i))})
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		v, err := db.GetVertex(ctx, old, VertexRef{Name: "a"}, DefaultReadOptions())
		if errors.Is(err, ErrSnapshotTooOld) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if got := v.Props["v"].Int(); got != 1 {
			t.Fatalf("old snapshot reads v=%d, want 1 (or SNAPSHOT_TOO_OLD)", got)
		}
		if time.Now().After(deadline) {
			t.Fatal("the watermark never passed an unused snapshot")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := db.Run(ctx, "get_node", json.RawMessage(`{"node":"a"}`), &old); !errors.Is(err, ErrSnapshotTooOld) {
		t.Fatalf("program at a collected snapshot: %v", err)
	}
	snap, _ := db.Begin(ctx)
	v, err := db.GetVertex(ctx, snap, VertexRef{Name: "a"}, DefaultReadOptions())
	if err != nil || v.Props["v"].Int() != 5 {
		t.Fatalf("fresh read after GC: %+v %v", v, err)
	}
	// Superseded versions are gone from the shard.
	waitFor(t, func() bool {
		total := 0
		for _, s := range db.shards {
			total += s.Stats().Versions
		}
		return total <= 3 // the vertex, its live property, and at most one leftover
	})
}

func waitFor(t *testing.T, ok func() bool) {
	t.Helper()
	for i := 0; i < 1000; i++ {
		if ok() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("condition not reached in 10 s")
}

// TestProgramStateIsReleased: after programs that answer early while other
// shards still hold hops (pathless reachability), every shard's runner ends
// with no program state: finishing reaches every shard a program touched.
func TestProgramStateIsReleased(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, memConfig())
	var ops []txn.Op
	for i := 0; i < 200; i++ {
		ops = append(ops, txn.Op{Kind: txn.CreateVertex, Vertex: node(i)})
	}
	for i := 0; i < 200; i++ {
		for _, d := range []int{1, 7, 31} {
			ops = append(ops, txn.Op{Kind: txn.CreateEdge, Vertex: node(i), Dst: node((i + d) % 200)})
		}
	}
	commit(t, db, ops...)
	for i := 0; i < 100; i++ {
		p := json.RawMessage(fmt.Sprintf(`{"src":%q,"dest":%q}`, node(i), node((i*13+5)%200)))
		if _, err := db.Run(ctx, "pathless_reachability", p, nil); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, func() bool {
		snap, _ := db.Begin(ctx)
		st, _ := decodeSnapshot(snap, len(db.gks))
		busy := 0
		for i := range db.shards {
			if err := db.read(ctx, i, st, func(r *reader) {
				rs := r.S.Runner().Stats()
				busy += rs.Programs + rs.StateEntries
			}); err != nil {
				t.Fatal(err)
			}
		}
		return busy == 0
	})
}

// TestShardOverloadFailsRequestsNotTheServer: with a tiny shard task bound,
// a burst of programs and reads gets ErrOverloaded for some of them, and the
// engine keeps serving afterwards.
func TestShardOverloadFailsRequestsNotTheServer(t *testing.T) {
	ctx := context.Background()
	cfg := memConfig()
	cfg.ShardTasksMax = 2
	cfg.Shards = 1
	db := openTest(t, cfg)
	commit(t, db, txn.Op{Kind: txn.CreateVertex, Vertex: "a"})
	var wg sync.WaitGroup
	var overloaded, ok atomic.Int64
	for i := 0; i < 64; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			var err error
			if i%2 == 0 {
				_, err = db.Run(ctx, "get_node", json.RawMessage(`{"node":"a"}`), nil)
			} else {
				snap, _ := db.Begin(ctx)
				_, err = db.GetVertex(ctx, snap, VertexRef{Name: "a"}, DefaultReadOptions())
			}
			switch {
			case err == nil:
				ok.Add(1)
			case errors.Is(err, ErrOverloaded):
				overloaded.Add(1)
			default:
				t.Error(err)
			}
		}(i)
	}
	wg.Wait()
	if ok.Load() == 0 {
		t.Fatal("nothing succeeded")
	}
	t.Logf("%d succeeded, %d overloaded", ok.Load(), overloaded.Load())
	if err := db.check(); err != nil {
		t.Fatalf("the engine failed: %v", err)
	}
	if _, err := db.Run(ctx, "get_node", json.RawMessage(`{"node":"a"}`), nil); err != nil {
		t.Fatalf("after the burst: %v", err)
	}
}
