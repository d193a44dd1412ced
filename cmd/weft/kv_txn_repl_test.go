package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	kvclient "github.com/weft-db/weft/client/kv"
	"github.com/weft-db/weft/internal/kv"
	"github.com/weft-db/weft/internal/kv/kvcore"
)

// TestKVTxnReplicatesToEveryReplicaWithKill (Kronos paper §3.3, writes
// replicated to the key's N replicas): a real `weft kronos` and three
// `weft kv serve --kronos` (N = 3, W = 2). Four clients run concurrent
// transfers between accounts whose primary is server 0 or 1, coordinated
// by servers 0 and 1; meanwhile server 2 — a replica of every account,
// primary of none — is killed with SIGKILL and restarted on its directory.
// Every transfer must commit or conflict (W = 2 holds without server 2).
// Once every server's outbox drained, a GET with R = 1 directed at each of
// the three replicas shows every account at the initial balance plus
// every committed transfer: server 2 caught up on what it missed.
func TestKVTxnReplicatesToEveryReplicaWithKill(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	kvAddrs, procs := startKVTxnCluster(t, "--outbox-retry", "100ms")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c, err := kvclient.Dial(ctx, kvAddrs, kvclient.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ring, err := kvcore.NewRing(3, kv.DefaultServerConfig().VNodes)
	if err != nil {
		t.Fatal(err)
	}
	const initial = 1000
	var accounts []string
	var init []kvclient.TxnWrite
	for i := 0; len(accounts) < 10; i++ {
		k := fmt.Sprintf("acct-%d", i)
		if ring.Replicas(nil, k, 1)[0] == 2 {
			continue
		}
		accounts = append(accounts, k)
		init = append(init, kvclient.TxnWrite{Key: k, Value: []byte(strconv.Itoa(initial))})
	}
	if _, err := c.Txn(ctx, 0, nil, init); err != nil {
		t.Fatal(err)
	}

	var restarted atomic.Bool
	killed := make(chan error, 1)
	go func() {
		time.Sleep(300 * time.Millisecond)
		if err := procs[2].Kill(); err != nil {
			killed <- err
			return
		}
		time.Sleep(time.Second)
		err := procs[2].Start()
		restarted.Store(true)
		killed <- err
	}()
	var mu sync.Mutex
	net := make([]int, len(accounts))
	var committed, conflicts int
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for w := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 9))
			// Go on until the restart is done, so transfers commit before,
			// during and after server 2's absence.
			for n := 0; n < 40 || !restarted.Load(); n++ {
				a, b := rng.IntN(len(accounts)), rng.IntN(len(accounts)-1)
				if b >= a {
					b++
				}
				amt := 1 + rng.IntN(20)
				_, err := c.Txn(ctx, rng.IntN(2), nil, []kvclient.TxnWrite{
					{Key: accounts[a], Value: []byte(strconv.Itoa(-amt)), Add: true},
					{Key: accounts[b], Value: []byte(strconv.Itoa(amt)), Add: true},
				})
				mu.Lock()
				switch {
				case err == nil:
					committed++
					net[a] -= amt
					net[b] += amt
				case errors.Is(err, kvclient.ErrTxnConflict):
					conflicts++
				default:
					mu.Unlock()
					errs[w] = fmt.Errorf("transfer %d of worker %d (server 2 down or restarting is not needed for W = 2): %w", n, w, err)
					return
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if err := <-killed; err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if committed < 50 {
		t.Fatalf("only %d transfers committed", committed)
	}

	// Wait (bounded) for every outbox to drain: the primaries push what
	// server 2 missed once it is back.
	var failed uint64
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		pending := 0
		failed = 0
		for i := range procs {
			st, err := c.ServerStats(ctx, i)
			if err != nil {
				pending++
				continue
			}
			pending += st.Outbox.Len
			failed += st.Outbox.Failed
		}
		if pending == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d transactional writes never reached their replicas", pending)
		}
	}
	if failed == 0 {
		t.Fatal("no push failed: server 2 missed nothing, the catch-up was not exercised")
	}
	for server := range procs {
		sum := 0
		for i, k := range accounts {
			sibs, err := c.GetReplica(ctx, server, k)
			if err != nil {
				t.Fatal(err)
			}
			want := strconv.Itoa(initial + net[i])
			if len(sibs) != 1 || string(sibs[0].Value) != want {
				t.Fatalf("server %d holds %s = %v, want the single value %s (initial plus every committed transfer)", server, k, sibs, want)
			}
			n, _ := strconv.Atoi(want)
			sum += n
		}
		if sum != len(accounts)*initial {
			t.Fatalf("server %d: total %d, want %d", server, sum, len(accounts)*initial)
		}
	}
	t.Logf("%d transfers committed, %d conflicts; every replica agrees after the outboxes drained (%d pushes retried after failing, counted since each primary started)",
		committed, conflicts, failed)
	for _, p := range procs {
		if err := p.Stop(5 * time.Second); err != nil {
			t.Fatal(err)
		}
	}
}
