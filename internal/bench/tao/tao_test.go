package tao

import (
	"context"
	"encoding/json"
	"image/png"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/weft-db/weft/internal/bench"
)

// TestTaoMix checks the operation weights: they are the TAO shares scaled by
// the read fraction, and they sum to one.
func TestTaoMix(t *testing.T) {
	m, err := NewMix("tao")
	if err != nil {
		t.Fatal(err)
	}
	want := map[taoOp]float64{opGetEdges: 0.998 * 0.594, opCountEdges: 0.998 * 0.117, opGetNode: 0.998 * 0.289,
		opCreateEdge: 0.002 * 0.8, opDeleteEdge: 0.002 * 0.2}
	sum := 0.0
	for op, w := range want {
		if got := m.weight(op); got < w-1e-12 || got > w+1e-12 {
			t.Errorf("weight(%s) = %g, want %g", op, got, w)
		}
		sum += m.weight(op)
	}
	if sum < 1-1e-9 || sum > 1+1e-9 {
		t.Errorf("weights sum to %g", sum)
	}
	reads, _ := NewMix("reads")
	r := bench.NewRand(1, 0)
	for range 10_000 {
		if reads.pick(r).isWrite() {
			t.Fatal("the reads mix picked a write")
		}
	}
	if _, err := NewMix("50"); err == nil {
		t.Error("an unknown mix was accepted")
	}
}

// TestGetNodeMix: weft bench scale's second mix draws get_node only.
func TestGetNodeMix(t *testing.T) {
	m, r := GetNodeMix(), bench.NewRand(1, 0)
	for range 10_000 {
		if op := m.pick(r); op != opGetNode {
			t.Fatalf("the get_node mix picked %s", op)
		}
	}
}

// TestTaoGraph checks the generated degrees and access distributions.
func TestTaoGraph(t *testing.T) {
	g, err := NewGraph(10_000, LinkBenchNlinks, "zipf", 3)
	if err != nil {
		t.Fatal(err)
	}
	var sum int64
	for _, d := range g.deg {
		sum += int64(d)
	}
	if sum != g.edges || g.maxDeg < 100 || g.zeroDeg < 4000 || g.zeroDeg > 5000 {
		t.Errorf("degrees: sum %d, edges %d, max %d, zero %d", sum, g.edges, g.maxDeg, g.zeroDeg)
	}
	// The correlated link-read order starts at the largest out-degree.
	if g.deg[g.linkRead.corr.order[0]] != g.maxDeg {
		t.Errorf("correlated rank 1 has degree %d, max is %d", g.deg[g.linkRead.corr.order[0]], g.maxDeg)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 1000 {
		for _, v := range []int32{g.linkRead.pick(r), g.linkWrite.pick(r), g.nodeRead.pick(r), g.dst(r)} {
			if v < 0 || int(v) >= g.n {
				t.Fatalf("picked vertex %d of %d", v, g.n)
			}
		}
	}
	if _, err := NewGraph(10, LinkBenchNlinks, "normal", 1); err == nil {
		t.Error("an unknown destination distribution was accepted")
	}
}

// TestRunTaoQuick runs the benchmark at toy size in-process, with enough
// writes to see them, and checks what does not depend on timing: operations
// of every kind happened without errors, the engine's edge count moved by
// exactly the edges created and deleted, and the JSON and plots were written.
func TestRunTaoQuick(t *testing.T) {
	runTaoSmoke(t, "inproc", time.Second)
}

// TestRunTaoNet is the same over the gRPC front end and the Go client.
func TestRunTaoNet(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a gRPC server")
	}
	runTaoSmoke(t, "net", 500*time.Millisecond)
}

func runTaoSmoke(t *testing.T, mode string, d time.Duration) {
	dir := t.TempDir()
	opts := Options{Out: dir, Quick: true, Vertices: 3000, Duration: d, Clients: 8, Mix: "75", Mode: mode,
		InMemory: true, LoadBatch: 200, Seed: 7}
	res, err := Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Benchmark string `json:"benchmark"`
		Results   struct {
			Graph taoGraphInfo        `json:"graph"`
			Load  LoadStats           `json:"load"`
			Run   RunStats            `json:"run"`
			Ops   map[string]OpResult `json:"ops"`
		} `json:"results"`
		Plots []string `json:"plots"`
	}
	name := "75-" + mode + "-quick"
	b, err := os.ReadFile(filepath.Join(dir, name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s.json: %v", name, err)
	}
	if doc.Benchmark != "tao/"+name || res.Benchmark != doc.Benchmark {
		t.Errorf("benchmark %q (returned %q)", doc.Benchmark, res.Benchmark)
	}
	g, run := doc.Results.Graph, doc.Results.Run
	if g.Vertices != 3000 || g.Edges <= 0 || doc.Results.Load.Transactions == 0 {
		t.Errorf("graph %+v, load %+v", g, doc.Results.Load)
	}
	if run.Ops == 0 || run.Errors != 0 || run.ErrorSamples != nil {
		t.Fatalf("run: %d operations, %d errors %v", run.Ops, run.Errors, run.ErrorSamples)
	}
	var sum int64
	for _, op := range taoOpNames {
		o := doc.Results.Ops[op]
		if o.Count == 0 || o.LatencyUS.Count != int(o.Count) || o.LatencyUS.P50 > o.LatencyUS.Max {
			t.Errorf("%s: %+v", op, o)
		}
		if o.Missing != 0 {
			t.Errorf("%s: %d reads missed a loaded vertex", op, o.Missing)
		}
		sum += o.Count
	}
	if sum != run.Ops {
		t.Errorf("operations per kind sum to %d, run has %d", sum, run.Ops)
	}
	if run.EdgesCreated == 0 || run.EdgesDeleted == 0 {
		t.Errorf("created %d and deleted %d edges; the 75 mix writes", run.EdgesCreated, run.EdgesDeleted)
	}
	if !run.EdgesConsistent || run.EdgesReported != g.Edges+run.EdgesCreated-run.EdgesDeleted {
		t.Errorf("edges: loaded %d + created %d - deleted %d, engine reports %d", g.Edges, run.EdgesCreated,
			run.EdgesDeleted, run.EdgesReported)
	}
	if run.EngineCommits != uint64(run.EdgesCreated+run.EdgesDeleted) {
		t.Errorf("engine committed %d transactions, clients %d", run.EngineCommits, run.EdgesCreated+run.EdgesDeleted)
	}
	if len(doc.Plots) != 2 {
		t.Errorf("plots %v", doc.Plots)
	}
	for _, p := range doc.Plots {
		f, err := os.Open(filepath.Join(dir, p))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := png.Decode(f); err != nil {
			t.Errorf("%s: %v", p, err)
		}
		f.Close()
	}
}

// --streams -1 means unary calls: the default applies only when unset.
func TestTaoStreamsDefault(t *testing.T) {
	for in, want := range map[int]int{0: 2, -1: -1, 3: 3} {
		o := Options{Streams: in}
		o.setDefaults()
		if o.Streams != want {
			t.Errorf("Streams %d → %d, want %d", in, o.Streams, want)
		}
	}
}

// TestRunTaoClientSweep: the sweep adds one point per client count on the
// same graph, with the 75 mix writing in each (edge handles of later runs
// must not collide with earlier ones: a collision fails the run), and the
// two plots by clients.
func TestRunTaoClientSweep(t *testing.T) {
	dir := t.TempDir()
	opts := Options{Out: dir, Quick: true, Vertices: 2000, Duration: 300 * time.Millisecond, Clients: 4,
		SweepClients: []int{2, 6}, Mix: "75", InMemory: true, LoadBatch: 200, Seed: 3}
	if _, err := Run(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Results struct {
			Sweep []taoSweepPoint `json:"client_sweep"`
		} `json:"results"`
		Plots []string `json:"plots"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "75-inproc-quick.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	sw := doc.Results.Sweep
	if len(sw) != 2 || sw[0].Clients != 2 || sw[1].Clients != 6 {
		t.Fatalf("sweep %+v, want points for 2 and 6 clients", sw)
	}
	for _, p := range sw {
		if p.OpsPerSec <= 0 || p.Errors != 0 || p.Reads.Count == 0 || p.Writes.Count == 0 {
			t.Errorf("sweep point %+v", p)
		}
	}
	if !slices.Contains(doc.Plots, "75-inproc-quick_clients.png") || !slices.Contains(doc.Plots, "75-inproc-quick_clients_latency.png") {
		t.Errorf("plots %v", doc.Plots)
	}
}
