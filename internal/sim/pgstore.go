package sim

import (
	"context"
	"fmt"

	"github.com/weft-db/weft/internal/check"
	"github.com/weft-db/weft/internal/store"
	pstore "github.com/weft-db/weft/internal/store/pebble"
)

// The PostgreSQL store's commit behaviour (internal/store/postgres, its
// doc's "Retries and failures"), played over the Pebble store for seeds
// with Config.Postgres. What the gatekeeper shells see of it:
//
//   - Retries that run the commit hook again. A group attempt failing with
//     a serialization failure (40001) or a deadlock (40P01), or losing its
//     connection before COMMIT, is retried from scratch: the hook — the
//     epoch fence, gatekeeper.OrderCommit's Kronos ordering after the last
//     accesses, the directory check — runs once per attempt. Here a
//     failed attempt's hook runs on the state as of the Txn's execution (an
//     attempt that came earlier, before the commits between), its store
//     writes thrown away and its Kronos orders kept (PostgreSQL's rollback
//     does not reach Kronos); then the real attempt runs on the latest
//     state.
//   - An ambiguous COMMIT that the committer resolves by looking for its
//     token: not committed, so retried (the hook again, on today's state),
//     or committed (nothing to see but the time).
//   - A commit whose snapshot is older than the tombstones kept for
//     validation (TombstoneVersions) fails with store.ErrTooOld: a
//     transaction in flight for longer than the store's retention.
//   - An outcome the store cannot learn (OutcomeWaitMax passed): the commit
//     may have landed or not, Commit answers store.ErrFailed, and the store
//     refuses all further work. In one process (weft serve) the gatekeepers
//     share the store; in cluster mode each gatekeeper process has its own
//     connection and fails alone while the others go on.

// pgStore is one gatekeeper's view of the store with PostgreSQL's
// behaviour; failed is shared by the gatekeepers of one process.
type pgStore struct {
	w      *world
	s      *server
	st     *pstore.Store
	failed *bool
}

// pgTxn is a Txn of a pgStore: the Pebble Txn, a snapshot taken at its
// last read or write (where a failed earlier attempt's hook reads) and the
// commit version it began after.
type pgTxn struct {
	store.Txn
	p      *pgStore
	shadow store.Txn
	ver    int
}

func (p *pgStore) Begin() (store.Txn, error) {
	if *p.failed {
		return nil, fmt.Errorf("%w: the store failed earlier", store.ErrFailed)
	}
	t, err := p.st.Begin()
	if err != nil {
		return nil, err
	}
	shadow, err := p.st.Begin()
	if err != nil {
		t.Discard()
		return nil, err
	}
	return &pgTxn{Txn: t, p: p, shadow: shadow, ver: p.w.pgVersion}, nil
}

// An attempt comes after the execution: a failed one reads the state
// as of the Txn's last read or write.
func (t *pgTxn) touch() {
	if sh, err := t.p.st.Begin(); err == nil {
		t.shadow.Discard()
		t.shadow = sh
	}
}

func (t *pgTxn) Get(key []byte) ([]byte, bool, error) { t.touch(); return t.Txn.Get(key) }

func (t *pgTxn) Scan(start, end []byte, limit int, fn func(key, val []byte) error) error {
	t.touch()
	return t.Txn.Scan(start, end, limit, fn)
}

func (t *pgTxn) Set(key, val []byte) error { t.touch(); return t.Txn.Set(key, val) }

func (t *pgTxn) Delete(key []byte) error { t.touch(); return t.Txn.Delete(key) }

func (t *pgTxn) Discard() {
	t.shadow.Discard()
	t.Txn.Discard()
}

// Commit plays the attempts of a PostgreSQL commit group (see above).
func (t *pgTxn) Commit(ctx context.Context, hook func(c store.Critical) error) error {
	p, w := t.p, t.p.w
	defer t.shadow.Discard()
	if *p.failed {
		t.Txn.Discard()
		return fmt.Errorf("%w: the store failed earlier", store.ErrFailed)
	}
	if w.pgVersion-t.ver > w.cfg.PostgresTombstones {
		t.Txn.Discard()
		w.stats.PgTooOld++
		return fmt.Errorf("%w: snapshot %d commits old, tombstones kept for %d", store.ErrTooOld, w.pgVersion-t.ver, w.cfg.PostgresTombstones)
	}
	if hook != nil && w.rng.IntN(5) == 0 {
		// One or two attempts failed after their hook ran, at the
		// snapshot the Txn began at.
		for range 1 + w.rng.IntN(2) {
			w.stats.PgRetries++
			if err := hook(&scratch{r: t.shadow, w: map[string][]byte{}}); err != nil {
				t.Txn.Discard()
				return err // a hook's error ends the commit, whichever attempt
			}
		}
	}
	if hook != nil && w.rng.IntN(20) == 0 {
		// COMMIT's answer lost, the token not found: retried, its hook
		// run again on the latest state.
		w.stats.PgAmbiguous++
		cur, err := p.st.Begin()
		if err != nil {
			t.Txn.Discard()
			return err
		}
		err = hook(&scratch{r: cur, w: map[string][]byte{}})
		cur.Discard()
		if err != nil {
			t.Txn.Discard()
			return err
		}
	}
	// Not in the setup's commit (before the clients exist): a world that
	// cannot start is no run.
	unknown := hook != nil && w.faultsOn && w.clients != nil && w.rng.Float64() < w.cfg.PostgresUnknown
	if unknown && w.rng.IntN(2) == 0 {
		// The connection broke before COMMIT reached the server: nothing
		// landed, and the committer could not learn so.
		t.Txn.Discard()
		return p.fail()
	}
	if err := t.Txn.Commit(ctx, hook); err != nil {
		return err
	}
	w.pgVersion++
	if unknown {
		return p.fail() // landed, and the committer could not learn so
	}
	return nil
}

// fail makes the store refuse all further work and answers the unknown
// outcome.
func (p *pgStore) fail() error {
	*p.failed = true
	p.w.stats.PgUnknown++
	p.w.rec.Record(check.Op{Process: check.Nemesis, Type: check.Info, F: "store-outcome-unknown", Time: p.w.now})
	return fmt.Errorf("%w: the outcome of COMMIT is unknown", store.ErrFailed)
}

// scratch is a failed attempt's commit section: reads at r overlaid with
// its own writes, which are thrown away.
type scratch struct {
	r store.Txn
	w map[string][]byte // nil value: deleted
}

func (c *scratch) Get(key []byte) ([]byte, bool, error) {
	if v, ok := c.w[string(key)]; ok {
		return v, v != nil, nil
	}
	return c.r.Get(key)
}

func (c *scratch) Set(key, val []byte) error {
	c.w[string(key)] = append([]byte{}, val...)
	return nil
}

func (c *scratch) Delete(key []byte) error {
	c.w[string(key)] = nil
	return nil
}
