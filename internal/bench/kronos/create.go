package kronos

import (
	"context"
	"fmt"
	"io"
	"time"

	"gonum.org/v1/plot/plotter"

	"github.com/weft-db/weft/internal/bench"
)

// CreateParams sizes the event-creation latency benchmark.
type CreateParams struct {
	Calls  int    `json:"calls"`  // timed sequential CreateEvent calls per mode
	Warmup int    `json:"warmup"` // untimed calls first
	Addr   string `json:"addr,omitempty"`
}

func createParams(quick bool, addr string) CreateParams {
	p := CreateParams{Calls: 10_000, Warmup: 1_000, Addr: addr}
	if quick {
		p.Calls, p.Warmup = 2_000, 200
	}
	return p
}

// createFunc is the call the create benchmark times: one event creation,
// one round trip.
type createFunc func(ctx context.Context) error

// createTarget is one server to time: a durability mode of an in-process
// server, or an existing server at --addr.
type createTarget struct {
	Mode string // "sync", "nosync" or "external"
	Sync *bool  // the server's Sync setting, nil when unknown
	// Open starts the server if need be and dials it; closing stops both.
	Open func(ctx context.Context) (createFunc, func(), error)
}

// CreateMode is the latency distribution of one target, in microseconds.
type CreateMode struct {
	Mode        string           `json:"mode"`
	Sync        *bool            `json:"sync,omitempty"`
	LatencyUs   bench.Summary    `json:"latency_us"`
	CallsPerSec float64          `json:"calls_per_sec"` // sequential: 1 / mean latency
	CDF         []bench.CDFPoint `json:"cdf_us"`        // thinned to ≤ 200 steps
}

func (r *kronosRun) create(ctx context.Context) (*bench.Result, error) {
	prm := r.prm.create
	targets := createTargets(prm.Addr, r.log)
	var modes []CreateMode
	lat := map[string][]float64{}
	for _, t := range targets {
		us, err := timeCreates(ctx, t, prm, r.opts.Progress)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", t.Mode, err)
		}
		lat[t.Mode] = us
		sorted := sortedCopy(us)
		s := bench.Summarize(us)
		roundSummary(&s, 2)
		modes = append(modes, CreateMode{
			Mode: t.Mode, Sync: t.Sync, LatencyUs: s,
			CallsPerSec: bench.Round(1e6/s.Mean, 0), CDF: roundCDF(bench.CDF(sorted, 200), 2),
		})
		r.log.Info("create", "mode", t.Mode, "p50_us", s.P50, "p99_us", s.P99)
	}
	res := &bench.Result{
		Params:  prm,
		Results: map[string]any{"modes": modes},
		Paper: map[string]any{
			"figure": "Figure 9: CDF of event_create latency, 10,000 sequential calls, Python client and server on one machine",
			"p50_us": 44,
			"p99_us": 57,
		},
		Notes: []string{
			"Sequential CreateEvent calls from one Go client over gRPC on loopback, client and server in this process, after Warmup untimed calls; each call is timed on its own.",
			"sync: the server fsyncs every commit; nosync: commits survive a process crash but not a power loss. external: a server at --addr, durability unknown.",
		},
	}
	var series []bench.Series
	for _, m := range modes {
		var pts plotter.XYs
		for i, x := range sortedCopy(lat[m.Mode]) {
			pts = append(pts, plotter.XY{X: x, Y: float64(i+1) / float64(len(lat[m.Mode]))})
		}
		series = append(series, bench.Series{Name: createLabel(m), Points: pts, Line: true})
	}
	plots, err := r.savePlots(map[string]bench.Chart{"create.png": {
		Title:        fmt.Sprintf("Kronos event creation latency CDF: %d sequential CreateEvent calls over gRPC (loopback)", prm.Calls),
		XLabel:       "latency (µs, log)",
		YLabel:       "fraction of calls at or below",
		LogX:         true,
		YFrom0:       true,
		LegendBottom: true,
		Series:       series,
	}})
	res.Plots = plots
	return res, err
}

func createLabel(m CreateMode) string {
	return fmt.Sprintf("%s: p50 %.0f µs, p99 %.0f µs", m.Mode, m.LatencyUs.P50, m.LatencyUs.P99)
}

// timeCreates opens t, makes prm.Warmup untimed calls, then returns the
// latency of each of prm.Calls sequential calls in microseconds.
func timeCreates(ctx context.Context, t createTarget, prm CreateParams, progress io.Writer) ([]float64, error) {
	create, closeFn, err := t.Open(ctx)
	if err != nil {
		return nil, err
	}
	defer closeFn()
	for range prm.Warmup {
		if err := create(ctx); err != nil {
			return nil, fmt.Errorf("warm-up: %w", err)
		}
	}
	bar := bench.NewBar(progress, int64(prm.Calls), "create "+t.Mode)
	defer bar.Finish()
	us := make([]float64, 0, prm.Calls)
	for i := range prm.Calls {
		t0 := time.Now()
		err := create(ctx)
		d := time.Since(t0)
		if err != nil {
			return nil, fmt.Errorf("call %d: %w", i, err)
		}
		us = append(us, float64(d.Nanoseconds())/1e3)
		if i%256 == 255 {
			_ = bar.Add(256)
		}
	}
	return us, nil
}

func roundSummary(s *bench.Summary, d int) {
	for _, f := range []*float64{&s.Min, &s.Mean, &s.P50, &s.P90, &s.P99, &s.P999, &s.Max} {
		*f = bench.Round(*f, d)
	}
}

func roundCDF(c []bench.CDFPoint, d int) []bench.CDFPoint {
	for i := range c {
		c[i].X = bench.Round(c[i].X, d)
		c[i].Frac = bench.Round(c[i].Frac, 6)
	}
	return c
}
