package weft_test

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weft-db/weft/client/weft"
	"github.com/weft-db/weft/internal/api"
	"github.com/weft-db/weft/internal/engine"
)

// The client through the gRPC front end against the real engine (in memory).
func TestAgainstEngine(t *testing.T) {
	cfg := engine.DefaultConfig()
	cfg.DataDir = ""
	db, err := engine.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if loaded, err := api.LoadDemo(t.Context(), db); err != nil || !loaded {
		t.Fatalf("demo: %v %v", loaded, err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := api.NewGRPCServer(db, nil)
	go s.Serve(lis)
	defer s.Stop()
	c, err := weft.Dial(lis.Addr().String(), weft.Options{Attempts: 200, BackoffMin: 100 * time.Microsecond, BackoffMax: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := t.Context()

	t.Run("demo", func(t *testing.T) {
		tx, err := c.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		v, err := tx.GetVertex(ctx, weft.Alias("alice@example.com"))
		if err != nil || !v.Exists || v.Handle != "person/alice" || v.Props["kind"] != "person" || len(v.Edges) < 3 {
			t.Fatalf("alice: %+v %v", v, err)
		}
		if loaded, err := api.LoadDemo(ctx, db); err != nil || loaded {
			t.Fatalf("second demo load: %v %v", loaded, err)
		}
	})

	t.Run("batched reads", func(t *testing.T) {
		refs := []weft.Ref{weft.Handle("person/bob"), weft.Alias("alice"), weft.Handle("person/nobody"), weft.Handle("city/paris")}
		vs, snap, err := c.GetVertices(ctx, refs, weft.ReadOptions{NoEdges: true})
		if err != nil || snap == "" || len(vs) != 4 {
			t.Fatalf("GetVertices: %d vertices, snapshot %q, %v", len(vs), snap, err)
		}
		for i, want := range []string{"person/bob", "person/alice", "person/nobody", "city/paris"} {
			if vs[i].Handle != want || vs[i].Exists != (i != 2) || len(vs[i].Edges) != 0 {
				t.Errorf("vertex %d: %+v, want %s (exists %v, no edges)", i, vs[i], want, i != 2)
			}
		}
		if vs[1].Props["name"] != "Alice" {
			t.Errorf("alice by alias: %+v", vs[1])
		}
		// Each vertex as GetVertex answers it, at the same snapshot.
		tx := c.BeginAt(snap)
		for i, r := range refs {
			one, err := tx.GetVertex(ctx, r)
			if err != nil || one.Exists != vs[i].Exists || fmt.Sprint(one.Props) != fmt.Sprint(vs[i].Props) {
				t.Errorf("%v alone: %+v %v; batched %+v", r, one, err, vs[i])
			}
		}
		// Reads in a transaction are recorded: a write to one of them in
		// between aborts the commit, and nothing it wrote is applied.
		tx, err = c.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.GetVertices(ctx, []weft.Ref{weft.Handle("person/carol"), weft.Handle("person/dave")}); err != nil {
			t.Fatal(err)
		}
		if err := c.Update(ctx, func(w *weft.Tx) error { w.SetVertexProp(weft.Handle("person/dave"), "batched", 1); return nil }); err != nil {
			t.Fatal(err)
		}
		tx.SetVertexProp(weft.Handle("person/carol"), "batched", 2)
		if _, err := tx.Commit(ctx); !weft.IsRetryable(err) {
			t.Fatalf("commit after a batched read went stale: %v, want ABORTED", err)
		}
		after, _, err := c.GetVertices(ctx, []weft.Ref{weft.Handle("person/carol")})
		if err != nil || after[0].Props["batched"] != nil {
			t.Fatalf("the aborted write is visible: %+v %v", after, err)
		}
		// Bad requests are refused with what was wrong.
		many := make([]weft.Ref, 1001)
		for i := range many {
			many[i] = weft.Handle(fmt.Sprint("v", i))
		}
		for _, tc := range []struct {
			refs []weft.Ref
			opts weft.ReadOptions
			want string
		}{
			{nil, weft.ReadOptions{}, "none asked for"},
			{many, weft.ReadOptions{}, "1001 asked for, at most 1000"},
			{many[:200], weft.ReadOptions{EdgesMax: 501}, "edges_max 501 for 200 vertices: at most 500"},
			{[]weft.Ref{weft.Handle("")}, weft.ReadOptions{}, "vertices[0]"},
		} {
			if _, _, err := c.GetVertices(ctx, tc.refs, tc.opts); !errors.Is(err, weft.ErrInvalidArgument) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%d refs, %+v: %v, want INVALID_ARGUMENT with %q", len(tc.refs), tc.opts, err, tc.want)
			}
		}
	})

	t.Run("increments", func(t *testing.T) {
		if err := c.Update(ctx, func(tx *weft.Tx) error {
			tx.CreateVertex("counter")
			tx.SetVertexProp(weft.Handle("counter"), "n", 0)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		const workers, each = 4, 10
		var wg sync.WaitGroup
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range each {
					if err := c.Update(ctx, func(tx *weft.Tx) error {
						v, err := tx.GetVertex(ctx, weft.Handle("counter"))
						if err != nil {
							return err
						}
						n, _ := v.Props["n"].(int64)
						tx.SetVertexProp(weft.Handle("counter"), "n", n+1)
						return nil
					}); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		tx, _ := c.Begin(ctx)
		if v, err := tx.GetVertex(ctx, weft.Handle("counter")); err != nil || v.Props["n"] != int64(workers*each) {
			t.Fatalf("counter = %v (%v), want %d", v.Props["n"], err, workers*each)
		}
	})

	// CommitResult.Snapshot: "reading at it shows the transaction", right away.
	t.Run("read at the commit snapshot", func(t *testing.T) {
		for i := range 20 {
			h := fmt.Sprintf("fresh%d", i)
			res, err := c.UpdateResult(ctx, func(tx *weft.Tx) error {
				tx.CreateVertex(h)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if v, err := c.BeginAt(res.Snapshot).GetVertex(ctx, weft.Handle(h)); err != nil || !v.Exists {
				t.Fatalf("at the commit's snapshot %q the commit is missing: %+v %v", res.Snapshot, v, err)
			}
			fresh, err := c.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			// Strict serializability: a transaction begun after the commit sees it.
			if v, err := fresh.GetVertex(ctx, weft.Handle(h)); err != nil || !v.Exists {
				t.Fatalf("at a snapshot begun after the commit, the commit is missing: %+v %v", v, err)
			}
		}
	})
}
