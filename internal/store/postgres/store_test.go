package postgres

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/weft-db/weft/internal/store"
	"github.com/weft-db/weft/internal/store/postgres/pgtest"
	"github.com/weft-db/weft/internal/store/storetest"
)

// One PostgreSQL server for the whole package run; each test has a schema.
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// options returns the defaults on the shared server and a fresh schema.
func options(t testing.TB) Options {
	t.Helper()
	o := DefaultOptions(pgtest.Shared(t).URL())
	o.Schema = pgtest.Schema(t)
	o.ConnsMax = 16
	return o
}

// openWith opens a store with o; the test closes it (a second Close is
// harmless).
func openWith(t testing.TB, o Options) *Store {
	t.Helper()
	s, err := Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func open(t testing.TB, mut func(*Options)) *Store {
	t.Helper()
	o := options(t)
	if mut != nil {
		mut(&o)
	}
	return openWith(t, o)
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t testing.TB) store.Store { return open(t, nil) })
}

// TestConformanceRowSerializer reruns the suite with the CockroachDB-style
// serializer (no advisory lock: overlapping committers fail with 40001 and
// retry) and pruning every 4 versions with 64 versions of tombstones, so
// pruning runs under the bank workload and ErrTooOld shows up.
func TestConformanceRowSerializer(t *testing.T) {
	storetest.Run(t, func(t testing.TB) store.Store {
		return open(t, func(o *Options) {
			o.Serialize = SerializeRow
			o.TombstoneVersions, o.PruneEvery = 64, 4
		})
	})
}

func TestOptionsValidate(t *testing.T) {
	cases := []struct {
		name string
		mut  func(*Options)
		ok   bool
	}{
		{"defaults", func(*Options) {}, true},
		{"zero options", func(o *Options) { *o = Options{} }, false},
		{"no URL", func(o *Options) { o.URL = "" }, false},
		{"quoted schema", func(o *Options) { o.Schema = `a"; DROP TABLE x; --` }, false},
		{"upper-case schema", func(o *Options) { o.Schema = "Weft" }, false},
		{"long schema", func(o *Options) { o.Schema = string(make([]byte, 64)) }, false},
		{"unknown serializer", func(o *Options) { o.Serialize = "mutex" }, false},
		{"zero conns", func(o *Options) { o.ConnsMax = 0 }, false},
		{"zero retries", func(o *Options) { o.RetryMax = 0 }, false},
		{"negative tombstones", func(o *Options) { o.TombstoneVersions = -1 }, false},
		{"no sync is allowed", func(o *Options) { o.Sync = false }, true},
		{"row serializer", func(o *Options) { o.Serialize = SerializeRow }, true},
	}
	for _, tc := range cases {
		o := DefaultOptions("postgres://127.0.0.1:1/none")
		tc.mut(&o)
		if err := o.Validate(); (err == nil) != tc.ok {
			t.Errorf("%s: Validate() = %v, want ok=%v", tc.name, err, tc.ok)
		} else if err != nil {
			if _, err := Open(context.Background(), o); !errors.Is(err, errBadOptions) {
				t.Errorf("%s: Open = %v, want errBadOptions", tc.name, err)
			}
		}
	}
}

// rawConn connects to the shared server outside any store: another
// process's session.
func rawConn(t *testing.T) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), pgtest.Shared(t).URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func mustExec(t *testing.T, conn *pgx.Conn, sql string, args ...any) {
	t.Helper()
	if _, err := conn.Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// waitLockWaiters waits until n store sessions wait for a lock on the
// server. (It asks on a session of its own: within a transaction
// pg_stat_activity does not change.)
func waitLockWaiters(t *testing.T, n int) {
	t.Helper()
	conn := rawConn(t)
	for deadline := time.Now().Add(10 * time.Second); ; {
		var got int
		err := conn.QueryRow(context.Background(),
			`SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND application_name = 'weft'`).Scan(&got)
		if err != nil {
			t.Fatal(err)
		}
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d sessions waiting for a lock after 10s, want %d", got, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func commitKV(s store.Store, kv ...string) error {
	tx, err := s.Begin()
	if err != nil {
		return err
	}
	defer tx.Discard()
	for i := 0; i+1 < len(kv); i += 2 {
		if err := tx.Set([]byte(kv[i]), []byte(kv[i+1])); err != nil {
			return err
		}
	}
	return tx.Commit(context.Background(), nil)
}

func mustCommit(t testing.TB, s store.Store, kv ...string) {
	t.Helper()
	if err := commitKV(s, kv...); err != nil {
		t.Fatal(err)
	}
}

// readNow reads key in a fresh Txn: "<missing>" if absent.
func readNow(t testing.TB, s store.Store, key string) string {
	t.Helper()
	tx, err := s.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Discard()
	v, ok, err := tx.Get([]byte(key))
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		return "<missing>"
	}
	return string(v)
}

// heldMeta begins a SERIALIZABLE transaction on a raw session that updates
// the schema's meta row, as a committer of another process would, and
// returns the session: a store's commit transaction now waits for it.
func heldMeta(t *testing.T, schema string) *pgx.Conn {
	t.Helper()
	conn := rawConn(t)
	mustExec(t, conn, `BEGIN ISOLATION LEVEL SERIALIZABLE`)
	mustExec(t, conn, fmt.Sprintf(`UPDATE %s.meta SET ver = ver + 1 WHERE id = 1`, pgx.Identifier{schema}.Sanitize()))
	return conn
}

// TestSerializationFailureRetried: with the row serializer, a commit whose
// transaction overlaps another committer's fails with SQLSTATE 40001 at the
// meta row; the store retries it and it commits. With RetryMax 1 the same
// overlap surfaces as a retryable store.ErrConflict and writes nothing.
func TestSerializationFailureRetried(t *testing.T) {
	for _, retries := range []int{8, 1} {
		t.Run(fmt.Sprintf("RetryMax=%d", retries), func(t *testing.T) {
			s := open(t, func(o *Options) { o.Serialize, o.RetryMax = SerializeRow, retries })
			other := heldMeta(t, s.opts.Schema)
			errc := make(chan error, 1)
			go func() { errc <- commitKV(s, "k", "v") }()
			waitLockWaiters(t, 1)
			mustExec(t, other, `COMMIT`) // the store's transaction now fails with 40001
			err := <-errc
			if retries > 1 {
				if err != nil {
					t.Fatalf("commit after a serialization failure: %v, want retried to success", err)
				}
				if c := s.Counters(); c.Retries == 0 {
					t.Fatalf("counters %+v: no retry recorded", c)
				}
				if got := readNow(t, s, "k"); got != "v" {
					t.Fatalf("k = %q after the retried commit", got)
				}
				return
			}
			if !errors.Is(err, store.ErrConflict) || !store.IsRetryable(err) {
				t.Fatalf("commit: %v, want a retryable store.ErrConflict", err)
			}
			if got := readNow(t, s, "k"); got != "<missing>" {
				t.Fatalf("k = %q after a failed commit", got)
			}
		})
	}
}

// counterWorkers runs workers goroutines, spread over the stores, each
// incrementing key n through a commit hook each times; it returns the first
// error.
func counterWorkers(stores []*Store, workers, each int) error {
	errs := make(chan error, workers)
	for w := range workers {
		s := stores[w%len(stores)]
		go func() {
			for range each {
				tx, err := s.Begin()
				if err != nil {
					errs <- err
					return
				}
				err = tx.Commit(context.Background(), func(c store.Critical) error {
					v, _, err := c.Get([]byte("n"))
					if err != nil {
						return err
					}
					var n int
					fmt.Sscan(string(v), &n)
					return c.Set([]byte("n"), []byte(fmt.Sprint(n+1)))
				})
				tx.Discard()
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	var first error
	for range workers {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

// TestStoresShareSchema: two stores on one schema, as gatekeepers of two
// processes would be. Hooks incrementing one counter from both never lose an
// increment (the commit section is serialized across processes); with the
// advisory lock no attempt is wasted, with the row serializer the overlaps
// are retried.
func TestStoresShareSchema(t *testing.T) {
	const workers, each = 8, 40
	for _, ser := range []Serializer{SerializeAdvisory, SerializeRow} {
		t.Run(string(ser), func(t *testing.T) {
			o := options(t)
			o.Serialize, o.RetryMax = ser, 100
			a, b := openWith(t, o), openWith(t, o)
			if err := counterWorkers([]*Store{a, b}, workers, each); err != nil {
				t.Fatal(err)
			}
			if got, want := readNow(t, a, "n"), fmt.Sprint(workers*each); got != want {
				t.Fatalf("counter = %s, want %s", got, want)
			}
			ca, cb := a.Counters(), b.Counters()
			if ser == SerializeAdvisory && ca.Retries+cb.Retries != 0 {
				t.Errorf("advisory lock: %d + %d retries, want none", ca.Retries, cb.Retries)
			}
			t.Logf("%s: retries %d + %d, groups %d + %d", ser, ca.Retries, cb.Retries, a.Stats().Groups, b.Stats().Groups)
		})
	}
}

// TestCrossStoreConflict: a Txn that read a key another store (process)
// overwrote after its snapshot fails with ErrConflict: validation sees
// every committer's writes, not just its own store's.
func TestCrossStoreConflict(t *testing.T) {
	o := options(t)
	a, b := openWith(t, o), openWith(t, o)
	mustCommit(t, a, "x", "0")
	tx, err := a.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Discard()
	if _, _, err := tx.Get([]byte("x")); err != nil {
		t.Fatal(err)
	}
	mustCommit(t, b, "x", "1")
	tx.Set([]byte("y"), []byte("from a"))
	if err := tx.Commit(context.Background(), nil); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("commit: %v, want ErrConflict", err)
	}
	if got := readNow(t, b, "y"); got != "<missing>" {
		t.Fatalf("y = %q", got)
	}
}

// TestCancelWhileWaitingForLock: a commit waiting behind another process's
// committer (which holds the advisory lock) returns its ctx's error when the
// ctx ends and writes nothing; once the lock is free, commits go on.
func TestCancelWhileWaitingForLock(t *testing.T) {
	s := open(t, nil)
	other := rawConn(t)
	mustExec(t, other, `SELECT pg_advisory_lock($1)`, s.lockKey)
	tx, err := s.Begin()
	if err != nil {
		t.Fatal(err)
	}
	tx.Set([]byte("a"), []byte("1"))
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := tx.Commit(ctx, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("commit behind a held lock: %v, want context.DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("canceled commit returned after %v", d)
	}
	if st := s.Stats(); st.Canceled != 1 {
		t.Errorf("stats %+v: want one canceled commit", st)
	}
	mustExec(t, other, `SELECT pg_advisory_unlock($1)`, s.lockKey)
	mustCommit(t, s, "b", "2")
	if a, b := readNow(t, s, "a"), readNow(t, s, "b"); a != "<missing>" || b != "2" {
		t.Fatalf("a=%q b=%q, want <missing> and 2", a, b)
	}
}

// TestTooOld: once deletions older than a snapshot are pruned, a Txn at that
// snapshot cannot be validated: ErrTooOld, which is a retryable conflict,
// for read-write and read-only Txns alike.
func TestTooOld(t *testing.T) {
	s := open(t, func(o *Options) { o.TombstoneVersions, o.PruneEvery = 2, 1 })
	mustCommit(t, s, "a", "1")
	old, err := s.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer old.Discard()
	oldRO, err := s.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer oldRO.Discard()
	for _, tx := range []store.Txn{old, oldRO} {
		if _, _, err := tx.Get([]byte("a")); err != nil {
			t.Fatal(err)
		}
	}
	old.Set([]byte("b"), []byte("x"))
	for i := range 5 {
		mustCommit(t, s, fmt.Sprint("other", i), "v")
	}
	for _, tx := range []store.Txn{old, oldRO} {
		err := tx.Commit(context.Background(), nil)
		if !errors.Is(err, store.ErrTooOld) || !errors.Is(err, store.ErrConflict) || !store.IsRetryable(err) {
			t.Fatalf("commit at a pruned snapshot: %v, want ErrTooOld", err)
		}
	}
	if st := s.Stats(); st.TooOld != 2 {
		t.Errorf("stats %+v: want 2 TooOld", st)
	}
	if c := s.Counters(); c.Pruned == 0 {
		t.Errorf("counters %+v: no pruning", c)
	}
}

// TestDeletePrunedTombstone: a deleted key stays deleted after its tombstone
// is pruned, and a key deleted and written again reads the new value.
func TestDeletePrunedTombstone(t *testing.T) {
	s := open(t, func(o *Options) { o.TombstoneVersions, o.PruneEvery = 1, 1 })
	mustCommit(t, s, "a", "1", "b", "2")
	tx, _ := s.Begin()
	tx.Delete([]byte("a"))
	tx.Delete([]byte("b"))
	if err := tx.Commit(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	mustCommit(t, s, "b", "3")
	mustCommit(t, s, "c", "4")
	mustCommit(t, s, "d", "5")
	if a, b := readNow(t, s, "a"), readNow(t, s, "b"); a != "<missing>" || b != "3" {
		t.Fatalf("a=%q b=%q, want <missing> and 3", a, b)
	}
	var tombstones int
	conn := rawConn(t)
	err := conn.QueryRow(context.Background(),
		fmt.Sprintf(`SELECT count(*) FROM %s.kv WHERE v IS NULL`, pgx.Identifier{s.opts.Schema}.Sanitize())).Scan(&tombstones)
	if err != nil || tombstones != 0 {
		t.Fatalf("%d tombstones left (%v), want 0 after pruning", tombstones, err)
	}
}

// TestUnindexableKeyFailsAlone: a key PostgreSQL cannot index (incompressible
// and over its ~2.7 kB B-tree limit) fails its Txn with ErrKeyTooLarge; a Txn
// committed in the same group still commits, and the store goes on.
func TestUnindexableKeyFailsAlone(t *testing.T) {
	s := open(t, nil)
	// Hold the lock so both commits queue and form one group.
	other := rawConn(t)
	mustExec(t, other, `SELECT pg_advisory_lock($1)`, s.lockKey)
	big := make([]byte, store.KeyLenMax)
	rand.Read(big)
	errs := make(chan error, 2)
	go func() { errs <- commitKV(s, string(big), "v") }()
	waitLockWaiters(t, 1)
	go func() { errs <- commitKV(s, "small", "v") }()
	for s.queue.Len() == 0 {
		time.Sleep(time.Millisecond)
	}
	mustExec(t, other, `SELECT pg_advisory_unlock($1)`, s.lockKey)
	var tooLarge, ok int
	for range 2 {
		switch err := <-errs; {
		case err == nil:
			ok++
		case errors.Is(err, store.ErrKeyTooLarge):
			tooLarge++
		default:
			t.Fatalf("commit: %v", err)
		}
	}
	if ok != 1 || tooLarge != 1 {
		t.Fatalf("%d commits, %d ErrKeyTooLarge; want one each", ok, tooLarge)
	}
	if c := s.Counters(); c.Splits != 1 {
		t.Errorf("counters %+v: want the group split once", c)
	}
	if got := readNow(t, s, "small"); got != "v" {
		t.Fatalf("small = %q", got)
	}
	mustCommit(t, s, "after", "1")
}

// TestBeginOverloaded: with every pool connection held by open Txns, Begin
// waits AcquireTimeout and answers ErrOverloaded, which is retryable.
func TestBeginOverloaded(t *testing.T) {
	s := open(t, func(o *Options) { o.ConnsMax, o.AcquireTimeout = 2, 50*time.Millisecond })
	var txs []store.Txn
	for range 2 {
		tx, err := s.Begin()
		if err != nil {
			t.Fatal(err)
		}
		txs = append(txs, tx)
	}
	if _, err := s.Begin(); !errors.Is(err, store.ErrOverloaded) || !store.IsRetryable(err) {
		t.Fatalf("third Begin: %v, want ErrOverloaded", err)
	}
	txs[0].Discard()
	tx, err := s.Begin()
	if err != nil {
		t.Fatalf("Begin after a Discard: %v", err)
	}
	tx.Discard()
	txs[1].Discard()
}

// TestReopen: what one store committed another reads after reopening the
// schema; a schema of another format is refused.
func TestReopen(t *testing.T) {
	o := options(t)
	s := openWith(t, o)
	mustCommit(t, s, "a", "1", "b", "2")
	tx, _ := s.Begin()
	tx.Delete([]byte("b"))
	if err := tx.Commit(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openWith(t, o)
	if a, b := readNow(t, s, "a"), readNow(t, s, "b"); a != "1" || b != "<missing>" {
		t.Fatalf("after reopen a=%q b=%q", a, b)
	}
	mustExec(t, rawConn(t), fmt.Sprintf(`UPDATE %s.meta SET format = 99`, pgx.Identifier{o.Schema}.Sanitize()))
	if _, err := Open(context.Background(), o); !errors.Is(err, errFormat) {
		t.Fatalf("open of a schema in format 99: %v, want errFormat", err)
	}
}

// TestUnreachable: Open of a server that is not there fails with
// ErrUnavailable (retryable), quickly.
func TestUnreachable(t *testing.T) {
	o := DefaultOptions("postgres://weft@127.0.0.1:1/postgres?sslmode=disable&connect_timeout=2")
	if _, err := Open(context.Background(), o); !errors.Is(err, ErrUnavailable) || !store.IsRetryable(err) {
		t.Fatalf("open: %v, want ErrUnavailable", err)
	}
}

// TestUnknownRole: a server that refuses the role is not "unavailable":
// retrying cannot help.
func TestUnknownRole(t *testing.T) {
	srv := pgtest.Shared(t)
	if srv.External() {
		t.Skip("the server is external")
	}
	o := options(t)
	o.URL = strings.Replace(srv.URL(), pgtest.Superuser+"@", "nosuchrole@", 1)
	_, err := Open(context.Background(), o)
	if err == nil || store.IsRetryable(err) {
		t.Fatalf("open as an unknown role: %v, want a non-retryable error", err)
	}
}

// TestCloseWhileWaitingForLock: Close does not wait for another process's
// committer to release the advisory lock; the commit waiting for it fails
// with store.ErrClosed and writes nothing.
func TestCloseWhileWaitingForLock(t *testing.T) {
	o := options(t)
	s := openWith(t, o)
	other := rawConn(t)
	mustExec(t, other, `SELECT pg_advisory_lock($1)`, s.lockKey)
	errc := make(chan error, 1)
	go func() { errc <- commitKV(s, "a", "1") }()
	waitLockWaiters(t, 1)
	start := time.Now()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; !errors.Is(err, store.ErrClosed) {
		t.Fatalf("commit waiting for the lock at Close: %v, want ErrClosed", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("Close took %v", d)
	}
	mustExec(t, other, `SELECT pg_advisory_unlock($1)`, s.lockKey)
	if got := readNow(t, openWith(t, o), "a"); got != "<missing>" {
		t.Fatalf("a = %q", got)
	}
}

func TestAdvisoryLocksDetected(t *testing.T) {
	for _, tc := range []struct {
		version string
		want    bool
	}{
		{"PostgreSQL 15.18 (Debian 15.18-0+deb12u1) on x86_64-pc-linux-gnu, compiled by gcc", true},
		{"CockroachDB CCL v24.1.0 (x86_64-pc-linux-gnu, built 2024/05/15 21:28:29, go1.22.2)", false},
		{"PostgreSQL 11.2-YB-2.20.1.0-b0 on x86_64-pc-linux-gnu, compiled by clang", false},
	} {
		if got := advisoryLocks(tc.version); got != tc.want {
			t.Errorf("advisoryLocks(%q) = %v, want %v", tc.version, got, tc.want)
		}
	}
}
