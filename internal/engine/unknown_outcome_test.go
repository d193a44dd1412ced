package engine

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/weft-db/weft/internal/store"
	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/value"
)

// lostAnswerStore commits, then answers store.ErrFailed for the next
// commit with a hook: the outcome the PostgreSQL store reports when it
// cannot learn whether COMMIT took effect.
type lostAnswerStore struct{ store.Store }

type lostAnswerTxn struct{ store.Txn }

func (s lostAnswerStore) Begin() (store.Txn, error) {
	t, err := s.Store.Begin()
	return lostAnswerTxn{t}, err
}

func (t lostAnswerTxn) Commit(ctx context.Context, hook func(c store.Critical) error) error {
	if err := t.Txn.Commit(ctx, hook); err != nil {
		return err
	}
	return fmt.Errorf("%w: COMMIT's answer lost", store.ErrFailed)
}

// TestUnknownOutcomeStopsTheEngine: a commit whose outcome the store cannot
// tell (it landed here) is answered with store.ErrFailed, the engine stops
// rather than go on without it (reads refused, not answered from shards
// that never saw it), and a restart, rebuilding from the store, shows it.
func TestUnknownOutcomeStopsTheEngine(t *testing.T) {
	ctx := context.Background()
	cfg := DefaultConfig()
	cfg.DataDir = t.TempDir()
	db := openTest(t, cfg)
	commit(t, db, txn.Op{Kind: txn.CreateVertex, Vertex: "a"})
	db.st = lostAnswerStore{db.st}
	_, err := db.Commit(ctx, nil, []txn.Op{{Kind: txn.SetVertexProp, Vertex: "a", Key: "k", Value: value.I64(1)}})
	if !errors.Is(err, store.ErrFailed) {
		t.Fatalf("commit with its answer lost: %v, want store.ErrFailed", err)
	}
	if _, err := db.Begin(ctx); !errors.Is(err, store.ErrFailed) {
		t.Fatalf("a read after the unknown outcome: %v, want the engine stopped with store.ErrFailed", err)
	}
	if _, err := db.Commit(ctx, nil, []txn.Op{{Kind: txn.CreateVertex, Vertex: "b"}}); !errors.Is(err, store.ErrFailed) {
		t.Fatalf("a commit after the unknown outcome: %v, want the engine stopped", err)
	}
	db.st = db.st.(lostAnswerStore).Store
	if err := db.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	db = openTest(t, cfg)
	snap, err := db.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	v, err := db.GetVertex(ctx, snap, VertexRef{Name: "a"}, DefaultReadOptions())
	if err != nil {
		t.Fatal(err)
	}
	if got := v.Props["k"]; got.Kind() != value.Int || got.Int() != 1 {
		t.Fatalf("after the restart a.k = %v, want 1 (the commit landed)", got)
	}
}
