package monitor

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	kvclient "github.com/weft-db/weft/client/kv"
	"github.com/weft-db/weft/internal/faultproxy"
)

// weftBin is $WEFT_BIN, or a fresh build of ./cmd/weft.
func weftBin(t *testing.T) string {
	t.Helper()
	if b := os.Getenv("WEFT_BIN"); b != "" {
		return b
	}
	out := filepath.Join(t.TempDir(), "weft")
	cmd := exec.Command("go", "build", "-o", out, "github.com/weft-db/weft/cmd/weft")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	return out
}

// TestKVProcessesKill9AndPartitionLoseNoAckedWrite (issue 7): three `weft
// kv serve` processes (N = 3, fsync on), each behind a fault proxy; four
// writers put unique keys with W = 2 while server 0 is killed with SIGKILL
// and restarted, then server 1 is partitioned from everyone and healed.
// Afterwards a reader with R = 2 (W + R > N) finds every acknowledged
// write with its value.
func TestKVProcessesKill9AndPartitionLoseNoAckedWrite(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes") // not counted as a pass: -short only
	}
	bin := weftBin(t)
	procs, err := StartKVProcsProxied(bin, t.TempDir(), 3, "--n", "3", "--r", "2", "--w", "2")
	if err != nil {
		t.Fatal(err)
	}
	defer procs.Stop()

	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	acked := map[string]bool{}
	failed := 0
	var wg sync.WaitGroup
	for g := range 4 {
		c, err := kvclient.Dial(context.Background(), procs.Addrs, kvclient.Options{W: 2, R: 2, RoundTimeout: 150 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ctx.Err() == nil; i++ {
				key := fmt.Sprintf("w%d-%d", g, i)
				_, err := c.Put(ctx, key, []byte(key), nil)
				mu.Lock()
				if err == nil {
					acked[key] = true
				} else if ctx.Err() == nil {
					failed++
				}
				mu.Unlock()
			}
		}()
	}
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(acked) }
	progress := func(what string) {
		t.Helper()
		n := count()
		deadline := time.Now().Add(20 * time.Second)
		for count() < n+50 {
			if time.Now().After(deadline) {
				t.Fatalf("no progress %s: %d acknowledged", what, count())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	progress("at the start")
	procs.Kill(0) // kill -9
	progress("with server 0 killed")
	if err := procs.Start(0); err != nil {
		t.Fatal(err)
	}
	progress("after server 0 restarted")
	procs.Proxies[1].Partition(faultproxy.Both)
	progress("with server 1 partitioned")
	procs.Proxies[1].Heal()
	progress("after the partition healed")
	cancel()
	wg.Wait()

	r, err := kvclient.Dial(context.Background(), procs.Addrs, kvclient.Options{R: 2, W: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	lost := 0
	for key := range acked {
		g, err := r.Get(context.Background(), key)
		if err != nil {
			t.Fatalf("read %s: %v", key, err)
		}
		if len(g.Siblings) != 1 || string(g.Siblings[0].Value) != key {
			lost++
			if lost <= 5 {
				t.Errorf("acknowledged write %s reads back as %v", key, g.Siblings)
			}
		}
	}
	t.Logf("%d acknowledged writes checked, %d lost; %d writes failed (not acknowledged)", len(acked), lost, failed)
	if lost > 0 {
		t.Fatalf("%d of %d acknowledged W=2 writes lost", lost, len(acked))
	}
}

// TestRunMonitorInterleaved: a small `weft bench monitor` (N = 2, 50% PUTs,
// two rounds, 1 ms + 1 ms delays at the client) measures every mode in
// every round, on its own ring with its own quorum, and reports the
// benefit, the overhead, the network-only benefit and the machine's CPU
// shares; the files are written.
func TestRunMonitorInterleaved(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes") // not counted as a pass: -short only
	}
	out := t.TempDir()
	o := Options{Bin: weftBin(t), Out: out, Dir: t.TempDir(), Ns: []int{2}, PutPcts: []int{50}, Duration: 300 * time.Millisecond,
		Repeat: 2, NetDelay: time.Millisecond, NetJitter: time.Millisecond, DelayAt: "client"}
	r, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	res := r.Results.(Results)
	want := map[string]string{"sequential": "N2R1W2", "eventual": "N2R1W1", "eventual+monitor": "N2R1W1"}
	for _, c := range res.Cells {
		if q, ok := want[c.Mode]; !ok || c.Quorum != q || c.N != 2 || c.PutPct != 50 {
			t.Errorf("cell %s %s N%d %d%%: unexpected", c.Mode, c.Quorum, c.N, c.PutPct)
			continue
		}
		delete(want, c.Mode)
		if len(c.OpsPerSecRuns) != 2 || c.Ops == 0 || c.OpsPerSec <= 0 {
			t.Errorf("%s: runs %v, ops %d, ops/s %v; want two runs with operations", c.Mode, c.OpsPerSecRuns, c.Ops, c.OpsPerSec)
		}
		if c.Mode == "eventual+monitor" && c.Candidates == 0 {
			t.Errorf("eventual+monitor: no candidate reached the monitor")
		}
		if c.Mode != "eventual+monitor" && c.Candidates != 0 {
			t.Errorf("%s: %d candidates without monitors", c.Mode, c.Candidates)
		}
	}
	if len(want) != 0 {
		t.Errorf("modes not measured: %v", want)
	}
	if _, ok := res.Benefit["N2"]["50%"]; !ok {
		t.Errorf("no benefit: %v", res.Benefit)
	}
	if _, ok := res.Overhead["N2"]["50%"]; !ok {
		t.Errorf("no overhead: %v", res.Overhead)
	}
	if b := res.NetBenefit["N2"]["50%"]; b < 0.05 || b > 0.12 {
		t.Errorf("network-only benefit %v, want about 7/83", b)
	}
	if r.Env.CPUBusy <= 0 {
		t.Errorf("CPU busy share %v not recorded", r.Env.CPUBusy)
	}
	for _, f := range []string{"monitor.json", "monitor_throughput_n2.png"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
}
