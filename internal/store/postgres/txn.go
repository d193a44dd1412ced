package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/weft-db/weft/internal/store"
	"github.com/weft-db/weft/internal/store/txnset"
)

// txn implements store.Txn: reads go to a REPEATABLE READ READ ONLY
// transaction held open on a pool connection since Begin, overlaid with the
// buffered writes, and are recorded for validation at Commit.
type txn struct {
	txnset.Txn // the buffers, the budget, Set and Delete
	s          *Store
	conn       *pgxpool.Conn // nil once released; guarded by s.mu against Close
	snap       int64         // the commit version the snapshot includes
	// floor is the meta floor at the snapshot (kept for the invariants
	// check: a snapshot is never below its own floor).
	floor int64
}

var _ store.Txn = (*txn)(nil)

// spoil records a failed read: the snapshot transaction is aborted or its
// connection gone, so the Txn can neither read on nor commit.
func (t *txn) spoil(err error) error {
	if t.Err == nil {
		t.Err = err
	}
	return err
}

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
	ctx, cancel := t.s.bound()
	defer cancel()
	v, ok, err := getRow(ctx, t.conn.Conn(), t.s.q.get, key)
	if err != nil {
		return nil, false, t.spoil(classify("get", err))
	}
	return v, ok, nil
}

// getRow reads one key's live value with q.
func getRow(ctx context.Context, c *pgx.Conn, q string, key []byte) ([]byte, bool, error) {
	var v []byte
	err := c.QueryRow(ctx, q, nonNil(key)).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if v == nil {
		v = []byte{}
	}
	return v, true, nil
}

// nonNil turns a nil key into the empty key: nil would travel as NULL.
func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// row is one stored pair fetched by a Scan.
type row struct{ k, v []byte }

// Scan implements store.Txn. It fetches the range page by page (whole pages,
// so fn may call back into the Txn, whose connection is then free) and
// merges each page with the buffered writes in it: a buffered write shadows
// the stored key, a buffered deletion hides it.
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
	cursor, n := sp.Start, 0
	for {
		page := t.s.opts.ScanPageMax
		if limit > 0 {
			page = max(1, min(page, limit-n))
		}
		rows, err := t.fetch(cursor, sp, page)
		if err != nil {
			return t.spoil(classify("scan", err))
		}
		full := len(rows) == page
		// This page covers [cursor, upto): the own writes below upto merge
		// into it; the rest wait for the next page.
		upto, last := sp.End, !full
		if full {
			upto = string(rows[len(rows)-1].k) + "\x00"
		}
		var stop bool
		var k []byte
		own, n, k, stop, err = t.merge(rows, own, upto, last && sp.Inf, n, limit, fn)
		if err != nil {
			t.ReadTo(sp, k)
			return err
		}
		if stop {
			return t.ReadTo(sp, k)
		}
		if last {
			break
		}
		cursor = upto
	}
	return t.ReadSpan(sp)
}

// merge passes fn the rows and the own writes below upto (all of them when
// all), in key order, up to limit visible keys counting from n. It returns
// the own writes left, the new count, the last key passed to fn, and
// whether the scan ends here (limit reached, or fn failed: err).
func (t *txn) merge(rows []row, own []string, upto string, all bool, n, limit int,
	fn func(k, v []byte) error) ([]string, int, []byte, bool, error) {
	var last []byte
	for len(rows) > 0 || (len(own) > 0 && (all || own[0] < upto)) {
		var k, v []byte
		if len(own) > 0 && (all || own[0] < upto) && (len(rows) == 0 || own[0] <= string(rows[0].k)) {
			w := t.Writes.M[own[0]]
			if len(rows) > 0 && own[0] == string(rows[0].k) {
				rows = rows[1:] // shadowed by the own write
			}
			k, v = bytesOf(own[0]), w.Val
			own = own[1:]
			if w.Del {
				continue
			}
		} else {
			k, v = rows[0].k, rows[0].v
			rows = rows[1:]
		}
		n++
		last = k
		if err := fn(k, v); err != nil {
			return own, n, last, true, err
		}
		if limit > 0 && n >= limit {
			return own, n, last, true, nil
		}
	}
	return own, n, last, false, nil
}

// fetch reads up to page live rows of sp from cursor on, at the snapshot.
func (t *txn) fetch(cursor string, sp span, page int) ([]row, error) {
	ctx, cancel := t.s.bound()
	defer cancel()
	var rs pgx.Rows
	var err error
	if sp.Inf {
		rs, err = t.conn.Conn().Query(ctx, t.s.q.scan, bytesOf(cursor), page)
	} else {
		rs, err = t.conn.Conn().Query(ctx, t.s.q.scanTo, bytesOf(cursor), bytesOf(sp.End), page)
	}
	if err != nil {
		return nil, err
	}
	out := make([]row, 0, min(page, 64))
	for rs.Next() {
		var r row
		if err := rs.Scan(&r.k, &r.v); err != nil {
			rs.Close()
			return nil, err
		}
		if r.v == nil {
			r.v = []byte{}
		}
		out = append(out, r)
	}
	if err := rs.Err(); err != nil {
		return nil, err
	}
	checkPage(out, cursor, sp)
	return out, nil
}

// Commit implements store.Txn. The snapshot transaction is ended first (its
// connection goes back to the pool); a read-only Txn is then validated by
// one statement, anything else goes to the committer.
func (t *txn) Commit(ctx context.Context, hook func(c store.Critical) error) error {
	return t.CommitWith(ctx, hook, t)
}

// CommitGroup implements txnset.Committer.
func (t *txn) CommitGroup(ctx context.Context, hook func(store.Critical) error) error {
	// The read set is recorded: a snapshot transaction that fails to roll
	// back costs its connection, not the commit.
	_ = t.release()
	return t.s.commitGroup(ctx, t, hook)
}

// CountCommit implements txnset.Committer.
func (t *txn) CountCommit(err error, readOnly bool) { t.s.st.Count(err, readOnly) }

// CommitReadOnly implements txnset.Committer: it validates the read set
// against the latest state: if no key it read was written since its
// snapshot, its reads are still current, so it serializes now, with no
// write and no WAL flush.
func (t *txn) CommitReadOnly() error {
	if err := t.s.gate.Enter(); err != nil {
		return err
	}
	defer t.s.gate.Exit()
	if err := t.s.failure(); err != nil {
		return err
	}
	if t.Reads.Empty() {
		_ = t.release()
		return nil
	}
	ctx, cancel := t.s.bound()
	defer cancel()
	var v validation
	b := &pgx.Batch{}
	b.Queue(`ROLLBACK`)
	queueValidate(b, t.s.q.validate, t, &v)
	if err := t.conn.Conn().SendBatch(ctx, b).Close(); err != nil {
		return classify("validate", err)
	}
	t.release()
	return v.verdict(t)
}

// release ends the snapshot transaction and returns the connection to the
// pool. It is safe after Close (which took the connection) and repeated.
func (t *txn) release() error {
	t.s.mu.Lock()
	c := t.conn
	t.conn = nil
	delete(t.s.held, t)
	t.s.mu.Unlock()
	if c == nil {
		return nil
	}
	var err error
	if c.Conn().PgConn().TxStatus() != 'I' {
		ctx, cancel := t.s.bound()
		_, err = c.Exec(ctx, `ROLLBACK`)
		cancel()
	}
	c.Release() // destroyed if the ROLLBACK failed
	if err != nil {
		return classify("rollback", err)
	}
	return nil
}

// Discard implements store.Txn.
func (t *txn) Discard() {
	t.Done = true
	_ = t.release() // a failed ROLLBACK only costs the connection
}

// validation is the answer of the validate statement for one Txn.
type validation struct {
	floor    int64
	conflict bool
	key      []byte // a key read and written since the snapshot
}

// queueValidate adds t's validation to b, answered into v.
func queueValidate(b *pgx.Batch, q string, t *txn, v *validation) {
	points, los, his := readArrays(&t.Reads)
	b.Queue(q, t.snap, points, los, his).QueryRow(func(r pgx.Row) error {
		return r.Scan(&v.floor, &v.conflict, &v.key)
	})
}

// verdict turns a validation into Commit's error, or nil.
func (v *validation) verdict(t *txn) error {
	switch {
	case t.snap < v.floor:
		return fmt.Errorf("%w: snapshot at version %d, deletions kept from version %d on", store.ErrTooOld, t.snap, v.floor)
	case v.conflict:
		return fmt.Errorf("%w: %s was written after snapshot version %d", store.ErrConflict, store.Brief(v.key), t.snap)
	}
	return nil
}
