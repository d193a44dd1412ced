package scale

import (
	"context"
	"encoding/json"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weft-db/weft/internal/bench/tao"
	"github.com/weft-db/weft/internal/launch"
	"github.com/weft-db/weft/internal/store/postgres/pgtest"
	"github.com/weft-db/weft/internal/testproc"
)

// The end-to-end scale test starts PostgreSQL through `weft cluster up`;
// pgtest tells whether it can be had here (and stops its own server after
// the package's tests).
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// A tree's CPU is its root's and every descendant's, and nothing else's.
func TestProcTreeCPU(t *testing.T) {
	tab := procTable{
		1:  {Pid: 1, PPid: 0, Ticks: 1000},
		10: {Pid: 10, PPid: 1, Ticks: 100}, // root of the tree measured
		11: {Pid: 11, PPid: 10, Ticks: 20},
		12: {Pid: 12, PPid: 11, Ticks: 3},
		13: {Pid: 13, PPid: 10, Ticks: 50},
		20: {Pid: 20, PPid: 1, Ticks: 7}, // a sibling: not counted
	}
	if got, want := tab.treeCPU(10), 173*time.Second/clockTicksPerSecond; got != want {
		t.Errorf("treeCPU(10) = %v, want %v", got, want)
	}
	if got := tab.treeCPU(99); got != 0 {
		t.Errorf("treeCPU of a missing pid = %v, want 0", got)
	}
	if n := len(tab.tree(1)); n != len(tab) {
		t.Errorf("tree(1) has %d members, want all %d", n, len(tab))
	}
}

// The real /proc: this process is in the table with its parent.
func TestReadProcTableSelf(t *testing.T) {
	tab, err := readProcTable()
	if err != nil {
		t.Skipf("no /proc here: %v", err)
	}
	st, ok := tab[os.Getpid()]
	if !ok || st.PPid != os.Getppid() || st.Start <= 0 {
		t.Fatalf("own entry %+v (present %v), want ppid %d and a start time", st, ok, os.Getppid())
	}
	if again, ok := launch.ReadStat(os.Getpid()); !ok || again.Start != st.Start {
		t.Errorf("launch.ReadStat: %+v %v, want start %d", again, ok, st.Start)
	}
}

func TestScaleModelPredict(t *testing.T) {
	costs := map[string]float64{ // marginal CPU seconds per operation
		roleGatekeeper: 40e-6, roleShard: 30e-6, roleKronos: 2e-6, rolePostgres: 1e-6, roleCoord: 0, roleClient: 20e-6,
	}
	for _, tc := range []struct {
		g, s       int
		cores      float64
		idle       map[string]float64
		want       float64
		bottleneck string
	}{
		// 1 gatekeeper × 8 cores / 40 µs = 200k; 1 shard: 266.7k.
		{1, 1, 8, nil, 200_000, roleGatekeeper},
		// 4 gatekeepers: 800k; 1 shard: 266.7k.
		{4, 1, 8, nil, 8 / 30e-6, roleShard},
		// Many of both: the single Kronos (4M) binds before PostgreSQL (8M).
		{64, 64, 8, nil, 8 / 2e-6, roleKronos},
		{2, 2, 1, nil, 2 / 40e-6, roleGatekeeper},
		// Idle load takes cores away: a gatekeeper idling on 2 of 8 cores
		// leaves 6 for operations (150k); a shard idling on 7 leaves 1 (33k).
		{1, 1, 8, map[string]float64{roleGatekeeper: 2}, 150_000, roleGatekeeper},
		{1, 1, 8, map[string]float64{roleShard: 7}, 1 / 30e-6, roleShard},
		// A role whose idle load fills its machine bounds at zero.
		{1, 1, 8, map[string]float64{rolePostgres: 9}, 0, rolePostgres},
	} {
		p := predict(costs, tc.idle, tc.g, tc.s, tc.cores)
		if math.Abs(p.OpsPerSec-tc.want) > 1e-6*tc.want || p.Bottleneck != tc.bottleneck {
			t.Errorf("%d×%d, %g cores, idle %v: %.1f ops/s by %s, want %.1f by %s", tc.g, tc.s, tc.cores, tc.idle,
				p.OpsPerSec, p.Bottleneck, tc.want, tc.bottleneck)
		}
		if _, ok := p.Bounds[roleCoord]; ok {
			t.Errorf("a role without cost got a bound: %v", p.Bounds)
		}
	}
	if p := predict(map[string]float64{}, nil, 1, 1, 8); !math.IsInf(p.OpsPerSec, 1) || p.Bottleneck != "" {
		t.Errorf("no costs: %+v, want +Inf and no bottleneck", p)
	}
	// 2 CPU seconds over a 10 s window, 0.05 of it idle per second: 1.5 s of
	// work over 1000 operations; idle above the total clamps at zero.
	c := marginalCosts(map[string]float64{roleShard: 2, roleKronos: 0.5}, map[string]float64{roleShard: 0.05, roleKronos: 1}, 10, 1000)
	if math.Abs(c[roleShard]-0.0015) > 1e-12 || c[roleKronos] != 0 {
		t.Errorf("marginalCosts: %v", c)
	}
	if g := marginalCosts(map[string]float64{roleShard: 2}, nil, 10, 1000); g[roleShard] != 0.002 {
		t.Errorf("gross costs: %v", g)
	}
}

func TestScaleExtrapolate(t *testing.T) {
	pts := []Point{
		{Gatekeepers: 1, Shards: 8, Mix: "tao", Ops: 10, MarginalCostUSPerOp: map[string]float64{roleGatekeeper: 100}},
		{Gatekeepers: 2, Shards: 4, Mix: "tao", Ops: 10, MarginalCostUSPerOp: map[string]float64{roleGatekeeper: 50, roleShard: 10},
			IdleCoresPerProcess: map[string]float64{roleGatekeeper: 1}},
		{Gatekeepers: 4, Shards: 1, Mix: "tao", Error: "failed", MarginalCostUSPerOp: map[string]float64{roleGatekeeper: 1}},
	}
	ex := extrapolate(pts, 8)
	if len(ex) != len(extrapolationGatekeepers)*len(extrapolationShards) {
		t.Fatalf("%d predictions for one mix, want %d", len(ex), len(extrapolationGatekeepers)*len(extrapolationShards))
	}
	for _, e := range ex {
		if e.From != (Shape{2, 4}) {
			t.Fatalf("extrapolated from %v, want the largest shape without error, 2×4", e.From)
		}
		want := math.Min(float64(e.Gatekeepers)*(8-1)/50e-6, float64(e.Shards)*8/10e-6)
		if math.Abs(e.OpsPerSec-want) > 1 {
			t.Errorf("%d×%d: %.0f, want %.0f", e.Gatekeepers, e.Shards, e.OpsPerSec, want)
		}
	}
}

func TestScaleMixes(t *testing.T) {
	if m, err := scaleMix("get_node"); err != nil || m != tao.GetNodeMix() {
		t.Errorf("get_node mix: %+v %v", m, err)
	}
	want, _ := tao.NewMix("tao")
	if m, err := scaleMix("tao"); err != nil || m != want {
		t.Errorf("tao mix: %+v %v", m, err)
	}
	if _, err := scaleMix("reads"); err == nil {
		t.Error("an unknown scale mix was accepted")
	}
}

func TestParseScaleShape(t *testing.T) {
	if sh, err := ParseShape(" 2X4 "); err != nil || sh != (Shape{2, 4}) {
		t.Errorf("2X4: %v %v", sh, err)
	}
	for _, bad := range []string{"", "2", "2x", "x4", "0x1", "1x-1", "axb", "2x4x8"} {
		if _, err := ParseShape(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestScaleOptionsShapes(t *testing.T) {
	o := Options{}
	o.setDefaults()
	if len(o.Shapes) != 12 || o.Shapes[0] != (Shape{1, 1}) || o.Shapes[11] != (Shape{4, 8}) {
		t.Errorf("default grid: %v", o.Shapes)
	}
	q := Options{Quick: true}
	q.setDefaults()
	if len(q.Shapes) != 2 || q.Vertices != 5_000 || q.Duration != 2*time.Second {
		t.Errorf("quick: %v, %d vertices, %v", q.Shapes, q.Vertices, q.Duration)
	}
	sub := Options{Gatekeepers: []int{2}, Shards: []int{1, 8}}
	sub.setDefaults()
	if len(sub.Shapes) != 2 || sub.Shapes[1] != (Shape{2, 8}) {
		t.Errorf("subset grid: %v", sub.Shapes)
	}
}

// One --quick-sized shape end to end against a real cluster of processes
// (`weft cluster up`: Kronos, coordinator, PostgreSQL, 2 shards, 2
// gatekeepers): the report is consistent and no process is left afterwards.
func TestScaleClusterEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	pgtest.Shared(t) // skips where PostgreSQL cannot be had, as the launcher would fail
	bin := testproc.Build(t, "github.com/weft-db/weft/cmd/weft")
	t.Setenv("TMPDIR", t.TempDir()) // the cluster's directory, kept for the checks below
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := Run(ctx, Options{Binary: bin, Quick: true, Shapes: []Shape{{2, 2}}, Vertices: 2000,
		Duration: time.Second, Clients: 4, KeepDirs: true, Out: out})
	if err != nil {
		t.Fatal(err)
	}
	pts := res.Results.(*scaleResults).Points
	if len(pts) != 2 || pts[0].Mix != "tao" || pts[1].Mix != "get_node" {
		t.Fatalf("points: %+v", pts)
	}
	for _, p := range pts {
		checkScalePoint(t, p)
	}
	if n := pts[1].PerOp["get_node"].Count; n != pts[1].Ops {
		t.Errorf("get_node mix: %d get_node of %d operations", n, pts[1].Ops)
	}
	if !pts[0].EdgesConsistent {
		t.Errorf("tao mix: %d edges reported, %d expected", pts[0].EdgesReported, pts[0].EdgesExpected)
	}
	checkStopped(t, pts[0].Dir)
	checkScaleFiles(t, out, res.Plots)
}

func checkScalePoint(t *testing.T, p Point) {
	t.Helper()
	if p.Error != "" || p.Ops <= 0 || p.OpsPerSec <= 0 || p.Errors != 0 {
		t.Errorf("%s: error %q, %d ops, %.0f ops/s, %d errors", p.Mix, p.Error, p.Ops, p.OpsPerSec, p.Errors)
	}
	for _, r := range []string{roleGatekeeper, roleShard, roleClient} {
		if p.CPUSeconds[r] <= 0 {
			t.Errorf("%s: no CPU for %s: %v", p.Mix, r, p.CPUSeconds)
		}
	}
	for _, r := range []string{roleKronos, rolePostgres, roleCoord} {
		if _, ok := p.CPUSeconds[r]; !ok || p.CPUSeconds[r] < 0 {
			t.Errorf("%s: CPU of %s missing or negative: %v", p.Mix, r, p.CPUSeconds)
		}
	}
	for _, name := range []string{"gatekeeper-1", "gatekeeper-2", "shard-1", "shard-2", "postgres-1", "kronos-1", "coord-1"} {
		if _, ok := p.ProcCPUSeconds[name]; !ok {
			t.Errorf("%s: no CPU figure for process %s: %v", p.Mix, name, p.ProcCPUSeconds)
		}
	}
	if want := float64(p.Ops) / p.CPUSecondsTotal; math.Abs(p.OpsPerCPUSecond-want) > 0.1+1e-3*want {
		t.Errorf("%s: %.1f ops per CPU second, want ops/CPU = %.1f", p.Mix, p.OpsPerCPUSecond, want)
	}
	if p.CPUSecondsCluster >= p.CPUSecondsTotal || p.CoresUsed <= 0 {
		t.Errorf("%s: cluster CPU %.3f, total %.3f, cores %.3f", p.Mix, p.CPUSecondsCluster, p.CPUSecondsTotal, p.CoresUsed)
	}
	if f := p.KronosOrderedFraction; f < 0 || f > 1 || p.KronosCallsPerOp < 0 || p.KronosEventsPerOp < 0 {
		t.Errorf("%s: Kronos fractions out of range: ordered %v, calls/op %v, events/op %v", p.Mix, f, p.KronosCallsPerOp, p.KronosEventsPerOp)
	}
	if p.Programs < uint64(p.ReadsUS.Count) {
		t.Errorf("%s: gatekeepers counted %d programs for %d reads", p.Mix, p.Programs, p.ReadsUS.Count)
	}
	sum := 0.0
	for _, o := range p.PerOp {
		sum += o.Fraction
	}
	if math.Abs(sum-1) > 1e-3 {
		t.Errorf("%s: operation fractions sum to %v", p.Mix, sum)
	}
	if _, ok := p.IdleCoresPerProcess[roleGatekeeper]; !ok {
		t.Errorf("%s: no idle load measured for the gatekeepers: %v", p.Mix, p.IdleCoresPerProcess)
	}
	for r, m := range p.MarginalCostUSPerOp {
		if m < 0 || m > p.CostUSPerOp[r] {
			t.Errorf("%s: %s marginal cost %v µs/op outside [0, %v]", p.Mix, r, m, p.CostUSPerOp[r])
		}
	}
	least := math.Inf(1)
	for _, b := range p.Model.Bounds {
		least = math.Min(least, b)
	}
	if p.Model.OpsPerSec <= 0 || p.Model.OpsPerSec != least || p.Model.Bounds[p.Model.Bottleneck] != least {
		t.Errorf("%s: model %+v: not the smallest bound", p.Mix, p.Model)
	}
}

// checkStopped: no process of cluster.json, nor any process started on the
// cluster's directory (PostgreSQL's server and backends), is alive.
func checkStopped(t *testing.T, dir string) {
	t.Helper()
	if dir == "" {
		t.Fatal("the cluster's directory was not kept")
	}
	st, err := launch.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	procs := st.Procs
	if len(procs) < 7 {
		t.Fatalf("cluster.json lists %d processes, want at least 7", len(procs))
	}
	for _, p := range procs {
		if p.Alive() {
			t.Errorf("%s (pid %d) still running after the bench", p.Name, p.Pid)
		}
	}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if st, ok := launch.ReadStat(pid); ok && st.Zombie() {
			continue
		}
		if err == nil && strings.Contains(string(b), dir) {
			t.Errorf("pid %d still runs on the cluster's directory: %q", pid, strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
}

func checkScaleFiles(t *testing.T, out string, plots []string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(out, "scale-quick.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Benchmark string `json:"benchmark"`
		Results   struct {
			Points []json.RawMessage `json:"points"`
		} `json:"results"`
	}
	if err := json.Unmarshal(b, &doc); err != nil || doc.Benchmark != "scale/scale-quick" || len(doc.Results.Points) != 2 {
		t.Fatalf("scale-quick.json: %s, %d points, %v", doc.Benchmark, len(doc.Results.Points), err)
	}
	if len(plots) < 3 {
		t.Fatalf("plots: %v", plots)
	}
	for _, name := range plots {
		f, err := os.Open(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		_, err = png.Decode(f)
		f.Close()
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
