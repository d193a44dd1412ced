package gatekeeper

import (
	"context"
	"errors"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/weft-db/weft/internal/kronos"
	"github.com/weft-db/weft/internal/order"
	"github.com/weft-db/weft/internal/store"
	pebblestore "github.com/weft-db/weft/internal/store/pebble"
	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/vclock"
)

func stampN(n uint64) vclock.Stamp {
	return vclock.Stamp{Clock: vclock.Clock{Epoch: 1, Counters: []uint64{n}}}
}

// TestOrderMoveAndCommit: a move commits only from the unit's home, to a
// shard holding no copy, when nothing of the unit changed since it read
// it; afterwards a commit routed by the old directory aborts, and one
// routed by the new one follows the move.
func TestOrderMoveAndCommit(t *testing.T) {
	ctx := context.Background()
	o := pebblestore.DefaultOptions()
	o.FS = vfs.NewMem()
	st, err := pebblestore.Open("mem", o)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	oracle, err := order.NewLocal(kronos.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	const base = 2
	d0, _ := txn.NewDirectory(base, base)
	u := txn.UnitOf("k", base)
	from, to := u.BaseShard(base), 1-u.BaseShard(base)
	commit := func(fn func(c store.Critical) error) error {
		tx, err := st.Begin()
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Discard()
		return tx.Commit(ctx, fn)
	}
	// An ordinary commit touching "k" (access record at stamp 1).
	if err := commit(func(c store.Critical) error {
		return OrderCommit(ctx, oracle, c, stampN(1), &txn.Result{Access: [][]byte{txn.AccessKey("k")},
			Units: []txn.UnitRoute{{Unit: u, Shard: from}}, Populated: []txn.Unit{u}}, d0, true)
	}); err != nil {
		t.Fatal(err)
	}
	access := map[string][]byte{string(txn.AccessKey("k")): txn.EncodeStamp(stampN(1))}
	pop := txn.EncodeStamp(stampN(1))
	mv := &txn.UnitMove{Unit: u, From: from, To: to}
	move := func(ts vclock.Stamp, mv *txn.UnitMove, seen MoveSeen) error {
		return commit(func(c store.Critical) error { return OrderMove(ctx, oracle, c, ts, mv, seen, base) })
	}
	for _, bad := range []struct {
		name string
		mv   *txn.UnitMove
		seen MoveSeen
	}{
		{"stale access", mv, MoveSeen{Access: map[string][]byte{string(txn.AccessKey("k")): nil}, Pop: pop}},
		{"stale population", mv, MoveSeen{Access: access}},
		{"not from its home", &txn.UnitMove{Unit: u, From: to, To: from}, MoveSeen{Access: access, Pop: pop}},
		{"to a shard holding it", &txn.UnitMove{Unit: u, From: from, To: from}, MoveSeen{Access: access, Pop: pop}},
	} {
		if err := move(stampN(2), bad.mv, bad.seen); !errors.Is(err, txn.ErrAborted) {
			t.Errorf("%s: %v, want an abort", bad.name, err)
		}
	}
	if err := move(stampN(3), mv, MoveSeen{Access: access, Pop: pop}); err != nil {
		t.Fatal(err)
	}
	tx, _ := st.Begin()
	dir, err := txn.ReadDirectory(tx, base, base)
	tx.Discard()
	if err != nil || dir.ShardOf("k") != to || dir.HomeOf(u).From != from || len(dir.HomeOf(u).Held) != 2 {
		t.Fatalf("directory after the move: %v %+v", err, dir.HomeOf(u))
	}
	// A commit routed by the old directory aborts; by the new one it
	// commits, ordered after the move (a stamp before it is refused).
	old := &txn.Result{Access: [][]byte{txn.AccessKey("k")}, Units: []txn.UnitRoute{{Unit: u, Shard: from}}}
	if err := commit(func(c store.Critical) error { return OrderCommit(ctx, oracle, c, stampN(4), old, d0, false) }); !errors.Is(err, ErrUnitMoved) {
		t.Errorf("stale route: %v, want ErrUnitMoved", err)
	}
	routed := &txn.Result{Units: []txn.UnitRoute{{Unit: u, Shard: to}}}
	for _, current := range []bool{false, true} {
		// Read from the store, or (current) from the new directory: the
		// same homes and the same order after the move.
		if err := commit(func(c store.Critical) error { return OrderCommit(ctx, oracle, c, stampN(2), routed, dir, current) }); err == nil {
			t.Errorf("current %v: a commit stamped before the move was ordered after it", current)
		}
	}
	if err := commit(func(c store.Critical) error { return OrderCommit(ctx, oracle, c, stampN(5), routed, dir, true) }); err != nil {
		t.Errorf("new route, current directory: %v", err)
	}
	if err := commit(func(c store.Critical) error { return OrderCommit(ctx, oracle, c, stampN(6), routed, d0, false) }); err != nil {
		t.Errorf("new route, the records read: %v", err)
	}
}
