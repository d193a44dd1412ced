package pebble

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/weft-db/weft/internal/store"
)

// blockCommitter commits a Txn whose hook parks the committer until the
// returned release is called, so the test can line up a queue. release
// returns the parked commit's error.
func blockCommitter(t *testing.T, s *Store) (release func() error) {
	t.Helper()
	parked, gate := make(chan struct{}), make(chan struct{})
	done := goCommit(t, s, nil, func(store.Critical) error {
		close(parked)
		<-gate
		return nil
	})
	<-parked
	return func() error {
		close(gate)
		return <-done
	}
}

// goCommit commits tx (a fresh empty Txn if nil) on its own goroutine.
func goCommit(t *testing.T, s *Store, tx store.Txn, hook func(store.Critical) error) <-chan error {
	t.Helper()
	return goCommitCtx(t, s, context.Background(), tx, hook)
}

func goCommitCtx(t *testing.T, s *Store, ctx context.Context, tx store.Txn, hook func(store.Critical) error) <-chan error {
	t.Helper()
	if tx == nil {
		tx = mustBegin(t, s)
	}
	done := make(chan error, 1)
	go func() { done <- tx.Commit(ctx, hook) }()
	return done
}

// waitQueued waits until n commits sit in the queue (the committer being
// parked, they stay there in arrival order).
func waitQueued(t *testing.T, s *Store, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for s.queue.Len() < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d commits queued, want %d", s.queue.Len(), n)
		}
		time.Sleep(50 * time.Microsecond)
	}
}

func mustBegin(t testing.TB, s store.Store) store.Txn {
	t.Helper()
	tx, err := s.Begin()
	if err != nil {
		t.Fatal(err)
	}
	return tx
}

func read(t testing.TB, r interface {
	Get([]byte) ([]byte, bool, error)
}, key string) string {
	t.Helper()
	v, ok, err := r.Get([]byte(key))
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		return "<missing>"
	}
	return string(v)
}

func commitKV(t testing.TB, s store.Store, kv ...string) {
	t.Helper()
	tx := mustBegin(t, s)
	for i := 0; i < len(kv); i += 2 {
		if err := tx.Set([]byte(kv[i]), []byte(kv[i+1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
}

func readNow(t testing.TB, s store.Store, key string) string {
	t.Helper()
	tx := mustBegin(t, s)
	defer tx.Discard()
	return read(t, tx, key)
}

// TestGroupSerializesMembers lines five Txns up in one group and checks that
// members are validated and hooked in arrival order against each other.
func TestGroupSerializesMembers(t *testing.T) {
	s := openMem(t, nil)
	commitKV(t, s, "k", "0")
	release := blockCommitter(t, s)

	t1 := mustBegin(t, s) // read-modify-write k
	read(t, t1, "k")
	t1.Set([]byte("k"), []byte("1"))
	t2 := mustBegin(t, s) // read k, which t1 writes earlier in the group
	read(t, t2, "k")
	t2.Set([]byte("other"), []byte("2"))
	t3 := mustBegin(t, s) // hook sees t1's write, not the refused t2's
	t3.Set([]byte("t3"), []byte("x"))
	var sawK, sawOther string
	hook3 := func(c store.Critical) error {
		sawK, sawOther = read(t, c, "k"), read(t, c, "other")
		return c.Set([]byte("h"), []byte("from hook"))
	}
	t4 := mustBegin(t, s) // read h, which t3's hook writes
	read(t, t4, "h")
	t4.Set([]byte("t4"), []byte("x"))
	t5 := mustBegin(t, s) // blind write of k: no conflict, wins
	t5.Set([]byte("k"), []byte("5"))

	var dones []<-chan error
	for i, c := range []struct {
		tx   store.Txn
		hook func(store.Critical) error
	}{{t1, nil}, {t2, nil}, {t3, hook3}, {t4, nil}, {t5, nil}} {
		dones = append(dones, goCommit(t, s, c.tx, c.hook))
		waitQueued(t, s, i+1)
	}
	before := s.Stats().Groups
	if err := release(); err != nil {
		t.Fatal(err)
	}
	errs := make([]error, len(dones))
	for i, d := range dones {
		errs[i] = <-d
	}
	for i, conflict := range []bool{false, true, false, true, false} {
		if got := errors.Is(errs[i], store.ErrConflict); got != conflict || (!conflict && errs[i] != nil) {
			t.Errorf("t%d: commit = %v, want conflict=%v", i+1, errs[i], conflict)
		}
	}
	if sawK != "1" || sawOther != "<missing>" {
		t.Errorf("t3's hook saw k=%q other=%q, want 1 and <missing>", sawK, sawOther)
	}
	st := s.Stats()
	if st.Groups != before+1 || st.GroupSizeMax < 5 {
		t.Errorf("stats %+v: want the five in one group", st)
	}
	for k, want := range map[string]string{"k": "5", "other": "<missing>", "h": "from hook", "t3": "x", "t4": "<missing>"} {
		if got := readNow(t, s, k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
}

func TestTooOld(t *testing.T) {
	s := openMem(t, func(o *Options) { o.RecentWritesMax = 4 })
	commitKV(t, s, "x", "0")
	reader := mustBegin(t, s)
	read(t, reader, "x")
	readOnly := mustBegin(t, s)
	read(t, readOnly, "x")
	blind := mustBegin(t, s)
	blind.Set([]byte("blind"), []byte("1"))
	for _, k := range []string{"a", "b", "c", "d", "e"} {
		commitKV(t, s, k, "1") // pushes x's entry (harmless) and a's out of the history
	}
	reader.Set([]byte("y"), []byte("1"))
	for name, tx := range map[string]store.Txn{"writer": reader, "read-only": readOnly} {
		err := tx.Commit(context.Background(), nil)
		if !errors.Is(err, store.ErrTooOld) || !errors.Is(err, store.ErrConflict) || !store.IsRetryable(err) {
			t.Errorf("%s: commit = %v, want a retryable ErrTooOld matching ErrConflict", name, err)
		}
	}
	// Nothing read, nothing to validate: an old snapshot is fine.
	if err := blind.Commit(context.Background(), nil); err != nil {
		t.Errorf("blind write: %v", err)
	}
	if st := s.Stats(); st.TooOld != 2 || st.HistoryKeys > 4 || st.HistoryEvicts == 0 {
		t.Errorf("stats %+v: want TooOld 2, HistoryKeys <= 4, evictions", st)
	}
	// A retry from a new snapshot succeeds.
	tx := mustBegin(t, s)
	read(t, tx, "x")
	tx.Set([]byte("y"), []byte("1"))
	if err := tx.Commit(context.Background(), nil); err != nil {
		t.Fatalf("retry: %v", err)
	}
}

func TestOverloaded(t *testing.T) {
	s := openMem(t, func(o *Options) { o.CommitQueueMax = 2 })
	release := blockCommitter(t, s)
	a, b := goCommit(t, s, nil, noopHook), goCommit(t, s, nil, noopHook)
	waitQueued(t, s, 2)
	tx := mustBegin(t, s)
	tx.Set([]byte("c"), []byte("1"))
	err := tx.Commit(context.Background(), nil)
	if !errors.Is(err, store.ErrOverloaded) || !store.IsRetryable(err) {
		t.Fatalf("commit on a full queue: %v, want ErrOverloaded", err)
	}
	if err := release(); err != nil {
		t.Fatal(err)
	}
	for _, d := range []<-chan error{a, b} {
		if err := <-d; err != nil {
			t.Fatal(err)
		}
	}
	if got := readNow(t, s, "c"); got != "<missing>" {
		t.Fatalf("overloaded commit wrote c=%q", got)
	}
	if st := s.Stats(); st.Overloaded != 1 {
		t.Fatalf("stats %+v: want Overloaded 1", st)
	}
}

func noopHook(store.Critical) error { return nil }

// TestCancelWhileQueued: a ctx ending while the commit waits in the queue
// returns ctx.Err() and writes nothing; one ending after the committer took
// the commit does not stop it.
func TestCancelWhileQueued(t *testing.T) {
	s := openMem(t, nil)
	release := blockCommitter(t, s)
	ctx, cancel := context.WithCancel(context.Background())
	tx := mustBegin(t, s)
	tx.Set([]byte("a"), []byte("1"))
	done := goCommitCtx(t, s, ctx, tx, nil)
	waitQueued(t, s, 1)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled queued commit: %v", err)
	}
	if err := release(); err != nil {
		t.Fatal(err)
	}

	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	inHook := make(chan struct{})
	tx = mustBegin(t, s)
	tx.Set([]byte("b"), []byte("2"))
	done = goCommitCtx(t, s, ctx, tx, func(store.Critical) error {
		close(inHook)
		cancel()
		return nil
	})
	<-inHook
	if err := <-done; err != nil {
		t.Fatalf("commit canceled after it was taken: %v, want nil", err)
	}
	if a, b := readNow(t, s, "a"), readNow(t, s, "b"); a != "<missing>" || b != "2" {
		t.Fatalf("a=%q b=%q, want <missing> and 2", a, b)
	}
}

// TestCloseFailsQueued: Close lets the group in progress finish and fails
// the queued commits with ErrClosed; reopening shows exactly the former.
func TestCloseFailsQueued(t *testing.T) {
	fs := vfs.NewMem()
	s := openMem(t, func(o *Options) { o.FS = fs })
	parked, gate := make(chan struct{}), make(chan struct{})
	tx := mustBegin(t, s)
	tx.Set([]byte("in-progress"), []byte("1"))
	first := goCommit(t, s, tx, func(store.Critical) error {
		close(parked)
		<-gate
		return nil
	})
	<-parked
	tx = mustBegin(t, s)
	tx.Set([]byte("queued"), []byte("1"))
	queued := goCommit(t, s, tx, nil)
	waitQueued(t, s, 1)
	open := mustBegin(t, s)
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	<-s.quit // Close has stopped new commits and told the committer to quit
	close(gate)
	if err := <-first; err != nil {
		t.Errorf("in-progress commit: %v", err)
	}
	if err := <-queued; !errors.Is(err, store.ErrClosed) {
		t.Errorf("queued commit: %v, want ErrClosed", err)
	}
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if _, _, err := open.Get([]byte("x")); !errors.Is(err, store.ErrClosed) {
		t.Errorf("txn open across Close: %v", err)
	}
	open.Discard()
	s2 := openMem(t, func(o *Options) { o.FS = fs })
	if a, b := readNow(t, s2, "in-progress"), readNow(t, s2, "queued"); a != "1" || b != "<missing>" {
		t.Fatalf("after reopen in-progress=%q queued=%q, want 1 and <missing>", a, b)
	}
}

func TestHookPanic(t *testing.T) {
	s := openMem(t, nil)
	tx := mustBegin(t, s)
	tx.Set([]byte("a"), []byte("1"))
	func() {
		defer func() {
			if p := recover(); p != "boom" {
				t.Fatalf("recovered %v, want the hook's panic", p)
			}
		}()
		tx.Commit(context.Background(), func(store.Critical) error { panic("boom") })
		t.Fatal("Commit returned")
	}()
	if got := readNow(t, s, "a"); got != "<missing>" {
		t.Fatalf("panicking hook's txn wrote a=%q", got)
	}
	commitKV(t, s, "b", "1") // the committer survived
}

func TestCriticalAfterHook(t *testing.T) {
	s := openMem(t, nil)
	var leaked store.Critical
	tx := mustBegin(t, s)
	if err := tx.Commit(context.Background(), func(c store.Critical) error { leaked = c; return nil }); err != nil {
		t.Fatal(err)
	}
	if err := leaked.Set([]byte("a"), nil); err == nil {
		t.Fatal("Critical.Set after the hook returned succeeded")
	}
	if _, _, err := leaked.Get([]byte("a")); err == nil {
		t.Fatal("Critical.Get after the hook returned succeeded")
	}
}

// syncGate wraps an FS so that, when armed, fsyncs of Pebble's WAL park
// until released: the window in which a group is applied but not durable.
type syncGate struct {
	vfs.FS
	armed   atomic.Bool
	parked  chan struct{} // receives once per parked sync
	release chan struct{}
}

func (g *syncGate) Unwrap() vfs.FS { return g.FS }

func (g *syncGate) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := g.FS.Create(name, c)
	return g.wrap(name, f), err
}

func (g *syncGate) ReuseForWrite(old, name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := g.FS.ReuseForWrite(old, name, c)
	return g.wrap(name, f), err
}

func (g *syncGate) wrap(name string, f vfs.File) vfs.File {
	if f == nil || !strings.HasSuffix(name, ".log") {
		return f
	}
	return gatedFile{File: f, g: g}
}

type gatedFile struct {
	vfs.File
	g *syncGate
}

func (f gatedFile) wait() {
	if f.g.armed.Load() {
		f.g.parked <- struct{}{}
		<-f.g.release
	}
}

func (f gatedFile) Sync() error     { f.wait(); return f.File.Sync() }
func (f gatedFile) SyncData() error { f.wait(); return f.File.SyncData() }
func (f gatedFile) SyncTo(n int64) (bool, error) {
	f.wait()
	return f.File.SyncTo(n)
}

// TestNotVisibleBeforeDurable parks the WAL fsync of a commit group and
// checks that no new snapshot sees the group until its fsync is done.
func TestNotVisibleBeforeDurable(t *testing.T) {
	g := &syncGate{FS: vfs.NewMem(), parked: make(chan struct{}, 16), release: make(chan struct{})}
	s := openMem(t, func(o *Options) { o.FS = g })
	var once sync.Once
	release := func() { once.Do(func() { close(g.release) }) }
	t.Cleanup(release) // runs before openMem's Close, even on failure
	g.armed.Store(true)
	tx := mustBegin(t, s)
	tx.Set([]byte("a"), []byte("1"))
	done := goCommit(t, s, tx, nil)
	select {
	case <-g.parked: // the batch is in the WAL, not yet synced
	case <-time.After(10 * time.Second):
		t.Fatal("the commit never fsynced its WAL")
	}
	g.armed.Store(false)
	for range 3 {
		if got := readNow(t, s, "a"); got != "<missing>" {
			t.Fatalf("read a=%q before its fsync finished", got)
		}
		time.Sleep(time.Millisecond)
	}
	release()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := readNow(t, s, "a"); got != "1" {
		t.Fatalf("after commit a=%q, want 1", got)
	}
}
