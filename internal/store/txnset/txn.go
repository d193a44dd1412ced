package txnset

import (
	"context"
	"errors"
	"fmt"

	"github.com/weft-db/weft/internal/store"
)

// Txn is the part of a store.Txn that does not touch the store: the
// buffered writes and read set, the byte budget over both, and the Txn's
// state. A back-end's transaction embeds it and adds the reads of its
// snapshot, Commit and Discard.
type Txn struct {
	Writes   WriteSet
	Reads    ReadSet
	BytesMax int   // budget of Writes.Bytes + Reads.Bytes (the store's TxnBytesMax)
	Done     bool  // committed or discarded
	Err      error // sticky: the Txn can no longer commit (too large, or a back-end's failed read)
}

// Usable returns why the Txn can no longer be used, or nil.
func (t *Txn) Usable() error {
	if t.Done {
		return store.ErrTxnDone
	}
	return t.Err
}

// Grow checks the budget after the buffers grew; past it the Txn is spoiled.
func (t *Txn) Grow() error {
	if n := t.Writes.Bytes + t.Reads.Bytes; n > t.BytesMax {
		t.Err = fmt.Errorf("%w: %d bytes of writes and reads > %d", store.ErrTxnTooLarge, n, t.BytesMax)
		return t.Err
	}
	return nil
}

// ReadOwn is the part of Get before the snapshot is read: it checks the Txn
// and the key, and answers a key this Txn wrote from its own write (own),
// whatever others do, so that read is not recorded. Otherwise it records the
// point read; the caller then reads the snapshot unless err is set.
func (t *Txn) ReadOwn(key []byte) (w Write, own bool, err error) {
	if err := t.Usable(); err != nil {
		return Write{}, false, err
	}
	if err := store.CheckKey(key); err != nil {
		return Write{}, false, err
	}
	if w, ok := t.Writes.Get(key); ok {
		return w, true, nil
	}
	t.Reads.AddPoint(key)
	return Write{}, false, t.Grow()
}

// CheckScan checks the Txn and a Scan's range.
func (t *Txn) CheckScan(start, end []byte) error {
	if err := t.Usable(); err != nil {
		return err
	}
	return store.CheckRange(start, end)
}

// ScanSpan returns the span a Scan of [start, end) reads (a nil end: no
// bound) and the keys this Txn wrote in it, in order; ok is false for an
// empty range, which reads nothing.
func (t *Txn) ScanSpan(start, end []byte) (sp Span, own []string, ok bool) {
	if end != nil && string(start) == string(end) {
		return Span{}, nil, false
	}
	sp = Span{Start: string(start), End: string(end), Inf: end == nil}
	return sp, t.Writes.Between(sp.Start, sp.End, sp.Inf), true
}

// ReadTo records sp cut just after last, the last key a scan passed on.
func (t *Txn) ReadTo(sp Span, last []byte) error {
	sp.End, sp.Inf = string(last)+"\x00", false
	t.Reads.AddSpan(sp)
	return t.Grow()
}

// ReadSpan records the whole of sp, a scan that ran to its end.
func (t *Txn) ReadSpan(sp Span) error {
	t.Reads.AddSpan(sp)
	return t.Grow()
}

// Set implements store.Txn.
func (t *Txn) Set(key, val []byte) error {
	if err := t.Usable(); err != nil {
		return err
	}
	return t.Put(key, val, false)
}

// Delete implements store.Txn.
func (t *Txn) Delete(key []byte) error {
	if err := t.Usable(); err != nil {
		return err
	}
	return t.Put(key, nil, true)
}

// Put buffers a write or deletion after checking its sizes; Set, Delete and
// a commit hook's Critical write through it.
func (t *Txn) Put(key, val []byte, del bool) error {
	if err := store.CheckKey(key); err != nil {
		return err
	}
	if err := store.CheckValue(val); err != nil {
		return err
	}
	t.Writes.Put(key, val, del)
	return t.Grow()
}

// Committer is a back-end's side of Commit.
type Committer interface {
	// CommitReadOnly validates a Txn without writes or hook, with no group.
	CommitReadOnly() error
	// CommitGroup hands the Txn to the committer and waits for its outcome.
	CommitGroup(ctx context.Context, hook func(store.Critical) error) error
	// CountCommit records Commit's outcome in the store's counters.
	CountCommit(err error, readOnly bool)
	// Discard ends the Txn, as store.Txn's Discard.
	Discard()
}

// CommitWith is store.Txn's Commit over c, the back-end's transaction that
// embeds t: a Txn without writes or hook is validated read-only, any other
// goes to the committer; a ctx already ended commits nothing. The Txn is
// discarded however it ends.
func (t *Txn) CommitWith(ctx context.Context, hook func(store.Critical) error, c Committer) error {
	if t.Done {
		return store.ErrTxnDone
	}
	defer c.Discard()
	if t.Err != nil {
		return t.Err
	}
	readOnly := t.Writes.Len() == 0 && hook == nil
	var err error
	switch {
	case ctx.Err() != nil:
		err = ctx.Err()
	case readOnly:
		err = c.CommitReadOnly()
	default:
		err = c.CommitGroup(ctx, hook)
	}
	c.CountCommit(err, readOnly)
	return err
}

// ErrCriticalDone is returned by a Critical used after its hook returned.
var ErrCriticalDone = errors.New("store: Critical used after its hook returned")

// Critical is the part of a hook's store.Critical that does not touch the
// store: reads of the Txn's own writes and of the earlier group members'
// (Overlay), and writes into the Txn. A back-end's Critical embeds it and
// adds the read of the latest committed state.
type Critical struct {
	T       *Txn // nil once the hook has returned
	Overlay *WriteSet
}

// ReadOwn is the part of Get before the store is read: the Critical's use
// and the key are checked, then a key written by the Txn or by an earlier
// member of the group is answered from that write (found). Otherwise the
// caller reads the latest committed state unless err is set.
func (c *Critical) ReadOwn(key []byte) (w Write, found bool, err error) {
	if c.T == nil {
		return Write{}, false, ErrCriticalDone
	}
	if err := store.CheckKey(key); err != nil {
		return Write{}, false, err
	}
	if w, ok := c.T.Writes.Get(key); ok {
		return w, true, nil
	}
	if w, ok := c.Overlay.Get(key); ok {
		return w, true, nil
	}
	return Write{}, false, nil
}

// Set implements store.Critical.
func (c *Critical) Set(key, val []byte) error {
	if c.T == nil {
		return ErrCriticalDone
	}
	return c.T.Put(key, val, false)
}

// Delete implements store.Critical.
func (c *Critical) Delete(key []byte) error {
	if c.T == nil {
		return ErrCriticalDone
	}
	return c.T.Put(key, nil, true)
}

// RunHook calls hook with c, catching a panic to re-raise on the
// committing caller's goroutine: the panic value goes to *panicked and the
// member fails with an error.
func RunHook(hook func(store.Critical) error, c store.Critical, panicked *any) (err error) {
	defer func() {
		if p := recover(); p != nil {
			*panicked = p
			err = fmt.Errorf("store: commit hook panicked: %v", p)
		}
	}()
	return hook(c)
}
