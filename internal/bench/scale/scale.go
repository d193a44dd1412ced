package scale

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/weft-db/weft/client/weft"
	"github.com/weft-db/weft/internal/bench"
	"github.com/weft-db/weft/internal/bench/tao"
)

// Options configures a run. Zero fields take the defaults in brackets.
type Options struct {
	// Binary is the weft binary whose `cluster up` starts each cluster
	// ["": this executable].
	Binary string
	// Gatekeepers and Shards span the grid [1,2,4 × 1,2,4,8; --quick: the
	// shapes 1×1 and 2×2]. Shapes lists the shapes explicitly instead.
	Gatekeepers, Shards []int
	Shapes              []Shape
	// Kronos and Coord are the replica counts of each cluster [1 and 1].
	Kronos, Coord int
	// Vertices of the generated TAO graph [50,000, about 170,000 edges:
	// a load of about 25 s on a busy 2-core machine; --quick 5,000].
	Vertices int
	// Duration of each measured load [10s; --quick 2s].
	Duration time.Duration
	// Clients issuing operations back to back, spread round-robin over the
	// gatekeepers [32; --quick 8]; Conns is client connections per
	// gatekeeper [2], each with Streams RunStream streams [2].
	Clients, Conns, Streams int
	// Mixes measured on every shape: tao and get_node [both].
	Mixes []string
	// LoadBatch is operations per load transaction [5000]; Loaders load
	// transactions in flight, sent to the gatekeepers in turn [1: two or
	// more abort each other's edge transactions and load slower].
	LoadBatch, Loaders int
	// IdleWindow is how long each cluster's idle CPU is measured, after
	// the load and before the first mix [2s; --quick 500ms].
	IdleWindow time.Duration
	// ModelCores is C, the cores of each machine in the model [8].
	ModelCores int
	// ReadyTimeout bounds each `cluster up` [60s].
	ReadyTimeout time.Duration
	// KeepDirs keeps each cluster's directory (data and logs) after it
	// stops [false: removed, unless the shape failed].
	KeepDirs bool
	Quick    bool
	Seed     uint64
	// Out is the directory of scale[-quick].json and its plots ("" writes none).
	Out      string
	Progress io.Writer
	Log      *slog.Logger
}

// Shape is one cluster shape of the grid.
type Shape struct {
	Gatekeepers int `json:"gatekeepers"`
	Shards      int `json:"shards"`
}

// ParseShape reads a shape written GxS ("2x4": 2 gatekeepers, 4 shards).
func ParseShape(s string) (Shape, error) {
	var sh Shape
	g, sd, ok := strings.Cut(strings.ToLower(strings.TrimSpace(s)), "x")
	var err1, err2 error
	sh.Gatekeepers, err1 = strconv.Atoi(g)
	sh.Shards, err2 = strconv.Atoi(sd)
	if !ok || err1 != nil || err2 != nil || sh.Gatekeepers < 1 || sh.Shards < 1 {
		return Shape{}, fmt.Errorf("bench: shape %q: want GxS with positive counts, e.g. 2x4", s)
	}
	return sh, nil
}

// scaleMixes are the mixes `weft bench scale` knows.
var scaleMixes = []string{"tao", "get_node"}

func (o *Options) setDefaults() {
	def := func(p *int, v int) {
		if *p <= 0 {
			*p = v
		}
	}
	if len(o.Shapes) == 0 {
		switch {
		case o.Quick && len(o.Gatekeepers) == 0 && len(o.Shards) == 0:
			o.Shapes = []Shape{{1, 1}, {2, 2}}
		default:
			gks, shards := o.Gatekeepers, o.Shards
			if len(gks) == 0 {
				gks = []int{1, 2, 4}
			}
			if len(shards) == 0 {
				shards = []int{1, 2, 4, 8}
			}
			for _, g := range gks {
				for _, s := range shards {
					o.Shapes = append(o.Shapes, Shape{g, s})
				}
			}
		}
	}
	if o.Quick {
		def(&o.Vertices, 5_000)
		def(&o.Clients, 8)
		if o.Duration <= 0 {
			o.Duration = 2 * time.Second
		}
		if o.IdleWindow <= 0 {
			o.IdleWindow = 500 * time.Millisecond
		}
	}
	if o.IdleWindow <= 0 {
		o.IdleWindow = 2 * time.Second
	}
	def(&o.Vertices, 50_000)
	def(&o.Clients, 32)
	if o.Duration <= 0 {
		o.Duration = 10 * time.Second
	}
	def(&o.Kronos, 1)
	def(&o.Coord, 1)
	def(&o.Conns, 2)
	def(&o.Streams, 2)
	def(&o.LoadBatch, 5000)
	def(&o.Loaders, 1)
	def(&o.ModelCores, 8)
	if o.ReadyTimeout <= 0 {
		o.ReadyTimeout = time.Minute
	}
	if len(o.Mixes) == 0 {
		o.Mixes = scaleMixes
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
}

func (o *Options) validate() error {
	for _, s := range o.Shapes {
		if s.Gatekeepers < 1 || s.Gatekeepers > 64 || s.Shards < 1 || s.Shards > 64 {
			return fmt.Errorf("bench: shape %d gatekeepers × %d shards: counts must be in [1, 64]", s.Gatekeepers, s.Shards)
		}
	}
	for _, m := range o.Mixes {
		if _, err := scaleMix(m); err != nil {
			return err
		}
	}
	if o.Vertices < 2 || o.Vertices > 1<<30 {
		return fmt.Errorf("bench: --vertices %d out of range [2, 2^30]", o.Vertices)
	}
	if o.Binary == "" {
		self, err := os.Executable()
		if err != nil {
			return fmt.Errorf("bench: the weft binary to start clusters with: %w", err)
		}
		o.Binary = self
	}
	return nil
}

// Name is the results' base name: scale, or scale-quick.
func (o Options) Name() string {
	if o.Quick {
		return "scale-quick"
	}
	return "scale"
}

// scaleMix returns the operation mix named m: the TAO mix, or get_node only.
func scaleMix(m string) (tao.Mix, error) {
	switch m {
	case "tao":
		return tao.NewMix("tao")
	case "get_node":
		return tao.GetNodeMix(), nil
	}
	return tao.Mix{}, fmt.Errorf("bench: unknown scale mix %q (have tao, get_node)", m)
}

// Run measures every shape of the grid in turn and returns (and writes
// to opts.Out) the result. A shape that fails is recorded with its error and
// the grid goes on; the returned error joins the failures. An interrupt
// (ctx) stops the grid after stopping the cluster it was measuring.
func Run(ctx context.Context, opts Options) (*bench.Result, error) {
	opts.setDefaults()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	start, load := time.Now(), bench.LoadAvg()
	g, err := tao.NewGraph(opts.Vertices, tao.LinkBenchNlinks, "uniform", opts.Seed)
	if err != nil {
		return nil, err
	}
	opts.Log.Info("scale: graph generated", "vertices", opts.Vertices, "edges", g.Edges(), "shapes", len(opts.Shapes))
	res := &scaleResults{ModelCores: opts.ModelCores}
	bar := bench.NewBar(opts.Progress, int64(len(opts.Shapes)*len(opts.Mixes)), "scale grid")
	var errs []error
	for _, shape := range opts.Shapes {
		if ctx.Err() != nil {
			break
		}
		pts, err := runScaleShape(ctx, opts, g, shape, func() { _ = bar.Add(1) })
		res.Points = append(res.Points, pts...)
		if err != nil {
			errs = append(errs, fmt.Errorf("%d gatekeepers × %d shards: %w", shape.Gatekeepers, shape.Shards, err))
			opts.Log.Error("scale: shape failed", "gatekeepers", shape.Gatekeepers, "shards", shape.Shards, "err", err)
		}
	}
	_ = bar.Finish()
	res.Extrapolation = extrapolate(res.Points, opts.ModelCores)
	out := opts.result(res, g)
	out.Started = start.UTC().Truncate(time.Second)
	out.Seconds = bench.Round(time.Since(start).Seconds(), 3)
	out.Env = bench.CurrentEnv()
	out.Env.LoadAvgStart = load
	if opts.Out != "" && len(res.Points) > 0 {
		plots, err := saveScalePlots(opts, res)
		out.Plots = plots
		errs = append(errs, err, bench.WriteJSON(opts.Out, opts.Name(), out))
	}
	return out, errors.Join(append(errs, ctx.Err())...)
}

// runScaleShape starts one cluster, loads the graph, measures every mix and
// stops the cluster, always (also on error and interrupt). done is called
// once per mix measured or abandoned.
func runScaleShape(ctx context.Context, o Options, g *tao.Graph, shape Shape, done func()) ([]Point, error) {
	pending := len(o.Mixes)
	defer func() {
		for range pending {
			done()
		}
	}()
	dir, err := os.MkdirTemp("", fmt.Sprintf("weft-scale-g%d-s%d-", shape.Gatekeepers, shape.Shards))
	if err != nil {
		return nil, err
	}
	o.Log.Info("scale: cluster up", "gatekeepers", shape.Gatekeepers, "shards", shape.Shards, "dir", dir)
	c, err := startScaleCluster(ctx, o.Binary, dir, shape.Gatekeepers, shape.Shards, o.Kronos, o.Coord, o.ReadyTimeout)
	var pts []Point
	if err == nil {
		pts, err = measureShape(ctx, o, g, c, shape, func() { pending--; done() })
	}
	if derr := c.down(); derr != nil {
		err = errors.Join(err, derr)
	}
	// A failed shape's directory is kept for its logs; an interrupted
	// one's is not (unless asked).
	if o.KeepDirs || (err != nil && ctx.Err() == nil) {
		o.Log.Info("scale: cluster directory kept", "dir", dir)
		for i := range pts {
			pts[i].Dir = dir
		}
	} else {
		os.RemoveAll(dir)
	}
	if err != nil && ctx.Err() == nil && !slices.ContainsFunc(pts, func(p Point) bool { return p.Error != "" }) {
		pts = append(pts, Point{Gatekeepers: shape.Gatekeepers, Shards: shape.Shards, Error: err.Error(), Dir: dir})
	}
	return pts, err
}

// measureShape loads the graph into the running cluster c and measures each mix.
func measureShape(ctx context.Context, o Options, g *tao.Graph, c *scaleCluster, shape Shape, done func()) ([]Point, error) {
	gks, closeConns, err := dialGatekeepers(c.addrs(roleGatekeeper), o.Conns, o.Streams)
	if err != nil {
		return nil, err
	}
	defer closeConns()
	first := make([]*weft.Client, len(gks))
	for i, conns := range gks {
		first[i] = conns[0]
	}
	api := &loadAPI{gks: first}
	bar := bench.NewBar(o.Progress, int64(o.Vertices)+g.Edges(), fmt.Sprintf("load %dg×%ds", shape.Gatekeepers, shape.Shards))
	ld, err := tao.LoadGraph(ctx, api, g, o.LoadBatch, o.Loaders, o.Seed, func(n int) { _ = bar.Add(n) })
	_ = bar.Finish()
	if err != nil {
		return nil, fmt.Errorf("loading the graph: %w", err)
	}
	if _, err := tao.Settle(ctx, api.Status, int64(o.Vertices), g.Edges()); err != nil {
		return nil, fmt.Errorf("after the load: %w", err)
	}
	o.Log.Info("scale: graph loaded", "gatekeepers", shape.Gatekeepers, "shards", shape.Shards,
		"seconds", bench.Round(ld.Seconds, 1), "aborts", ld.Aborts)
	idle, err := measureIdle(ctx, c, o.IdleWindow)
	if err != nil {
		return nil, err
	}
	var pts []Point
	for _, m := range o.Mixes {
		p, err := measureMix(ctx, o, g, c, gks, shape, m, idle)
		done()
		p.LoadSeconds = bench.Round(ld.Seconds, 2)
		if err != nil {
			p.Error = err.Error()
			return append(pts, p), err
		}
		o.Log.Info("scale: measured", "gatekeepers", shape.Gatekeepers, "shards", shape.Shards, "mix", m,
			"ops_per_sec", p.OpsPerSec, "ops_per_cpu_second", p.OpsPerCPUSecond, "bottleneck", p.Model.Bottleneck)
		pts = append(pts, p)
	}
	return pts, nil
}

// finite replaces an infinite or NaN model figure by 0 (JSON cannot hold them).
func finite(x float64) float64 {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return 0
	}
	return x
}
