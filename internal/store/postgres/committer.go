package postgres

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/weft-db/weft/internal/store"
	"github.com/weft-db/weft/internal/store/groupcommit"
)

// request is one Commit waiting for, or in, a commit group.
type request struct {
	groupcommit.Request
	t    *txn
	hook func(store.Critical) error
	ctx  context.Context
	// base is the Txn's writes before its hook first ran: a retried
	// attempt runs the hook again from them, not on top of its last run.
	base *writeSet
}

// Bytes implements groupcommit.Member.
func (r *request) Bytes() int { return r.t.Writes.Bytes }

// reset readies r for an attempt: a hooked Txn's writes go back to what
// they were before its hook ever ran.
func (r *request) reset() {
	if r.hook == nil {
		return
	}
	if r.base == nil {
		b := r.t.Writes.Clone()
		r.base = &b
		return
	}
	r.t.Writes, r.t.Err = r.base.Clone(), nil
}

// commitGroup queues t for the committer and waits for its outcome. A store
// whose commit outcome was lost refuses before queueing.
func (s *Store) commitGroup(ctx context.Context, t *txn, hook func(store.Critical) error) error {
	return s.queue.Submit(ctx, &s.gate, &request{t: t, hook: hook, ctx: ctx}, s.failure)
}

// run is the committer: the only goroutine of this Store that writes. It
// takes waiting commits in arrival order, up to CommitGroupMax (and
// GroupBytesMax of writes) at a time, and commits each group with one
// SERIALIZABLE transaction.
func (s *Store) run() {
	defer close(s.done)
	c := &committer{s: s}
	defer c.disconnect()
	for {
		// Quitting wins over waiting commits: once Close has asked, queued
		// commits fail with ErrClosed rather than racing into a group.
		select {
		case <-s.quit.Done():
			s.queue.Drain()
			return
		default:
		}
		select {
		case <-s.quit.Done():
			s.queue.Drain()
			return
		case r := <-s.queue.C():
			c.serve(r)
		}
	}
}

// lockHoldGroupsMax bounds the groups committed back to back under one
// advisory lock acquisition while commits keep arriving; then the lock is
// released so committers of other processes queued on it get their turn.
const lockHoldGroupsMax = 16

// committer holds the committer goroutine's connection and lock state.
type committer struct {
	s      *Store
	conn   *pgx.Conn // nil: connect before the next attempt
	locked bool      // this session holds the advisory lock
	held   int       // groups committed since the lock was taken
	conns  int       // connections opened
}

// serve commits the group starting with first. The lock is taken before the
// group is collected, so commits stay cancelable while the committer waits
// for committers of other processes.
func (c *committer) serve(first *request) {
	s := c.s
	err := c.prepare(first.ctx)
	if err != nil && s.quit.Err() != nil {
		err = store.ErrClosed // Close interrupted the wait
	}
	group := s.queue.Collect(nil, first, s.opts.CommitGroupMax, s.opts.GroupBytesMax)
	switch {
	case len(group) == 0:
	case err != nil:
		c.answerAll(group, err)
	default:
		s.st.Grouped(len(group))
		c.commit(group)
	}
	c.held++
	if c.locked && (s.queue.Len() == 0 || c.held >= lockHoldGroupsMax) {
		c.unlock()
	}
}

// prepare connects and takes the advisory lock, retrying a lost connection
// with backoff up to RetryMax times, or until ctx (the first waiting
// commit's) ends or Close asks.
func (c *committer) prepare(ctx context.Context) error {
	var err error
	for attempt := 1; ; attempt++ {
		if err = c.connect(); err == nil {
			if err = c.lock(); err == nil {
				return nil
			}
		}
		if attempt >= c.s.opts.RetryMax || !connLost(err) {
			return classify("connect", err)
		}
		if !c.sleep(ctx, attempt) {
			return classify("connect", err)
		}
	}
}

// connect opens the committer's connection if it has none.
func (c *committer) connect() error {
	if c.conn != nil && !c.conn.IsClosed() {
		return nil
	}
	c.disconnect()
	ctx, cancel := c.s.bound()
	defer cancel()
	conn, err := pgx.ConnectConfig(ctx, c.s.cc.Copy())
	if err != nil {
		return err
	}
	if err := setSync(ctx, conn, c.s.opts.Sync); err != nil {
		conn.Close(context.Background())
		return err
	}
	if err := setStallTimeout(ctx, conn, c.s.opts.StallTimeout, c.s.opts.Serialize == SerializeAdvisory); err != nil {
		conn.Close(context.Background())
		return err
	}
	if c.conns++; c.conns > 1 {
		c.s.st.reconnects.Add(1)
	}
	c.conn = conn
	return nil
}

// setSync makes the session's commits wait for the WAL flush (keeping a
// stronger server setting such as remote_apply), or not when sync is false.
func setSync(ctx context.Context, conn *pgx.Conn, sync bool) error {
	var cur string
	if err := conn.QueryRow(ctx, `SHOW synchronous_commit`).Scan(&cur); err != nil {
		if sqlState(err) == "42704" { // undefined_object: a server without the setting
			return nil
		}
		return err
	}
	var want string
	switch {
	case !sync && cur != "off":
		want = "off"
	case sync && cur == "off":
		want = "on"
	default:
		return nil
	}
	_, err := conn.Exec(ctx, "SET synchronous_commit = "+want)
	return err
}

// setStallTimeout has the server end the session when it sits idle in a
// transaction for d, and (when the session may hold the advisory lock
// between transactions) when it sits idle outside one for d. A setting the
// server lacks (SQLSTATE 42704) is skipped.
func setStallTimeout(ctx context.Context, conn *pgx.Conn, d time.Duration, idleToo bool) error {
	if d <= 0 {
		return nil
	}
	settings := []string{"idle_in_transaction_session_timeout"}
	if idleToo {
		settings = append(settings, "idle_session_timeout")
	}
	for _, name := range settings {
		if _, err := conn.Exec(ctx, fmt.Sprintf("SET %s = %d", name, d.Milliseconds())); err != nil && sqlState(err) != "42704" {
			return err
		}
	}
	return nil
}

// disconnect closes the connection; the server releases its lock and rolls
// back its transaction.
func (c *committer) disconnect() {
	if c.conn != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_ = c.conn.Close(ctx)
		cancel()
	}
	c.conn, c.locked, c.held = nil, false, 0
}

// lock takes the schema's advisory lock (SerializeAdvisory) before any
// commit transaction begins, so its snapshot includes every commit of every
// process before it.
func (c *committer) lock() error {
	if c.locked || c.s.opts.Serialize != SerializeAdvisory {
		return nil
	}
	// Waiting for other processes' committers is bounded by QueryTimeout
	// like any round trip; Close interrupts it.
	ctx, cancel := context.WithTimeout(c.s.quit, c.s.opts.QueryTimeout)
	defer cancel()
	if _, err := c.conn.Exec(ctx, c.s.q.lock, c.s.lockKey); err != nil {
		c.disconnect()
		return err
	}
	c.s.st.locks.Add(1)
	c.locked, c.held = true, 0
	return nil
}

func (c *committer) unlock() {
	ctx, cancel := c.s.bound()
	defer cancel()
	if _, err := c.conn.Exec(ctx, c.s.q.unlock, c.s.lockKey); err != nil {
		c.disconnect() // the session's end releases it
		return
	}
	c.locked, c.held = false, 0
}

// sleep waits out the backoff before attempt+1; false if ctx ended or Close
// asked first.
func (c *committer) sleep(ctx context.Context, attempt int) bool {
	o := c.s.opts
	d := o.RetryBackoff << min(attempt-1, 20)
	d = min(d, o.RetryBackoffMax)
	d = d/2 + time.Duration(mrand.Int64N(int64(d/2)+1)) // jitter: [d/2, d]
	tm := time.NewTimer(d)
	defer tm.Stop()
	var done <-chan struct{}
	if ctx != nil {
		done = ctx.Done()
	}
	select {
	case <-tm.C:
		return true
	case <-done:
		return false
	case <-c.s.quit.Done():
		return false
	}
}

// answerAll answers every member of group with err.
func (c *committer) answerAll(group []*request, err error) {
	for _, r := range group {
		r.Answer(err)
	}
}

// commit runs attempts of group until one ends it, retrying serialization
// failures, deadlocks and lost connections up to RetryMax attempts. Between
// attempts a member whose ctx ended leaves with ctx.Err(): nothing of it
// was written. A statement error that is none of those ends a group of
// several in one attempt per member, so one bad Txn fails alone.
func (c *committer) commit(group []*request) {
	s := c.s
	for attempt := 1; ; attempt++ {
		// A lost connection (or a failed ROLLBACK) dropped the session and
		// its advisory lock: take both again.
		if c.conn == nil || c.conn.IsClosed() {
			if err := c.prepare(nil); err != nil {
				c.answerAll(group, err)
				return
			}
		}
		a := &groupRun{c: c, group: group}
		err := a.run()
		switch {
		case err == nil:
			a.answer()
			return
		case errors.Is(err, errUnknownOutcome):
			c.answerAll(group, s.fail(err))
			return
		case !retryableState(sqlState(err)) && !connLost(err):
			if len(group) > 1 {
				s.st.splits.Add(1)
				for _, r := range group {
					c.commit([]*request{r})
				}
				return
			}
			c.answerAll(group, a.final(err))
			return
		}
		if attempt >= s.opts.RetryMax || !c.sleep(nil, attempt) {
			c.answerAll(group, a.final(err))
			return
		}
		s.st.retries.Add(1)
		s.log.Debug("store/postgres: retrying commit", "role", "store", "attempt", attempt, "err", err)
		group = c.dropCanceled(group)
		if len(group) == 0 {
			return
		}
	}
}

// dropCanceled answers the members whose ctx ended and returns the rest.
func (c *committer) dropCanceled(group []*request) []*request {
	live := group[:0:0]
	for _, r := range group {
		if err := r.ctx.Err(); err != nil {
			r.Answer(err)
			continue
		}
		live = append(live, r)
	}
	return live
}

var errUnknownOutcome = errors.New("store/postgres: the connection broke during COMMIT and the outcome could not be learned")

// newToken returns a random commit token.
func newToken() []byte {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // never fails (crypto/rand panics instead)
	return b
}
