package store

import (
	"context"
	"errors"
	"fmt"
)

// Input limits, checked on every call that takes a key or value.
const (
	// KeyLenMax is the longest key, in bytes. The empty key is valid.
	KeyLenMax = 4 << 10
	// ValueLenMax is the longest value, in bytes.
	ValueLenMax = 16 << 20
)

// Store is a durable, ordered, transactional key-value store. It is safe for
// concurrent use.
type Store interface {
	// Begin starts a transaction reading at a consistent snapshot of every
	// commit acknowledged so far.
	Begin() (Txn, error)
	// Close waits for in-progress reads, finishes the commit group in
	// progress, fails waiting commits with ErrClosed, flushes and closes.
	// Later calls (and calls on open Txns) return ErrClosed.
	Close() error
	// Stats returns counters since Open.
	Stats() Stats
}

// Txn is one transaction. It is used by one goroutine at a time.
//
// Slices passed in are copied; slices returned (Get's value, Scan's key and
// value) must not be modified, and Scan's are valid only during the call.
type Txn interface {
	// Get reads key at the snapshot, overlaid with this Txn's own writes.
	// A read of a missing key is recorded too: a later insert conflicts.
	Get(key []byte) (val []byte, ok bool, err error)
	// Scan calls fn for the keys in [start, end) in order at the snapshot,
	// overlaid with own writes, at most limit keys (limit <= 0: no limit).
	// A nil end means no upper bound. The range up to where the scan stopped
	// (the end, or the last key passed to fn) is recorded in the read set,
	// so a later commit that inserts or deletes a key in it conflicts. An
	// error from fn stops the scan and is returned as is. fn may write to
	// the Txn (say, delete each key it is passed); whether the rest of the
	// scan sees those writes is unspecified.
	Scan(start, end []byte, limit int, fn func(key, val []byte) error) error
	// Set buffers a write until Commit.
	Set(key, val []byte) error
	// Delete buffers a deletion until Commit. Deleting a missing key is not
	// an error.
	Delete(key []byte) error
	// Commit validates the read set, runs hook (if not nil) in the serialized
	// commit section, and makes the writes durable. It returns nil once they
	// are; an error matching ErrConflict (retryable, nothing written); hook's
	// error (nothing written); ctx.Err() if ctx ended before the commit was
	// taken for a group (nothing written); or another error. A read-only Txn
	// without a hook is validated without touching the disk. Commit ends the
	// Txn: later calls return ErrTxnDone.
	Commit(ctx context.Context, hook func(c Critical) error) error
	// Discard releases the snapshot. It is safe after Commit and idempotent.
	Discard()
}

// Critical is the view a commit hook gets inside the serialized commit
// section: reads see the latest committed state, overlaid with the writes of
// earlier transactions in the same commit group and with this Txn's own
// writes. These reads are not validated (nothing can commit concurrently);
// writes join the Txn's. A Critical must not be used after its hook returns.
type Critical interface {
	Get(key []byte) ([]byte, bool, error)
	Set(key, val []byte) error
	Delete(key []byte) error
}

// Stats counts a store's work since Open.
type Stats struct {
	Begins        uint64 // Txns begun
	Commits       uint64 // Commit calls that returned nil (read-only ones included)
	ReadOnly      uint64 // of Commits, read-only Txns validated without a group
	Conflicts     uint64 // commits refused with ErrConflict (TooOld included)
	TooOld        uint64 // of Conflicts, snapshots older than the validation history
	HookErrors    uint64 // commits refused by their hook
	Overloaded    uint64 // commits refused with ErrOverloaded
	Canceled      uint64 // commits whose ctx ended before they were taken
	Groups        uint64 // commit groups processed
	GroupedTxns   uint64 // Txns taken into groups; GroupedTxns/Groups is the mean group size
	GroupSizeMax  uint64 // largest group, in Txns
	Syncs         uint64 // batches applied with fsync (one per group with writes, when syncing)
	Applies       uint64 // batches applied
	HistoryKeys   uint64 // keys now held in the validation history
	HistoryEvicts uint64 // history entries evicted to respect its bound
}

// RetryableError is an operating error after which retrying the whole
// transaction (from Begin) may succeed.
type RetryableError struct {
	msg    string
	parent error // also matched by errors.Is, or nil
}

func (e *RetryableError) Error() string { return e.msg }

// Is reports whether target is e's parent, so ErrTooOld matches ErrConflict.
func (e *RetryableError) Is(target error) bool { return e.parent != nil && target == e.parent }

// Sentinels. Compare with errors.Is: Commit wraps them with detail.
var (
	// ErrConflict means a key this Txn read was written after its snapshot.
	ErrConflict = &RetryableError{msg: "store: transaction conflict"}
	// ErrTooOld means the snapshot is older than the validation history;
	// it matches ErrConflict too.
	ErrTooOld = &RetryableError{msg: "store: snapshot too old to validate", parent: ErrConflict}
	// ErrOverloaded means the commit queue is full.
	ErrOverloaded = &RetryableError{msg: "store: overloaded"}

	ErrClosed        = errors.New("store: closed")
	ErrFailed        = errors.New("store: failed") // a write failed; the store refuses further work
	ErrTxnDone       = errors.New("store: transaction already committed or discarded")
	ErrTxnTooLarge   = errors.New("store: transaction too large")
	ErrKeyTooLarge   = errors.New("store: key too large")
	ErrValueTooLarge = errors.New("store: value too large")
	ErrBadRange      = errors.New("store: scan start after end")
)

// IsRetryable reports whether err means the transaction may succeed if
// retried from Begin (conflict, too old, overloaded).
func IsRetryable(err error) bool {
	var r *RetryableError
	return errors.As(err, &r)
}

// CheckKey returns an error if key is too long.
func CheckKey(key []byte) error {
	if len(key) > KeyLenMax {
		return fmt.Errorf("%w: %d bytes > %d", ErrKeyTooLarge, len(key), KeyLenMax)
	}
	return nil
}

// CheckValue returns an error if val is too long.
func CheckValue(val []byte) error {
	if len(val) > ValueLenMax {
		return fmt.Errorf("%w: %d bytes > %d", ErrValueTooLarge, len(val), ValueLenMax)
	}
	return nil
}

// CheckRange returns an error if start > end (nil end: unbounded) or a bound
// is too long.
func CheckRange(start, end []byte) error {
	if err := CheckKey(start); err != nil {
		return err
	}
	if end == nil {
		return nil
	}
	if err := CheckKey(end); err != nil {
		return err
	}
	if string(start) > string(end) {
		return fmt.Errorf("%w: %s > %s", ErrBadRange, Brief(start), Brief(end))
	}
	return nil
}

// Brief quotes a key for error messages, shortened to its first bytes.
func Brief(key []byte) string {
	const n = 48
	if len(key) <= n {
		return fmt.Sprintf("%q", key)
	}
	return fmt.Sprintf("%q…(%d bytes)", key[:n], len(key))
}
