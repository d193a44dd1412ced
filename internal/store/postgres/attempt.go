package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/weft-db/weft/internal/store"
	"github.com/weft-db/weft/internal/store/txnset"
)

// groupRun is one attempt at committing a group in one SERIALIZABLE
// transaction:
//
//  1. BEGIN; bump the meta row (the commit version, and the row lock every
//     committer takes: committers on one schema never overlap); validate
//     each member's read set against the rows written after its snapshot —
//     one pipelined round trip.
//  2. For each member in arrival order: its validation, then against the
//     writes of the earlier members; then its hook, reading the latest state
//     overlaid with those writes.
//  3. Upsert the group's writes (deletions as tombstones) with the version,
//     record the commit token, prune old tombstones when due; COMMIT.
//
// A member's own failure (conflict, hook error) is its result; an error of
// the attempt (a statement, the connection) is run's, and nothing of the
// group is written unless it is nil.
type groupRun struct {
	c       *committer
	group   []*request
	results []error
	panics  []any
	writes  bool // the group wrote something (and so was flushed)
}

func (a *groupRun) run() error {
	s, conn := a.c.s, a.c.conn
	ctx, cancel := s.bound()
	defer cancel()
	a.results, a.panics = make([]error, len(a.group)), make([]any, len(a.group))
	var ver, floor int64
	vals := make([]validation, len(a.group))
	b := &pgx.Batch{}
	b.Queue(`BEGIN ISOLATION LEVEL SERIALIZABLE`)
	b.Queue(s.q.bump).QueryRow(func(r pgx.Row) error { return r.Scan(&ver, &floor) })
	for i, r := range a.group {
		r.reset()
		if !r.t.Reads.Empty() {
			queueValidate(b, s.q.validate, r.t, &vals[i])
		}
	}
	if err := conn.SendBatch(ctx, b).Close(); err != nil {
		return a.abort(err)
	}
	overlay := &writeSet{}
	for i, r := range a.group {
		err, dbErr := a.admit(ctx, r, i, &vals[i], overlay)
		if dbErr != nil {
			return a.abort(dbErr)
		}
		if a.results[i] = err; err != nil {
			continue
		}
		for _, k := range r.t.Writes.Keys() {
			overlay.Adopt(k, r.t.Writes.M[k])
		}
	}
	if overlay.Len() == 0 {
		// Nothing to write: validation and hooks were the point. Rolling
		// back also undoes the version bump.
		return a.abort(nil)
	}
	checkVersion(ver, a.group, a.results)
	return a.write(ctx, ver, floor, overlay)
}

// admit validates member i and runs its hook. err is the member's result;
// dbErr an error of the attempt (a hook's read failed).
func (a *groupRun) admit(ctx context.Context, r *request, i int, v *validation, overlay *writeSet) (err, dbErr error) {
	t := r.t
	if !t.Reads.Empty() {
		if err := v.verdict(t); err != nil {
			return err, nil
		}
	}
	if k, ok := t.Reads.Hit(overlay.Keys()); ok {
		return fmt.Errorf("%w: %s was written by an earlier commit of the same group", store.ErrConflict, store.Brief(bytesOf(k))), nil
	}
	if r.hook == nil {
		return t.Err, nil
	}
	c := &critical{Critical: txnset.Critical{T: &t.Txn, Overlay: overlay}, a: a, ctx: ctx}
	err = txnset.RunHook(r.hook, c, &a.panics[i])
	c.T = nil
	if c.dbErr != nil {
		return nil, c.dbErr
	}
	if err != nil {
		a.c.s.st.HookErrors.Add(1)
		return err, nil
	}
	return t.Err, nil // a hook that overfilled the Txn
}

// write applies the group's writes at version ver and commits, in one
// pipelined round trip. When the connection breaks once COMMIT was sent it
// finds out whether the commit happened.
func (a *groupRun) write(ctx context.Context, ver, floor int64, overlay *writeSet) error {
	s, conn := a.c.s, a.c.conn
	keys, vals := writeArrays(overlay)
	token := newToken()
	b := &pgx.Batch{}
	b.Queue(s.q.apply, keys, vals, ver)
	b.Queue(s.q.record, ver, token)
	if to := ver - s.opts.TombstoneVersions; ver%s.opts.PruneEvery == 0 && to > floor {
		b.Queue(s.q.prune, to)
		s.st.pruned.Add(1)
	}
	b.Queue(`COMMIT`)
	if k := s.knobs.beforeCommit; k != nil {
		k(conn.PgConn().PID())
	}
	br := conn.SendBatch(ctx, b)
	var err error
	failed := -1 // the statement that failed
	for i := 0; i < b.Len() && err == nil; i++ {
		if _, err = br.Exec(); err != nil {
			failed = i
		}
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if k := s.knobs.afterCommit; k != nil {
		err = k(err)
	}
	switch {
	case err == nil:
		a.writes = true
		return nil
	case !connLost(err) && failed >= 0 && failed < b.Len()-1:
		// The server refused a statement before COMMIT, which it then
		// skipped: the transaction is aborted, not ended.
		return a.abort(err)
	case !connLost(err):
		return err // the server answered COMMIT with an error: rolled back
	}
	// The connection broke after COMMIT was sent: it may have run. (A
	// shutdown error, 57P01 or 57P02, can also stand in for COMMIT's answer
	// after the commit record was flushed: just as ambiguous.)
	s.st.ambiguous.Add(1)
	a.c.disconnect()
	committed, rerr := a.c.resolve(ver, token)
	switch {
	case rerr != nil:
		return fmt.Errorf("%w: version %d: %v (COMMIT: %v)", errUnknownOutcome, ver, rerr, err)
	case committed:
		a.writes = true
		return nil
	}
	return err // it did not happen: retry
}

// abort ends the attempt's transaction and returns err. A connection that
// cannot roll back is dropped (the server rolls back when it goes).
func (a *groupRun) abort(err error) error {
	c := a.c
	if c.conn == nil || c.conn.IsClosed() {
		c.disconnect()
		return err
	}
	ctx, cancel := c.s.bound()
	defer cancel()
	if _, rerr := c.conn.Exec(ctx, `ROLLBACK`); rerr != nil {
		c.disconnect()
	}
	return err
}

// answer hands each member its result once the group committed.
func (a *groupRun) answer() {
	s := a.c.s
	if a.writes {
		s.st.Applied(s.opts.Sync)
	}
	for i, r := range a.group {
		r.Err, r.Panic = a.results[i], a.panics[i]
		r.Wake()
	}
}

// final maps an attempt's error, once no more attempts will be made, to
// what the members' Commits return. Nothing of the group was written.
func (a *groupRun) final(err error) error {
	var pe interface{ SQLState() string }
	switch code := sqlState(err); {
	case retryableState(code):
		return fmt.Errorf("%w: still failing after %d attempts: %w", store.ErrConflict, a.c.s.opts.RetryMax, err)
	case code == codeTooLarge && errors.As(err, &pe) && strings.Contains(err.Error(), "index row"):
		return fmt.Errorf("%w: the server cannot index it: %w", store.ErrKeyTooLarge, err)
	}
	return classify("commit", err)
}

// resolve learns whether the commit with version ver and token committed,
// after its connection broke during COMMIT: it takes the meta row lock
// (waiting for that transaction if its backend still runs), then looks for
// the token. It keeps trying, with backoff, for OutcomeWaitMax.
func (c *committer) resolve(ver int64, token []byte) (bool, error) {
	deadline := time.Now().Add(c.s.opts.OutcomeWaitMax)
	var last error
	for attempt := 1; time.Now().Before(deadline); attempt++ {
		committed, err := c.lookup(ver, token)
		if err == nil {
			return committed, nil
		}
		if !connLost(err) {
			return false, err
		}
		last = err
		if !c.sleep(nil, attempt) {
			return false, fmt.Errorf("closed while waiting: %w", last)
		}
	}
	return false, fmt.Errorf("no answer for %v: %w", c.s.opts.OutcomeWaitMax, last)
}

var errPruned = errors.New("its commit record was pruned")

func (c *committer) lookup(ver int64, token []byte) (bool, error) {
	if err := c.connect(); err != nil {
		return false, err
	}
	s := c.s
	ctx, cancel := s.bound()
	defer cancel()
	var cur, floor int64
	var found []byte
	b := &pgx.Batch{}
	b.Queue(`BEGIN ISOLATION LEVEL READ COMMITTED`)
	b.Queue(s.q.outcome).QueryRow(func(r pgx.Row) error { return r.Scan(&cur, &floor) })
	b.Queue(`SELECT token FROM `+pgx.Identifier{s.opts.Schema}.Sanitize()+`.commits WHERE ver = $1`, ver).
		QueryRow(func(r pgx.Row) error {
			if err := r.Scan(&found); !errors.Is(err, pgx.ErrNoRows) {
				return err
			}
			return nil
		})
	b.Queue(`ROLLBACK`)
	if err := c.conn.SendBatch(ctx, b).Close(); err != nil {
		c.disconnect()
		return false, err
	}
	switch {
	case found != nil:
		return bytes.Equal(found, token), nil // another token: someone else's commit got ver
	case cur < ver:
		return false, nil // no commit reached ver: ours did not happen
	case floor >= ver:
		return false, errPruned
	}
	return false, fmt.Errorf("store/postgres: version %d committed without a commit record", ver)
}

// critical is the store.Critical a hook gets. Reads go own writes → earlier
// group members' writes → the latest committed state (the commit
// transaction's snapshot, taken after the previous commit ended).
type critical struct {
	txnset.Critical
	a     *groupRun
	ctx   context.Context
	dbErr error // a failed read: the attempt fails with it
}

func (c *critical) Get(key []byte) ([]byte, bool, error) {
	if w, found, err := c.ReadOwn(key); err != nil {
		return nil, false, err
	} else if found {
		return w.Val, !w.Del, nil
	}
	if c.dbErr != nil {
		return nil, false, c.dbErr
	}
	v, ok, err := getRow(c.ctx, c.a.c.conn, c.a.c.s.q.get, key)
	if err != nil {
		c.dbErr = err
		return nil, false, classify("commit hook read", err)
	}
	return v, ok, nil
}
