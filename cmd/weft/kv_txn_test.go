package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	kvclient "github.com/weft-db/weft/client/kv"
	"github.com/weft-db/weft/internal/testproc"
)

// txnBank is the bank workload over the Kronos transactional mode: transfers
// between accounts (two Add writes plus a unique marker key), audits that
// read every account, and the bookkeeping of what was acknowledged.
type txnBank struct {
	c        *kvclient.Client
	accounts []string
	initial  int

	mu        sync.Mutex
	net       []int     // acknowledged deltas per account
	markers   []string  // marker keys of acknowledged transfers
	attempts  []attempt // every transfer tried
	unknown   int       // transfers that failed with an unknown outcome
	auditErrs int       // audits that failed (not for a wrong total)
	committed int
	conflicts int
	audits    int
}

// attempt is one transfer tried: amt moves from account a to c; marker is
// written iff it committed.
type attempt struct {
	marker string
	a, c   int
	amt    int
	acked  bool
}

func (b *txnBank) total() int { return len(b.accounts) * b.initial }

// audit reads every account in one transaction and checks the total. A
// failed audit is an error only if strict (else counted); a wrong total
// always is.
func (b *txnBank) audit(ctx context.Context, strict bool) error {
	for {
		r, err := b.c.Txn(ctx, -1, b.accounts, nil)
		if errors.Is(err, kvclient.ErrTxnConflict) {
			continue
		}
		if err != nil && !strict {
			b.mu.Lock()
			b.auditErrs++
			b.mu.Unlock()
			return nil
		}
		if err != nil {
			return err
		}
		sum := 0
		for _, k := range b.accounts {
			sibs := r.Reads[k]
			if len(sibs) != 1 {
				return fmt.Errorf("audit: %s has %d siblings", k, len(sibs))
			}
			v, err := strconv.Atoi(string(sibs[0].Value))
			if err != nil {
				return fmt.Errorf("audit: %s = %q", k, sibs[0].Value)
			}
			sum += v
		}
		if sum != b.total() {
			return fmt.Errorf("audit (txn %v) saw total %d, want %d: not serialisable", r.Txn, sum, b.total())
		}
		b.mu.Lock()
		b.audits++
		b.mu.Unlock()
		return nil
	}
}

// transfer moves a random amount between two random accounts. Errors other
// than a conflict are returned only if strict; else counted as unknown.
func (b *txnBank) transfer(ctx context.Context, rng *rand.Rand, id string, strict bool) error {
	a, c := rng.IntN(len(b.accounts)), rng.IntN(len(b.accounts)-1)
	if c >= a {
		c++
	}
	amt := 1 + rng.IntN(20)
	marker := "tx-" + id
	_, err := b.c.Txn(ctx, -1, nil, []kvclient.TxnWrite{
		{Key: b.accounts[a], Value: []byte(strconv.Itoa(-amt)), Add: true},
		{Key: b.accounts[c], Value: []byte(strconv.Itoa(amt)), Add: true},
		{Key: marker, Value: []byte("done")},
	})
	b.mu.Lock()
	defer b.mu.Unlock()
	b.attempts = append(b.attempts, attempt{marker: marker, a: a, c: c, amt: amt, acked: err == nil})
	switch {
	case err == nil:
		b.committed++
		b.net[a] -= amt
		b.net[c] += amt
		b.markers = append(b.markers, marker)
	case errors.Is(err, kvclient.ErrTxnConflict):
		b.conflicts++
	case strict:
		return err
	default:
		b.unknown++
	}
	return nil
}

// run runs workers transferring (and one auditing) until each did ops.
func (b *txnBank) run(ctx context.Context, round string, workers, ops int, strict bool) error {
	var wg sync.WaitGroup
	errs := make([]error, workers+1)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), uint64(len(round))))
			for n := range ops {
				if err := b.transfer(ctx, rng, fmt.Sprintf("%s-%d-%d", round, w, n), strict); err != nil {
					errs[w] = err
					return
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range ops {
			if err := b.audit(ctx, strict); err != nil {
				errs[workers] = err
				return
			}
		}
	}()
	wg.Wait()
	return errors.Join(errs...)
}

// TestKVTxnBankOverKronosWithKill (Kronos paper §3.3 over the network): a
// real `weft kronos` and three `weft kv serve --kronos` processes; six
// clients run concurrent transfers between 12 accounts spread over the
// three servers while an auditor reads every account in one transaction:
// every audit sees the same total (serialisable). Then server 2 is killed
// with SIGKILL (between rounds: see the note below); while it is down,
// transfers touching its keys fail without effect and the others commit;
// it restarts on its directory, and every acknowledged transfer's marker
// is still there, the balances equal the initial ones plus every
// acknowledged transfer, and a last round of transfers and audits passes.
func TestKVTxnBankOverKronosWithKill(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	kvAddrs, procs := startKVTxnCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c, err := kvclient.Dial(ctx, kvAddrs, kvclient.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	b := &txnBank{c: c, initial: 1000}
	var init []kvclient.TxnWrite
	for i := range 12 {
		b.accounts = append(b.accounts, fmt.Sprintf("acct-%d", i))
		init = append(init, kvclient.TxnWrite{Key: b.accounts[i], Value: []byte(strconv.Itoa(b.initial))})
	}
	b.net = make([]int, len(b.accounts))
	if _, err := c.Txn(ctx, 0, nil, init); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := b.run(ctx, "a", 6, 60, true); err != nil {
		t.Fatal(err)
	}
	t.Logf("round 1: %d transfers committed, %d conflicts, %d audits in %v", b.committed, b.conflicts, b.audits, time.Since(start))
	if b.committed < 100 || b.audits < 30 {
		t.Fatalf("round 1 did too little: %d transfers, %d audits", b.committed, b.audits)
	}

	// Round 2: transfers and audits go on while server 2 is killed with
	// SIGKILL and restarted on its directory. Audits must never see a
	// wrong total; requests may fail while it is down.
	killed := make(chan error, 1)
	go func() {
		time.Sleep(300 * time.Millisecond)
		if err := procs[2].Kill(); err != nil {
			killed <- err
			return
		}
		time.Sleep(time.Second)
		killed <- procs[2].Start()
	}()
	before := b.committed
	if err := b.run(ctx, "b", 6, 100, false); err != nil {
		t.Fatal(err)
	}
	if err := <-killed; err != nil {
		t.Fatal(err)
	}
	t.Logf("round 2 (kill -9 of server 2 at 300 ms, restarted 1 s later): %d transfers committed, %d failed, %d audits failed",
		b.committed-before, b.unknown, b.auditErrs)

	// The parts left undecided by the kill are settled (the restarted
	// server's recovered parts, and the other servers' parts of
	// transactions it coordinated) within a few TxnTimeouts.
	var r kvclient.TxnResult
	keys := b.accounts
	for _, at := range b.attempts {
		keys = append(keys, at.marker)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		r, err = c.Txn(ctx, 1, keys, nil)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("reading after the restart: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	// Every acknowledged transfer survived; each transfer took effect
	// entirely (marker and both balances) or not at all.
	want := make([]int, len(b.accounts))
	for i := range want {
		want[i] = b.initial
	}
	landed := 0
	for _, at := range b.attempts {
		sibs := r.Reads[at.marker]
		ok := len(sibs) == 1 && string(sibs[0].Value) == "done"
		if at.acked && !ok {
			t.Fatalf("acknowledged transfer %s lost after kill -9 and restart: %v", at.marker, sibs)
		}
		if ok {
			landed++
			want[at.a] -= at.amt
			want[at.c] += at.amt
		}
	}
	for i, k := range b.accounts {
		if got := string(r.Reads[k][0].Value); got != strconv.Itoa(want[i]) {
			t.Fatalf("%s = %s after the restart, want %d (initial plus every transfer whose marker is there): a transfer took effect in part", k, got, want[i])
		}
	}
	if tail := procs[2].Tail(200); strings.Contains(tail, "recovered prepared transactions") {
		t.Logf("server 2 recovered prepared parts: %s", tail[strings.Index(tail, "recovered prepared"):][:min(120, len(tail)-strings.Index(tail, "recovered prepared"))])
	}
	t.Logf("after the restart: %d of %d transfers took effect (%d acknowledged), all atomically", landed, len(b.attempts), len(b.markers))

	// Round 3: everything works again.
	if err := b.run(ctx, "c", 6, 30, true); err != nil {
		t.Fatal(err)
	}
	t.Logf("total: %d transfers committed, %d conflicts, %d failed, %d audits", b.committed, b.conflicts, b.unknown, b.audits)
	for _, p := range procs {
		if err := p.Stop(5 * time.Second); err != nil {
			t.Fatal(err)
		}
	}
}

// startKVTxnCluster starts a Kronos replica and three `weft kv serve
// --kronos` servers on loopback (extra flags appended to each server's),
// all stopped by the test's cleanup; it returns the servers' addresses and
// processes (restartable on their directories).
func startKVTxnCluster(t *testing.T, extra ...string) ([]string, []*testproc.Proc) {
	t.Helper()
	bin := testproc.Build(t, "github.com/weft-db/weft/cmd/weft")
	addrs, err := testproc.FreeAddrs(4)
	if err != nil {
		t.Fatal(err)
	}
	kronosAddr, kvAddrs := addrs[0], addrs[1:]
	dir := t.TempDir()
	testproc.Start(t, testproc.Spec{Name: "kronos", Path: bin, Ready: "kronos replica",
		Args:    []string{"kronos", "--id", "1", "--addr", kronosAddr, "--data-dir", filepath.Join(dir, "kronos"), "--sync=false"},
		LogPath: filepath.Join(dir, "kronos.log")})
	procs := make([]*testproc.Proc, 3)
	for i := range procs {
		args := append([]string{"kv", "serve", "--id", fmt.Sprint(i), "--peers", strings.Join(kvAddrs, ","),
			"--data-dir", filepath.Join(dir, fmt.Sprint(i)), "--kronos", kronosAddr, "--txn-timeout", "5s"}, extra...)
		procs[i] = testproc.Start(t, testproc.Spec{
			Name: fmt.Sprintf("kv-%d", i), Path: bin, Ready: "weft kv serving", Args: args,
			LogPath: filepath.Join(dir, fmt.Sprintf("kv-%d.log", i)),
		})
	}
	return kvAddrs, procs
}
