package weft_test

import (
	"fmt"
	"net"
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
