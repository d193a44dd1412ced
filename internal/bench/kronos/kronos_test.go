package kronos

import (
	"context"
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/weft-db/weft/internal/bench"
	"github.com/weft-db/weft/internal/kronos"
)

func TestParseOnly(t *testing.T) {
	got, err := ParseOnly(" gc,query,gc, ")
	if err != nil || !slices.Equal(got, []string{"gc", "query"}) {
		t.Errorf("ParseOnly = %v, %v", got, err)
	}
	if got, err := ParseOnly(""); err != nil || got != nil {
		t.Errorf("ParseOnly(\"\") = %v, %v; want all (nil)", got, err)
	}
	if _, err := ParseOnly("query,latency"); err == nil {
		t.Error("ParseOnly accepted an unknown name")
	}
}

// tinyParams sizes each sub-benchmark to run in milliseconds.
func tinyParams() kronosParams {
	return kronosParams{
		query: QueryParams{Events: 300, Probs: []float64{1e-4, 1e-2}, Batch: 10, Runs: 2, RunSeconds: 0.002,
			HotPairs: 100, CacheSlots: 1024, LoadBatch: 64},
		assign: AssignParams{Events: 5000, BlockPairs: 100, Windows: 4},
		memory: MemoryParams{MaxEvents: 50_000, FirstEvents: 10_000},
		gc:     GCParams{MaxLog2: 6, Reps: 3},
		create: CreateParams{Calls: 10, Warmup: 1},
	}
}

// TestRunKronosSchema runs the in-process sub-benchmarks at toy sizes and
// checks the files they leave and the fields readers of the JSON rely on.
func TestRunKronosSchema(t *testing.T) {
	dir := t.TempDir()
	opts := Options{Out: dir, Only: []string{"query", "assign", "memory", "gc"}, Seed: 1}
	results, err := runKronos(context.Background(), opts, tinyParams())
	if err != nil {
		t.Fatal(err)
	}
	wantResults := map[string][]string{
		"query":  {"points"},
		"assign": {"series"},
		"memory": {"points", "heap_fit_bytes_per_event", "rss_fit_bytes_per_event", "empty_graph_heap_bytes"},
		"gc":     {"points", "linear_fit_ns", "loglog_fit"},
	}
	for name, keys := range wantResults {
		if results[name] == nil {
			t.Fatalf("no result for %s", name)
		}
		b, err := os.ReadFile(filepath.Join(dir, name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatalf("%s.json: %v", name, err)
		}
		for _, k := range []string{"benchmark", "schema", "started", "seconds", "env", "params", "results", "plots"} {
			if _, ok := doc[k]; !ok {
				t.Errorf("%s.json lacks %q", name, k)
			}
		}
		if doc["benchmark"] != "kronos/"+name {
			t.Errorf("%s.json names itself %v", name, doc["benchmark"])
		}
		res, _ := doc["results"].(map[string]any)
		for _, k := range keys {
			if _, ok := res[k]; !ok {
				t.Errorf("%s.json results lack %q", name, k)
			}
		}
		plots, _ := doc["plots"].([]any)
		if len(plots) == 0 {
			t.Errorf("%s.json lists no plots", name)
		}
		for _, p := range plots {
			checkPNG(t, filepath.Join(dir, p.(string)))
		}
	}
}

func checkPNG(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cfg, err := png.DecodeConfig(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if cfg.Width < 400 || cfg.Height < 250 {
		t.Errorf("%s is %dx%d", path, cfg.Width, cfg.Height)
	}
}

// TestRunKronosFigures checks the measurements of the toy run for facts that
// do not depend on timing.
func TestRunKronosFigures(t *testing.T) {
	prm := tinyParams()
	results, err := runKronos(context.Background(), Options{Only: []string{"query", "memory", "gc"}, Seed: 2}, prm)
	if err != nil {
		t.Fatal(err)
	}
	points := results["query"].Results.(map[string]any)["points"].([]QueryPoint)
	if len(points) != len(prm.query.Probs) {
		t.Fatalf("%d query points for %d probabilities", len(points), len(prm.query.Probs))
	}
	for _, pt := range points {
		if len(pt.Runs) != 4 {
			t.Errorf("p=%g: %d measurements, want 4 (2 workloads × cache on/off)", pt.P, len(pt.Runs))
		}
		for _, m := range pt.Runs {
			if m.PairsPerSec <= 0 || m.Pairs <= 0 || m.ConcurrentFrac < 0 || m.ConcurrentFrac > 1 {
				t.Errorf("p=%g %+v", pt.P, m)
			}
		}
	}
	// At p = 1e-4 a 300-event graph has about 4 edges: nearly every pair is concurrent.
	if f := points[0].Runs[0].ConcurrentFrac; f < 0.9 {
		t.Errorf("p=1e-4: concurrent fraction %g, want ≈1", f)
	}
	mem := results["memory"].Results.(map[string]any)["points"].([]MemoryPoint)
	if got := mem[len(mem)-1].Events; got != prm.memory.MaxEvents {
		t.Errorf("memory series ends at %d events, want %d", got, prm.memory.MaxEvents)
	}
	for _, p := range mem {
		if p.BytesPerEvent <= 0 {
			t.Errorf("memory point %+v", p)
		}
	}
	gc := results["gc"].Results.(map[string]any)["points"].([]GCPoint)
	if len(gc) != prm.gc.MaxLog2+1 || gc[len(gc)-1].Length != 1<<prm.gc.MaxLog2 || gc[0].Chains != prm.gc.Reps {
		t.Errorf("gc points %+v", gc)
	}
}

// TestCreateSmoke times a few creations against in-process servers (with
// and without fsync) and checks the result's shape.
func TestCreateSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two servers")
	}
	dir := t.TempDir()
	results, err := runKronos(context.Background(), Options{Out: dir, Only: []string{"create"}}, tinyParams())
	if err != nil {
		t.Fatal(err)
	}
	modes := results["create"].Results.(map[string]any)["modes"].([]CreateMode)
	if len(modes) != 2 || modes[0].Mode != "sync" || modes[1].Mode != "nosync" {
		t.Fatalf("modes %+v", modes)
	}
	for _, m := range modes {
		s := m.LatencyUs
		if s.Count != tinyParams().create.Calls || s.Min <= 0 || s.P50 > s.P99 || s.P99 > s.Max {
			t.Errorf("%s latency %+v", m.Mode, s)
		}
		if last := m.CDF[len(m.CDF)-1]; last.Frac != 1 || last.X != s.Max {
			t.Errorf("%s CDF ends at %+v, max %g", m.Mode, last, s.Max)
		}
	}
	checkPNG(t, filepath.Join(dir, "create.png"))
}

// TestLoadGraphMatchesOracle checks the loaded graph against brute-force
// reachability over the oriented edges: every pair's answer must agree.
func TestLoadGraphMatchesOracle(t *testing.T) {
	const n = 150
	rng := bench.NewRand(11, 1)
	edges := ErdosRenyi(n, 0.02, rng)
	OrientByRank(edges, RandomRanks(n, rng))
	g, first, err := loadGraph(n, edges, 0, 7)
	if err != nil {
		t.Fatal(err)
	}
	adj := make([][]uint32, n)
	for _, e := range edges {
		adj[e.From] = append(adj[e.From], e.To)
	}
	reach := make([][]bool, n)
	for v := range n {
		reach[v] = make([]bool, n)
		stack := []uint32{uint32(v)}
		for len(stack) > 0 {
			u := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for _, w := range adj[u] {
				if !reach[v][w] {
					reach[v][w] = true
					stack = append(stack, w)
				}
			}
		}
	}
	var pairs []kronos.Pair
	var want []kronos.Order
	for a := range n {
		for b := range n {
			if a == b {
				continue
			}
			pairs = append(pairs, kronos.Pair{A: kronos.ID(first + kronos.EventID(a)), B: kronos.ID(first + kronos.EventID(b))})
			switch {
			case reach[a][b]:
				want = append(want, kronos.Before)
			case reach[b][a]:
				want = append(want, kronos.After)
			default:
				want = append(want, kronos.Concurrent)
			}
		}
	}
	got, err := g.QueryOrder(nil, pairs)
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("pair %v: graph says %s, oracle %s", pairs[i], got[i], want[i])
		}
	}
}

func TestCollectChains(t *testing.T) {
	g, err := kronos.New(kronos.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	var b chainBuilder
	for _, tc := range []struct{ length, count int }{{1, 1}, {1, 5000}, {2, 3}, {3, 7}, {chainBatch, 1}, {chainBatch + 2, 2}} {
		ns, err := b.collectChains(g, tc.length, tc.count, nil)
		if err != nil {
			t.Fatalf("%d chains of %d: %v", tc.count, tc.length, err)
		}
		if len(ns) != tc.count {
			t.Errorf("%d chains of %d: %d timings", tc.count, tc.length, len(ns))
		}
		if s := g.Stats(); s.Events != 0 || s.Edges != 0 {
			t.Fatalf("%d chains of %d left %+v", tc.count, tc.length, s)
		}
	}
}

func TestAssignGrow(t *testing.T) {
	prm := AssignParams{Events: 3000, BlockPairs: 100, Windows: 5}
	for _, k := range assignKinds {
		s, err := assignGrow(context.Background(), prm, k, bench.NewRand(1, 3), func(int) {})
		if err != nil {
			t.Fatalf("%s: %v", k.Name, err)
		}
		if s.Calls*k.Pairs < prm.Events*9/10 || len(s.Windows) < prm.Windows-1 {
			t.Errorf("%s: %d calls, %d windows", k.Name, s.Calls, len(s.Windows))
		}
		last := s.Windows[len(s.Windows)-1].Events
		if last > uint64(prm.Events) || last < uint64(prm.Events-prm.BlockPairs) {
			t.Errorf("%s: grew to %d events, want ≈%d", k.Name, last, prm.Events)
		}
	}
}

func TestMemorySizes(t *testing.T) {
	got := memorySizes(MemoryParams{MaxEvents: 100_000, FirstEvents: 10_000})
	if !slices.Equal(got, []int{10_000, 20_000, 40_000, 80_000, 100_000}) {
		t.Errorf("memorySizes = %v", got)
	}
	if p := memoryParams(true, 0); p.MaxEvents != 1_000_000 {
		t.Errorf("quick default %d", p.MaxEvents)
	}
	if p := memoryParams(false, 0); p.MaxEvents != 100_000_000 {
		t.Errorf("full default %d", p.MaxEvents)
	}
	if p := memoryParams(true, 5000); p.MaxEvents != 5000 || p.FirstEvents != 5000 {
		t.Errorf("explicit max: %+v", p)
	}
}
