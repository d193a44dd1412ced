package tao

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"runtime/pprof"
	"time"

	"github.com/weft-db/weft/internal/bench"
	"github.com/weft-db/weft/internal/engine"
)

// Options configures a run. Zero fields take the defaults in brackets.
type Options struct {
	// Out is the directory for the JSON and PNG files ("" writes none).
	Out string
	// Quick is the smoke run: 20,000 vertices for 3 s unless set otherwise.
	Quick bool
	// Vertices in the generated graph [1,000,000].
	Vertices int
	// Duration of the measured run [30s].
	Duration time.Duration
	// Clients issuing operations back to back, each a goroutine [64].
	Clients int
	// SweepClients: after the main run, one more measured run of Duration
	// per client count, on the same loaded graph (results.client_sweep and
	// a throughput/latency-vs-clients plot) [none].
	SweepClients []int
	// Mix is tao (99.8% reads), reads (100%) or 75 (75% reads) [tao].
	Mix string
	// Mode is inproc (engine.API in this process) or net (gRPC server on
	// loopback, Go client) [inproc].
	Mode string
	// Conns is the number of client connections in net mode [2].
	Conns int
	// Streams is the RunStream streams per connection that carry the read
	// programs in net mode [2]; negative: one unary Run call per program.
	Streams int
	// Dst draws edge destinations: uniform or zipf [uniform].
	Dst string
	// DataDir holds the store; it must be empty or missing ["": a temporary
	// directory, removed afterwards]. InMemory keeps the store in memory.
	DataDir  string
	InMemory bool
	// LoadNoSync loads with fsync off, then closes and reopens the store
	// with fsync on for the run [false: the engine's default, fsync on].
	LoadNoSync bool
	// LoadBatch is operations per load transaction [1000]; Loaders is load
	// transactions in flight [1]: concurrent load transactions mostly abort
	// each other (an edge reads its destination's record, which another
	// transaction writes as a source).
	LoadBatch, Loaders int
	// Gatekeepers and Shards override the engine's defaults (2 and 4).
	Gatekeepers, Shards int
	// NodeEdges makes get_node return the vertex's out-edges too (the
	// program's default); off, get_node reads the object only, as TAO's
	// obj_get does.
	NodeEdges bool
	// Distribution is a LinkBench Distribution.dat to take out-degrees from
	// ["": the embedded, thinned copy of LinkBench's].
	Distribution string
	// Seed seeds the graph and every client [1 when zero].
	Seed uint64
	// CPUProfile, when set, receives a CPU profile of the measured run.
	CPUProfile string
	// Progress receives progress bars (nil: none); Log a line per phase.
	Progress io.Writer
	Log      *slog.Logger
}

// EdgesLimit is get_edges' limit: Weaver's soc_net_bench asks for 50 edges
// (assoc_range's usual page).
const EdgesLimit = 50

func (o *Options) setDefaults() {
	def := func(p *int, v int) {
		if *p <= 0 {
			*p = v
		}
	}
	if o.Quick {
		def(&o.Vertices, 20_000)
		if o.Duration <= 0 {
			o.Duration = 3 * time.Second
		}
	}
	def(&o.Vertices, 1_000_000)
	if o.Duration <= 0 {
		o.Duration = 30 * time.Second
	}
	def(&o.Clients, 64)
	def(&o.Conns, 2)
	if o.Streams == 0 { // negative: unary calls
		o.Streams = 2
	}
	def(&o.LoadBatch, 1000)
	def(&o.Loaders, 1)
	for p, v := range map[*string]string{&o.Mix: "tao", &o.Mode: "inproc", &o.Dst: "uniform"} {
		if *p == "" {
			*p = v
		}
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
}

// Name is the results' base name: <mix>-<mode>, with -quick for a smoke run.
func (o Options) Name() string {
	name := o.Mix + "-" + o.Mode
	if o.Quick {
		name += "-quick"
	}
	return name
}

// taoBench is one run's state.
type taoBench struct {
	opts    Options
	mix     Mix
	cfg     engine.Config
	g       *Graph
	db      *engine.DB
	res     taoResults
	cleanup []func()
	// idBase numbers this run's workers after those of earlier runs on the
	// same graph (the client sweep): their edge handles must not collide.
	idBase int
}

// Run generates and loads the graph, runs the mix, and returns (and writes
// to opts.Out) the result. A run whose operations failed still returns its
// result, with an error.
func Run(ctx context.Context, opts Options) (*bench.Result, error) {
	opts.setDefaults()
	b := &taoBench{opts: opts}
	defer b.close()
	start, load := time.Now(), bench.LoadAvg()
	if err := b.prepare(); err != nil {
		return nil, err
	}
	if err := b.openAndLoad(ctx); err != nil {
		return nil, err
	}
	runErr := b.run(ctx)
	if runErr != nil && b.res.Run.Ops == 0 {
		return nil, runErr
	}
	if runErr == nil {
		runErr = b.sweep(ctx)
	}
	return bench.Finish(b.result(), start, load, b.opts.Out, b.opts.Name(), b.savePlots, runErr)
}

func (b *taoBench) close() {
	if b.db != nil {
		b.db.Close()
	}
	for i := len(b.cleanup) - 1; i >= 0; i-- {
		b.cleanup[i]()
	}
}

// prepare checks the options, builds the degree table and the graph, and
// configures the engine.
func (b *taoBench) prepare() error {
	o := &b.opts
	var err error
	if b.mix, err = NewMix(o.Mix); err != nil {
		return err
	}
	if o.Mode != "inproc" && o.Mode != "net" {
		return fmt.Errorf("bench: --mode %q: want inproc or net", o.Mode)
	}
	for _, c := range o.SweepClients {
		if c < 1 || c > 4096 {
			return fmt.Errorf("bench: --sweep-clients %d out of range [1, 4096]", c)
		}
	}
	if o.Vertices < 2 || o.Vertices > 1<<30 {
		return fmt.Errorf("bench: --vertices %d out of range [2, 2^30]", o.Vertices)
	}
	cdf := LinkBenchNlinks
	if o.Distribution != "" {
		f, err := os.Open(o.Distribution)
		if err != nil {
			return err
		}
		cdf, err = parseNlinks(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", o.Distribution, err)
		}
	}
	t := time.Now()
	if b.g, err = NewGraph(o.Vertices, cdf, o.Dst, o.Seed); err != nil {
		return err
	}
	o.Log.Info("tao graph generated", "vertices", o.Vertices, "edges", b.g.edges, "max_degree", b.g.maxDeg,
		"seconds", bench.Round(time.Since(t).Seconds(), 2))
	b.cfg = engine.DefaultConfig()
	if o.Gatekeepers > 0 {
		b.cfg.Gatekeepers = o.Gatekeepers
	}
	if o.Shards > 0 {
		b.cfg.Shards = o.Shards
	}
	if o.InMemory {
		if o.LoadNoSync || o.DataDir != "" {
			// A memory store does not survive the reopen --load-nosync does.
			return errors.New("bench: --in-memory cannot be combined with --load-nosync or --data-dir")
		}
		return nil
	}
	if o.DataDir == "" {
		dir, err := os.MkdirTemp("", "weft-bench-tao-")
		if err != nil {
			return err
		}
		b.cleanup = append(b.cleanup, func() { os.RemoveAll(dir) })
		b.cfg.DataDir = dir
		return nil
	}
	if ents, err := os.ReadDir(o.DataDir); err == nil && len(ents) > 0 {
		return fmt.Errorf("bench: --data-dir %s is not empty (the benchmark loads a fresh graph)", o.DataDir)
	}
	b.cfg.DataDir = o.DataDir
	return nil
}

// openAndLoad opens the engine, loads the graph and measures the memory it
// holds; with LoadNoSync it then reopens the store with fsync on.
func (b *taoBench) openAndLoad(ctx context.Context) error {
	o := b.opts
	heap0, rss0 := bench.SettledHeap(), bench.SettledRSS()
	cfg := b.cfg
	cfg.Sync = b.cfg.Sync && !o.LoadNoSync
	var err error
	if b.db, err = engine.Open(cfg); err != nil {
		return err
	}
	total := int64(o.Vertices) + b.g.edges
	bar := bench.NewBar(o.Progress, total, "tao load")
	b.res.Load, err = LoadGraph(ctx, b.db, b.g, o.LoadBatch, o.Loaders, o.Seed, func(n int) { _ = bar.Add(n) })
	_ = bar.Finish()
	if err != nil {
		return err
	}
	o.Log.Info("tao graph loaded", "seconds", bench.Round(b.res.Load.Seconds, 1), "ops_per_sec", bench.Round(b.res.Load.OpsPerSec, 0),
		"aborts", b.res.Load.Aborts)
	if o.LoadNoSync {
		t := time.Now()
		if err := b.db.Close(); err != nil {
			return err
		}
		b.db = nil
		if b.db, err = engine.Open(b.cfg); err != nil {
			return fmt.Errorf("reopening the loaded store: %w", err)
		}
		b.res.Load.ReopenSeconds = bench.Round(time.Since(t).Seconds(), 3)
	}
	st, err := Settle(ctx, b.db.Status, int64(o.Vertices), b.g.edges)
	if err != nil {
		return fmt.Errorf("after the load: %w", err)
	}
	heap, rss := int64(bench.SettledHeap())-int64(heap0), bench.SettledRSS()-rss0
	b.res.Memory = taoMemory{
		HeapBytes: heap, RSSBytes: rss,
		HeapBytesPerEdge: bench.Round(float64(heap)/float64(max(st.Edges, 1)), 1),
		RSSBytesPerEdge:  bench.Round(float64(rss)/float64(max(st.Edges, 1)), 1),
	}
	b.res.Graph = taoGraphInfo{Vertices: o.Vertices, Edges: b.g.edges,
		MeanDegree:         bench.Round(float64(b.g.edges)/float64(o.Vertices), 3),
		ZeroDegreeFraction: bench.Round(float64(b.g.zeroDeg)/float64(o.Vertices), 4),
		Degree:             b.g.degreePercentiles()}
	return nil
}

// Settle waits until the engine reports the expected vertices and edges (the
// shards apply committed transactions asynchronously) and returns the status.
// A negative vertices is not checked.
func Settle(ctx context.Context, status func(context.Context) (*engine.Status, error), vertices, edges int64) (*engine.Status, error) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, err := status(ctx)
		if err != nil {
			return nil, err
		}
		if (vertices < 0 || st.Vertices == vertices) && st.Edges == edges {
			return st, nil
		}
		if time.Now().After(deadline) {
			return st, fmt.Errorf("bench: the engine reports %d vertices and %d edges, want %d and %d",
				st.Vertices, st.Edges, vertices, edges)
		}
		select {
		case <-time.After(5 * time.Millisecond):
		case <-ctx.Done():
			return st, ctx.Err()
		}
	}
}

// run drives the mix from the clients and records what happened.
func (b *taoBench) run(ctx context.Context) error {
	o := b.opts
	var be Backend = newInprocBackend(b.db, o.NodeEdges, EdgesLimit)
	if o.Mode == "net" {
		nb, err := newNetBackend(b.db, o.Conns, o.Streams, o.NodeEdges, EdgesLimit)
		if err != nil {
			return err
		}
		be = nb
	}
	defer be.close()
	st0, err := be.status(ctx)
	if err != nil {
		return err
	}
	workers := make([]*Worker, o.Clients)
	for i := range workers {
		id := b.idBase + i
		workers[i] = NewWorker(id, bench.NewRand(o.Seed, 1000+uint64(id)), be, b.g, b.mix)
	}
	if o.CPUProfile != "" {
		f, err := os.Create(o.CPUProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
	}
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	cpu0 := bench.ProcessCPU()
	bar := bench.NewBar(o.Progress, int64(o.Duration/time.Millisecond), "tao "+b.mix.name+" "+o.Mode)
	interval := min(max(o.Duration/60, 100*time.Millisecond), time.Second)
	elapsed, ticks := RunClients(ctx, workers, o.Duration, interval, func(t time.Duration) {
		_ = bar.Set64(min(int64(t/time.Millisecond), int64(o.Duration/time.Millisecond)))
	})
	_ = bar.Finish()
	cpu := bench.ProcessCPU() - cpu0
	runtime.ReadMemStats(&ms1)
	if o.CPUProfile != "" {
		pprof.StopCPUProfile()
	}
	b.res.Timeline = ticks
	b.summarise(workers, elapsed)
	r := &b.res.Run
	r.CPUSeconds = bench.Round(cpu.Seconds(), 2)
	r.CPUCores = bench.Round(cpu.Seconds()/elapsed.Seconds(), 2)
	if cpu > 0 {
		r.OpsPerCPUSecond = bench.Round(float64(r.Ops)/cpu.Seconds(), 0)
	}
	r.GCCycles = ms1.NumGC - ms0.NumGC
	r.GCPauseMS = bench.Round(float64(ms1.PauseTotalNs-ms0.PauseTotalNs)/1e6, 2)
	return b.account(ctx, be, st0, ctx.Err())
}

// account compares the engine's counters before and after the run with what
// the clients did: the edges created and deleted must show in its count.
func (b *taoBench) account(ctx context.Context, be Backend, st0 *engine.Status, runErr error) error {
	r := &b.res.Run
	r.EdgesExpected = st0.Edges + r.EdgesCreated - r.EdgesDeleted
	st1, err := Settle(ctx, be.status, -1, r.EdgesExpected)
	if st1 == nil {
		return errors.Join(runErr, err)
	}
	r.EdgesReported = st1.Edges
	r.EdgesConsistent = err == nil
	r.EngineCommits = st1.Commits - st0.Commits
	r.EngineAborts = st1.Aborts - st0.Aborts
	r.Programs = st1.Programs - st0.Programs
	r.KronosCalls = st1.KronosCalls - st0.KronosCalls
	if n := r.EngineCommits + r.Programs; n > 0 {
		r.KronosCallsPerTxnOrProgram = bench.Round(float64(r.KronosCalls)/float64(n), 6)
	}
	r.NopRequests = st1.NopRequests - st0.NopRequests
	r.PointReads = st1.PointReads - st0.PointReads
	if r.Ops > 0 {
		r.NopRequestsPerOp = bench.Round(float64(r.NopRequests)/float64(r.Ops), 4)
		r.PointReadsPerOp = bench.Round(float64(r.PointReads)/float64(r.Ops), 4)
	}
	if r.Errors > 0 {
		err = errors.Join(err, fmt.Errorf("bench: %d operations failed (first: %v)", r.Errors, r.ErrorSamples))
	}
	return errors.Join(runErr, err)
}

// sweep runs the mix once more per SweepClients count on the loaded graph,
// keeping the main run's results and adding one point per count.
func (b *taoBench) sweep(ctx context.Context) error {
	base := b.opts.Clients
	for _, c := range b.opts.SweepClients {
		sb := &taoBench{opts: b.opts, mix: b.mix, cfg: b.cfg, g: b.g, db: b.db, idBase: base}
		base += c
		sb.opts.Clients, sb.opts.CPUProfile = c, ""
		err := sb.run(ctx)
		r := sb.res.Run
		b.res.Sweep = append(b.res.Sweep, taoSweepPoint{Clients: c, OpsPerSec: r.OpsPerSec, CPUCores: r.CPUCores,
			Errors: r.Errors, Reads: sb.res.Reads, Writes: sb.res.Writes})
		b.opts.Log.Info("tao client sweep", "clients", c, "ops_per_sec", r.OpsPerSec, "read_p99_us", sb.res.Reads.P99)
		if err != nil {
			return fmt.Errorf("client sweep at %d clients: %w", c, err)
		}
	}
	return nil
}
