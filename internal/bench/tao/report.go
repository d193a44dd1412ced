package tao

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"gonum.org/v1/plot/plotter"

	"github.com/weft-db/weft/internal/bench"
)

// taoResults is the "results" object of a TAO run's JSON.
type taoResults struct {
	Graph  taoGraphInfo                `json:"graph"`
	Load   LoadStats                   `json:"load"`
	Memory taoMemory                   `json:"memory"`
	Run    RunStats                    `json:"run"`
	Ops    map[string]OpResult         `json:"ops"`
	Reads  bench.Summary               `json:"reads_latency_us"`
	Writes bench.Summary               `json:"writes_latency_us"`
	CDF    map[string][]bench.CDFPoint `json:"latency_cdf_us"`
	// Timeline is the throughput of each interval of the run.
	Timeline []Tick `json:"timeline"`
	// Sweep is one run per SweepClients count after the main run.
	Sweep []taoSweepPoint `json:"client_sweep,omitempty"`
}

// taoSweepPoint is one run of the client sweep.
type taoSweepPoint struct {
	Clients   int           `json:"clients"`
	OpsPerSec float64       `json:"ops_per_sec"`
	CPUCores  float64       `json:"cpu_cores"`
	Errors    int64         `json:"errors"`
	Reads     bench.Summary `json:"reads_latency_us"`
	Writes    bench.Summary `json:"writes_latency_us"`
}

type taoGraphInfo struct {
	Vertices           int              `json:"vertices"`
	Edges              int64            `json:"edges"`
	MeanDegree         float64          `json:"mean_out_degree"`
	ZeroDegreeFraction float64          `json:"zero_out_degree_fraction"`
	Degree             map[string]int32 `json:"out_degree"` // percentiles
}

// taoMemory is what the loaded graph holds, above the process before the
// engine opened: the Go heap (HeapAlloc after two GCs) and the resident set
// (after returning free memory to the OS), per edge of the loaded graph
// (vertices, the store and every engine structure included).
type taoMemory struct {
	HeapBytes        int64   `json:"heap_bytes"`
	HeapBytesPerEdge float64 `json:"heap_bytes_per_edge"`
	RSSBytes         int64   `json:"rss_bytes"`
	RSSBytesPerEdge  float64 `json:"rss_bytes_per_edge"`
}

type RunStats struct {
	Seconds   float64 `json:"seconds"`
	Ops       int64   `json:"ops"`
	OpsPerSec float64 `json:"ops_per_sec"`
	// Errors are operations that failed for another reason than a retryable
	// conflict, or after taoRetriesMax attempts.
	Errors       int64    `json:"errors"`
	ErrorSamples []string `json:"error_samples,omitempty"`
	// Retries are transaction attempts after a conflict (writes only).
	Retries          int64 `json:"retries"`
	EdgesCreated     int64 `json:"edges_created"`
	EdgesDeleted     int64 `json:"edges_deleted"`
	DeleteEmptyDraws int64 `json:"delete_empty_draws"` // delete draws of a vertex without out-edges (redrawn)
	// EdgesExpected is the engine's edge count before the run plus the edges
	// created minus those deleted; EdgesReported is its count after the run.
	EdgesExpected   int64 `json:"edges_expected"`
	EdgesReported   int64 `json:"edges_reported"`
	EdgesConsistent bool  `json:"edges_consistent"`
	// The engine's counters over the run (Status before and after).
	EngineCommits uint64 `json:"engine_commits"`
	EngineAborts  uint64 `json:"engine_aborts"`
	Programs      uint64 `json:"programs"`
	// KronosCalls counts calls to the timeline oracle: one per commit whose
	// last accesses its vector clock cannot order, and one per pair of
	// concurrent stamps a shard must order for a read and has not cached.
	KronosCalls                uint64  `json:"kronos_calls"`
	KronosCallsPerTxnOrProgram float64 `json:"kronos_calls_per_txn_or_program"`
	// NopRequests counts shards asking an idle gatekeeper for a NOP so a
	// read could run (in-process runs only: the network status omits it).
	NopRequests      uint64  `json:"nop_requests,omitempty"`
	NopRequestsPerOp float64 `json:"nop_requests_per_op,omitempty"`
	// PointReads counts reads and programs stamped at a read point, before
	// the commits in flight (in-process runs only, as NopRequests).
	PointReads      uint64  `json:"point_reads,omitempty"`
	PointReadsPerOp float64 `json:"point_reads_per_op,omitempty"`
	CPUSeconds      float64 `json:"cpu_seconds"`
	CPUCores        float64 `json:"cpu_cores"` // CPU seconds per second of the run (clients included)
	OpsPerCPUSecond float64 `json:"ops_per_cpu_second"`
	GCCycles        uint32  `json:"go_gc_cycles"`
	GCPauseMS       float64 `json:"go_gc_pause_ms"`
}

type OpResult struct {
	Count     int64         `json:"count"`
	Fraction  float64       `json:"fraction"`
	Errors    int64         `json:"errors"`
	Retries   int64         `json:"retries,omitempty"`
	Missing   int64         `json:"missing,omitempty"`    // reads of a vertex that was not there
	EdgesMean float64       `json:"edges_mean,omitempty"` // edges returned (get_edges) or counted (count_edges)
	LatencyUS bench.Summary `json:"latency_us"`
}

// Totals is what the clients of a run did, merged (Summarise).
type Totals struct {
	Run           RunStats
	Ops           map[string]OpResult
	CDF           map[string][]bench.CDFPoint
	Reads, Writes bench.Summary
}

// summarise records the clients' merged records in the run's results.
func (b *taoBench) summarise(workers []*Worker, elapsed time.Duration) {
	t := Summarise(workers, elapsed)
	b.res.Run, b.res.Ops, b.res.CDF, b.res.Reads, b.res.Writes = t.Run, t.Ops, t.CDF, t.Reads, t.Writes
}

// Summarise merges the records of workers that ran for elapsed.
func Summarise(workers []*Worker, elapsed time.Duration) Totals {
	var t Totals
	var per [taoOps]taoOpStats
	var reads, writes bench.Hist
	r := &t.Run
	for _, w := range workers {
		for op := range taoOps {
			s, o := &per[op], &w.ops[op]
			s.hist.Merge(&o.hist)
			s.errors += o.errors
			s.retries += o.retries
			s.items += o.items
			s.missing += o.missing
			if op.isWrite() {
				writes.Merge(&o.hist)
			} else {
				reads.Merge(&o.hist)
			}
		}
		r.EdgesCreated += w.created
		r.EdgesDeleted += w.deleted
		r.DeleteEmptyDraws += w.emptyDraws
		if len(r.ErrorSamples) < 5 {
			r.ErrorSamples = append(r.ErrorSamples, w.errSamples...)
		}
	}
	r.Seconds = bench.Round(elapsed.Seconds(), 3)
	r.Ops = int64(reads.Count() + writes.Count())
	r.OpsPerSec = bench.Round(float64(r.Ops)/elapsed.Seconds(), 0)
	t.Ops = map[string]OpResult{}
	t.CDF = map[string][]bench.CDFPoint{}
	for op := range taoOps {
		s := &per[op]
		res := OpResult{Count: int64(s.hist.Count()), Errors: s.errors, Retries: s.retries, Missing: s.missing,
			LatencyUS: s.hist.SummaryUS()}
		if r.Ops > 0 {
			res.Fraction = bench.Round(float64(s.hist.Count())/float64(r.Ops), 6)
		}
		if s.hist.Count() > 0 && (op == opGetEdges || op == opCountEdges) {
			res.EdgesMean = bench.Round(float64(s.items)/float64(s.hist.Count()), 3)
		}
		t.Ops[op.String()] = res
		r.Errors += s.errors
		r.Retries += s.retries
		if s.hist.Count() > 0 {
			t.CDF[op.String()] = s.hist.CDFUS(200)
		}
	}
	t.Reads, t.Writes = reads.SummaryUS(), writes.SummaryUS()
	return t
}

// taoTargets are the targets (never checked by the code).
func (b *taoBench) targets() map[string]any {
	ops := 200_000
	if b.opts.Mode == "net" {
		ops = 40_000
	}
	return map[string]any{"ops_per_sec": ops, "read_p99_us": 2000, "heap_bytes_per_edge": 200}
}

func (b *taoBench) result() *bench.Result {
	o := b.opts
	mix := map[string]float64{}
	for op := range taoOps {
		mix[op.String()] = bench.Round(b.mix.weight(op), 6)
	}
	store := "pebble on disk (" + map[bool]string{true: "given directory", false: "temporary directory"}[o.DataDir != ""] + ")"
	if o.InMemory {
		store = "pebble in memory (vfs.NewMem)"
	}
	dist := "LinkBench nlinks, embedded thinned copy"
	if o.Distribution != "" {
		dist = filepath.Base(o.Distribution)
	}
	conns, streams := 0, 0
	if o.Mode == "net" {
		conns, streams = o.Conns, max(o.Streams, 0)
	}
	return &bench.Result{
		Benchmark: "tao/" + o.Name(),
		Schema:    bench.SchemaVersion,
		Params: map[string]any{
			"vertices": o.Vertices, "duration_s": o.Duration.Seconds(), "clients": o.Clients, "mix": o.Mix,
			"mode": o.Mode, "conns": conns, "streams_per_conn": streams, "dst": o.Dst, "store": store,
			"sync_during_load": b.cfg.Sync && !o.LoadNoSync, "sync_during_run": b.cfg.Sync,
			"load_batch_ops": o.LoadBatch, "loaders": o.Loaders, "gatekeepers": b.cfg.Gatekeepers, "shards": b.cfg.Shards,
			"get_edges_limit": EdgesLimit, "get_node_edges": o.NodeEdges, "degree_distribution": dist,
			"seed": o.Seed, "quick": o.Quick, "mix_weights": mix,
		},
		Results: b.res,
		Paper: map[string]any{
			"weaver_tao_mix":   "reads 99.8% (get_edges 59.4%, count_edges 11.7%, get_node 28.9%), writes 0.2% (create_edge 80%, delete_edge 20%)",
			"weaver_vs_titan":  "10.9x throughput on the TAO mix (VLDB'16 abstract); absolute figures not retrieved",
			"weaver_get_node":  "~2M get_node programs/s with 8 gatekeepers",
			"soc_net_bench_py": "15-100 client threads x 5,000 requests; get_edges asks for 50 edges",
		},
		Target: b.targets(),
		Notes:  taoNotes(o),
	}
}

func taoNotes(o Options) []string {
	return []string{
		"Graph: out-degrees from LinkBench's measured distribution (Distribution.dat, nlinks), assigned by stratified quantiles over a seeded random vertex order as LinkBench's loader does; edge destinations " +
			map[string]string{"uniform": "uniform over all vertices (LinkBench's randomid2max option).", "zipf": "Zipf(0.8) over a seeded random order of vertices (in-degree skew)."}[o.Dst],
		"Loaded in-process through engine Commit, create_vertex then create_edge, in transactions of load_batch_ops operations, loaders in flight; load time covers only this.",
		"Access skew as LinkBench's FBWorkload.properties: get_edges and count_edges pick Zipf(0.8) ranks, 99.5% over a random order and 0.5% over the out-degree order; create_edge and delete_edge Zipf(0.741), 95% / 5% likewise (same random order as the reads); get_node Zipf(0.625) over its own random order.",
		"Reads are node programs at a fresh snapshot (Run with at = nil): get_edges {node, limit: 50}, count_edges {node}, get_node {node" + map[bool]string{true: "}", false: ", edges: false} (TAO's obj_get reads the object, not its associations)"}[o.NodeEdges] + ". Results are checked, not decoded.",
		"create_edge commits one operation without reads; delete_edge reads up to 50 out-edges with GetVertex at a fresh snapshot, deletes a random one and commits with that read; both retry on abort (counted as retries). The latency of a write covers its retries.",
		"Each client is a goroutine issuing operations back to back (closed loop); throughput is all operations over the run's wall time. In net mode every call crosses the gRPC server (internal/api) on loopback through the Go client (client/weft); writes take a Begin call and a Commit call.",
		"Percentiles come from a log-linear histogram (0.8% buckets) per client, merged.",
		"Memory is measured after the load, above the process before the engine opened: heap is HeapAlloc after GC; with an on-disk store Pebble's memtables and block cache are off the Go heap but in the RSS.",
	}
}

// savePlots draws the latency CDF per operation and the throughput over time.
func (b *taoBench) savePlots() ([]string, error) {
	name := b.opts.Name()
	title := fmt.Sprintf("TAO %s mix, %s: %d vertices, %d clients", b.opts.Mix, b.opts.Mode, b.opts.Vertices, b.opts.Clients)
	var lat []bench.Series
	for op := range taoOps {
		pts := b.res.CDF[op.String()]
		if len(pts) == 0 {
			continue
		}
		xy := make(plotter.XYs, len(pts))
		for i, p := range pts {
			xy[i] = plotter.XY{X: p.X, Y: p.Frac}
		}
		lat = append(lat, bench.Series{Name: fmt.Sprintf("%s (%d)", op, b.res.Ops[op.String()].Count), Points: xy, Line: true})
	}
	var tput plotter.XYs
	for _, t := range b.res.Timeline {
		tput = append(tput, plotter.XY{X: t.T, Y: t.OpsPerSec / 1e3})
	}
	charts := map[string]bench.Chart{
		name + "_latency.png": {Title: title + ": latency CDF", XLabel: "latency (µs, log)", YLabel: "fraction of operations",
			LogX: true, YFrom0: true, LegendLeft: true, Series: lat},
	}
	if len(tput) > 0 {
		series := []bench.Series{{Name: "throughput", Points: tput}}
		// The target is drawn when it does not squash the measurements flat.
		target, top := float64(b.targets()["ops_per_sec"].(int))/1e3, 0.0
		for _, p := range tput {
			top = max(top, p.Y)
		}
		if top >= target/4 {
			series = append(series, bench.Series{Name: fmt.Sprintf("target %.0fk/s", target),
				Points: plotter.XYs{{X: 0, Y: target}, {X: tput[len(tput)-1].X, Y: target}}, Line: true, Dashed: true})
		}
		charts[name+"_throughput.png"] = bench.Chart{Title: title + ": throughput", XLabel: "time (s)",
			YLabel: "operations per second (thousands)", YFrom0: true, Headroom: 0.25, Series: series}
	}
	if len(b.res.Sweep) > 0 {
		b.sweepCharts(charts, name, title)
	}
	var names []string
	for _, file := range slices.Sorted(maps.Keys(charts)) {
		if err := charts[file].Save(filepath.Join(b.opts.Out, file)); err != nil {
			return names, err
		}
		names = append(names, file)
	}
	return names, nil
}

// sweepCharts adds the client sweep's throughput and read latency against
// the client count (the main run included as one more point).
func (b *taoBench) sweepCharts(charts map[string]bench.Chart, name, title string) {
	pts := append([]taoSweepPoint{{Clients: b.opts.Clients, OpsPerSec: b.res.Run.OpsPerSec, Reads: b.res.Reads}}, b.res.Sweep...)
	slices.SortStableFunc(pts, func(a, c taoSweepPoint) int { return a.Clients - c.Clients })
	var tput, p50, p99 plotter.XYs
	for _, p := range pts {
		x := float64(p.Clients)
		tput = append(tput, plotter.XY{X: x, Y: p.OpsPerSec / 1e3})
		p50 = append(p50, plotter.XY{X: x, Y: p.Reads.P50 / 1e3})
		p99 = append(p99, plotter.XY{X: x, Y: p.Reads.P99 / 1e3})
	}
	title = strings.TrimSuffix(title, fmt.Sprintf(", %d clients", b.opts.Clients))
	charts[name+"_clients.png"] = bench.Chart{Title: title + ": throughput by clients", XLabel: "clients",
		YLabel: "operations per second (thousands)", YFrom0: true, Headroom: 0.25,
		Series: []bench.Series{{Name: "throughput", Points: tput}}}
	charts[name+"_clients_latency.png"] = bench.Chart{Title: title + ": read latency by clients", XLabel: "clients",
		YLabel: "read latency (ms)", YFrom0: true, Headroom: 0.25, LegendLeft: true,
		Series: []bench.Series{{Name: "p50", Points: p50}, {Name: "p99", Points: p99},
			{Name: "p99 target 2 ms", Points: plotter.XYs{{X: tput[0].X, Y: 2}, {X: tput[len(tput)-1].X, Y: 2}}, Line: true, Dashed: true}}}
}
