package pebble

import (
	"context"
	"errors"
	"io"

	"github.com/cockroachdb/pebble/v2"

	"github.com/weft-db/weft/internal/store"
	"github.com/weft-db/weft/internal/store/txnset"
)

// txn implements store.Txn: reads at a shared Pebble snapshot overlaid with
// buffered writes, recording a read set for validation at Commit. The
// buffers, the budget, Set and Delete are txnset's.
type txn struct {
	txnset.Txn
	s    *Store
	snap *snapshot // nil once released
}

var _ store.Txn = (*txn)(nil)

// Get implements store.Txn.
func (t *txn) Get(key []byte) ([]byte, bool, error) {
	if w, own, err := t.ReadOwn(key); err != nil {
		return nil, false, err
	} else if own {
		return w.Val, !w.Del, nil
	}
	if err := t.s.gate.Enter(); err != nil {
		return nil, false, err
	}
	defer t.s.gate.Exit()
	return getCopy(t.snap.ps, key)
}

// getter is what Get needs of a Pebble DB or snapshot.
type getter interface {
	Get(key []byte) ([]byte, io.Closer, error)
}

// getCopy reads key from r, copying the value out of Pebble's buffers.
func getCopy(r getter, key []byte) ([]byte, bool, error) {
	v, c, err := r.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	out := append(make([]byte, 0, len(v)), v...)
	if err := c.Close(); err != nil {
		return nil, false, err
	}
	return out, true, nil
}

// Scan implements store.Txn. It merges a Pebble iterator over the snapshot
// with the buffered writes in range (a buffered write shadows the stored
// key; a buffered delete hides it).
func (t *txn) Scan(start, end []byte, limit int, fn func(key, val []byte) error) error {
	if err := t.CheckScan(start, end); err != nil {
		return err
	}
	if err := t.s.gate.Enter(); err != nil {
		return err
	}
	defer t.s.gate.Exit()
	sp, own, ok := t.ScanSpan(start, end)
	if !ok {
		return nil // an empty range reads nothing
	}
	lower := start
	if len(lower) == 0 {
		// Pebble's invariants builds (on under -race) index a non-nil
		// empty bound; nil means the same thing.
		lower = nil
	}
	it, err := t.snap.ps.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: end})
	if err != nil {
		return err
	}
	defer it.Close()
	n := 0
	for ok := it.First(); ok || len(own) > 0; {
		var k, v []byte
		stored := false
		if len(own) > 0 && (!ok || own[0] <= string(it.Key())) {
			w := t.Writes.M[own[0]]
			if ok && own[0] == string(it.Key()) {
				ok = it.Next() // shadowed; k comes from own, so advancing is safe
			}
			k, v = bytesOf(own[0]), w.Val
			own = own[1:]
			if w.Del {
				continue
			}
		} else {
			k, stored = it.Key(), true
			if v, err = it.ValueAndErr(); err != nil {
				return err
			}
		}
		n++
		if err := fn(k, v); err != nil {
			// Record what was read, in case the caller commits anyway.
			t.ReadTo(sp, k)
			return err
		}
		if limit > 0 && n >= limit {
			return t.ReadTo(sp, k)
		}
		if stored {
			ok = it.Next()
		}
	}
	if err := it.Error(); err != nil {
		return err
	}
	return t.ReadSpan(sp)
}

// Commit implements store.Txn.
func (t *txn) Commit(ctx context.Context, hook func(c store.Critical) error) error {
	return t.CommitWith(ctx, hook, t)
}

// CommitReadOnly implements txnset.Committer.
func (t *txn) CommitReadOnly() error { return t.s.commitReadOnly(t) }

// CommitGroup implements txnset.Committer.
func (t *txn) CommitGroup(ctx context.Context, hook func(store.Critical) error) error {
	return t.s.commitGroup(ctx, t, hook)
}

// CountCommit implements txnset.Committer.
func (t *txn) CountCommit(err error, readOnly bool) { t.s.st.Count(err, readOnly) }

// Discard implements store.Txn.
func (t *txn) Discard() {
	t.Done = true
	if t.snap != nil {
		t.s.release(t.snap)
		t.snap = nil
	}
}
