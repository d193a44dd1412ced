package engine

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weft-db/weft/internal/store"
	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/value"
)

// heldStore holds every commit while hold is set: the commit announces
// itself on entered with a channel, and reaches the store when that
// channel is closed (a disk whose fsync does not return).
type heldStore struct {
	store.Store
	hold    atomic.Bool
	entered chan chan struct{}
}

func (s *heldStore) Begin() (store.Txn, error) {
	t, err := s.Store.Begin()
	if err != nil {
		return nil, err
	}
	return &heldTxn{Txn: t, s: s}, nil
}

type heldTxn struct {
	store.Txn
	s *heldStore
}

func (t *heldTxn) Commit(ctx context.Context, hook func(store.Critical) error) error {
	if t.s.hold.Load() {
		release := make(chan struct{})
		t.s.entered <- release
		<-release
	}
	return t.Txn.Commit(ctx, hook)
}

// twoShards returns two vertex handles on different shards.
func twoShards(t *testing.T, db *DB) (string, string) {
	for i := 1; i < 100; i++ {
		if b := fmt.Sprintf("v%d", i); db.shardOf(b) != db.shardOf("v0") {
			return "v0", b
		}
	}
	t.Fatal("no two handles on different shards")
	return "", ""
}

func readProp(t *testing.T, db *DB, h string) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	snap, err := db.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	v, err := db.GetVertex(ctx, snap, VertexRef{Name: h}, DefaultReadOptions())
	if err != nil {
		t.Fatalf("reading %s: %v", h, err)
	}
	return v.Props["n"].Int()
}

// TestReadsPassCommitsInFlight: reads, through either gatekeeper, do not
// wait for a transaction whose durable commit has not returned (they are
// ordered before it), yet see every transaction acknowledged before they
// began — also one acknowledged by the other gatekeeper while the first
// transaction is still in flight, which makes the older read point stale.
func TestReadsPassCommitsInFlight(t *testing.T) {
	cfg := memConfig()
	cfg.Gatekeepers, cfg.Shards = 2, 2
	db := openTest(t, cfg)
	a, b := twoShards(t, db)
	commit(t, db, txn.Op{Kind: txn.CreateVertex, Vertex: a}, txn.Op{Kind: txn.CreateVertex, Vertex: b},
		txn.Op{Kind: txn.SetVertexProp, Vertex: a, Key: "n", Value: value.I64(1)},
		txn.Op{Kind: txn.SetVertexProp, Vertex: b, Key: "n", Value: value.I64(1)})
	hs := &heldStore{Store: db.st, entered: make(chan chan struct{})}
	db.st = hs // no commit is running
	hs.hold.Store(true)
	ctx := context.Background()
	done := make(chan error, 2)
	go func() {
		_, err := db.gks[0].commit(ctx, nil, []txn.Op{{Kind: txn.SetVertexProp, Vertex: a, Key: "n", Value: value.I64(2)}})
		done <- err
	}()
	releaseA := <-hs.entered
	for range 8 { // round-robin over both gatekeepers
		if n := readProp(t, db, a); n != 1 {
			t.Fatalf("read %s = %d while the write of 2 is in flight, want 1", a, n)
		}
	}
	if db.group.PointReads() == 0 {
		t.Fatal("no read was stamped at a read point")
	}
	go func() {
		_, err := db.gks[1].commit(ctx, nil, []txn.Op{{Kind: txn.SetVertexProp, Vertex: b, Key: "n", Value: value.I64(2)}})
		done <- err
	}()
	releaseB := <-hs.entered
	hs.hold.Store(false)
	close(releaseB)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// b's write is acknowledged and a's still in flight: the point before
	// a's write does not cover b's, so it is not used (b's write was
	// stamped after a's and follows it: a read of a would now wait).
	for range 8 {
		if n := readProp(t, db, b); n != 2 {
			t.Fatalf("read %s = %d after its write of 2 was acknowledged", b, n)
		}
	}
	close(releaseA)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for range 4 {
		if n := readProp(t, db, a); n != 2 {
			t.Fatalf("read %s = %d after its write of 2 was acknowledged", a, n)
		}
	}
}
