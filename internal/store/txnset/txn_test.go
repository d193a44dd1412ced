package txnset

import (
	"context"
	"errors"
	"testing"

	"github.com/weft-db/weft/internal/store"
)

// A Txn reads its own writes without recording them, records other reads,
// and is spoiled once its buffers pass the budget.
func TestTxnBuffersAndBudget(t *testing.T) {
	tx := &Txn{BytesMax: 10}
	if err := tx.Set([]byte("a"), []byte("1")); err != nil {
		t.Fatal(err)
	}
	if w, own, err := tx.ReadOwn([]byte("a")); err != nil || !own || string(w.Val) != "1" {
		t.Fatalf("own read: %v %v %v", w, own, err)
	}
	if _, own, err := tx.ReadOwn([]byte("b")); err != nil || own || tx.Reads.Bytes != 1 {
		t.Fatalf("read of b: own %v, err %v, read bytes %d", own, err, tx.Reads.Bytes)
	}
	if sp, own, ok := tx.ScanSpan([]byte("a"), nil); !ok || !sp.Inf || len(own) != 1 {
		t.Fatalf("scan span %+v own %v", sp, own)
	}
	if _, _, ok := tx.ScanSpan([]byte("a"), []byte("a")); ok {
		t.Fatal("an empty range has a span")
	}
	if err := tx.ReadTo(Span{Start: "a", Inf: true}, []byte("c")); err != nil || tx.Reads.Spans[0].End != "c\x00" {
		t.Fatalf("ReadTo: %v %+v", err, tx.Reads.Spans)
	}
	if err := tx.Set([]byte("big"), []byte("0123456789")); !errors.Is(err, store.ErrTxnTooLarge) {
		t.Fatalf("over budget: %v", err)
	}
	if err := tx.Delete([]byte("a")); !errors.Is(err, store.ErrTxnTooLarge) {
		t.Fatalf("spoiled Txn: %v", err)
	}
}

type committer struct {
	calls     []string
	readOnly  bool
	discarded bool
}

func (c *committer) CommitReadOnly() error { c.calls = append(c.calls, "read-only"); return nil }
func (c *committer) CommitGroup(context.Context, func(store.Critical) error) error {
	c.calls = append(c.calls, "group")
	return nil
}
func (c *committer) CountCommit(_ error, readOnly bool) { c.readOnly = readOnly }
func (c *committer) Discard()                           { c.discarded = true }

// CommitWith sends a Txn without writes or hook to the read-only path,
// others to the group, and nothing once ctx has ended or the Txn is done.
func TestCommitWith(t *testing.T) {
	tx, c := &Txn{BytesMax: 100}, &committer{}
	if err := tx.CommitWith(context.Background(), nil, c); err != nil || !c.readOnly || !c.discarded {
		t.Fatalf("read-only: %v %+v", err, c)
	}
	tx, c = &Txn{BytesMax: 100}, &committer{}
	_ = tx.Set([]byte("k"), nil)
	if err := tx.CommitWith(context.Background(), nil, c); err != nil || c.readOnly || c.calls[0] != "group" {
		t.Fatalf("with writes: %v %+v", err, c)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	tx, c = &Txn{BytesMax: 100}, &committer{}
	if err := tx.CommitWith(ctx, nil, c); !errors.Is(err, context.Canceled) || len(c.calls) != 0 {
		t.Fatalf("ended ctx: %v %+v", err, c)
	}
	tx.Done = true
	if err := tx.CommitWith(context.Background(), nil, c); !errors.Is(err, store.ErrTxnDone) {
		t.Fatalf("done Txn: %v", err)
	}
}

// A Critical reads the Txn's writes, then the group's, and refuses once its
// hook has returned; a hook panic becomes an error and the panic value.
func TestCriticalAndHook(t *testing.T) {
	tx := &Txn{BytesMax: 100}
	_ = tx.Set([]byte("a"), []byte("own"))
	var overlay WriteSet
	overlay.Put([]byte("a"), []byte("group"), false)
	overlay.Put([]byte("b"), []byte("group"), false)
	c := &Critical{T: tx, Overlay: &overlay}
	for k, want := range map[string]string{"a": "own", "b": "group"} {
		if w, found, err := c.ReadOwn([]byte(k)); err != nil || !found || string(w.Val) != want {
			t.Fatalf("%s: %v %v %v", k, w, found, err)
		}
	}
	if _, found, err := c.ReadOwn([]byte("c")); err != nil || found {
		t.Fatalf("c: %v %v", found, err)
	}
	var p any
	err := RunHook(func(store.Critical) error { panic("boom") }, nil, &p)
	if err == nil || p != "boom" {
		t.Fatalf("panic: %v %v", err, p)
	}
	c.T = nil
	if err := c.Set([]byte("a"), nil); err != ErrCriticalDone {
		t.Fatalf("after the hook: %v", err)
	}
}
