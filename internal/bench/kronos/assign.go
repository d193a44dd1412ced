package kronos

import (
	"context"
	"fmt"
	"math/rand/v2"

	"gonum.org/v1/plot/plotter"

	"github.com/weft-db/weft/internal/bench"
	"github.com/weft-db/weft/internal/kronos"
)

// AssignParams sizes the assign_order benchmark.
type AssignParams struct {
	Events     int `json:"events"`      // events each graph grows to
	BlockPairs int `json:"block_pairs"` // pairs per timed block of calls
	Windows    int `json:"windows"`     // reporting windows along the growth
}

func assignParams(quick bool) AssignParams {
	p := AssignParams{Events: 1_000_000, BlockPairs: 1000, Windows: 20}
	if quick {
		p.Events = 100_000
	}
	return p
}

// assignKind is one shape of AssignOrder call.
type assignKind struct {
	Name     string
	Strength kronos.Strength
	Pairs    int // pairs per call
}

var assignKinds = []assignKind{
	{"prefer1", kronos.Prefer, 1},
	{"must10", kronos.Must, 10},
	{"must100", kronos.Must, 100},
}

// AssignSeries is one kind of call on its own growing graph.
type AssignSeries struct {
	Kind         string  `json:"kind"`
	Strength     string  `json:"strength"`
	PairsPerCall int     `json:"pairs_per_call"`
	Calls        int     `json:"calls"`
	NsPerCall    float64 `json:"ns_per_call"` // median over blocks
	NsPerPair    float64 `json:"ns_per_pair"`
	Blocks       int     `json:"blocks"`
	// DescheduledBlocks were timed by CPU time: the thread lost the CPU.
	DescheduledBlocks int           `json:"descheduled_blocks"`
	Windows           []AssignPoint `json:"windows"`
}

// AssignPoint is one window of the growth: blocks whose graph had up to
// Events live events.
type AssignPoint struct {
	Events       uint64  `json:"events"`
	NsPerCallP50 float64 `json:"ns_per_call_p50"` // over the window's blocks (each the mean of its calls)
	NsPerCallP99 float64 `json:"ns_per_call_p99"`
	NsPerPairP50 float64 `json:"ns_per_pair_p50"`
}

func (r *kronosRun) assign(ctx context.Context) (*bench.Result, error) {
	prm := r.prm.assign
	bar := bench.NewBar(r.opts.Progress, int64(len(assignKinds)*prm.Events), "assign")
	defer bar.Finish()
	var series []AssignSeries
	for i, k := range assignKinds {
		s, err := assignGrow(ctx, prm, k, bench.NewRand(r.opts.Seed+uint64(i), 3), func(n int) { _ = bar.Add(n) })
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k.Name, err)
		}
		r.log.Info("assign", "kind", k.Name, "ns_per_call", s.NsPerCall)
		series = append(series, s)
	}
	res := &bench.Result{
		Params:  prm,
		Results: map[string]any{"series": series},
		Paper: map[string]any{
			"figure":     "§4.2 Dependency creation (no figure)",
			"latency_us": "49 µs for 14.7% and 50 µs for 85.3% of 1,000,000 assign_order calls that need no traversal, through the Python client (chronosbench/edge_creation.py), so including RPC and the creation of the events",
		},
		Notes: []string{
			"In-process AssignOrder on the pure core, one goroutine. Each graph grows to Events events: every call orders fresh events (created untimed just before their block) before uniformly random older ones, so the graph is a random recursive tree with edges toward the root, and each pair's cycle check walks its older event's path to the root (≈ ln N events).",
			"Calls are timed in blocks of BlockPairs pairs (1000 single-pair calls, 100 of 10, 10 of 100): a block's mean is one sample, so the figures exclude timer overhead but do not show single-call tails.",
			"A block during which the thread was descheduled by the OS is timed by the thread's CPU time instead of the wall clock (internal/bench/kronos/stopwatch.go); their count is descheduled_blocks.",
		},
	}
	plots, err := r.savePlots(assignCharts(prm, series))
	res.Plots = plots
	return res, err
}

// assignGrow grows a graph to prm.Events events by kind's calls, timing
// every block of calls.
func assignGrow(ctx context.Context, prm AssignParams, k assignKind, rng *rand.Rand, progress func(int)) (AssignSeries, error) {
	defer lockThread()()
	s := AssignSeries{Kind: k.Name, Strength: strengthName(k.Strength), PairsPerCall: k.Pairs}
	g, err := kronos.New(kronos.DefaultConfig())
	if err != nil {
		return s, err
	}
	root := g.CreateEvent()
	calls := max(1, prm.BlockPairs/k.Pairs)
	blockEvents := calls * k.Pairs
	window := max(1, prm.Events/prm.Windows)
	as := make([]kronos.Assignment, blockEvents)
	var res []kronos.AssignResult
	var all, perCall []float64
	fresh := make([]kronos.EventID, 0, blockEvents)
	for int(g.Stats().Events)+blockEvents <= prm.Events {
		if err := ctx.Err(); err != nil {
			return s, err
		}
		older := int(g.Stats().NextID - root) // events root … root+older−1
		fresh, err = g.CreateEvents(fresh[:0], blockEvents)
		if err != nil {
			return s, err
		}
		for i, id := range fresh {
			as[i] = kronos.Assignment{
				A: kronos.ID(id), Order: kronos.Before,
				B: kronos.ID(root + kronos.EventID(rng.IntN(older))), Strength: k.Strength,
			}
		}
		var sw stopwatch
		sw.start()
		for c := range calls {
			if res, err = g.AssignOrder(res[:0], as[c*k.Pairs:(c+1)*k.Pairs]); err != nil {
				break
			}
		}
		d, _, desched := sw.stop()
		if err != nil {
			return s, err
		}
		s.DescheduledBlocks += btoi(desched)
		ns := float64(d.Nanoseconds()) / float64(calls)
		all = append(all, ns)
		s.Blocks++
		perCall = append(perCall, ns)
		s.Calls += calls
		progress(blockEvents)
		if n := g.Stats().Events; int(n)/window != (int(n)-blockEvents)/window || int(n)+blockEvents > prm.Events {
			sum := bench.Summarize(perCall)
			s.Windows = append(s.Windows, AssignPoint{
				Events: n, NsPerCallP50: bench.Round(sum.P50, 1), NsPerCallP99: bench.Round(sum.P99, 1),
				NsPerPairP50: bench.Round(sum.P50/float64(k.Pairs), 1),
			})
			perCall = perCall[:0]
		}
	}
	if got, want := g.Stats().Edges, uint64(s.Calls*k.Pairs); got != want {
		return s, fmt.Errorf("bench: graph holds %d edges, want %d", got, want)
	}
	s.NsPerCall = bench.Round(bench.Median(all), 1)
	s.NsPerPair = bench.Round(s.NsPerCall/float64(k.Pairs), 1)
	return s, nil
}

func strengthName(s kronos.Strength) string {
	if s == kronos.Must {
		return "must"
	}
	return "prefer"
}

func assignCharts(prm AssignParams, series []AssignSeries) map[string]bench.Chart {
	perCall := bench.Chart{
		Title:      fmt.Sprintf("Kronos assign_order time per call on a growing graph (to %d events), in-process", prm.Events),
		XLabel:     "live events in the graph (millions)",
		YLabel:     "time per AssignOrder call (µs, log; median of blocks)",
		LogY:       true,
		Headroom:   0.3,
		LegendLeft: true,
	}
	perPair := bench.Chart{
		Title:      "Kronos assign_order time per ordered pair on a growing graph, in-process",
		XLabel:     "live events in the graph (millions)",
		YLabel:     "time per pair (ns; median of blocks)",
		YFrom0:     true,
		Headroom:   0.3,
		LegendLeft: true,
	}
	for _, s := range series {
		var c, p plotter.XYs
		for _, w := range s.Windows {
			x := float64(w.Events) / 1e6
			c = append(c, plotter.XY{X: x, Y: w.NsPerCallP50 / 1e3})
			p = append(p, plotter.XY{X: x, Y: w.NsPerPairP50})
		}
		name := fmt.Sprintf("%s: %d pair(s) per call, %s", s.Kind, s.PairsPerCall, s.Strength)
		perCall.Series = append(perCall.Series, bench.Series{Name: name, Points: c})
		perPair.Series = append(perPair.Series, bench.Series{Name: name, Points: p})
	}
	return map[string]bench.Chart{"assign.png": perCall, "assign_per_pair.png": perPair}
}
