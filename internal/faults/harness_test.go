package faults

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	weft "github.com/weft-db/weft/client/weft"
	"github.com/weft-db/weft/internal/check"
	"github.com/weft-db/weft/internal/faultproxy"
	"github.com/weft-db/weft/internal/launch"
	"github.com/weft-db/weft/internal/store/postgres/pgtest"
)

var (
	binOnce sync.Once
	binPath string
	binErr  error
	binDir  string
)

func TestMain(m *testing.M) {
	code := pgtest.Main(m) // stops the PostgreSQL a cluster test's availability check started
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// weftBin builds the weft binary once for the package's tests.
func weftBin(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		gobin, err := exec.LookPath("go")
		if err != nil {
			binErr = fmt.Errorf("no go tool: %w", err)
			return
		}
		if binDir, binErr = os.MkdirTemp("", "weft-faults-test"); binErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "weft")
		out, err := exec.Command(gobin, "build", "-o", binPath, "github.com/weft-db/weft/cmd/weft").CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// TestSmokeFaults is the short version of `weft faults` that runs with the
// default tests: every workload for 18s against a real server under kill -9,
// SIGSTOP and partitions (at least one kill -9, plus the final one before
// the final reads), then the checkers. It must find nothing; and the same
// pipeline must catch a lost acknowledged append planted in the history it
// recorded.
func TestSmokeFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes for ~20s")
	}
	cfg := DefaultConfig()
	cfg.Bin, cfg.OutDir, cfg.Seed, cfg.Clients = weftBin(t), t.TempDir(), 1, 2
	cfg.Duration, cfg.HealedPhase = 18*time.Second, 6*time.Second
	cfg.Nemeses = []FaultKind{FaultKill, FaultPause, FaultPartition}
	cfg.Timing = Timing{FaultMin: time.Second, FaultMax: 1500 * time.Millisecond,
		QuietMin: 700 * time.Millisecond, QuietMax: 1200 * time.Millisecond}
	cfg.OpTimeout = time.Second
	rep, err := Run(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", rep)
	if !rep.Valid {
		b, _ := os.ReadFile(filepath.Join(cfg.OutDir, "anomalies.txt"))
		t.Fatalf("the smoke run is not valid:\n%s", b)
	}
	if rep.Faults[string(FaultKill)] < 1 || !rep.FinalKill || rep.ServerStarts < 3 {
		t.Fatalf("faults %v, final kill %v, server starts %d: want a kill -9 during the run and one before the final reads",
			rep.Faults, rep.FinalKill, rep.ServerStarts)
	}
	for _, w := range rep.Workloads {
		if w.OK < 10 {
			t.Errorf("%s: only %d ok operations", w.Name, w.OK)
		}
	}
	plantLostAppend(t, filepath.Join(cfg.OutDir, WorkloadListAppend+".jsonl"))
}

// plantLostAppend removes one acknowledged append from the final read of a
// recorded list-append history and checks that it is reported.
func plantLostAppend(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	h, err := check.ReadHistory(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if lost, err := LostAppends(h); err != nil || len(lost) > 0 {
		t.Fatalf("recorded history: lost %q, %v", lost, err)
	}
	// The final read is the last completion; drop the first element of the
	// longest list it read.
	final := &h[len(h)-1]
	if final.Type != check.OK {
		t.Fatalf("the history does not end with an ok final read: %+v", final)
	}
	reads := slices.Clone(final.Value.(check.Txn))
	longest := 0
	for i, m := range reads {
		if len(m.List) > len(reads[longest].List) {
			longest = i
		}
	}
	if len(reads[longest].List) == 0 {
		t.Fatal("the final read saw no append")
	}
	victim := reads[longest]
	reads[longest] = check.ReadList(victim.Key, slices.Clone(victim.List[1:]))
	final.Value = reads
	lost, err := LostAppends(h)
	if err != nil || len(lost) != 1 {
		t.Fatalf("planted loss of key %d value %d: lost %q, %v", victim.Key, victim.List[0], lost, err)
	}
	res, err := check.CheckListAppend(h)
	if err != nil || res.Valid {
		t.Fatalf("planted loss of key %d value %d: CheckListAppend = %v, %v", victim.Key, victim.List[0], res, err)
	}
}

// TestAmbiguousCommitIsInfo: a commit whose answer is lost (the proxy holds
// everything the server sends) times out on the client and must be
// recorded as Info, because it did commit: after healing, its write is
// there.
func TestAmbiguousCommitIsInfo(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real process")
	}
	srv, proxy := startServer(t)
	defer func() { _ = srv.Kill() }()
	defer proxy.Close()
	cfg := DefaultConfig()
	h := &harness{cfg: cfg, start: time.Now(), stopCh: make(chan struct{})}
	c, err := weft.Dial(proxy.Addr(), weft.Options{Attempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	w := &worker{h: h, stats: &clientStats{}, c: c, rng: rand.New(rand.NewPCG(1, 1)), stride: 1, timeout: time.Second}
	ctx, cancel := context.WithTimeout(t.Context(), time.Second)
	defer cancel()
	typ, err := w.txn(ctx, func(ctx context.Context, tx *weft.Tx) error {
		if _, err := tx.GetVertex(ctx, weft.Handle("amb")); err != nil {
			return err
		}
		tx.CreateVertex("amb")
		proxy.Partition(faultproxy.Downstream) // the commit goes through, its answer does not
		return nil
	})
	if typ != check.Info {
		t.Fatalf("a commit whose answer was lost: %s (%v), want info", typ, err)
	}
	proxy.Heal()
	deadline := time.Now().Add(10 * time.Second)
	for {
		rctx, rcancel := context.WithTimeout(t.Context(), time.Second)
		tx, err := c.Begin(rctx)
		var v *weft.Vertex
		if err == nil {
			v, err = tx.GetVertex(rctx, weft.Handle("amb"))
		}
		rcancel()
		if err == nil {
			if !v.Exists {
				t.Fatal("the ambiguous commit did not happen; the test needs one that did")
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("reading after heal: %v", err)
		}
	}
}

// startServer starts `weft serve` in a temporary directory behind a proxy.
func startServer(t *testing.T) (*launch.Child, *faultproxy.Proxy) {
	t.Helper()
	dir := t.TempDir()
	addr, err := freeAddr()
	if err != nil {
		t.Fatal(err)
	}
	srv, err := launch.NewChild(launch.ChildSpec{Name: "weft serve", Path: weftBin(t),
		Args:    []string{"serve", "--data-dir", filepath.Join(dir, "data"), "--grpc-addr", addr, "--http-addr", ""},
		LogPath: filepath.Join(dir, "serve.log"), Ready: "weft serving", ReadyTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	cfg := faultproxy.DefaultConfig()
	cfg.Target = addr
	proxy, err := faultproxy.New(cfg, nil)
	if err != nil {
		_ = srv.Kill()
		t.Fatal(err)
	}
	return srv, proxy
}
