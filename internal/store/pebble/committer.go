package pebble

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
	"github.com/weft-db/weft/internal/store"
)

// Request states: a waiting Commit and the committer race to move a request
// out of queued; whoever wins decides whether it is written.
const (
	queued int32 = iota
	taken
	canceled
)

// request is one Commit waiting for, or in, a commit group.
type request struct {
	t     *txn
	hook  func(store.Critical) error
	state atomic.Int32
	done  chan struct{} // closed once err (or panicked) is set
	err   error
	panic any // a hook panic, re-raised on the caller's goroutine
}

// commitGroup queues t for the committer and waits for its outcome.
func (s *Store) commitGroup(ctx context.Context, t *txn, hook func(store.Critical) error) error {
	r := &request{t: t, hook: hook, done: make(chan struct{})}
	if err := s.enter(); err != nil {
		return err
	}
	select {
	case s.queue <- r:
	default:
		s.exit()
		return fmt.Errorf("%w: %d commits queued", store.ErrOverloaded, cap(s.queue))
	}
	s.exit()
	select {
	case <-r.done:
	case <-ctx.Done():
		if r.state.CompareAndSwap(queued, canceled) {
			return ctx.Err()
		}
		<-r.done // taken: the commit completes either way
	}
	if r.panic != nil {
		panic(r.panic)
	}
	return r.err
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
			s.drain()
			return
		default:
		}
		select {
		case <-s.quit:
			s.drain()
			return
		case r := <-s.queue:
			if group = s.collect(group[:0], r); len(group) > 0 {
				s.commit(group)
			}
		}
	}
}

// collect takes r and whatever else is already waiting, within the group
// bounds; canceled requests are dropped.
func (s *Store) collect(group []*request, r *request) []*request {
	bytes := 0
	for {
		if r.state.CompareAndSwap(queued, taken) {
			group = append(group, r)
			bytes += r.t.writes.Bytes
		}
		if len(group) >= s.opts.CommitGroupMax || bytes >= s.opts.GroupBytesMax {
			return group
		}
		select {
		case r = <-s.queue:
		default:
			return group
		}
	}
}

// drain fails every queued commit with ErrClosed; Close has stopped new ones.
func (s *Store) drain() {
	for {
		select {
		case r := <-s.queue:
			if r.state.CompareAndSwap(queued, taken) {
				r.err = store.ErrClosed
				close(r.done)
			}
		default:
			return
		}
	}
}

// commit validates, runs hooks, applies and publishes one group, then
// answers its members. Members are serialized in arrival order: each is
// validated against the history and against the earlier members that
// succeeded, and its hook sees their writes.
func (s *Store) commit(group []*request) {
	s.st.groups.Add(1)
	s.st.groupedTxns.Add(uint64(len(group)))
	if n := uint64(len(group)); n > s.st.groupSizeMax.Load() {
		s.st.groupSizeMax.Store(n) // only the committer writes it
	}
	version := s.version + 1
	b := s.db.NewBatch()
	defer b.Close()
	var overlay writeSet // the group's writes so far, for hooks
	var pending []entry  // the group's write sets so far, for validation
	for _, r := range group {
		if r.err = s.admit(r, &overlay, pending); r.err != nil {
			continue
		}
		w := &r.t.writes
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
		close(r.done)
	}
}

// admit validates r and runs its hook.
func (s *Store) admit(r *request, overlay *writeSet, pending []entry) error {
	if s.failed != nil {
		return s.failed
	}
	t := r.t
	if err := s.hist.check(t.snap.version, &t.reads); err != nil {
		return err
	}
	if err := checkEntries(pending, t.snap.version, &t.reads); err != nil {
		return err
	}
	if r.hook == nil {
		return nil
	}
	c := &critical{s: s, t: t, overlay: overlay}
	err := runHook(r, c)
	c.t = nil
	if err != nil {
		s.st.hookErrors.Add(1)
		return err
	}
	return t.err // a hook that overfilled the Txn
}

// runHook calls r's hook, catching a panic to re-raise on the caller.
func runHook(r *request, c *critical) (err error) {
	defer func() {
		if p := recover(); p != nil {
			r.panic = p
			err = fmt.Errorf("store: commit hook panicked: %v", p)
		}
	}()
	return r.hook(c)
}

// apply writes the batch durably, then publishes the group: its write sets
// join the history and a new snapshot serves Begin. Only after Apply has
// returned can anyone read the group's writes.
func (s *Store) apply(b *pebble.Batch, version uint64, pending []entry) error {
	if err := s.db.Apply(b, s.syncOpt); err != nil {
		return err
	}
	s.st.applies.Add(1)
	if s.opts.Sync {
		s.st.syncs.Add(1)
	}
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
		if r.err == nil {
			r.err = ferr
		}
		close(r.done)
	}
}

var errCriticalDone = errors.New("store: Critical used after its hook returned")

// critical is the store.Critical a hook gets. Reads go own writes → earlier
// group members' writes → the latest applied state.
type critical struct {
	s       *Store
	t       *txn // nil once the hook has returned
	overlay *writeSet
}

func (c *critical) Get(key []byte) ([]byte, bool, error) {
	if c.t == nil {
		return nil, false, errCriticalDone
	}
	if err := store.CheckKey(key); err != nil {
		return nil, false, err
	}
	if w, ok := c.t.writes.Get(key); ok {
		return w.Val, !w.Del, nil
	}
	if w, ok := c.overlay.Get(key); ok {
		return w.Val, !w.Del, nil
	}
	return getCopy(c.s.db, key)
}

func (c *critical) Set(key, val []byte) error {
	if c.t == nil {
		return errCriticalDone
	}
	return c.t.put(key, val, false)
}

func (c *critical) Delete(key []byte) error {
	if c.t == nil {
		return errCriticalDone
	}
	return c.t.put(key, nil, true)
}
