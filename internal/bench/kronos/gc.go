package kronos

import (
	"context"
	"fmt"
	"slices"

	"gonum.org/v1/plot/plotter"

	"github.com/weft-db/weft/internal/bench"
	"github.com/weft-db/weft/internal/kronos"
)

// GCParams sizes the garbage-collection benchmark.
type GCParams struct {
	MaxLog2 int `json:"max_log2_length"` // chains of length 2^0 … 2^MaxLog2
	Reps    int `json:"chains_per_length"`
}

func gcParams(quick bool) GCParams {
	if quick {
		return GCParams{MaxLog2: 14, Reps: 10}
	}
	return GCParams{MaxLog2: 19, Reps: 100}
}

// GCPoint is the time of the ReleaseRefs call that collects a whole chain.
type GCPoint struct {
	Length     int     `json:"length"`
	Chains     int     `json:"chains"`
	MedianNs   float64 `json:"median_ns"`
	P10Ns      float64 `json:"p10_ns"`
	P90Ns      float64 `json:"p90_ns"`
	MinNs      float64 `json:"min_ns"`
	MaxNs      float64 `json:"max_ns"`
	NsPerEvent float64 `json:"ns_per_event"` // median / length
	// Descheduled releases were timed by CPU time: the thread lost the CPU.
	Descheduled int `json:"descheduled"`
}

func (r *kronosRun) gc(ctx context.Context) (*bench.Result, error) {
	prm := r.prm.gc
	total := int64(0)
	for l := range prm.MaxLog2 + 1 {
		total += int64(prm.Reps) << l
	}
	bar := bench.NewBar(r.opts.Progress, total, "gc")
	defer bar.Finish()
	g, err := kronos.New(kronos.DefaultConfig())
	if err != nil {
		return nil, err
	}
	defer lockThread()()
	var points []GCPoint
	var b chainBuilder
	for l := range prm.MaxLog2 + 1 {
		length := 1 << l
		times := make([]float64, 0, prm.Reps)
		b.descheduled = 0
		for len(times) < prm.Reps {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			k := min(prm.Reps-len(times), chainGroup(length))
			if times, err = b.collectChains(g, length, k, times); err != nil {
				return nil, fmt.Errorf("length %d: %w", length, err)
			}
			_ = bar.Add(k * length)
		}
		s := bench.Summarize(times)
		points = append(points, GCPoint{
			Length: length, Chains: len(times), MedianNs: s.P50,
			P10Ns: bench.Percentile(sortedCopy(times), 0.10), P90Ns: s.P90, MinNs: s.Min, MaxNs: s.Max,
			NsPerEvent: bench.Round(s.P50/float64(length), 2), Descheduled: b.descheduled,
		})
	}
	xs, ys := make([]float64, len(points)), make([]float64, len(points))
	for i, p := range points {
		xs[i], ys[i] = float64(p.Length), p.MedianNs
	}
	lin, loglog := bench.RelativeLinearFit(xs, ys), bench.LogLogFit(xs, ys)
	res := &bench.Result{
		Params: prm,
		Results: map[string]any{
			"points": points,
			// ns = slope·length + intercept, fitted to the medians by least
			// squares on relative error (weights 1/ns²), so short chains count.
			"linear_fit_ns": bench.Fit{Slope: bench.Round(lin.Slope, 3), Intercept: bench.Round(lin.Intercept, 0), R2: bench.Round(lin.R2, 6)},
			// log10 ns = slope·log10 length + intercept: slope 1 is linear growth.
			"loglog_fit": bench.Fit{Slope: bench.Round(loglog.Slope, 4), Intercept: bench.Round(loglog.Intercept, 4), R2: bench.Round(loglog.R2, 6)},
		},
		Paper: map[string]any{
			"figure": "Figure 11: time to release the reference that collects a path of 2^0 … 2^19 events; grows linearly",
		},
		Notes: []string{
			"Each chain e1 → e2 → … → eL is built with Must AssignOrder batches; every reference but e1's is released (nothing is collected, each event has an in-edge), then ReleaseRefs([e1]) is timed alone; it must collect exactly L events.",
			"Short chains are built in groups that fill a 4096-event table chunk, and each head is then released and timed on its own. Built one at a time, every short chain would sit alone in a freshly allocated chunk (the core frees a chunk when its last event is collected) and the release would time that chunk's first-touch page faults (~10 µs), not the collection.",
			"One graph serves every chain, so the edge arena is warm. Timings include one time.Now pair (~tens of ns), which dominates the shortest chains.",
			"A release during which the thread was descheduled by the OS is timed by the thread's CPU time instead of the wall clock (internal/bench/kronos/stopwatch.go); their count per length is descheduled.",
		},
	}
	plots, err := r.savePlots(gcCharts(prm, points, lin))
	res.Plots = plots
	return res, err
}

func sortedCopy(xs []float64) []float64 {
	out := slices.Clone(xs)
	slices.Sort(out)
	return out
}

// chainBuilder builds groups of chains, reusing its scratch slices.
type chainBuilder struct {
	ids    []kronos.EventID // the group's chains, one after another
	length int
	as     []kronos.Assignment
	res    []kronos.AssignResult
	rel    []kronos.EventID
	// descheduled counts releases timed by CPU time (see stopwatch).
	descheduled int
}

// chainBatch bounds the pairs and ids of one call while building chains.
const chainBatch = 4096

// chainGroup is how many chains of a length are built together: enough to
// fill a table chunk. The core frees a chunk when its last event is
// collected, so building one short chain at a time would allocate a fresh
// chunk per chain and time its first-touch page faults instead of the GC.
func chainGroup(length int) int { return max(1, chainBatch/length) }

// build creates count chains e1 → e2 → … → e_length, ordered with Must
// batches, and releases every reference but each head's (which collects
// nothing: each released event has an in-edge).
func (b *chainBuilder) build(g *kronos.Graph, length, count int) error {
	b.ids, b.length = b.ids[:0], length
	total := length * count
	var err error
	for len(b.ids) < total {
		if b.ids, err = g.CreateEvents(b.ids, min(total-len(b.ids), chainBatch)); err != nil {
			return err
		}
	}
	b.as = b.as[:0]
	flush := func() error {
		if len(b.as) == 0 {
			return nil
		}
		b.res, err = g.AssignOrder(b.res[:0], b.as)
		b.as = b.as[:0]
		return err
	}
	for i := range total - 1 {
		if (i+1)%length == 0 {
			continue // the last event of a chain: the next one starts a new chain
		}
		b.as = append(b.as, kronos.Assignment{A: kronos.ID(b.ids[i]), Order: kronos.Before, B: kronos.ID(b.ids[i+1]), Strength: kronos.Must})
		if len(b.as) == chainBatch {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := flush(); err != nil {
		return err
	}
	rel := b.rel[:0]
	for i, id := range b.ids {
		if i%length != 0 {
			rel = append(rel, id)
		}
		if len(rel) == chainBatch || (i == total-1 && len(rel) > 0) {
			n, err := g.ReleaseRefs(rel)
			if err != nil {
				return err
			}
			if n != 0 {
				return fmt.Errorf("bench: releasing chains' inner references collected %d events", n)
			}
			rel = rel[:0]
		}
	}
	b.rel = rel
	return nil
}

// releaseHead releases the reference of chain i of the group and returns the
// events collected.
func (b *chainBuilder) releaseHead(g *kronos.Graph, i int) (int, error) {
	return g.ReleaseRefs(b.ids[i*b.length : i*b.length+1])
}

// collectChains builds count chains of length events and times the release
// of each head on its own, checking that it collects exactly its chain.
func (b *chainBuilder) collectChains(g *kronos.Graph, length, count int, ns []float64) ([]float64, error) {
	live := g.Stats().Events
	if err := b.build(g, length, count); err != nil {
		return ns, err
	}
	for i := range count {
		var sw stopwatch
		sw.start()
		n, err := b.releaseHead(g, i)
		d, _, desched := sw.stop()
		if err != nil {
			return ns, err
		}
		if n != length {
			return ns, fmt.Errorf("bench: releasing a head collected %d events, want %d", n, length)
		}
		ns = append(ns, float64(d.Nanoseconds()))
		b.descheduled += btoi(desched)
	}
	if got := g.Stats().Events; got != live {
		return ns, fmt.Errorf("bench: %d events live after collecting the chains, want %d", got, live)
	}
	return ns, nil
}

func gcCharts(prm GCParams, points []GCPoint, fit bench.Fit) map[string]bench.Chart {
	var med, p90, fitted plotter.XYs
	for _, p := range points {
		x := float64(p.Length)
		med = append(med, plotter.XY{X: x, Y: p.MedianNs / 1e3})
		p90 = append(p90, plotter.XY{X: x, Y: p.P90Ns / 1e3})
		if y := fit.Slope*x + fit.Intercept; y > 0 {
			fitted = append(fitted, plotter.XY{X: x, Y: y / 1e3})
		}
	}
	return map[string]bench.Chart{"gc.png": {
		Title:  fmt.Sprintf("Kronos strict GC: releasing the head of a chain (%d chains per length)", prm.Reps),
		XLabel: "events collected by one ReleaseRefs (chain length, log)",
		YLabel: "time of the ReleaseRefs call (µs, log)",
		LogX:   true, LogY: true,
		LegendLeft: true,
		Series: []bench.Series{
			{Name: "median", Points: med},
			{Name: "90th percentile", Points: p90},
			{Name: fmt.Sprintf("linear fit: %.1f ns/event + %.0f ns", fit.Slope, fit.Intercept), Points: fitted, Line: true, Dashed: true},
		},
	}}
}
