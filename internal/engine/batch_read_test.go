package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/value"
)

// groupedDB is a 4-shard engine with members 0..n-1 of groups "a" and "b"
// (placement groups, txn.GroupName), a chain of edges a_i → b_i → a_{i+1},
// a property per member and an alias on a_0.
func groupedDB(t *testing.T, n int) *DB {
	t.Helper()
	cfg := memConfig()
	cfg.Shards = 4
	db := openTest(t, cfg)
	var ops []txn.Op
	for i := range n {
		for _, g := range []string{"a", "b"} {
			h := txn.GroupName(g, fmt.Sprint(i))
			ops = append(ops, txn.Op{Kind: txn.CreateVertex, Vertex: h},
				txn.Op{Kind: txn.SetVertexProp, Vertex: h, Key: "i", Value: value.I64(int64(i))})
		}
	}
	for i := range n {
		a, b := txn.GroupName("a", fmt.Sprint(i)), txn.GroupName("b", fmt.Sprint(i))
		ops = append(ops, txn.Op{Kind: txn.CreateEdge, Vertex: a, Dst: b, Edge: "next"})
		if i+1 < n {
			ops = append(ops, txn.Op{Kind: txn.CreateEdge, Vertex: b, Dst: txn.GroupName("a", fmt.Sprint(i+1)), Edge: "next"})
		}
	}
	ops = append(ops, txn.Op{Kind: txn.AddAlias, Vertex: txn.GroupName("a", "0"), Alias: "first"})
	commit(t, db, ops...)
	return db
}

// TestPlacementGroupsShareAShard: every member of a group is stored on the
// group's shard and on no other.
func TestPlacementGroupsShareAShard(t *testing.T) {
	ctx := context.Background()
	const n = 20
	db := groupedDB(t, n)
	s, release, err := db.atSnapshot(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	for _, g := range []string{"a", "b"} {
		want := int(txn.ShardOf(txn.GroupPrefix+g+"|x", 4))
		for sh := range 4 {
			found := 0
			if err := db.read(ctx, sh, s, func(r *reader) {
				for i := range n {
					if _, ok := r.S.G.View(txn.GroupName(g, fmt.Sprint(i)), s, r.Ord); ok {
						found++
					}
				}
			}); err != nil {
				t.Fatal(err)
			}
			if sh == want && found != n || sh != want && found != 0 {
				t.Errorf("group %s: shard %d holds %d of its %d members (group shard %d)", g, sh, found, n, want)
			}
		}
	}
}

// TestPlacementGroupsTransactionsAndPrograms: transactions and programs
// span groups as they span shards; a stale read of a grouped vertex aborts.
func TestPlacementGroupsTransactionsAndPrograms(t *testing.T) {
	ctx := context.Background()
	const n = 10
	db := groupedDB(t, n)
	out, err := db.Run(ctx, "reachability",
		[]byte(fmt.Sprintf(`{"src":%q,"dest":%q}`, txn.GroupName("a", "0"), txn.GroupName("b", fmt.Sprint(n-1)))), nil)
	if err != nil || string(out) == "" || !reachable(t, out) {
		t.Fatalf("reachability across groups: %s %v", out, err)
	}
	snap, err := db.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	a0, b5 := txn.GroupName("a", "0"), txn.GroupName("b", "5")
	va, err := db.GetVertex(ctx, snap, VertexRef{Name: a0}, DefaultReadOptions())
	if err != nil {
		t.Fatal(err)
	}
	commit(t, db, txn.Op{Kind: txn.SetVertexProp, Vertex: a0, Key: "i", Value: value.I64(100)})
	_, err = db.Commit(ctx, []txn.Read{va.Read}, []txn.Op{{Kind: txn.SetVertexProp, Vertex: b5, Key: "i", Value: value.I64(7)}})
	if !errors.Is(err, ErrAborted) {
		t.Fatalf("commit after a stale read of %s: %v, want ErrAborted", a0, err)
	}
	snap, _ = db.Begin(ctx)
	va, _ = db.GetVertex(ctx, snap, VertexRef{Name: a0}, DefaultReadOptions())
	if _, err := db.Commit(ctx, []txn.Read{va.Read}, []txn.Op{
		{Kind: txn.SetVertexProp, Vertex: b5, Key: "i", Value: value.I64(7)},
		{Kind: txn.CreateEdge, Vertex: b5, Dst: a0, Edge: "back"},
	}); err != nil {
		t.Fatalf("commit across groups: %v", err)
	}
	vb, err := db.GetVertex(ctx, Snapshot{}, VertexRef{Name: b5}, DefaultReadOptions())
	if err != nil || vb.Props["i"].Int() != 7 || len(vb.Edges) != 2 {
		t.Fatalf("b5 after the commit: %+v %v", vb, err)
	}
}

func reachable(t *testing.T, out []byte) bool {
	t.Helper()
	var r struct {
		Reachable bool `json:"reachable"`
	}
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatal(err)
	}
	return r.Reachable
}

// TestGetVerticesMatchesGetVertex: a batched read answers what GetVertex
// answers for each ref (versions included) with one request per shard
// involved plus one per alias.
func TestGetVerticesMatchesGetVertex(t *testing.T) {
	ctx := context.Background()
	const n = 12
	db := groupedDB(t, n)
	snap, err := db.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var refs []VertexRef
	for i := range n {
		refs = append(refs, VertexRef{Name: txn.GroupName("a", fmt.Sprint(i))})
	}
	refs = append(refs, VertexRef{Name: "missing"}, VertexRef{Name: "first", Alias: true}, VertexRef{Name: "unbound", Alias: true})
	for _, opts := range []ReadOptions{DefaultReadOptions(), {Props: true}, {Edges: true, EdgesMax: 1}, {}} {
		got, requests, err := db.GetVertices(ctx, snap, refs, opts)
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range refs {
			want, err := db.GetVertex(ctx, snap, r, opts)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got[i], want) {
				t.Errorf("opts %+v ref %+v: batched %+v, GetVertex %+v", opts, r, got[i], want)
			}
		}
		shards := map[uint32]bool{txn.ShardOf(txn.GroupName("a", "0"), 4): true, txn.ShardOf("missing", 4): true}
		if want := len(shards) + 2; requests != want {
			t.Errorf("opts %+v: %d requests, want %d (shards involved + aliases)", opts, requests, want)
		}
	}
	// The fallback reads one vertex per request and answers the same.
	got, requests, err := GetVertices(ctx, onlyAPI{db}, snap, refs[:3], DefaultReadOptions())
	if err != nil || requests != 3 || len(got) != 3 || got[2].Props["i"].Int() != 2 {
		t.Fatalf("fallback: %d requests, %+v, %v", requests, got, err)
	}
}

// onlyAPI hides DB's BatchReader.
type onlyAPI struct{ API }
