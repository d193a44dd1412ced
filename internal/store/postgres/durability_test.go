package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/weft-db/weft/internal/store"
	"github.com/weft-db/weft/internal/store/postgres/pgtest"
)

// TestServerCrashLosesNothing commits Txns of two keys from several
// goroutines, crashes the server mid-stream the way `pg_ctl stop -m
// immediate` does, starts it again (crash recovery) and lets the workers go
// on: every commit acknowledged before, during or after the outage is
// there, none is torn, and the store served on without being reopened
// (commits in flight at the crash failed retryably or had their outcome
// looked up).
func TestServerCrashLosesNothing(t *testing.T) {
	srv := pgtest.Shared(t)
	if srv.External() {
		t.Skip("the server is external (" + pgtest.EnvURL + "): cannot crash it")
	}
	const workers = 4
	s := open(t, func(o *Options) { o.RetryBackoffMax = 100 * time.Millisecond })
	acked := make([]atomic.Int64, workers)
	total := func() (n int64) {
		for w := range acked {
			n += acked[w].Load()
		}
		return n
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	var retried atomic.Int64
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; !stop.Load(); {
				err := commitKV(s, pairKey(w, i, "a"), strconv.Itoa(i), pairKey(w, i, "b"), strconv.Itoa(i))
				switch {
				case err == nil:
					i++
					acked[w].Store(int64(i))
				case store.IsRetryable(err):
					retried.Add(1)
					time.Sleep(5 * time.Millisecond)
				default:
					errs <- fmt.Errorf("worker %d, commit %d: %w", w, i, err)
					return
				}
			}
		}()
	}
	waitTotal := func(n int64) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); total() < n; {
			if time.Now().After(deadline) {
				stop.Store(true)
				wg.Wait()
				close(errs)
				t.Fatalf("only %d commits acknowledged after 20s (want %d); first error: %v", total(), n, <-errs)
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
	waitTotal(100)
	if err := srv.Crash(); err != nil {
		t.Fatal(err)
	}
	atCrash := total()
	time.Sleep(100 * time.Millisecond) // commits fail and retry meanwhile
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	waitTotal(atCrash + 100)
	stop.Store(true)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	lost, torn := verifyPairs(t, s, acked)
	if lost > 0 || torn > 0 {
		t.Fatalf("after the crash: %d acknowledged commits lost, %d torn", lost, torn)
	}
	t.Logf("%d commits acknowledged (%d before the crash), %d retried by the workers; counters %+v",
		total(), atCrash, retried.Load(), s.Counters())
}

func pairKey(worker, i int, half string) string {
	return fmt.Sprintf("w/%02d/%06d/%s", worker, i, half)
}

// verifyPairs scans every pair and counts acknowledged commits missing and
// pairs with one key only.
func verifyPairs(t *testing.T, s store.Store, acked []atomic.Int64) (lost, torn int) {
	t.Helper()
	tx, err := s.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Discard()
	halves := map[string]int{}
	err = tx.Scan([]byte("w/"), []byte("w0"), 0, func(k, v []byte) error {
		halves[string(k[:len(k)-2])]++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for prefix, n := range halves {
		if n != 2 {
			t.Errorf("torn commit %s: %d of 2 keys", prefix, n)
			torn++
		}
	}
	for w := range acked {
		for i := range int(acked[w].Load()) {
			if halves[fmt.Sprintf("w/%02d/%06d", w, i)] != 2 {
				lost++
			}
		}
	}
	return lost, torn
}

// TestCommitDurableWithoutClose: a commit acknowledged by one store is read
// by a store opened after the server crashed and recovered, without the
// first store ever closing (as after kill -9 of a gatekeeper process).
func TestCommitDurableWithoutClose(t *testing.T) {
	srv := pgtest.Shared(t)
	if srv.External() {
		t.Skip("the server is external (" + pgtest.EnvURL + "): cannot crash it")
	}
	o := options(t)
	s := openWith(t, o)
	mustCommit(t, s, "durable", "yes")
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	s2 := openWith(t, o)
	if got := readNow(t, s2, "durable"); got != "yes" {
		t.Fatalf("durable = %q after a server crash", got)
	}
	// The first store reconnects on its own.
	for deadline := time.Now().Add(10 * time.Second); ; {
		err := commitKV(s, "again", "1")
		if err == nil {
			break
		}
		if !store.IsRetryable(err) || time.Now().After(deadline) {
			t.Fatalf("first store after the restart: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestAmbiguousCommitResolved breaks the committer's connection around
// COMMIT and checks that the store learns the outcome from the commit
// record instead of guessing: a COMMIT that never ran is retried and
// commits once; a COMMIT that ran but whose answer was lost is reported as
// committed and not run again. A hook counts its increments, so a commit
// applied twice or lost shows.
func TestAmbiguousCommitResolved(t *testing.T) {
	cases := []struct {
		name string
		set  func(t *testing.T, s *Store)
	}{
		{"terminated before COMMIT", func(t *testing.T, s *Store) {
			killer := rawConn(t)
			var once sync.Once
			s.knobs.beforeCommit = func(pid uint32) {
				once.Do(func() {
					mustExec(t, killer, `SELECT pg_terminate_backend($1::int, 5000)`, int64(pid))
				})
			}
		}},
		{"answer lost after COMMIT", func(t *testing.T, s *Store) {
			var once sync.Once
			s.knobs.afterCommit = func(err error) error {
				once.Do(func() {
					if err == nil {
						err = errors.New("simulated: connection reset by peer")
					}
				})
				return err
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t, nil)
			mustCommit(t, s, "n", "0")
			tc.set(t, s)
			if err := counterWorkers([]*Store{s}, 1, 3); err != nil {
				t.Fatal(err)
			}
			if got := readNow(t, s, "n"); got != "3" {
				t.Fatalf("counter = %s after 3 increments, one with a broken COMMIT", got)
			}
			if c := s.Counters(); c.Ambiguous != 1 {
				t.Fatalf("counters %+v: want one ambiguous COMMIT", c)
			}
			if err := s.failure(); err != nil {
				t.Fatalf("store failed: %v", err)
			}
		})
	}
}

// TestCrashWithoutSyncLoses is the control for the crash tests: with Sync
// off (synchronous_commit = off) and the WAL writer slowed down, commits
// acknowledged just before an immediate shutdown are gone after recovery,
// so a store that answered before the WAL flush would fail them.
func TestCrashWithoutSyncLoses(t *testing.T) {
	srv := pgtest.Shared(t)
	if srv.External() {
		t.Skip("the server is external (" + pgtest.EnvURL + "): cannot crash it")
	}
	admin := rawConn(t)
	mustExec(t, admin, `ALTER SYSTEM SET wal_writer_delay = '10s'`)
	mustExec(t, admin, `SELECT pg_reload_conf()`)
	// The WAL writer reads the new delay when it next wakes, up to the old
	// delay (200ms) later: until then it may still flush the commits below.
	time.Sleep(time.Second)
	defer func() {
		conn, err := pgx.Connect(context.Background(), srv.URL())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(context.Background())
		mustExec(t, conn, `ALTER SYSTEM RESET wal_writer_delay`)
		mustExec(t, conn, `SELECT pg_reload_conf()`)
	}()
	o := options(t)
	const n, attempts = 10, 3
	// Something else may still flush the WAL between the commits and the
	// crash (a checkpoint, a busy machine's late WAL writer): the control
	// holds if one of a few crashes loses commits.
	for attempt := range attempts {
		o.Sync = false
		s := openWith(t, o)
		for i := range n {
			mustCommit(t, s, fmt.Sprint("k", attempt, ".", i), "v")
		}
		if err := srv.Restart(); err != nil {
			t.Fatal(err)
		}
		o.Sync = true
		s2 := openWith(t, o)
		lost := 0
		for i := range n {
			if readNow(t, s2, fmt.Sprint("k", attempt, ".", i)) != "v" {
				lost++
			}
		}
		if lost > 0 {
			t.Logf("crash %d: %d of %d unsynchronized commits lost", attempt+1, lost, n)
			return
		}
		t.Logf("crash %d: no commit lost", attempt+1)
	}
	t.Fatalf("no acknowledged commit lost without synchronous commit in %d crashes: the crash is not dropping unflushed WAL", attempts)
}
