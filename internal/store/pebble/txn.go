package pebble

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/cockroachdb/pebble/v2"
	"github.com/weft-db/weft/internal/store"
)

// txn implements store.Txn: reads at a shared Pebble snapshot overlaid with
// buffered writes, recording a read set for validation at Commit.
type txn struct {
	s      *Store
	snap   *snapshot // nil once released
	writes writeSet
	reads  readSet
	done   bool  // committed or discarded
	err    error // sticky: the Txn can no longer commit (too large)
}

var _ store.Txn = (*txn)(nil)

func (t *txn) usable() error {
	if t.done {
		return store.ErrTxnDone
	}
	return t.err
}

// grow charges n bytes to the Txn's budget; past it the Txn is spoiled.
func (t *txn) grow(n int) error {
	if t.writes.Bytes+t.reads.Bytes > t.s.opts.TxnBytesMax {
		t.err = fmt.Errorf("%w: %d bytes of writes and reads > %d", store.ErrTxnTooLarge,
			t.writes.Bytes+t.reads.Bytes, t.s.opts.TxnBytesMax)
		return t.err
	}
	return nil
}

// Get implements store.Txn.
func (t *txn) Get(key []byte) ([]byte, bool, error) {
	if err := t.usable(); err != nil {
		return nil, false, err
	}
	if err := store.CheckKey(key); err != nil {
		return nil, false, err
	}
	// A key this Txn wrote reads its own write, whatever others do: no
	// need to record it.
	if w, ok := t.writes.Get(key); ok {
		return w.Val, !w.Del, nil
	}
	if err := t.grow(t.reads.AddPoint(key)); err != nil {
		return nil, false, err
	}
	if err := t.s.enter(); err != nil {
		return nil, false, err
	}
	defer t.s.exit()
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
	if err := t.usable(); err != nil {
		return err
	}
	if err := store.CheckRange(start, end); err != nil {
		return err
	}
	if err := t.s.enter(); err != nil {
		return err
	}
	defer t.s.exit()
	if end != nil && string(start) == string(end) {
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
	sp := span{Start: string(start), End: string(end), Inf: end == nil}
	own := t.writes.Between(sp.Start, sp.End, sp.Inf)
	n := 0
	for ok := it.First(); ok || len(own) > 0; {
		var k, v []byte
		stored := false
		if len(own) > 0 && (!ok || own[0] <= string(it.Key())) {
			w := t.writes.M[own[0]]
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
			t.readTo(sp, k)
			return err
		}
		if limit > 0 && n >= limit {
			return t.readTo(sp, k)
		}
		if stored {
			ok = it.Next()
		}
	}
	if err := it.Error(); err != nil {
		return err
	}
	return t.grow(t.reads.AddSpan(sp))
}

// readTo records sp cut just after last, the last key the scan passed on.
func (t *txn) readTo(sp span, last []byte) error {
	sp.End, sp.Inf = string(last)+"\x00", false
	return t.grow(t.reads.AddSpan(sp))
}

// Set implements store.Txn.
func (t *txn) Set(key, val []byte) error {
	if err := t.usable(); err != nil {
		return err
	}
	return t.put(key, val, false)
}

// Delete implements store.Txn.
func (t *txn) Delete(key []byte) error {
	if err := t.usable(); err != nil {
		return err
	}
	return t.put(key, nil, true)
}

func (t *txn) put(key, val []byte, del bool) error {
	if err := store.CheckKey(key); err != nil {
		return err
	}
	if err := store.CheckValue(val); err != nil {
		return err
	}
	return t.grow(t.writes.Put(key, val, del))
}

// Commit implements store.Txn.
func (t *txn) Commit(ctx context.Context, hook func(c store.Critical) error) error {
	if t.done {
		return store.ErrTxnDone
	}
	defer t.Discard()
	if t.err != nil {
		return t.err
	}
	readOnly := t.writes.Len() == 0 && hook == nil
	var err error
	switch {
	case ctx.Err() != nil:
		err = ctx.Err()
	case readOnly:
		err = t.s.commitReadOnly(t)
	default:
		err = t.s.commitGroup(ctx, t, hook)
	}
	t.s.count(err, readOnly)
	return err
}

// Discard implements store.Txn.
func (t *txn) Discard() {
	t.done = true
	if t.snap != nil {
		t.s.release(t.snap)
		t.snap = nil
	}
}
