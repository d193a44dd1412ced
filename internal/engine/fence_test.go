package engine

import (
	"context"
	"errors"
	"log/slog"
	"testing"

	"github.com/weft-db/weft/internal/gatekeeper"
	"github.com/weft-db/weft/internal/txn"
)

// A gatekeeper whose epoch is fenced off commits nothing; the fence only
// rises; a new epoch's gatekeeper commits.
func TestEpochFence(t *testing.T) {
	quiet := slog.New(slog.DiscardHandler)
	ecfg := DefaultConfig()
	st, err := openStore(ecfg, quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	c, err := StartLocalCluster(LocalClusterConfig{Gatekeepers: 1, Shards: 2, Epoch: 5, Store: st, Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	gk := c.Gatekeepers[0]
	create := func(api API, h string) error {
		_, err := api.Commit(ctx, nil, []txn.Op{{Kind: txn.CreateVertex, Vertex: h}})
		return err
	}
	if err := create(gk, "before"); err != nil {
		t.Fatalf("commit in the current epoch: %v", err)
	}
	if err := RaiseFence(ctx, st, 6); err != nil {
		t.Fatal(err)
	}
	if err := RaiseFence(ctx, st, 4); err != nil { // never lowers
		t.Fatal(err)
	}
	err = create(gk, "after")
	if !errors.Is(err, ErrFenced) || !errors.Is(err, ErrOverloaded) {
		t.Fatalf("commit of epoch 5 behind fence 6: %v, want ErrFenced (retryable)", err)
	}
	tx, err := st.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Discard()
	for h, want := range map[string]bool{"before": true, "after": false} {
		_, ok, err := tx.Get(txn.VertexKey(h))
		if err != nil || ok != want {
			t.Fatalf("vertex %q in the store: %v %v, want %v", h, ok, err, want)
		}
	}
	v, ok, err := tx.Get(gatekeeper.FenceKey)
	if f, derr := gatekeeper.DecodeFence(v, ok); err != nil || derr != nil || f != 6 {
		t.Fatalf("fence %d (%v %v), want 6", f, err, derr)
	}
	c.Close()
	// The next epoch's cluster on the same store commits.
	c2, err := StartLocalCluster(LocalClusterConfig{Gatekeepers: 1, Shards: 2, Epoch: 6, Store: st, Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if err := create(c2.Gatekeepers[0], "after"); err != nil {
		t.Fatalf("commit in the fenced epoch 6: %v", err)
	}
}
