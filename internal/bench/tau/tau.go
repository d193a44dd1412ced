package tau

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"gonum.org/v1/plot/plotter"

	"github.com/weft-db/weft/internal/bench"
	"github.com/weft-db/weft/internal/engine"
	"github.com/weft-db/weft/internal/order"
	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/value"
)

// Options configure `weft bench tau`: the dissertation's Figure 5.11,
// coordination messages per operation as a function of the gatekeepers'
// clock announce period τ.
type Options struct {
	// Taus are the announce periods measured [10µs … 1s, one per decade].
	Taus []time.Duration
	// Gatekeepers and Shards of the cluster [3 and 2].
	Gatekeepers, Shards int
	// Vertices preloaded [2000]; Clients issuing operations [16];
	// Duration per τ [3s]; Writes is the fraction of operations that are
	// transactions (create_edge) rather than get_node programs [0.25].
	Vertices, Clients int
	Duration          time.Duration
	Writes            float64
	Seed              uint64
	Out               string
	Progress          io.Writer
	Log               *slog.Logger
}

func (o *Options) setDefaults() {
	if len(o.Taus) == 0 {
		for d := 10 * time.Microsecond; d <= time.Second; d *= 10 {
			o.Taus = append(o.Taus, d)
		}
	}
	def := func(p *int, v int) {
		if *p <= 0 {
			*p = v
		}
	}
	def(&o.Gatekeepers, 3)
	def(&o.Shards, 2)
	def(&o.Vertices, 2000)
	def(&o.Clients, 16)
	if o.Duration <= 0 {
		o.Duration = 3 * time.Second
	}
	if o.Writes <= 0 {
		o.Writes = 0.25
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
}

// Point is one τ's measurement.
type Point struct {
	TauMicros float64 `json:"tau_us"`
	Ops       int64   `json:"ops"`
	Commits   int64   `json:"commits"`
	Programs  int64   `json:"programs"`
	Errors    int64   `json:"errors"`
	OpsPerSec float64 `json:"ops_per_sec"`
	// Announces are clock announcements between gatekeepers (periodic
	// every τ, and on demand when answers wait for stability); KronosCalls
	// are calls to the ordering service (by gatekeepers ordering commits
	// after concurrent accesses, and by shards ordering concurrent stamps).
	Announces        uint64        `json:"announces"`
	KronosCalls      uint64        `json:"kronos_calls"`
	KronosPairs      uint64        `json:"kronos_pairs"`
	AnnouncesPerOp   float64       `json:"announces_per_op"`
	KronosCallsPerOp float64       `json:"kronos_calls_per_op"`
	LatencyUS        bench.Summary `json:"latency_us"`
	CommitLatencyUS  bench.Summary `json:"commit_latency_us"`
	ProgramLatencyUS bench.Summary `json:"program_latency_us"`
}

// Run measures every τ on a fresh cluster whose roles run in this process
// behind their own gRPC servers on loopback (the cluster protocol whole).
func Run(ctx context.Context, opts Options) (*bench.Result, error) {
	opts.setDefaults()
	start, load := time.Now(), bench.LoadAvg()
	var points []Point
	for _, tau := range opts.Taus {
		p, err := runTauPoint(ctx, opts, tau)
		if err != nil {
			return nil, fmt.Errorf("τ = %v: %w", tau, err)
		}
		opts.Log.Info("tau measured", "tau", tau, "ops_per_sec", p.OpsPerSec, "announces_per_op", p.AnnouncesPerOp,
			"kronos_calls_per_op", p.KronosCallsPerOp)
		points = append(points, p)
	}
	res := &bench.Result{Benchmark: "cluster/tau", Schema: bench.SchemaVersion, Started: start.UTC().Truncate(time.Second),
		Params: map[string]any{"gatekeepers": opts.Gatekeepers, "shards": opts.Shards, "vertices": opts.Vertices,
			"clients": opts.Clients, "duration_s": opts.Duration.Seconds(), "writes": opts.Writes, "seed": opts.Seed,
			"roles": "in one process, each behind its own gRPC server on loopback; in-memory Pebble store; in-process Kronos"},
		Results: points,
		Paper: map[string]any{"weaver_figure_5_11": "announce messages per query fall and Kronos messages per query rise as τ grows " +
			"from 10µs to 1s; an intermediate τ balances them"},
		Notes: []string{"Weft's gatekeepers answer only once every peer has merged the answered stamp (PeerAck, docs/cluster.md): " +
			"a gatekeeper with answers waiting announces at once, so announces do not fall to zero as τ grows, unlike Weaver's."},
	}
	res.Seconds = bench.Round(time.Since(start).Seconds(), 3)
	res.Env = bench.CurrentEnv()
	res.Env.LoadAvgStart, res.Env.LoadAvgEnd = load, bench.LoadAvg()
	if opts.Out != "" {
		var ann, kro, lat plotter.XYs
		for _, p := range points {
			ann = append(ann, plotter.XY{X: p.TauMicros, Y: max(p.AnnouncesPerOp, 1e-4)})
			kro = append(kro, plotter.XY{X: p.TauMicros, Y: max(p.KronosCallsPerOp, 1e-4)})
			lat = append(lat, plotter.XY{X: p.TauMicros, Y: max(p.LatencyUS.P50, 1)})
		}
		c := bench.Chart{Title: fmt.Sprintf("Coordination per operation vs τ (%d gatekeepers, %d shards)", opts.Gatekeepers, opts.Shards),
			XLabel: "announce period τ (µs)", YLabel: "messages per operation", LogX: true, LogY: true,
			Series: []bench.Series{{Name: "gatekeeper announces", Points: ann}, {Name: "Kronos calls", Points: kro}}}
		if err := c.Save(filepath.Join(opts.Out, "tau.png")); err != nil {
			return res, err
		}
		l := bench.Chart{Title: "Median operation latency vs τ", XLabel: "announce period τ (µs)", YLabel: "p50 latency (µs)",
			LogX: true, LogY: true, Series: []bench.Series{{Name: "p50", Points: lat}}}
		if err := l.Save(filepath.Join(opts.Out, "tau-latency.png")); err != nil {
			return res, err
		}
		res.Plots = []string{"tau.png", "tau-latency.png"}
		if err := bench.WriteJSON(opts.Out, "tau", res); err != nil {
			return res, err
		}
	}
	return res, nil
}

func tauVertex(i int) string { return "t" + strconv.Itoa(i) }

func runTauPoint(ctx context.Context, o Options, tau time.Duration) (Point, error) {
	c, err := engine.StartLocalCluster(engine.LocalClusterConfig{Gatekeepers: o.Gatekeepers, Shards: o.Shards,
		AnnounceEvery: tau, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		return Point{}, err
	}
	defer c.Close()
	gk := c.Gatekeepers
	for lo := 0; lo < o.Vertices; lo += 500 {
		var ops []txn.Op
		for i := lo; i < min(lo+500, o.Vertices); i++ {
			ops = append(ops, txn.Op{Kind: txn.CreateVertex, Vertex: tauVertex(i)},
				txn.Op{Kind: txn.SetVertexProp, Vertex: tauVertex(i), Key: "n", Value: value.I64(int64(i))})
		}
		if _, err := gk[0].Commit(ctx, nil, ops); err != nil {
			return Point{}, fmt.Errorf("loading: %w", err)
		}
	}
	local := c.Oracle.(*order.Local)
	calls0, pairs0 := local.Calls()
	ann0 := c.Announces()
	type clientStats struct {
		all, commits, progs bench.Hist
		errors              int64
		firstErr            error
	}
	stats := make([]clientStats, o.Clients)
	rctx, cancel := context.WithTimeout(ctx, o.Duration)
	defer cancel()
	bar := bench.NewBar(o.Progress, int64(o.Duration/time.Millisecond), fmt.Sprintf("tau %v", tau))
	begun := time.Now()
	var wg sync.WaitGroup
	for w := range o.Clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := bench.NewRand(o.Seed, uint64(w))
			st := &stats[w]
			for rctx.Err() == nil {
				g := gk[r.IntN(len(gk))]
				v := tauVertex(r.IntN(o.Vertices))
				t0 := time.Now()
				var err error
				write := r.Float64() < o.Writes
				// An operation begun in the window runs to its end: the
				// window's deadline is not the operation's.
				octx, ocancel := context.WithTimeout(ctx, 30*time.Second)
				if write {
					_, err = g.Commit(octx, nil, []txn.Op{{Kind: txn.CreateEdge, Vertex: v, Dst: tauVertex(r.IntN(o.Vertices))}})
				} else {
					_, err = g.Run(octx, "get_node", json.RawMessage(`{"node":"`+v+`"}`), nil)
				}
				ocancel()
				d := time.Since(t0).Nanoseconds()
				if err != nil {
					if ctx.Err() == nil && !errors.Is(err, engine.ErrAborted) {
						st.errors++
						if st.firstErr == nil {
							st.firstErr = err
						}
					}
					continue
				}
				st.all.Record(d)
				if write {
					st.commits.Record(d)
				} else {
					st.progs.Record(d)
				}
			}
		}()
	}
	go func() {
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-rctx.Done():
				return
			case <-t.C:
				_ = bar.Set64(int64(time.Since(begun) / time.Millisecond))
			}
		}
	}()
	wg.Wait()
	elapsed := time.Since(begun) // includes the operations finishing after the window
	_ = bar.Finish()
	calls1, pairs1 := local.Calls()
	var all, commits, progs bench.Hist
	p := Point{TauMicros: float64(tau) / float64(time.Microsecond), Announces: c.Announces() - ann0,
		KronosCalls: calls1 - calls0, KronosPairs: pairs1 - pairs0}
	var firstErr error
	for i := range stats {
		all.Merge(&stats[i].all)
		commits.Merge(&stats[i].commits)
		progs.Merge(&stats[i].progs)
		p.Errors += stats[i].errors
		if firstErr == nil {
			firstErr = stats[i].firstErr
		}
	}
	p.Ops, p.Commits, p.Programs = int64(all.Count()), int64(commits.Count()), int64(progs.Count())
	if p.Ops == 0 {
		return p, errors.New("no operation completed")
	}
	if p.Errors > 0 {
		return p, fmt.Errorf("%d operations failed (first: %v)", p.Errors, firstErr)
	}
	p.OpsPerSec = bench.Round(float64(p.Ops)/elapsed.Seconds(), 0)
	p.AnnouncesPerOp = bench.Round(float64(p.Announces)/float64(p.Ops), 4)
	p.KronosCallsPerOp = bench.Round(float64(p.KronosCalls)/float64(p.Ops), 4)
	p.LatencyUS, p.CommitLatencyUS, p.ProgramLatencyUS = all.SummaryUS(), commits.SummaryUS(), progs.SummaryUS()
	return p, nil
}
