// Package storetest is the conformance suite for store.Store
// implementations: overlay semantics, input limits, OCC conflicts (read-write,
// lost update, phantoms, read-only), commit hooks, and a concurrent bank
// workload whose total must never change. Every implementation runs it from
// its own tests:
//
//	func TestConformance(t *testing.T) { storetest.Run(t, openFresh) }
//
// The suite is safe to run with -race; each subtest opens its own store.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/weft-db/weft/internal/store"
)

// Opener returns a new, empty store; the suite closes it (a second Close
// returning store.ErrClosed is fine).
type Opener func(t testing.TB) store.Store

// Run runs every conformance test against stores from open.
func Run(t *testing.T, open Opener) {
	tests := []struct {
		name string
		fn   func(*testing.T, Opener)
	}{
		{"Overlay", testOverlay},
		{"ScanLimits", testScanLimits},
		{"ScanWhileWriting", testScanWhileWriting},
		{"BadInput", testBadInput},
		{"TxnLifecycle", testTxnLifecycle},
		{"Snapshot", testSnapshot},
		{"ReadWriteConflict", testReadWriteConflict},
		{"LostUpdate", testLostUpdate},
		{"BlindWrites", testBlindWrites},
		{"MissingKeyRead", testMissingKeyRead},
		{"Phantom", testPhantom},
		{"ReadOnly", testReadOnly},
		{"Hook", testHook},
		{"HookError", testHookError},
		{"HookCounter", testHookCounter},
		{"Canceled", testCanceled},
		{"Closed", testClosed},
		{"Bank", testBank},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, open) })
	}
}

// fresh opens a store closed at the end of the test.
func fresh(t *testing.T, open Opener) store.Store {
	t.Helper()
	s := open(t)
	t.Cleanup(func() {
		if err := s.Close(); err != nil && !errors.Is(err, store.ErrClosed) {
			t.Errorf("close: %v", err)
		}
	})
	return s
}

func begin(t testing.TB, s store.Store) store.Txn {
	t.Helper()
	tx, err := s.Begin()
	if err != nil {
		t.Fatalf("begin: %v", err)
	}
	return tx
}

// put commits key=val pairs (val "" with del means delete) in one Txn.
func put(t testing.TB, s store.Store, kv ...string) {
	t.Helper()
	tx := begin(t, s)
	for i := 0; i+1 < len(kv); i += 2 {
		must(t, tx.Set([]byte(kv[i]), []byte(kv[i+1])))
	}
	must(t, tx.Commit(context.Background(), nil))
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// get reads key in a fresh Txn: "<missing>" if absent.
func get(t testing.TB, s store.Store, key string) string {
	t.Helper()
	tx := begin(t, s)
	defer tx.Discard()
	return getIn(t, tx, key)
}

func getIn(t testing.TB, tx interface {
	Get([]byte) ([]byte, bool, error)
}, key string) string {
	t.Helper()
	v, ok, err := tx.Get([]byte(key))
	if err != nil {
		t.Fatalf("get %q: %v", key, err)
	}
	if !ok {
		return "<missing>"
	}
	return string(v)
}

// scan returns "k=v" for each key Scan passes on.
func scan(tx store.Txn, start, end []byte, limit int) ([]string, error) {
	var out []string
	err := tx.Scan(start, end, limit, func(k, v []byte) error {
		out = append(out, string(k)+"="+string(v))
		return nil
	})
	return out, err
}

func expectConflict(t testing.TB, err error) {
	t.Helper()
	if !errors.Is(err, store.ErrConflict) || !store.IsRetryable(err) {
		t.Fatalf("commit: got %v, want a retryable ErrConflict", err)
	}
}

// op is one buffered write in a table test: del, or set key=val.
type op struct {
	key, val string
	del      bool
}

func testOverlay(t *testing.T, open Opener) {
	stored := []string{"a", "1", "b", "2", "c", "3", "e", "5"}
	cases := []struct {
		name       string
		ops        []op
		start, end string
		nilEnd     bool
		limit      int
		scan       []string
		gets       map[string]string
	}{
		{name: "no writes", start: "a", nilEnd: true,
			scan: []string{"a=1", "b=2", "c=3", "e=5"},
			gets: map[string]string{"a": "1", "d": "<missing>"}},
		{name: "set shadows stored", ops: []op{{key: "b", val: "20"}}, start: "a", end: "z",
			scan: []string{"a=1", "b=20", "c=3", "e=5"},
			gets: map[string]string{"b": "20"}},
		{name: "insert merges in order", ops: []op{{key: "d", val: "4"}, {key: "0", val: "0"}, {key: "f", val: "6"}},
			nilEnd: true, scan: []string{"0=0", "a=1", "b=2", "c=3", "d=4", "e=5", "f=6"},
			gets: map[string]string{"d": "4", "f": "6"}},
		{name: "delete hides stored", ops: []op{{key: "a", del: true}, {key: "c", del: true}}, start: "a", end: "z",
			scan: []string{"b=2", "e=5"},
			gets: map[string]string{"a": "<missing>", "c": "<missing>"}},
		{name: "delete then set", ops: []op{{key: "c", del: true}, {key: "c", val: "33"}}, start: "c", end: "d",
			scan: []string{"c=33"}, gets: map[string]string{"c": "33"}},
		{name: "set then delete", ops: []op{{key: "x", val: "9"}, {key: "x", del: true}}, start: "w", end: "y",
			scan: nil, gets: map[string]string{"x": "<missing>"}},
		{name: "range excludes end", ops: []op{{key: "d", val: "4"}}, start: "b", end: "d",
			scan: []string{"b=2", "c=3"}},
		{name: "empty range", start: "b", end: "b", scan: nil},
		{name: "limit counts visible keys only", ops: []op{{key: "a", del: true}, {key: "bb", val: "x"}},
			start: "a", nilEnd: true, limit: 2, scan: []string{"b=2", "bb=x"}},
		{name: "empty value", ops: []op{{key: "e", val: ""}}, start: "e", end: "f",
			scan: []string{"e="}, gets: map[string]string{"e": ""}},
	}
	s := fresh(t, open)
	put(t, s, stored...)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tx := begin(t, s)
			defer tx.Discard()
			for _, o := range tc.ops {
				if o.del {
					must(t, tx.Delete([]byte(o.key)))
				} else {
					must(t, tx.Set([]byte(o.key), []byte(o.val)))
				}
			}
			end := []byte(tc.end)
			if tc.nilEnd {
				end = nil
			}
			got, err := scan(tx, []byte(tc.start), end, tc.limit)
			must(t, err)
			if !slices.Equal(got, tc.scan) {
				t.Errorf("scan = %q, want %q", got, tc.scan)
			}
			for k, want := range tc.gets {
				if got := getIn(t, tx, k); got != want {
					t.Errorf("get %q = %q, want %q", k, got, want)
				}
			}
		})
	}
	// Nothing was committed: the stored data is unchanged.
	tx := begin(t, s)
	defer tx.Discard()
	got, err := scan(tx, nil, nil, 0)
	must(t, err)
	if want := []string{"a=1", "b=2", "c=3", "e=5"}; !slices.Equal(got, want) {
		t.Fatalf("after discarded txns: %q, want %q", got, want)
	}
}

func testScanLimits(t *testing.T, open Opener) {
	s := fresh(t, open)
	var kv []string
	for i := range 20 {
		kv = append(kv, fmt.Sprintf("k%02d", i), fmt.Sprint(i))
	}
	put(t, s, kv...)
	tx := begin(t, s)
	defer tx.Discard()
	for _, tc := range []struct {
		limit, want int
	}{{0, 20}, {-1, 20}, {1, 1}, {7, 7}, {20, 20}, {100, 20}} {
		got, err := scan(tx, []byte("k"), nil, tc.limit)
		must(t, err)
		if len(got) != tc.want {
			t.Errorf("limit %d: %d keys, want %d", tc.limit, len(got), tc.want)
		}
	}
	// An error from fn stops the scan and comes back as is.
	stop := errors.New("stop here")
	n := 0
	err := tx.Scan(nil, nil, 0, func(k, v []byte) error {
		if n++; n == 3 {
			return stop
		}
		return nil
	})
	if err != stop || n != 3 {
		t.Fatalf("fn error: got %v after %d keys, want %v after 3", err, n, stop)
	}
}

// testScanWhileWriting deletes every key a scan passes on, inserts new ones
// and scans them, from inside the scan callback.
func testScanWhileWriting(t *testing.T, open Opener) {
	s := fresh(t, open)
	put(t, s, "e/1", "a", "e/2", "b", "e/3", "c")
	tx := begin(t, s)
	must(t, tx.Set([]byte("e/25"), []byte("own")))
	var seen []string
	err := tx.Scan([]byte("e/"), []byte("e0"), 0, func(k, v []byte) error {
		seen = append(seen, string(k))
		if err := tx.Set([]byte("moved/"+string(k)), v); err != nil {
			return err
		}
		if err := tx.Delete(k); err != nil {
			return err
		}
		// A nested scan sees the writes made so far.
		moved, err := scan(tx, []byte("moved/"), []byte("moved0"), 0)
		if err == nil && len(moved) != len(seen) {
			err = fmt.Errorf("nested scan saw %d moved keys, want %d", len(moved), len(seen))
		}
		return err
	})
	must(t, err)
	if want := []string{"e/1", "e/2", "e/25", "e/3"}; !slices.Equal(seen, want) {
		t.Fatalf("scan saw %q, want %q", seen, want)
	}
	must(t, tx.Commit(context.Background(), nil))
	tx = begin(t, s)
	defer tx.Discard()
	got, err := scan(tx, nil, nil, 0)
	must(t, err)
	if want := []string{"moved/e/1=a", "moved/e/2=b", "moved/e/25=own", "moved/e/3=c"}; !slices.Equal(got, want) {
		t.Fatalf("after commit: %q, want %q", got, want)
	}
}

func testBadInput(t *testing.T, open Opener) {
	s := fresh(t, open)
	put(t, s, "a", "1")
	long := make([]byte, store.KeyLenMax+1)
	huge := make([]byte, store.ValueLenMax+1)
	maxKey := make([]byte, store.KeyLenMax)
	tx := begin(t, s)
	defer tx.Discard()
	cases := []struct {
		name string
		err  error
		want error
	}{
		{"get long key", func() error { _, _, err := tx.Get(long); return err }(), store.ErrKeyTooLarge},
		{"set long key", tx.Set(long, nil), store.ErrKeyTooLarge},
		{"set huge value", tx.Set([]byte("b"), huge), store.ErrValueTooLarge},
		{"delete long key", tx.Delete(long), store.ErrKeyTooLarge},
		{"scan long start", tx.Scan(long, nil, 0, nil), store.ErrKeyTooLarge},
		{"scan long end", tx.Scan(nil, long, 0, nil), store.ErrKeyTooLarge},
		{"scan start after end", tx.Scan([]byte("b"), []byte("a"), 0, nil), store.ErrBadRange},
		{"max key is fine", tx.Set(maxKey, []byte("v")), nil},
	}
	for _, tc := range cases {
		if !errors.Is(tc.err, tc.want) || (tc.want == nil) != (tc.err == nil) {
			t.Errorf("%s: got %v, want %v", tc.name, tc.err, tc.want)
		}
	}
	// The rejected writes changed nothing; the accepted one commits.
	must(t, tx.Commit(context.Background(), nil))
	if got := get(t, s, "b"); got != "<missing>" {
		t.Errorf("rejected value was written: b=%q", got)
	}
	if got := get(t, s, string(maxKey)); got != "v" {
		t.Errorf("max-length key: %q, want v", got)
	}
}

func testTxnLifecycle(t *testing.T, open Opener) {
	s := fresh(t, open)
	tx := begin(t, s)
	must(t, tx.Set([]byte("a"), []byte("1")))
	must(t, tx.Commit(context.Background(), nil))
	tx.Discard()
	tx.Discard()
	if err := tx.Commit(context.Background(), nil); !errors.Is(err, store.ErrTxnDone) {
		t.Errorf("second commit: %v, want ErrTxnDone", err)
	}
	if _, _, err := tx.Get([]byte("a")); !errors.Is(err, store.ErrTxnDone) {
		t.Errorf("get after commit: %v, want ErrTxnDone", err)
	}
	if err := tx.Set([]byte("a"), nil); !errors.Is(err, store.ErrTxnDone) {
		t.Errorf("set after commit: %v, want ErrTxnDone", err)
	}
	tx = begin(t, s)
	must(t, tx.Set([]byte("b"), []byte("2")))
	tx.Discard()
	if err := tx.Scan(nil, nil, 0, nil); !errors.Is(err, store.ErrTxnDone) {
		t.Errorf("scan after discard: %v, want ErrTxnDone", err)
	}
	if got := get(t, s, "b"); got != "<missing>" {
		t.Errorf("discarded write visible: b=%q", got)
	}
}

// testSnapshot checks repeatable reads at the snapshot and real-time order:
// a Txn begun after a Commit returned sees it.
func testSnapshot(t *testing.T, open Opener) {
	s := fresh(t, open)
	put(t, s, "a", "1")
	old := begin(t, s)
	defer old.Discard()
	put(t, s, "a", "2", "b", "new")
	if got := getIn(t, old, "a"); got != "1" {
		t.Errorf("old snapshot sees a=%q, want 1", got)
	}
	got, err := scan(old, nil, nil, 0)
	must(t, err)
	if !slices.Equal(got, []string{"a=1"}) {
		t.Errorf("old snapshot scans %q, want [a=1]", got)
	}
	if got := get(t, s, "a"); got != "2" {
		t.Errorf("new txn sees a=%q, want 2", got)
	}
}

func testReadWriteConflict(t *testing.T, open Opener) {
	s := fresh(t, open)
	put(t, s, "x", "0")
	t1 := begin(t, s)
	getIn(t, t1, "x")
	must(t, t1.Set([]byte("y"), []byte("from t1")))
	put(t, s, "x", "1")
	expectConflict(t, t1.Commit(context.Background(), nil))
	if got := get(t, s, "y"); got != "<missing>" {
		t.Errorf("conflicted txn wrote y=%q", got)
	}
}

// testLostUpdate: two read-modify-writes of one key; the second must fail.
func testLostUpdate(t *testing.T, open Opener) {
	s := fresh(t, open)
	put(t, s, "n", "0")
	t1, t2 := begin(t, s), begin(t, s)
	for _, tx := range []store.Txn{t1, t2} {
		if getIn(t, tx, "n") != "0" {
			t.Fatal("bad start")
		}
		must(t, tx.Set([]byte("n"), []byte("1")))
	}
	must(t, t1.Commit(context.Background(), nil))
	expectConflict(t, t2.Commit(context.Background(), nil))
}

// testBlindWrites: writes without reads never conflict; the later commit wins.
func testBlindWrites(t *testing.T, open Opener) {
	s := fresh(t, open)
	t1, t2 := begin(t, s), begin(t, s)
	must(t, t1.Set([]byte("k"), []byte("1")))
	must(t, t2.Set([]byte("k"), []byte("2")))
	must(t, t1.Commit(context.Background(), nil))
	must(t, t2.Commit(context.Background(), nil))
	if got := get(t, s, "k"); got != "2" {
		t.Errorf("k=%q, want the later commit's 2", got)
	}
}

func testMissingKeyRead(t *testing.T, open Opener) {
	s := fresh(t, open)
	t1 := begin(t, s)
	if getIn(t, t1, "ghost") != "<missing>" {
		t.Fatal("ghost exists")
	}
	must(t, t1.Set([]byte("other"), []byte("1")))
	put(t, s, "ghost", "boo")
	expectConflict(t, t1.Commit(context.Background(), nil))
}

func testPhantom(t *testing.T, open Opener) {
	ctx := context.Background()
	cases := []struct {
		name     string
		limit    int
		insert   string // committed by another Txn after the scan
		del      string // deleted by another Txn after the scan
		conflict bool
	}{
		{name: "insert in scanned range", insert: "r5", conflict: true},
		{name: "delete in scanned range", del: "r3", conflict: true},
		{name: "insert outside range", insert: "s1", conflict: false},
		{name: "insert before limit stop", limit: 2, insert: "r2", conflict: true},
		{name: "insert after limit stop", limit: 2, insert: "r4", conflict: false},
		{name: "insert at range end", insert: "s", conflict: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := fresh(t, open)
			put(t, s, "r1", "a", "r3", "b", "r6", "c")
			t1 := begin(t, s)
			if _, err := scan(t1, []byte("r"), []byte("s"), tc.limit); err != nil {
				t.Fatal(err)
			}
			must(t, t1.Set([]byte("summary"), []byte("x")))
			t2 := begin(t, s)
			if tc.insert != "" {
				must(t, t2.Set([]byte(tc.insert), []byte("new")))
			} else {
				must(t, t2.Delete([]byte(tc.del)))
			}
			must(t, t2.Commit(ctx, nil))
			err := t1.Commit(ctx, nil)
			if tc.conflict {
				expectConflict(t, err)
			} else if err != nil {
				t.Fatalf("commit: %v, want nil", err)
			}
		})
	}
}

func testReadOnly(t *testing.T, open Opener) {
	ctx := context.Background()
	s := fresh(t, open)
	put(t, s, "a", "1")
	t1 := begin(t, s)
	getIn(t, t1, "a")
	must(t, t1.Commit(ctx, nil)) // nothing changed
	t2 := begin(t, s)
	getIn(t, t2, "a")
	put(t, s, "a", "2")
	expectConflict(t, t2.Commit(ctx, nil))
	t3 := begin(t, s)
	getIn(t, t3, "a")
	put(t, s, "b", "unrelated")
	must(t, t3.Commit(ctx, nil))
}

// testHook: the hook reads the latest committed state (not the Txn's
// snapshot), sees its own Txn's writes, and its writes commit with the Txn.
func testHook(t *testing.T, open Opener) {
	s := fresh(t, open)
	put(t, s, "clock", "1")
	tx := begin(t, s)
	must(t, tx.Set([]byte("mine"), []byte("m")))
	put(t, s, "clock", "2") // after tx's snapshot
	var sawClock, sawMine string
	err := tx.Commit(context.Background(), func(c store.Critical) error {
		sawClock, sawMine = getIn(t, c, "clock"), getIn(t, c, "mine")
		if err := c.Set([]byte("clock"), []byte("3")); err != nil {
			return err
		}
		return c.Delete([]byte("mine"))
	})
	must(t, err)
	if sawClock != "2" || sawMine != "m" {
		t.Errorf("hook saw clock=%q mine=%q, want 2 and m", sawClock, sawMine)
	}
	if got := get(t, s, "clock"); got != "3" {
		t.Errorf("clock=%q, want the hook's 3", got)
	}
	if got := get(t, s, "mine"); got != "<missing>" {
		t.Errorf("mine=%q, want deleted by the hook", got)
	}
}

func testHookError(t *testing.T, open Opener) {
	s := fresh(t, open)
	tx := begin(t, s)
	must(t, tx.Set([]byte("a"), []byte("1")))
	refuse := errors.New("clock went backwards")
	err := tx.Commit(context.Background(), func(c store.Critical) error {
		must(t, c.Set([]byte("b"), []byte("2")))
		return refuse
	})
	if !errors.Is(err, refuse) {
		t.Fatalf("commit: %v, want the hook's error", err)
	}
	for _, k := range []string{"a", "b"} {
		if got := get(t, s, k); got != "<missing>" {
			t.Errorf("%s=%q written despite the hook's error", k, got)
		}
	}
}

// testHookCounter: concurrent increments through hooks never conflict (the
// hook reads the latest value in the serialized section) and none is lost.
func testHookCounter(t *testing.T, open Opener) {
	const workers, each = 8, 50
	s := fresh(t, open)
	errs := make(chan error, workers)
	for range workers {
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
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range workers {
		must(t, <-errs)
	}
	if got, want := get(t, s, "n"), fmt.Sprint(workers*each); got != want {
		t.Fatalf("counter = %s, want %s", got, want)
	}
}

func testCanceled(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	tx := begin(t, s)
	must(t, tx.Set([]byte("a"), []byte("1")))
	if err := tx.Commit(ctx, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("commit with canceled ctx: %v", err)
	}
	if got := get(t, s, "a"); got != "<missing>" {
		t.Fatalf("canceled commit wrote a=%q", got)
	}
}

func testClosed(t *testing.T, open Opener) {
	s := open(t)
	put(t, s, "a", "1")
	tx := begin(t, s)
	must(t, tx.Set([]byte("b"), []byte("2")))
	must(t, s.Close())
	if err := s.Close(); !errors.Is(err, store.ErrClosed) {
		t.Errorf("second close: %v", err)
	}
	if _, err := s.Begin(); !errors.Is(err, store.ErrClosed) {
		t.Errorf("begin after close: %v", err)
	}
	if _, _, err := tx.Get([]byte("a")); !errors.Is(err, store.ErrClosed) {
		t.Errorf("get after close: %v", err)
	}
	if err := tx.Scan(nil, nil, 0, nil); !errors.Is(err, store.ErrClosed) {
		t.Errorf("scan after close: %v", err)
	}
	if err := tx.Commit(context.Background(), nil); !errors.Is(err, store.ErrClosed) {
		t.Errorf("commit after close: %v", err)
	}
	tx.Discard()
}

// key helpers shared by workloads.
func acct(i int) []byte { return []byte(fmt.Sprintf("bank/%03d", i)) }

func isAcct(k []byte) bool { return strings.HasPrefix(string(k), "bank/") }
