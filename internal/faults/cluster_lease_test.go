package faults

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/weft-db/weft/internal/store/postgres/pgtest"
)

// leaseRunConfig is the short lease run: a proxied cluster with gks
// gatekeeper slots and 2 shard slots, a backup for every slot, list-append
// through every gatekeeper while the nemesis cuts every slot holder off
// from the coordinators (clients still reach them) and one gatekeeper from
// one shard, 3.5s each (5s for the planted run).
func leaseRunConfig(t *testing.T, gks int) Config {
	cfg := DefaultConfig()
	cc := DefaultClusterConfig()
	cc.Gatekeepers, cc.Shards, cc.BackupGatekeepers, cc.BackupShards = gks, 2, gks, 2
	cc.Proxied = true
	cc.RecoveryTimeout = 30 * time.Second
	cfg.Cluster = &cc
	cfg.Bin, cfg.OutDir, cfg.Seed = weftBin(t), t.TempDir(), 5
	if d := os.Getenv("WEFT_FAULTS_OUT"); d != "" { // keep the run's files (logs, histories) for a look
		cfg.OutDir, cfg.KeepData = filepath.Join(d, t.Name()), true
	}
	cfg.Workloads = []string{WorkloadListAppend}
	cfg.Nemeses = []FaultKind{FaultIsolateHolders, FaultIsolateGatekeeperShard}
	cfg.Duration, cfg.HealedPhase = 18*time.Second, 5*time.Second
	cfg.Timing = Timing{FaultMin: 3500 * time.Millisecond, FaultMax: 3500 * time.Millisecond,
		QuietMin: 500 * time.Millisecond, QuietMax: time.Second}
	cfg.OpTimeout = 2 * time.Second
	cfg.Adya = "none"
	// Single-operation transactions on two keys by six clients: a read
	// through a cut-off gatekeeper right after an append acknowledged
	// through the new epoch's is likely, should the cut-off one answer.
	cfg.Clients, cfg.Sizes.TxnMopsMax, cfg.Sizes.ListKeys = 6, 1, 2
	return cfg
}

// gkShardServesWithin bounds the recovery from one gatekeeper cut from one
// shard: the failure-detection time (the gatekeeper's 500ms bound, a
// heartbeat, the condemned member's lease + drift, 600ms) plus an epoch
// switch, with a generous margin for a loaded machine: this is a liveness
// check, not a benchmark.
const gkShardServesWithin = 15 * time.Second

// TestClusterLeasePartitions is the short version of `weft faults --cluster
// --proxied --cluster-nemeses partitions`, with 1 and with 2 gatekeeper
// slots: (a) every slot holder — gatekeepers and shards together — cut off
// from the three coordinators while the clients keep reading and writing
// through every gatekeeper; (b) one gatekeeper cut from one shard. The
// list-append checker must find no anomaly and no lost write; the isolated
// members must have refused calls once their leases lapsed (counted); and
// after (b) every client must have succeeded again within
// gkShardServesWithin of the cut, while it still holds.
func TestClusterLeasePartitions(t *testing.T) {
	if testing.Short() {
		t.Skip("starts clusters of real processes for ~30s each")
	}
	pgtest.Shared(t)
	for _, gks := range []int{1, 2} {
		t.Run(fmt.Sprintf("%d-gatekeepers", gks), func(t *testing.T) {
			cfg := leaseRunConfig(t, gks)
			rep, err := Run(t.Context(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("\n%s", rep)
			if !rep.Valid {
				b, _ := os.ReadFile(filepath.Join(cfg.OutDir, "anomalies.txt"))
				t.Fatalf("the run is not valid:\n%s", b)
			}
			for _, k := range cfg.Nemeses {
				if rep.Faults[string(k)] < 1 {
					t.Errorf("no %s in the run: %v", k, rep.Faults)
				}
			}
			refused := int64(0)
			for _, n := range rep.LeaseRefusals {
				refused += n
			}
			if refused == 0 {
				t.Errorf("the isolated members refused nothing: %v", rep.LeaseRefusals)
			}
			for _, r := range rep.Recoveries {
				if !r.Recovered() {
					t.Errorf("%v did not recover", r)
				}
				if r.Fault == FaultIsolateGatekeeperShard && time.Duration(r.ClientsMs)*time.Millisecond > gkShardServesWithin {
					t.Errorf("%v: the clients served again only after %dms", r, r.ClientsMs)
				}
			}
			for _, w := range rep.Workloads {
				if w.OK < 20 || w.Lost > 0 || w.LiveClients != w.Clients {
					t.Errorf("%s: ok %d, lost %d, live %d/%d", w.Name, w.OK, w.Lost, w.LiveClients, w.Clients)
				}
			}
			assertNoStrays(t, filepath.Join(cfg.OutDir, "cluster", "cluster.json"))
		})
	}
}

// TestClusterLeasePlantedIgnoreLease shows partition (a) fails without
// leases. Half the clients are pinned to the gatekeeper they start on (as a
// client given one address is), so they keep calling the cut-off gatekeeper
// while the others write through the new epoch's. With leases the cut-off
// members refuse, and the checker finds nothing (the pinned clients make no
// progress, which is all the run's liveness check reports); with members
// that serve on after their leases lapsed (--plant-ignore-lease) the
// pinned clients read the old epoch's state after appends acknowledged
// through the new one, and the list-append checker must find it. Opt-in
// (WEFT_FAULTS_PLANTED=1): two cluster runs of ~25s each.
func TestClusterLeasePlantedIgnoreLease(t *testing.T) {
	if os.Getenv("WEFT_FAULTS_PLANTED") != "1" {
		t.Skip("set WEFT_FAULTS_PLANTED=1 (two cluster runs of ~25s)")
	}
	pgtest.Shared(t)
	for _, planted := range []bool{false, true} {
		t.Run(map[bool]string{false: "leases", true: "planted-ignore-lease"}[planted], func(t *testing.T) {
			cfg := leaseRunConfig(t, 1)
			cfg.Cluster.PlantIgnoreLease = planted
			cfg.Nemeses = []FaultKind{FaultIsolateHolders}
			cfg.Timing.FaultMin, cfg.Timing.FaultMax = 5*time.Second, 5*time.Second
			cfg.Duration, cfg.Cluster.PinnedClients, cfg.Cluster.RecoveryTimeout = 16*time.Second, 3, 6*time.Second
			rep, err := Run(t.Context(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("\n%s", rep)
			anomalies := 0
			for _, w := range rep.Workloads {
				for _, c := range w.Checks {
					anomalies += c.Anomalies
				}
			}
			b, _ := os.ReadFile(filepath.Join(cfg.OutDir, "anomalies.txt"))
			switch {
			case planted && anomalies == 0:
				t.Fatal("members ignoring their leases' expiry were not caught: the checkers found no anomaly")
			case !planted && anomalies > 0:
				t.Fatalf("with leases, the checkers found %d anomalies:\n%s", anomalies, b)
			case planted:
				t.Logf("caught: %d anomalies:\n%.2000s", anomalies, b)
			}
		})
	}
}
