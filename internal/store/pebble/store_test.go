package pebble

import (
	"context"
	"errors"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/weft-db/weft/internal/store"
	"github.com/weft-db/weft/internal/store/storetest"
)

// openMem opens a store on a fresh in-memory FS with the defaults changed by
// mut; the test closes it (a second Close is harmless).
func openMem(t testing.TB, mut func(*Options)) *Store {
	t.Helper()
	o := DefaultOptions()
	o.FS = vfs.NewMem()
	if mut != nil {
		mut(&o)
	}
	s, err := Open("db", o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t testing.TB) store.Store { return openMem(t, nil) })
}

// TestConformanceSmallGroups reruns the suite with one Txn per group and a
// tiny history, so ErrTooOld and group boundaries show up everywhere.
func TestConformanceSmallGroups(t *testing.T) {
	storetest.Run(t, func(t testing.TB) store.Store {
		return openMem(t, func(o *Options) {
			o.CommitGroupMax = 1
			o.RecentWritesMax = 64
		})
	})
}

func TestOptionsValidate(t *testing.T) {
	cases := []struct {
		name string
		mut  func(*Options)
		ok   bool
	}{
		{"defaults", func(*Options) {}, true},
		{"zero options", func(o *Options) { *o = Options{} }, false},
		{"zero group", func(o *Options) { o.CommitGroupMax = 0 }, false},
		{"negative queue", func(o *Options) { o.CommitQueueMax = -1 }, false},
		{"zero history", func(o *Options) { o.RecentWritesMax = 0 }, false},
		{"no sync is allowed", func(o *Options) { o.Sync = false }, true},
	}
	for _, tc := range cases {
		o := DefaultOptions()
		tc.mut(&o)
		err := o.Validate()
		if (err == nil) != tc.ok {
			t.Errorf("%s: Validate() = %v, want ok=%v", tc.name, err, tc.ok)
		}
		if err == nil {
			continue
		}
		o.FS = vfs.NewMem()
		if _, err := Open("db", o); err == nil {
			t.Errorf("%s: Open accepted invalid options", tc.name)
		}
	}
}

func TestTxnTooLarge(t *testing.T) {
	s := openMem(t, func(o *Options) { o.TxnBytesMax = 100 })
	tx, _ := s.Begin()
	if err := tx.Set([]byte("a"), make([]byte, 90)); err != nil {
		t.Fatal(err)
	}
	if err := tx.Set([]byte("b"), make([]byte, 20)); !errors.Is(err, store.ErrTxnTooLarge) {
		t.Fatalf("set over budget: %v", err)
	}
	// The Txn is spoiled: it cannot commit half its writes.
	if err := tx.Commit(context.Background(), nil); !errors.Is(err, store.ErrTxnTooLarge) {
		t.Fatalf("commit of an oversized txn: %v", err)
	}
	tx, _ = s.Begin()
	defer tx.Discard()
	if _, ok, _ := tx.Get([]byte("a")); ok {
		t.Fatal("oversized txn wrote a")
	}
}
