package pebble

import (
	"context"
	"fmt"

	"github.com/cockroachdb/pebble/v2"

	"github.com/weft-db/weft/internal/store"
	"github.com/weft-db/weft/internal/store/groupcommit"
	"github.com/weft-db/weft/internal/store/txnset"
)

// request is one Commit waiting for, or in, a commit group.
type request struct {
	groupcommit.Request
	t    *txn
	hook func(store.Critical) error
}

// Bytes implements groupcommit.Member.
func (r *request) Bytes() int { return r.t.Writes.Bytes }

// commitGroup queues t for the committer and waits for its outcome.
func (s *Store) commitGroup(ctx context.Context, t *txn, hook func(store.Critical) error) error {
	return s.queue.Submit(ctx, &s.gate, &request{t: t, hook: hook}, nil)
}

// run is the committer: the only goroutine that writes to Pebble. It takes
// waiting commits in arrival order, up to CommitGroupMax (and GroupBytesMax
// of writes) at a time, and commits each group with one batch and one fsync.
func (s *Store) run() {
	defer close(s.done)
	group := make([]*request, 0, s.opts.CommitGroupMax)
	for {
		// Quitting wins over waiting commits: once Close has asked, queued
		// commits fail with ErrClosed rather than racing into a group.
		select {
		case <-s.quit:
			s.queue.Drain()
			return
		default:
		}
		select {
		case <-s.quit:
			s.queue.Drain()
			return
		case r := <-s.queue.C():
			if group = s.queue.Collect(group[:0], r, s.opts.CommitGroupMax, s.opts.GroupBytesMax); len(group) > 0 {
				s.commit(group)
			}
		}
	}
}

// commit validates, runs hooks, applies and publishes one group, then
// answers its members. Members are serialized in arrival order: each is
// validated against the history and against the earlier members that
// succeeded, and its hook sees their writes.
func (s *Store) commit(group []*request) {
	s.st.Grouped(len(group))
	version := s.version + 1
	b := s.db.NewBatch()
	defer b.Close()
	var overlay writeSet // the group's writes so far, for hooks
	var pending []entry  // the group's write sets so far, for validation
	for _, r := range group {
		if r.Err = s.admit(r, &overlay, pending); r.Err != nil {
			continue
		}
		w := &r.t.Writes
		keys := w.Keys()
		if len(keys) == 0 {
			continue
		}
		e := entry{version: version, keys: keys}
		for _, k := range keys {
			x := w.M[k]
			var err error
			if x.Del {
				err = b.Delete(bytesOf(k), nil)
			} else {
				err = b.Set(bytesOf(k), x.Val, nil)
			}
			if err != nil {
				// Pebble refuses only impossible batches (over 4 GiB):
				// GroupBytesMax keeps us far below. Fail the group.
				s.failGroup(group, err)
				return
			}
			overlay.Adopt(k, x)
			e.bytes += len(k)
		}
		pending = append(pending, e)
	}
	if len(pending) > 0 {
		if err := s.apply(b, version, pending); err != nil {
			s.failGroup(group, err)
			return
		}
	}
	for _, r := range group {
		r.Wake()
	}
}

// admit validates r and runs its hook.
func (s *Store) admit(r *request, overlay *writeSet, pending []entry) error {
	if s.failed != nil {
		return s.failed
	}
	t := r.t
	if err := s.hist.check(t.snap.version, &t.Reads); err != nil {
		return err
	}
	if err := checkEntries(pending, t.snap.version, &t.Reads); err != nil {
		return err
	}
	if r.hook == nil {
		return nil
	}
	c := &critical{Critical: txnset.Critical{T: &t.Txn, Overlay: overlay}, s: s}
	err := txnset.RunHook(r.hook, c, &r.Panic)
	c.T = nil
	if err != nil {
		s.st.HookErrors.Add(1)
		return err
	}
	return t.Err // a hook that overfilled the Txn
}

// apply writes the batch durably, then publishes the group: its write sets
// join the history and a new snapshot serves Begin. Only after Apply has
// returned can anyone read the group's writes.
func (s *Store) apply(b *pebble.Batch, version uint64, pending []entry) error {
	if err := s.db.Apply(b, s.syncOpt); err != nil {
		return err
	}
	s.st.Applied(s.opts.Sync)
	sn := s.newSnapshot(version)
	s.mu.Lock()
	for _, e := range pending {
		s.hist.push(e)
	}
	old := s.cur
	s.cur, s.version = sn, version
	s.mu.Unlock()
	s.release(old)
	return nil
}

// failGroup answers every member not already refused with err and stops the
// store: after a failed write Pebble's state is unknown.
func (s *Store) failGroup(group []*request, err error) {
	ferr := fmt.Errorf("%w: %w", store.ErrFailed, err)
	s.mu.Lock()
	s.failed = ferr
	s.mu.Unlock()
	for _, r := range group {
		if r.Err == nil {
			r.Err = ferr
		}
		r.Wake()
	}
}

// critical is the store.Critical a hook gets. Reads go own writes → earlier
// group members' writes → the latest applied state.
type critical struct {
	txnset.Critical
	s *Store
}

func (c *critical) Get(key []byte) ([]byte, bool, error) {
	if w, found, err := c.ReadOwn(key); err != nil {
		return nil, false, err
	} else if found {
		return w.Val, !w.Del, nil
	}
	return getCopy(c.s.db, key)
}
