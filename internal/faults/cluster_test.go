package faults

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/weft-db/weft/internal/store/postgres/pgtest"
)

// TestClusterKillEachRole is the short version of `weft faults --cluster`:
// a cluster of real processes on loopback (2 gatekeeper slots + 1 backup,
// 2 shard slots + 1 backup, 3 Kronos and 3 coordinator replicas) runs
// list-append and bank while the nemesis kills with SIGKILL, in turn, a
// gatekeeper slot holder, a shard slot holder, the Kronos leader and the
// coordinator leader, restarting each after its hold. It must find no
// anomaly and no lost write, every client must make progress after
// healing, every kill must have recovered (its recovery times recorded),
// and no process may outlive the run. Meanwhile the workloads' placement
// units move between the shards (the mover, ClusterConfig.MoveEvery).
func TestClusterKillEachRole(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster of real processes for ~40s")
	}
	pgtest.Shared(t) // skips where PostgreSQL cannot be had, as weft cluster up would fail
	cfg := DefaultConfig()
	cc := DefaultClusterConfig()
	cc.MoveEvery = 150 * time.Millisecond // the workloads' units move between the shards throughout
	cfg.Cluster = &cc
	cfg.Bin, cfg.OutDir, cfg.Seed, cfg.Clients = weftBin(t), t.TempDir(), 3, 2
	cfg.Workloads = []string{WorkloadListAppend, WorkloadBank}
	cfg.Nemeses = slices.Clone(ClusterKills)
	cfg.Duration, cfg.HealedPhase = 30*time.Second, 8*time.Second
	cfg.Timing = Timing{FaultMin: 1500 * time.Millisecond, FaultMax: 2 * time.Second,
		QuietMin: time.Second, QuietMax: 1500 * time.Millisecond}
	cfg.OpTimeout = 2 * time.Second
	cfg.Adya = "none"
	rep, err := Run(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", rep)
	if !rep.Valid {
		b, _ := os.ReadFile(filepath.Join(cfg.OutDir, "anomalies.txt"))
		t.Fatalf("the cluster run is not valid:\n%s", b)
	}
	if rep.MoveStats == nil || rep.MoveStats.KeyMoves < 5 {
		t.Errorf("the workloads' units hardly moved: %+v", rep.MoveStats)
	}
	for _, k := range ClusterKills {
		if rep.Faults[string(k)] < 1 {
			t.Errorf("no %s in the run: faults %v", k, rep.Faults)
		}
	}
	killed := map[string]bool{}
	for _, r := range rep.Recoveries {
		if !r.Recovered() || r.ClientsMs < 0 || r.ConfigMs < 0 {
			t.Errorf("a kill did not recover: %v", r)
		}
		killed[r.Role+"/"+r.Victim] = true
	}
	for _, want := range []string{"kronos/leader", "coord/leader"} {
		if !killed[want] {
			t.Errorf("no kill of the %s: %v", want, killed)
		}
	}
	if len(rep.RecoveryByRole) != len(ClusterKills) {
		t.Errorf("recovery summary for %d kinds, want %d: %+v", len(rep.RecoveryByRole), len(ClusterKills), rep.RecoveryByRole)
	}
	for _, s := range rep.RecoveryByRole {
		if s.Faults < 1 || s.Recovered != s.Faults || s.Clients.Max < s.Clients.Min || s.Config.Max < s.Config.Min {
			t.Errorf("role summary %+v", s)
		}
	}
	if rep.ServerStarts < len(ClusterKills) {
		t.Errorf("%d process restarts for %d kills", rep.ServerStarts, len(rep.Recoveries))
	}
	for _, w := range rep.Workloads {
		if w.OK < 50 || w.LiveClients != w.Clients || w.Lost > 0 {
			t.Errorf("%s: ok %d, live %d/%d, lost %d", w.Name, w.OK, w.LiveClients, w.Clients, w.Lost)
		}
	}
	assertNoStrays(t, filepath.Join(cfg.OutDir, "cluster", "cluster.json"))
	plantLostAppend(t, filepath.Join(cfg.OutDir, WorkloadListAppend+".jsonl"))
}

// assertNoStrays fails when a process of cluster.json (the launcher's or
// a restart's) still runs.
func assertNoStrays(t *testing.T, path string) {
	t.Helper()
	procs, err := loadMembers(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	if len(procs) == 0 {
		t.Fatal("cluster.json lists no process")
	}
	for _, m := range procs {
		if m.Alive() {
			t.Errorf("%s (pid %d) outlived the run", m.Name, m.Pid)
		}
	}
}

func TestClusterConfigValidate(t *testing.T) {
	good := DefaultConfig()
	cc := DefaultClusterConfig()
	good.OutDir, good.Bin, good.Cluster, good.Nemeses = "out", "weft", &cc, slices.Clone(AllClusterNemeses)
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, mut := range map[string]func(*Config, *ClusterConfig){
		"server nemesis":   func(c *Config, _ *ClusterConfig) { c.Nemeses = []FaultKind{FaultPartition} },
		"no gatekeeper":    func(_ *Config, cc *ClusterConfig) { cc.Gatekeepers = 0 },
		"no shard":         func(_ *Config, cc *ClusterConfig) { cc.Shards = 0 },
		"eight kronos":     func(_ *Config, cc *ClusterConfig) { cc.Kronos = 8 },
		"negative backups": func(_ *Config, cc *ClusterConfig) { cc.BackupShards = -1 },
		"negative timeout": func(_ *Config, cc *ClusterConfig) { cc.RecoveryTimeout = -time.Second },
		"negative moves":   func(_ *Config, cc *ClusterConfig) { cc.MoveEvery = -time.Millisecond },
	} {
		c, cc := good, *good.Cluster
		c.Cluster = &cc
		mut(&c, &cc)
		if err := c.Validate(); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: Validate = %v, want ErrInvalid", name, err)
		}
	}
	single := good
	single.Cluster = nil
	if err := single.Validate(); !errors.Is(err, ErrInvalid) {
		t.Errorf("cluster nemeses without a cluster: Validate = %v, want ErrInvalid", err)
	}
	if n, err := ParseClusterNemeses("kill-shard, kill-coord"); err != nil || !reflect.DeepEqual(n, []FaultKind{FaultKillShard, FaultKillCoord}) {
		t.Fatalf("ParseClusterNemeses = %v, %v", n, err)
	}
	if n, err := ParseClusterNemeses("all"); err != nil || !reflect.DeepEqual(n, AllClusterNemeses) {
		t.Fatalf("ParseClusterNemeses(all) = %v, %v", n, err)
	}
	if n, err := ParseClusterNemeses("kills"); err != nil || !reflect.DeepEqual(n, ClusterKills) {
		t.Fatalf("ParseClusterNemeses(kills) = %v, %v", n, err)
	}
	if _, err := ParseClusterNemeses("kill"); !errors.Is(err, ErrInvalid) {
		t.Fatalf("ParseClusterNemeses(kill) = %v", err)
	}
	for _, k := range AllClusterNemeses {
		if r := roleOf(k); !slices.Contains([]string{roleGatekeeper, roleShard, roleKronos, roleCoord}, r) {
			t.Errorf("roleOf(%s) = %q", k, r)
		}
		if isPause(k) == slices.Contains(ClusterKills, k) {
			t.Errorf("isPause(%s) = %v", k, isPause(k))
		}
	}
}

func TestSummarizeRecoveries(t *testing.T) {
	recs := []Recovery{
		{Fault: FaultKillShard, Role: roleShard, ClientsMs: 900, ConfigMs: 800},
		{Fault: FaultPauseShard, Role: roleShard, ClientsMs: 4000, ConfigMs: 4100},
		{Fault: FaultKillGatekeeper, Role: roleGatekeeper, ClientsMs: 1500, ConfigMs: 1200},
		{Fault: FaultKillShard, Role: roleShard, ClientsMs: 1300, ConfigMs: 1100},
		{Fault: FaultKillShard, Role: roleShard, ClientsMs: 1100, ConfigMs: 1000},
		{Fault: FaultKillShard, Role: roleShard, ClientsMs: -1, ConfigMs: 700, Why: "a client"},
	}
	got := summarizeRecoveries(recs)
	want := []RecoverySummary{
		{Fault: FaultKillGatekeeper, Role: roleGatekeeper, Faults: 1, Recovered: 1, Clients: Spread{1500, 1500, 1500}, Config: Spread{1200, 1200, 1200}},
		{Fault: FaultKillShard, Role: roleShard, Faults: 4, Recovered: 3, Clients: Spread{900, 1100, 1300}, Config: Spread{800, 1000, 1100}},
		{Fault: FaultPauseShard, Role: roleShard, Faults: 1, Recovered: 1, Clients: Spread{4000, 4000, 4000}, Config: Spread{4100, 4100, 4100}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("summary\n got %+v\nwant %+v", got, want)
	}
	if s := spreadOf([]int64{4, 1, 3, 2}); s != (Spread{1, 2, 4}) {
		t.Fatalf("spread of an even count = %v, want the lower middle as the median", s)
	}
	if recs[5].Recovered() || !recs[0].Recovered() {
		t.Fatal("Recovered")
	}
}

func TestRecoveryMark(t *testing.T) {
	h := &harness{start: time.Now(), clients: 2}
	h.sawOK(0, 0, 1) // no kill marked: ignored
	m := h.markKill()
	h.sawOK(0, m.at-1, m.at+5) // invoked before the kill: not a recovery
	if _, ok := m.recovered(); ok {
		t.Fatal("recovered before any operation invoked after the kill")
	}
	h.sawOK(0, m.at, m.at+int64(30*time.Millisecond))
	h.sawOK(0, m.at, m.at+int64(90*time.Millisecond)) // only the first counts
	if _, ok := m.recovered(); ok {
		t.Fatal("recovered with client 1 still failing")
	}
	h.sawOK(1, m.at+1, m.at+int64(70*time.Millisecond))
	h.sawOK(-1, m.at+1, m.at+int64(80*time.Millisecond)) // the final reader is not measured
	if d, ok := m.recovered(); !ok || d != 70*time.Millisecond {
		t.Fatalf("recovered = %v, %v; want 70ms, true", d, ok)
	}
}

func TestAddrBook(t *testing.T) {
	b := newAddrBook("a", "b", "c")
	if b.get(4) != "b" || b.next("a") != "b" || b.next("c") != "a" || b.next("gone") != "a" || !b.has("c") || b.has("gone") {
		t.Fatalf("get/next on %v", b.all())
	}
	b.set(nil)
	if len(b.all()) != 3 {
		t.Fatal("an empty configuration emptied the book")
	}
	b.set([]string{"d"})
	if b.next("a") != "d" || b.next("d") != "d" {
		t.Fatalf("after set: %v", b.all())
	}
}
