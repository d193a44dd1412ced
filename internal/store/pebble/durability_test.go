package pebble

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// pairKey names the two keys one workload Txn writes together.
func pairKey(worker, i int, half string) []byte {
	return fmt.Appendf(nil, "w/%02d/%06d/%s", worker, i, half)
}

// crashRun commits Txns of two keys from several goroutines on a crashable
// FS with Sync on, takes a crash image mid-stream (keeping half the unsynced
// data at random), and returns the image with how many
// Txns of each worker had been acknowledged before it was taken.
func crashRun(t *testing.T, seed uint64) (*vfs.MemFS, []int) {
	t.Helper()
	const workers = 8
	fs := vfs.NewCrashableMem()
	o := DefaultOptions()
	o.FS = fs
	s, err := Open("db", o)
	if err != nil {
		t.Fatal(err)
	}
	acked := make([]atomic.Int64, workers)
	var stop atomic.Bool
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; !stop.Load(); i++ {
				tx, err := s.Begin()
				if err != nil {
					return
				}
				tx.Set(pairKey(w, i, "a"), []byte(strconv.Itoa(i)))
				tx.Set(pairKey(w, i, "b"), []byte(strconv.Itoa(i)))
				if err := tx.Commit(context.Background(), nil); err != nil {
					return // ErrClosed at the end
				}
				acked[w].Store(int64(i + 1))
			}
		}()
	}
	for total := 0; total < 2000; {
		time.Sleep(time.Millisecond)
		total = 0
		for w := range acked {
			total += int(acked[w].Load())
		}
	}
	before := make([]int, workers)
	for w := range acked {
		before[w] = int(acked[w].Load())
	}
	// Commits keep landing while the image is taken: it must hold at least
	// everything acknowledged before, plus unsynced data kept at random.
	img := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 50, RNG: rand.New(rand.NewPCG(seed, seed))})
	stop.Store(true)
	wg.Wait()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return img, before
}

// recovered reopens a crash image and returns, per worker, which Txns are
// present; it fails the test on a torn Txn (one key of a pair without the
// other).
func recovered(t *testing.T, img *vfs.MemFS, workers int) []map[int]bool {
	t.Helper()
	o := DefaultOptions()
	o.FS = img
	s, err := Open("db", o)
	if err != nil {
		t.Fatalf("reopen after crash: %v", err)
	}
	defer s.Close()
	tx := mustBegin(t, s)
	defer tx.Discard()
	halves := map[string]int{}
	err = tx.Scan([]byte("w/"), []byte("w0"), 0, func(k, v []byte) error {
		halves[string(k[:len(k)-2])]++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	present := make([]map[int]bool, workers)
	for w := range present {
		present[w] = map[int]bool{}
	}
	for prefix, n := range halves {
		if n != 2 {
			t.Errorf("torn transaction %s: %d of 2 keys", prefix, n)
		}
		var w, i int
		fmt.Sscanf(prefix, "w/%d/%d", &w, &i)
		present[w][i] = true
	}
	return present
}

// TestCrashKeepsAcknowledged simulates power loss (unsynced data dropped at
// random) during a stream of concurrent commits: after reopening, every
// acknowledged commit is there and no commit is torn.
func TestCrashKeepsAcknowledged(t *testing.T) {
	for seed := range uint64(3) {
		img, acked := crashRun(t, seed)
		present := recovered(t, img, len(acked))
		lost := 0
		for w, n := range acked {
			for i := range n {
				if !present[w][i] {
					lost++
				}
			}
		}
		if lost > 0 {
			t.Fatalf("seed %d: %d acknowledged commits lost", seed, lost)
		}
	}
}

// TestCrashWithoutSyncLoses is the control: with Sync off, acknowledged
// commits vanish in a crash that keeps no unsynced data, so the test above
// can fail. (Sequential and small, so no memtable flush syncs them anyway.)
func TestCrashWithoutSyncLoses(t *testing.T) {
	fs := vfs.NewCrashableMem()
	o := DefaultOptions()
	o.FS, o.Sync = fs, false
	s, err := Open("db", o)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		commitKV(t, s, fmt.Sprint(i), "v")
	}
	img := fs.CrashClone(vfs.CrashCloneCfg{})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	o.FS = img
	s, err = Open("db", o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	lost := 0
	for i := range 100 {
		if readNow(t, s, fmt.Sprint(i)) != "v" {
			lost++
		}
	}
	if lost == 0 {
		t.Fatal("no acknowledged commit lost without fsync: the crash image is not dropping unsynced data")
	}
}

// TestReopenDir commits on a real directory, closes, reopens and reads;
// a second Open of a directory in use fails instead of sharing it.
func TestReopenDir(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	commitKV(t, s, "a", "1", "b", "2")
	tx := mustBegin(t, s)
	tx.Delete([]byte("b"))
	if err := tx.Commit(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir, DefaultOptions()); err == nil {
		t.Fatal("second Open of a directory in use succeeded")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(dir, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if a, b := readNow(t, s, "a"), readNow(t, s, "b"); a != "1" || b != "<missing>" {
		t.Fatalf("after reopen a=%q b=%q, want 1 and <missing>", a, b)
	}
}

const childDirEnv = "WEFT_STORE_KILL_CHILD_DIR"

// TestKillNine runs a child process that commits from several goroutines and
// prints each acknowledged commit, kills it with SIGKILL mid-stream, and
// checks that every commit it acknowledged is in the reopened store.
func TestKillNine(t *testing.T) {
	if dir := os.Getenv(childDirEnv); dir != "" {
		killChild(dir) // never returns
	}
	dir := filepath.Join(t.TempDir(), "db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestKillNine$", "-test.count=1")
	cmd.Env = append(os.Environ(), childDirEnv+"="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(out)
	var acked []string
	deadline := time.AfterFunc(10*time.Second, func() { _ = cmd.Process.Kill() })
	defer deadline.Stop()
	for len(acked) < 1000 && lines.Scan() {
		acked = append(acked, lines.Text())
	}
	if err := cmd.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	for lines.Scan() { // acknowledged before the kill, still in the pipe
		acked = append(acked, lines.Text())
	}
	_ = cmd.Wait()
	if len(acked) < 1000 {
		t.Fatalf("child acknowledged only %d commits", len(acked))
	}
	s, err := Open(dir, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tx := mustBegin(t, s)
	defer tx.Discard()
	for _, key := range acked {
		if !strings.HasPrefix(key, "k/") {
			t.Fatalf("child said %q", key)
		}
		if got := read(t, tx, key); got != "v" {
			t.Errorf("acknowledged %s lost after kill -9 (%q)", key, got)
		}
	}
	t.Logf("%d acknowledged commits survived kill -9", len(acked))
}

// killChild commits forever, printing each key once its Commit returned nil.
func killChild(dir string) {
	s, err := Open(dir, DefaultOptions())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var mu sync.Mutex
	for w := range 4 {
		go func() {
			for i := 0; ; i++ {
				key := fmt.Sprintf("k/%d/%d", w, i)
				tx, err := s.Begin()
				if err == nil {
					tx.Set([]byte(key), []byte("v"))
					err = tx.Commit(context.Background(), nil)
				}
				if err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(2)
				}
				mu.Lock()
				fmt.Println(key)
				mu.Unlock()
			}
		}()
	}
	select {}
}
