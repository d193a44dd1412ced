package kronos

import (
	"context"
	"fmt"
	"runtime"

	"gonum.org/v1/plot/plotter"

	"github.com/weft-db/weft/internal/bench"
	"github.com/weft-db/weft/internal/kronos"
)

// MemoryParams sizes the memory benchmark.
type MemoryParams struct {
	MaxEvents   int `json:"max_events"`
	FirstEvents int `json:"first_events"` // the series doubles from here to MaxEvents
}

func memoryParams(quick bool, maxEvents int) MemoryParams {
	p := MemoryParams{MaxEvents: 100_000_000, FirstEvents: 1 << 14}
	if quick {
		p.MaxEvents = 1_000_000
	}
	if maxEvents > 0 {
		p.MaxEvents = maxEvents
	}
	p.FirstEvents = min(p.FirstEvents, p.MaxEvents)
	return p
}

// MemoryPoint is the memory held by a graph of Events events, each with one
// reference and no edges, above the empty graph.
type MemoryPoint struct {
	Events        int     `json:"events"`
	HeapBytes     int64   `json:"heap_bytes"` // HeapAlloc after GC, minus the empty graph's
	BytesPerEvent float64 `json:"heap_bytes_per_event"`
	RSSBytes      int64   `json:"rss_bytes"` // resident set after returning free memory to the OS, minus the empty graph's
	RSSPerEvent   float64 `json:"rss_bytes_per_event"`
}

// memorySizes is the geometric series FirstEvents·2^k below MaxEvents, then
// MaxEvents.
func memorySizes(prm MemoryParams) []int {
	var sizes []int
	for n := prm.FirstEvents; n < prm.MaxEvents; n *= 2 {
		sizes = append(sizes, n)
	}
	return append(sizes, prm.MaxEvents)
}

func (r *kronosRun) memory(ctx context.Context) (*bench.Result, error) {
	prm := r.prm.memory
	base0 := bench.SettledHeap()
	rss0 := bench.SettledRSS()
	g, err := kronos.New(kronos.DefaultConfig())
	if err != nil {
		return nil, err
	}
	base, rss := bench.SettledHeap(), bench.SettledRSS()
	bar := bench.NewBar(r.opts.Progress, int64(prm.MaxEvents), "memory")
	defer bar.Finish()
	var points []MemoryPoint
	made := 0
	for _, n := range memorySizes(prm) {
		for made < n {
			if made%(1<<20) == 0 {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
			}
			g.CreateEvent()
			made++
			if made%(1<<16) == 0 {
				_ = bar.Add(1 << 16)
			}
		}
		if got := g.Stats().Events; got != uint64(n) {
			return nil, fmt.Errorf("bench: graph holds %d events, created %d", got, n)
		}
		heap, res := int64(bench.SettledHeap()-base), bench.SettledRSS()-rss
		points = append(points, MemoryPoint{
			Events: n, HeapBytes: heap, BytesPerEvent: bench.Round(float64(heap)/float64(n), 2),
			RSSBytes: res, RSSPerEvent: bench.Round(float64(res)/float64(n), 2),
		})
		r.log.Info("memory", "events", n, "heap_bytes_per_event", points[len(points)-1].BytesPerEvent)
	}
	runtime.KeepAlive(g)
	xs, heaps, rsss := make([]float64, len(points)), make([]float64, len(points)), make([]float64, len(points))
	for i, p := range points {
		xs[i], heaps[i], rsss[i] = float64(p.Events), float64(p.HeapBytes), float64(p.RSSBytes)
	}
	heapFit, rssFit := bench.LinearFit(xs, heaps), bench.LinearFit(xs, rsss)
	res := &bench.Result{
		Params: prm,
		Results: map[string]any{
			"points":                   points,
			"heap_fit_bytes_per_event": roundFit(heapFit),
			"rss_fit_bytes_per_event":  roundFit(rssFit),
			"empty_graph_heap_bytes":   int64(base - base0),
			"empty_graph_rss_bytes":    rss - rss0,
		},
		Paper: map[string]any{
			"figure":          "Figure 10: 100 million events, one reference each, in 12 GB (maximum resident set size)",
			"bytes_per_event": 120,
		},
		Target: map[string]any{"bytes_per_event_max": 64},
		Notes: []string{
			"Events are created one at a time with CreateEvent (one reference, no edges) into one graph; at each size the heap is measured with runtime.ReadMemStats after two runtime.GC calls, and the resident set (/proc/self/statm) after debug.FreeOSMemory.",
			"The empty graph (mostly the answer cache) is the baseline and is reported separately; the fits' slopes are the cost of one more event.",
			"The paper's figure is the process's maximum resident set size, which includes allocator slack from array doubling. The RSS column here is lower than the heap: an event with no edges writes only its reference count, and the other per-event arrays of its table chunk stay untouched zero pages that the kernel has not made resident yet (they become resident once edges or queries touch them). The heap figure is the one to compare with the target.",
		},
	}
	plots, err := r.savePlots(memoryCharts(prm, points, heapFit))
	res.Plots = plots
	return res, err
}

func roundFit(f bench.Fit) bench.Fit {
	return bench.Fit{Slope: bench.Round(f.Slope, 3), Intercept: bench.Round(f.Intercept, 0), R2: bench.Round(f.R2, 6)}
}

func memoryCharts(prm MemoryParams, points []MemoryPoint, fit bench.Fit) map[string]bench.Chart {
	var heap, rss, perHeap, perRSS plotter.XYs
	for _, p := range points {
		x := float64(p.Events) / 1e6
		heap = append(heap, plotter.XY{X: x, Y: float64(p.HeapBytes) / 1e6})
		rss = append(rss, plotter.XY{X: x, Y: float64(p.RSSBytes) / 1e6})
		perHeap = append(perHeap, plotter.XY{X: float64(p.Events), Y: p.BytesPerEvent})
		perRSS = append(perRSS, plotter.XY{X: float64(p.Events), Y: p.RSSPerEvent})
	}
	maxX := float64(prm.MaxEvents) / 1e6
	ref := func(bytesPerEvent float64) plotter.XYs {
		return plotter.XYs{{X: 0, Y: 0}, {X: maxX, Y: maxX * bytesPerEvent}}
	}
	total := bench.Chart{
		Title:      fmt.Sprintf("Kronos memory vs events (one reference, no edges), fit %.1f B/event", fit.Slope),
		XLabel:     "events (millions)",
		YLabel:     "memory above the empty graph (MB)",
		YFrom0:     true,
		LegendLeft: true,
		Series: []bench.Series{
			{Name: "Go heap (HeapAlloc after GC)", Points: heap},
			{Name: "resident set (RSS; never-touched zero pages are not resident)", Points: rss},
			{Name: "paper: 120 B/event", Points: ref(120), Line: true, Dashed: true},
			{Name: "target: 64 B/event", Points: ref(64), Line: true, Dashed: true},
		},
	}
	flat := func(y float64) plotter.XYs {
		return plotter.XYs{{X: float64(points[0].Events), Y: y}, {X: float64(prm.MaxEvents), Y: y}}
	}
	per := bench.Chart{
		Title:  "Kronos memory per event (one reference, no edges)",
		XLabel: "events (log)",
		YLabel: "bytes per event (above the empty graph)",
		LogX:   true, YFrom0: true,
		Headroom: 0.25,
		Series: []bench.Series{
			{Name: "Go heap (HeapAlloc after GC)", Points: perHeap},
			{Name: "resident set (RSS)", Points: perRSS},
			{Name: "paper: 120 B/event", Points: flat(120), Line: true, Dashed: true},
			{Name: "target: 64 B/event", Points: flat(64), Line: true, Dashed: true},
		},
	}
	return map[string]bench.Chart{"memory.png": total, "memory_per_event.png": per}
}
