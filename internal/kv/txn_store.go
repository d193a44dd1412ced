package kv

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/cockroachdb/pebble/v2"

	"github.com/weft-db/weft/internal/kv/kvcore"
	"github.com/weft-db/weft/internal/vclock"
)

// Durable state of the transactional mode, beside the keys in the
// replica's Pebble (prefix 't'), so that a server killed with SIGKILL
// neither loses a part it voted yes for nor runs one twice:
//
//   - 't' 'p' + 8-byte sequence → a prepared part (TxnPrepareRequest as
//     JSON), written with fsync before the participant votes yes, in
//     prepare order (the order its keys' queues hold), deleted in the batch
//     of the part's last write;
//   - 't' 'w' + txn + 0 + key → the part's write of key ran: set in the
//     batch of that write, so a part re-run after a restart skips the
//     writes it already made (Add writes must not run twice);
//   - 't' 'a' + key → the last transaction run on key here (StampJSON),
//     set in the batch of the part's last write, reloaded into the
//     participant after a restart so later transactions are still ordered
//     after it in Kronos;
//   - 't' 'c' + txn → the coordinator decided commit: written with fsync
//     before any decision is sent (presumed abort: a transaction without
//     it whose coordinator no longer runs it was aborted), deleted once
//     every part confirmed.
const txnPrefix = 't'

func txnPreparedKey(seq uint64) []byte {
	return binary.BigEndian.AppendUint64([]byte{txnPrefix, 'p'}, seq)
}

func txnWroteKey(id, key string) []byte {
	b := append([]byte{txnPrefix, 'w'}, id...)
	b = append(b, 0)
	return append(b, key...)
}

func txnCommitKey(id string) []byte { return append([]byte{txnPrefix, 'c'}, id...) }

func txnAppliedKey(key string) []byte { return append([]byte{txnPrefix, 'a'}, key...) }

// LoadApplied returns, per key, the last transaction run on it here.
func (r *Replica) LoadApplied() (map[string]vclock.Stamp, error) {
	r.life.RLock()
	defer r.life.RUnlock()
	if r.closed.Load() {
		return nil, kvcore.ErrClosed
	}
	it, err := r.db.NewIter(&pebble.IterOptions{LowerBound: []byte{txnPrefix, 'a'}, UpperBound: []byte{txnPrefix, 'a' + 1}})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", kvcore.ErrUnavailable, err)
	}
	defer it.Close()
	out := map[string]vclock.Stamp{}
	for ok := it.First(); ok; ok = it.Next() {
		var j kvcore.StampJSON
		if err := json.Unmarshal(it.Value(), &j); err != nil {
			return nil, fmt.Errorf("%w: last transaction of %q: %v", kvcore.ErrCorrupt, it.Key()[2:], err)
		}
		out[string(it.Key()[2:])] = j.Stamp()
	}
	return out, nil
}

// preparedRecord is one stored prepared part.
type preparedRecord struct {
	Seq  uint64
	Data []byte
}

// SavePrepared stores a prepared part durably.
func (r *Replica) SavePrepared(seq uint64, data []byte) error {
	return r.setMeta(txnPreparedKey(seq), data, pebble.Sync)
}

// DropPrepared deletes a prepared part (an aborted one).
func (r *Replica) DropPrepared(seq uint64) error {
	r.life.RLock()
	defer r.life.RUnlock()
	if r.closed.Load() {
		return kvcore.ErrClosed
	}
	if err := r.db.Delete(txnPreparedKey(seq), r.wopt); err != nil {
		return fmt.Errorf("%w: %v", kvcore.ErrUnavailable, err)
	}
	return nil
}

// LoadPrepared returns the stored prepared parts in sequence order.
func (r *Replica) LoadPrepared() ([]preparedRecord, error) {
	r.life.RLock()
	defer r.life.RUnlock()
	if r.closed.Load() {
		return nil, kvcore.ErrClosed
	}
	it, err := r.db.NewIter(&pebble.IterOptions{LowerBound: []byte{txnPrefix, 'p'}, UpperBound: []byte{txnPrefix, 'p' + 1}})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", kvcore.ErrUnavailable, err)
	}
	defer it.Close()
	var out []preparedRecord
	for ok := it.First(); ok; ok = it.Next() {
		if len(it.Key()) != 10 {
			return nil, fmt.Errorf("%w: prepared-part key %q", kvcore.ErrCorrupt, it.Key())
		}
		out = append(out, preparedRecord{Seq: binary.BigEndian.Uint64(it.Key()[2:]), Data: slices.Clone(it.Value())})
	}
	return out, nil
}

// SaveCommit records durably that the coordinator decided to commit id.
func (r *Replica) SaveCommit(id vclock.Stamp) error {
	return r.setMeta(txnCommitKey(stampKey(id)), []byte{1}, pebble.Sync)
}

// DropCommit forgets a commit decision every part confirmed.
func (r *Replica) DropCommit(id vclock.Stamp) error {
	r.life.RLock()
	defer r.life.RUnlock()
	if r.closed.Load() {
		return kvcore.ErrClosed
	}
	if err := r.db.Delete(txnCommitKey(stampKey(id)), pebble.NoSync); err != nil {
		return fmt.Errorf("%w: %v", kvcore.ErrUnavailable, err)
	}
	return nil
}

// HasCommit reports whether a commit of id was recorded here.
func (r *Replica) HasCommit(id vclock.Stamp) (bool, error) {
	return r.hasMeta(txnCommitKey(stampKey(id)))
}

func (r *Replica) setMeta(key, value []byte, opt *pebble.WriteOptions) error {
	r.life.RLock()
	defer r.life.RUnlock()
	if r.closed.Load() {
		return kvcore.ErrClosed
	}
	if err := r.db.Set(key, value, opt); err != nil {
		return fmt.Errorf("%w: %v", kvcore.ErrUnavailable, err)
	}
	return nil
}

func (r *Replica) hasMeta(key []byte) (bool, error) {
	r.life.RLock()
	defer r.life.RUnlock()
	if r.closed.Load() {
		return false, kvcore.ErrClosed
	}
	_, closer, err := r.db.Get(key)
	if err == pebble.ErrNotFound {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("%w: %v", kvcore.ErrUnavailable, err)
	}
	closer.Close()
	return true, nil
}

// ExecTxnDurable runs a committed part like ExecTxn, idempotently: each
// write commits with a marker in its batch and is skipped if its marker
// exists (the part ran partly before a crash), and the last write's batch
// also deletes the prepared record seq and every marker. Reads are taken
// before any write; a part re-run after a crash reads what its own
// earlier writes left (nobody waits for those reads any more).
//
// others names the other replicas of a key (nil: none): each write's batch
// also stores one outbox record per other replica (txn_outbox.go), so the
// write reaches them even if this server crashes right after; the records
// written are returned for the caller to push at once.
func (r *Replica) ExecTxnDurable(e TxnExec, seq uint64, others func(key string) []int) (map[string][]kvcore.Sibling, []outboxEntry, error) {
	reads := make(map[string][]kvcore.Sibling, len(e.Reads))
	for _, k := range e.Reads {
		sibs, _, err := r.Get(k, vclock.HVC{})
		if err != nil {
			return nil, nil, err
		}
		reads[k] = sibs
	}
	id := stampKey(e.Txn)
	actor := TxnActor(r.cfg.Self)
	stamp, err := json.Marshal(kvcore.ToStampJSON(e.Txn))
	if err != nil {
		return nil, nil, err
	}
	cleanup := func(b *pebble.Batch) {
		_ = b.Delete(txnPreparedKey(seq), nil)
		for _, k := range e.Reads {
			_ = b.Set(txnAppliedKey(k), stamp, nil)
		}
		for _, w := range e.Writes {
			_ = b.Delete(txnWroteKey(id, w.Key), nil)
			_ = b.Set(txnAppliedKey(w.Key), stamp, nil)
		}
	}
	var pushed []outboxEntry
	for i, w := range e.Writes {
		done, err := r.hasMeta(txnWroteKey(id, w.Key))
		if err != nil {
			return nil, nil, err
		}
		last := i == len(e.Writes)-1
		if done {
			if last {
				if err := r.batch(cleanup); err != nil {
					return nil, nil, err
				}
			}
			continue
		}
		cur, _, err := r.Get(w.Key, vclock.HVC{})
		if err != nil {
			return nil, nil, err
		}
		value := w.Value
		if w.Add {
			if value, err = addDecimal(currentValue(cur), string(w.Value)); err != nil {
				return nil, nil, fmt.Errorf("key %q: %w", w.Key, err)
			}
		}
		ctx := kvcore.Versions(cur)
		sib := kvcore.Sibling{Version: kvcore.Descend(ctx, actor, kvcore.NextCounter(0, ctx, actor), kvcore.VersionEntriesMax), Value: value}
		var to []int
		if others != nil {
			to = others(w.Key)
		}
		var made []outboxEntry
		extra := func(b *pebble.Batch, at vclock.HVC) {
			_ = b.Set(txnWroteKey(id, w.Key), []byte{1}, nil)
			if last {
				cleanup(b)
			}
			made = r.appendOutbox(b, made[:0], to, w.Key, sib, at)
		}
		if _, _, err := r.put(w.Key, sib, vclock.HVC{}, extra); err != nil {
			return nil, nil, err
		}
		r.outLen.Add(int64(len(made)))
		pushed = append(pushed, made...)
	}
	if len(e.Writes) == 0 {
		if err := r.batch(cleanup); err != nil {
			return nil, nil, err
		}
	}
	return reads, pushed, nil
}

func (r *Replica) batch(f func(*pebble.Batch)) error {
	r.life.RLock()
	defer r.life.RUnlock()
	if r.closed.Load() {
		return kvcore.ErrClosed
	}
	b := r.db.NewBatch()
	defer b.Close()
	f(b)
	if err := b.Commit(r.wopt); err != nil {
		return fmt.Errorf("%w: %v", kvcore.ErrUnavailable, err)
	}
	return nil
}
