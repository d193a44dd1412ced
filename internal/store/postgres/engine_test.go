package postgres_test

import (
	"context"
	"testing"

	"github.com/weft-db/weft/internal/engine"
	"github.com/weft-db/weft/internal/store/postgres/pgtest"
	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/value"
)

// TestEngineRestartOnPostgres opens the engine on the PostgreSQL store
// (engine.Config.Store), commits, closes it, crashes and recovers the server
// in between, reopens the engine (its shards rebuilt from the store) and
// reads everything back; reads made after the restart validate in a commit.
func TestEngineRestartOnPostgres(t *testing.T) {
	ctx := context.Background()
	srv := pgtest.Shared(t)
	cfg := engine.DefaultConfig()
	cfg.Store, cfg.PostgresURL, cfg.PostgresSchema = engine.StorePostgres, srv.URL(), pgtest.Schema(t)
	db, err := engine.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	commit := func(db *engine.DB, ops ...txn.Op) {
		t.Helper()
		if _, err := db.Commit(ctx, nil, ops); err != nil {
			t.Fatalf("commit %+v: %v", ops, err)
		}
	}
	commit(db, txn.Op{Kind: txn.CreateVertex, Vertex: "a"}, txn.Op{Kind: txn.CreateVertex, Vertex: "b"},
		txn.Op{Kind: txn.CreateEdge, Vertex: "a", Dst: "b", Edge: "e1"},
		txn.Op{Kind: txn.SetEdgeProp, Vertex: "a", Edge: "e1", Key: "w", Value: value.F64(2.5)},
		txn.Op{Kind: txn.AddAlias, Vertex: "b", Alias: "bee"})
	commit(db, txn.Op{Kind: txn.CreateVertex, Vertex: "gone"})
	commit(db, txn.Op{Kind: txn.DeleteVertex, Vertex: "gone"})
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if !srv.External() {
		if err := srv.Restart(); err != nil { // pg_ctl stop -m immediate, then start
			t.Fatal(err)
		}
	}
	db, err = engine.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	snap, err := db.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	v, err := db.GetVertex(ctx, snap, engine.VertexRef{Name: "a"}, engine.DefaultReadOptions())
	if err != nil || !v.Exists || len(v.Edges) != 1 || v.Edges[0].Props["w"].Float() != 2.5 {
		t.Fatalf("a after restart: %+v %v", v, err)
	}
	b, err := db.GetVertex(ctx, snap, engine.VertexRef{Name: "bee", Alias: true}, engine.DefaultReadOptions())
	if err != nil || b.Handle != "b" || !b.Exists {
		t.Fatalf("alias after restart: %+v %v", b, err)
	}
	g, err := db.GetVertex(ctx, snap, engine.VertexRef{Name: "gone"}, engine.DefaultReadOptions())
	if err != nil || g.Exists {
		t.Fatalf("deleted vertex after restart: %+v %v", g, err)
	}
	if _, err := db.Commit(ctx, []txn.Read{v.Read, g.Read, *b.AliasRead}, []txn.Op{{Kind: txn.CreateVertex, Vertex: "gone"}}); err != nil {
		t.Fatal(err)
	}
}

// TestEngineConfigStore: the engine refuses an unknown store and a
// PostgreSQL store without a URL.
func TestEngineConfigStore(t *testing.T) {
	for _, tc := range []struct {
		store, url string
		ok         bool
	}{
		{"", "", true}, {engine.StorePebble, "", true}, {engine.StorePostgres, "postgres://x", true},
		{engine.StorePostgres, "", false}, {"mysql", "", false},
	} {
		cfg := engine.DefaultConfig()
		cfg.Store, cfg.PostgresURL = tc.store, tc.url
		if err := cfg.Validate(); (err == nil) != tc.ok {
			t.Errorf("Store %q URL %q: Validate() = %v, want ok=%v", tc.store, tc.url, err, tc.ok)
		}
	}
}
