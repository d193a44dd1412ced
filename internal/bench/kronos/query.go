package kronos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"gonum.org/v1/plot/plotter"

	"github.com/weft-db/weft/internal/bench"
	"github.com/weft-db/weft/internal/kronos"
)

// QueryParams sizes the query_order benchmark.
type QueryParams struct {
	Events     int       `json:"events"`
	Probs      []float64 `json:"edge_probabilities"`
	Batch      int       `json:"batch_pairs"`      // pairs per QueryOrder call
	Runs       int       `json:"runs"`             // timed runs per point; the median is reported
	RunSeconds float64   `json:"run_seconds"`      // time spent inside QueryOrder per run
	HotPairs   int       `json:"hot_pairs"`        // size of the repeated-pairs workload
	CacheSlots int       `json:"cache_slots"`      // answer cache size when enabled
	LoadBatch  int       `json:"load_batch_pairs"` // Prefer pairs per AssignOrder call while loading
}

func queryParams(quick bool) QueryParams {
	p := QueryParams{
		Events:     10_000,
		Probs:      []float64{1e-5, 1e-4, 1e-3, 1e-2, 1e-1},
		Batch:      100,
		Runs:       5,
		RunSeconds: 1,
		HotPairs:   4096,
		CacheSlots: kronos.DefaultConfig().CacheSlots,
		LoadBatch:  256,
	}
	if quick {
		p.Runs, p.RunSeconds = 3, 0.1
	}
	return p
}

// QueryPoint is the measurements for one edge probability.
type QueryPoint struct {
	P            float64 `json:"p"`
	Edges        uint64  `json:"edges"`
	RelsPerEvent float64 `json:"edges_per_event"` // 2·edges/events: the paper's "happens-before relationships per vertex"
	BuildSeconds float64 `json:"build_seconds"`   // loading the graph by AssignOrder
	// Runs are the workload × cache combinations measured on this graph.
	Runs []QueryMeasure `json:"measurements"`
}

// QueryMeasure is one workload on one graph.
type QueryMeasure struct {
	Workload       string    `json:"workload"` // "uniform": fresh random pairs; "hot": a fixed set, repeated
	Cache          bool      `json:"cache"`
	PairsPerSec    float64   `json:"pairs_per_sec"` // median over runs, stopwatch time (see notes)
	RunPairsPerSec []float64 `json:"run_pairs_per_sec"`
	// PairsPerSecWall is the median rate by the wall clock alone, and
	// DescheduledFrac the fraction of timed chunks during which the thread
	// was descheduled (and CPU time was used instead).
	PairsPerSecWall float64 `json:"pairs_per_sec_wall"`
	DescheduledFrac float64 `json:"descheduled_fraction"`
	NsPerPair       float64 `json:"ns_per_pair"` // 1e9 / PairsPerSec
	Pairs           int64   `json:"pairs_timed"` // over all runs
	ConcurrentFrac  float64 `json:"concurrent_fraction"`
}

func (r *kronosRun) query(ctx context.Context) (*bench.Result, error) {
	prm := r.prm.query
	bar := bench.NewBar(r.opts.Progress, int64(len(prm.Probs)*4*prm.Runs), "query")
	defer bar.Finish()
	var points []QueryPoint
	for i, p := range prm.Probs {
		pt, err := queryPoint(ctx, prm, p, r.opts.Seed+uint64(i), func() { _ = bar.Add(1) })
		if err != nil {
			return nil, err
		}
		r.log.Info("query", "p", p, "edges", pt.Edges, "uniform_cache_pairs_per_sec", pt.Runs[0].PairsPerSec)
		points = append(points, pt)
	}
	res := &bench.Result{
		Params:  prm,
		Results: map[string]any{"points": points},
		Paper: map[string]any{
			"figure":     "Figure 12: query_order throughput on Erdős–Rényi graphs of 10,000 events, p = 1e-5 … 1e-1 (500 … 5,000,000 edges)",
			"throughput": "hundreds of thousands of queries/s where each event is in fewer than 3 happens-before relationships; flattening for dense graphs",
			"setup":      "one Kronos server; clients issue query_order batches of 100 over RPC for a fixed time (chronosbench/scalability.py), so the figure includes RPC; 2.5 GHz Xeon E5420",
		},
		Target: map[string]any{"pairs_per_sec_min_for_p_le_1e-4": 1_000_000},
		Notes: []string{
			"In-process QueryOrder on the pure core, one goroutine, batches of Batch random pairs; only the QueryOrder calls are timed (pair generation is not).",
			"Graph: G(n, p) edges, each directed by a uniformly random ranking of the events (so every edge's direction is uniformly random and the graph is acyclic), loaded by AssignOrder with Prefer. The paper's loader drew each direction by coin and let Prefer reverse contradictions; that loader costs a graph search per edge (hours at p = 0.1), and the ranking gives the same kind of random DAG with no reversals.",
			"uniform: every pair freshly drawn, so the answer cache almost never hits (5·10^7 possible pairs); hot: HotPairs pairs asked over and over (they fit the cache; with the cache on, one untimed pass fills it first).",
			"Each graph is loaded once, snapshotted, and restored twice (cache on, cache off), so both configurations are timed on the same memory layout.",
			"QueryOrder calls are timed in chunks of batches (at least 2 ms of work). A chunk during which the thread was descheduled by the OS is timed by the thread's CPU time instead of the wall clock (internal/bench/kronos/stopwatch.go): pairs_per_sec; pairs_per_sec_wall is the wall clock alone, and descheduled_fraction says how often that happened.",
		},
	}
	plots, err := r.savePlots(queryCharts(prm, points))
	res.Plots = plots
	return res, err
}

// queryPoint loads the G(n, p) graph and times each workload on it with the
// answer cache on and off.
func queryPoint(ctx context.Context, prm QueryParams, p float64, seed uint64, tick func()) (QueryPoint, error) {
	rng := bench.NewRand(seed, 1)
	edges := ErdosRenyi(prm.Events, p, rng)
	OrientByRank(edges, RandomRanks(prm.Events, rng))
	pt := QueryPoint{P: p, Edges: uint64(len(edges)), RelsPerEvent: 2 * float64(len(edges)) / float64(prm.Events)}
	start := time.Now()
	loaded, first, err := loadGraph(prm.Events, edges, prm.CacheSlots, prm.LoadBatch)
	if err != nil {
		return pt, fmt.Errorf("p=%g: %w", p, err)
	}
	pt.BuildSeconds = bench.Round(time.Since(start).Seconds(), 3)
	// Both configurations are timed on restored copies of the loaded graph,
	// so they share one memory layout and differ only in the cache.
	snap := loaded.AppendSnapshot(nil)
	loaded = nil
	for _, slots := range []int{prm.CacheSlots, 0} {
		cfg := kronos.DefaultConfig()
		cfg.CacheSlots = slots
		g, err := kronos.Restore(cfg, snap)
		if err != nil {
			return pt, fmt.Errorf("p=%g: %w", p, err)
		}
		for _, workload := range []string{"uniform", "hot"} {
			m, err := queryMeasure(ctx, g, first, prm, workload, slots != 0, bench.NewRand(seed, 2), tick)
			if err != nil {
				return pt, fmt.Errorf("p=%g %s: %w", p, workload, err)
			}
			pt.Runs = append(pt.Runs, m)
		}
	}
	return pt, nil
}

// loadGraph creates n events and records every edge with AssignOrder
// (Prefer), returning the graph and the id of vertex 0 (vertex v is first+v).
func loadGraph(n int, edges []Edge, cacheSlots, batch int) (*kronos.Graph, kronos.EventID, error) {
	cfg := kronos.DefaultConfig()
	cfg.CacheSlots = cacheSlots
	g, err := kronos.New(cfg)
	if err != nil {
		return nil, 0, err
	}
	first := g.Stats().NextID
	for made := 0; made < n; {
		k := min(n-made, cfg.PairsMax)
		if _, err := g.CreateEvents(nil, k); err != nil {
			return nil, 0, err
		}
		made += k
	}
	as := make([]kronos.Assignment, 0, batch)
	var res []kronos.AssignResult
	for i := 0; i < len(edges); i += batch {
		as = as[:0]
		for _, e := range edges[i:min(i+batch, len(edges))] {
			as = append(as, kronos.Assignment{
				A: kronos.ID(first + kronos.EventID(e.From)), Order: kronos.Before,
				B: kronos.ID(first + kronos.EventID(e.To)), Strength: kronos.Prefer,
			})
		}
		res, err = g.AssignOrder(res[:0], as)
		if err != nil {
			return nil, 0, err
		}
		for j, a := range res {
			if a.Reversed {
				// The ranking makes every edge consistent with the graph.
				return nil, 0, fmt.Errorf("bench: edge %d was reversed", i+j)
			}
		}
	}
	if got := g.Stats().Edges; got != uint64(len(edges)) {
		return nil, 0, fmt.Errorf("bench: graph holds %d edges, loaded %d", got, len(edges))
	}
	return g, first, nil
}

// queryMeasure runs prm.Runs timed runs of one workload and reports the
// median rate. Only QueryOrder is timed, in chunks of batches (a stopwatch
// per chunk; see stopwatch); each run stops once prm.RunSeconds have been
// timed.
func queryMeasure(ctx context.Context, g *kronos.Graph, first kronos.EventID, prm QueryParams, workload string, cache bool, rng *rand.Rand, tick func()) (QueryMeasure, error) {
	defer lockThread()()
	m := QueryMeasure{Workload: workload, Cache: cache}
	next := uniformPairs(rng, first, prm.Events, prm.Batch)
	if workload == "hot" {
		next = cyclePairs(uniformPairs(rng, first, prm.Events, prm.HotPairs)(), prm.Batch)
		// Warm: one pass over the set so the cache is in steady state.
		for range prm.HotPairs / prm.Batch * btoi(cache) {
			if _, err := g.QueryOrder(nil, next()); err != nil {
				return m, err
			}
		}
	}
	budget := time.Duration(prm.RunSeconds * float64(time.Second))
	var concurrent, chunks, descheduled int64
	var wallRates []float64
	var chunk []kronos.Pair
	var out []kronos.Order
	k := 1 // batches per chunk: doubled while a chunk is shorter than chunkMin
	for range prm.Runs {
		if err := ctx.Err(); err != nil {
			return m, err
		}
		var spent, wall time.Duration
		var pairs int64
		for spent < budget {
			// The generators reuse their batch: copy k batches out first.
			chunk = chunk[:0]
			for range k {
				chunk = append(chunk, next()...)
			}
			out = out[:0]
			var sw stopwatch
			var err error
			sw.start()
			for i := 0; i < len(chunk) && err == nil; i += prm.Batch {
				out, err = g.QueryOrder(out, chunk[i:i+prm.Batch])
			}
			d, w, desched := sw.stop()
			if err != nil {
				return m, err
			}
			spent, wall, pairs = spent+d, wall+w, pairs+int64(len(out))
			chunks++
			descheduled += int64(btoi(desched))
			for _, o := range out {
				concurrent += int64(btoi(o == kronos.Concurrent))
			}
			if d < chunkMin && k < chunkBatchesMax {
				k *= 2
			}
		}
		m.Pairs += pairs
		m.RunPairsPerSec = append(m.RunPairsPerSec, bench.Round(float64(pairs)/spent.Seconds(), 0))
		wallRates = append(wallRates, float64(pairs)/wall.Seconds())
		tick()
	}
	m.PairsPerSec = bench.Median(m.RunPairsPerSec)
	m.PairsPerSecWall = bench.Round(bench.Median(wallRates), 0)
	m.NsPerPair = bench.Round(1e9/m.PairsPerSec, 1)
	m.ConcurrentFrac = bench.Round(float64(concurrent)/float64(m.Pairs), 4)
	m.DescheduledFrac = bench.Round(float64(descheduled)/float64(chunks), 3)
	return m, nil
}

// A query chunk is grown to at least chunkMin of work (so reading the clocks
// costs under 0.1%), and at most chunkBatchesMax batches.
const (
	chunkMin        = 2 * time.Millisecond
	chunkBatchesMax = 256
)

// uniformPairs returns a generator of batches of n uniformly random pairs of
// distinct events among events first … first+events−1. The batch it returns
// is reused by the next call.
func uniformPairs(rng *rand.Rand, first kronos.EventID, events, n int) func() []kronos.Pair {
	buf := make([]kronos.Pair, n)
	return func() []kronos.Pair {
		for i := range buf {
			a := rng.IntN(events)
			b := rng.IntN(events - 1)
			if b >= a {
				b++
			}
			buf[i] = kronos.Pair{A: kronos.ID(first + kronos.EventID(a)), B: kronos.ID(first + kronos.EventID(b))}
		}
		return buf
	}
}

// cyclePairs returns successive batches of size batch from set, wrapping.
func cyclePairs(set []kronos.Pair, batch int) func() []kronos.Pair {
	set = set[:len(set)/batch*batch]
	i := 0
	return func() []kronos.Pair {
		b := set[i : i+batch]
		i = (i + batch) % len(set)
		return b
	}
}

func queryCharts(prm QueryParams, points []QueryPoint) map[string]bench.Chart {
	type key struct {
		workload string
		cache    bool
	}
	rate := map[key]plotter.XYs{}
	var conc plotter.XYs
	for _, pt := range points {
		for _, m := range pt.Runs {
			k := key{m.Workload, m.Cache}
			rate[k] = append(rate[k], plotter.XY{X: pt.P, Y: m.PairsPerSec})
			if m.Workload == "uniform" && m.Cache {
				conc = append(conc, plotter.XY{X: pt.P, Y: m.ConcurrentFrac})
			}
		}
	}
	hot := fmt.Sprintf("hot set of %d pairs", prm.HotPairs)
	throughput := bench.Chart{
		Title:  fmt.Sprintf("Kronos query_order throughput, G(n=%d, p), batches of %d, in-process", prm.Events, prm.Batch),
		XLabel: "edge probability p (log)",
		YLabel: "pairs answered per second (log)",
		LogX:   true, LogY: true,
		LegendLeft: true, LegendBottom: true,
		Series: []bench.Series{
			{Name: "uniform random pairs, answer cache on", Points: rate[key{"uniform", true}]},
			{Name: "uniform random pairs, answer cache off", Points: rate[key{"uniform", false}], Dashed: true},
			{Name: hot + ", cache on", Points: rate[key{"hot", true}]},
			{Name: hot + ", cache off", Points: rate[key{"hot", false}], Dashed: true},
			{Name: "target: 10^6 pairs/s for p ≤ 1e-4", Points: plotter.XYs{{X: prm.Probs[0], Y: 1e6}, {X: 1e-4, Y: 1e6}}, Line: true, Dashed: true},
		},
	}
	concurrent := bench.Chart{
		Title:  fmt.Sprintf("Fraction of random pairs answered concurrent, G(n=%d, p)", prm.Events),
		XLabel: "edge probability p (log)",
		YLabel: "fraction of pairs concurrent",
		LogX:   true, YFrom0: true,
		LegendLeft: true, LegendBottom: true,
		Series: []bench.Series{{Name: "uniform random pairs", Points: conc}},
	}
	return map[string]bench.Chart{"query.png": throughput, "query_concurrent.png": concurrent}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
