package dql

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"sync/atomic"
	"time"

	"github.com/weft-db/weft/internal/bench"
	"github.com/weft-db/weft/internal/bulk"
	"github.com/weft-db/weft/internal/dgraph"
	"github.com/weft-db/weft/internal/engine"
	"github.com/weft-db/weft/internal/rdf"
)

// The Dgraph report's load figure (§3, "Loader"): the Freebase film data,
// 21 million edges, loaded in 25 minutes after batching RocksDB writes.
const (
	dqlReportEdges   = 21_000_000
	dqlReportSeconds = 25 * 60
	// dqlLoadTargetFactor is issue 6's aim: at least 20× the report's rate.
	dqlLoadTargetFactor = 20
)

// dqlLoadStats is the load phase's outcome.
type dqlLoadStats struct {
	// Lines read from the file (all, or the first Lines).
	Lines int64 `json:"lines"`
	// Quads committed; Skipped lines the loader skipped (values Weft
	// cannot hold: datetimes before 1677).
	Quads   int64 `json:"quads"`
	Skipped int64 `json:"skipped_lines"`
	// Nodes created, uid-valued quads (Dgraph edges between nodes) and
	// scalar quads (values) among the committed quads.
	Nodes    int64 `json:"nodes_created"`
	UIDQuads int64 `json:"uid_quads"`
	Values   int64 `json:"value_quads"`
	// Transactions committed and the attempts lost to conflicts.
	Transactions int64 `json:"transactions"`
	Retries      int64 `json:"retries"`
	// EngineOps is the engine operations the transactions committed.
	EngineOps int64 `json:"engine_ops"`
	// Seconds is LoadRDF's wall time: reading and decompressing the file,
	// parsing, XID resolution, index and reverse-edge upkeep, commits.
	Seconds       float64 `json:"seconds"`
	SchemaSeconds float64 `json:"schema_seconds"`
	// QuadsPerSec is the report's "edges" per second: the report counts
	// every N-Quad of the film data (names included) as an edge.
	QuadsPerSec float64 `json:"quads_per_sec"`
	// EngineVertices and EngineEdges are what the engine holds after the
	// load (index, has-set and alias vertices and their edges included);
	// EngineEdgesPerSec is EngineEdges over Seconds.
	EngineVertices    int64   `json:"engine_vertices"`
	EngineEdges       int64   `json:"engine_edges"`
	EngineEdgesPerSec float64 `json:"engine_edges_per_sec"`
	// ApplySeconds is how long after LoadRDF returned the shards took to
	// show a steady count (they apply commits asynchronously).
	ApplySeconds float64 `json:"apply_seconds"`
	// ReopenSeconds is the close and reopen with fsync (LoadNoSync only).
	ReopenSeconds float64 `json:"reopen_seconds,omitempty"`
	// CPUSeconds is the process's CPU time during LoadRDF; CPUCores is
	// CPUSeconds over Seconds. QuadsPerCPUSec is Quads over CPUSeconds:
	// the rate with a core to itself, less sensitive than QuadsPerSec to
	// other work on a shared machine.
	CPUSeconds     float64 `json:"cpu_seconds"`
	CPUCores       float64 `json:"cpu_cores"`
	QuadsPerCPUSec float64 `json:"quads_per_cpu_sec"`
	// ReportQuadsPerSec is the report's rate; VsReport ours over it.
	ReportQuadsPerSec float64 `json:"report_quads_per_sec"`
	VsReport          float64 `json:"vs_report"`
}

// loadInto opens the Dgraph graph on db, applies the schema, loads lines
// of the film data and waits for the engine to apply them, filling
// b.res.Load.
func (b *dqlBench) loadInto(ctx context.Context, db engine.API, lines int64) error {
	var err error
	if b.g, err = dgraph.Open(ctx, db, b.graphConfig()); err != nil {
		return err
	}
	sch, err := os.ReadFile(b.opts.Schema)
	if err != nil {
		return err
	}
	t := time.Now()
	if _, err := b.g.Alter(ctx, string(sch)); err != nil {
		return fmt.Errorf("%s: %w", b.opts.Schema, err)
	}
	r := &b.res.Load
	r.Lines, r.SchemaSeconds = lines, bench.Round(time.Since(t).Seconds(), 3)
	if err := b.loadRDF(ctx, lines); err != nil {
		return err
	}
	t = time.Now()
	st, err := steady(ctx, db.Status)
	if err != nil {
		return fmt.Errorf("after the load: %w", err)
	}
	r.ApplySeconds = bench.Round(time.Since(t).Seconds(), 3)
	r.EngineVertices, r.EngineEdges = st.Vertices, st.Edges
	r.EngineEdgesPerSec = bench.Round(float64(st.Edges)/max(r.Seconds, 1e-9), 0)
	return nil
}

// load opens a fresh engine, applies the schema and loads the film data,
// then (LoadNoSync) reopens the store with fsync on.
func (b *dqlBench) load(ctx context.Context) error {
	o := b.opts
	lines, err := countLines(o.RDF, o.Lines)
	if err != nil {
		return err
	}
	cfg := b.cfg
	cfg.Sync = b.cfg.Sync && !o.LoadNoSync
	if b.db, err = engine.Open(cfg); err != nil {
		return err
	}
	if err := b.loadInto(ctx, b.db, lines); err != nil {
		return err
	}
	r := &b.res.Load
	o.Log.Info("film data loaded", "quads", r.Quads, "seconds", r.Seconds, "quads_per_sec", r.QuadsPerSec,
		"engine_edges", r.EngineEdges)
	if !o.LoadNoSync {
		return nil
	}
	t := time.Now()
	if err := b.db.Close(); err != nil {
		return err
	}
	b.db = nil
	if b.db, err = engine.Open(b.cfg); err != nil {
		return fmt.Errorf("reopening the loaded store: %w", err)
	}
	if b.g, err = dgraph.Open(ctx, b.db, b.graphConfig()); err != nil {
		return err
	}
	r.ReopenSeconds = bench.Round(time.Since(t).Seconds(), 3)
	return nil
}

// loadRDF runs the bulk loader over the file's first lines with a progress
// bar over the quads, and records its statistics.
func (b *dqlBench) loadRDF(ctx context.Context, lines int64) error {
	o := b.opts
	f, err := rdf.Open(o.RDF)
	if err != nil {
		return err
	}
	defer f.Close()
	var in io.Reader = f
	if o.Lines > 0 {
		in = &lineLimitReader{r: bufio.NewReaderSize(f, 1<<16), left: int64(o.Lines)}
	}
	bar := bench.NewBar(o.Progress, lines, "dql load")
	var done atomic.Int64
	lcfg := dgraph.DefaultLoadConfig()
	lcfg.BatchQuads, lcfg.Loaders = o.LoadBatch, o.Loaders
	lcfg.Progress = func(q int64) {
		// Batches finish out of order with several loaders: keep the largest.
		if prev := done.Load(); q > prev && done.CompareAndSwap(prev, q) {
			_ = bar.Set64(q)
		}
	}
	if o.LoadCPUProfile != "" {
		stop, err := startProfile(o.LoadCPUProfile)
		if err != nil {
			return err
		}
		defer stop()
	}
	cpu0 := bench.ProcessCPU()
	st, err := b.g.LoadRDF(ctx, in, o.RDF, lcfg)
	cpu := bench.ProcessCPU() - cpu0
	_ = bar.Finish()
	if err != nil {
		return fmt.Errorf("loading %s: %w", o.RDF, err)
	}
	r := &b.res.Load
	r.Quads, r.Skipped, r.Nodes, r.UIDQuads, r.Values = st.Quads, st.Skipped, st.Nodes, st.Edges, st.Values
	r.Transactions, r.Retries, r.EngineOps = st.Batches, st.Attempts-st.Batches, st.Ops
	r.Seconds = bench.Round(st.Elapsed.Seconds(), 3)
	r.QuadsPerSec = bench.Round(float64(st.Quads)/max(st.Elapsed.Seconds(), 1e-9), 0)
	r.CPUSeconds = bench.Round(cpu.Seconds(), 2)
	r.CPUCores = bench.Round(cpu.Seconds()/max(st.Elapsed.Seconds(), 1e-9), 2)
	if cpu > 0 {
		r.QuadsPerCPUSec = bench.Round(float64(st.Quads)/cpu.Seconds(), 0)
	}
	r.ReportQuadsPerSec = bench.Round(dqlReportEdges/float64(dqlReportSeconds), 0)
	r.VsReport = bench.Round(r.QuadsPerSec/r.ReportQuadsPerSec, 2)
	return nil
}

// startProfile starts a CPU profile into path; the returned function ends it.
func startProfile(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// steady polls the engine's status until two readings 50 ms apart agree
// (the shards have applied every commit), for at most 30 s.
func steady(ctx context.Context, status func(context.Context) (*engine.Status, error)) (*engine.Status, error) {
	deadline := time.Now().Add(30 * time.Second)
	prev, err := status(ctx)
	if err != nil {
		return nil, err
	}
	for {
		select {
		case <-time.After(50 * time.Millisecond):
		case <-ctx.Done():
			return prev, ctx.Err()
		}
		st, err := status(ctx)
		if err != nil {
			return nil, err
		}
		if st.Vertices == prev.Vertices && st.Edges == prev.Edges {
			return st, nil
		}
		if time.Now().After(deadline) {
			return st, errors.New("bench: the engine's counts still move 30 s after the load")
		}
		prev = st
	}
}

// countLines counts the lines of the (possibly gzipped) file, at most max
// when max > 0: the progress bar's total.
func countLines(path string, max int) (int64, error) {
	f, err := rdf.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var n int64
	buf := make([]byte, 1<<16)
	last := byte('\n')
	for {
		k, err := f.Read(buf)
		n += int64(bytes.Count(buf[:k], []byte{'\n'}))
		if k > 0 {
			last = buf[k-1]
		}
		if max > 0 && n >= int64(max) {
			return int64(max), nil
		}
		if err == io.EOF {
			if last != '\n' {
				n++ // a last line without its newline
			}
			return n, nil
		}
		if err != nil {
			return n, fmt.Errorf("%s: %w", path, err)
		}
	}
}

// lineLimitReader passes through the first left lines of r.
type lineLimitReader struct {
	r    *bufio.Reader
	left int64
	rest []byte // the part of the current line not yet returned
}

func (l *lineLimitReader) Read(p []byte) (int, error) {
	if len(l.rest) == 0 {
		if l.left <= 0 {
			return 0, io.EOF
		}
		line, err := l.r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A line longer than the buffer: pass it through in pieces,
			// counting it when its newline comes.
			l.rest = line
		} else {
			if len(line) > 0 {
				l.left--
			}
			if err != nil && err != io.EOF {
				return 0, err
			}
			if len(line) == 0 {
				return 0, io.EOF
			}
			l.rest = line
		}
	}
	n := copy(p, l.rest)
	l.rest = l.rest[n:]
	return n, nil
}

// LoadCompare is `weft bench dql --bulk-load`: the film data loaded Runs
// times in each of three modes, into fresh stores, medians reported:
// direct (weft load --bulk: the records built from the quads,
// dgraph.LoadRDFDirect), bulk (weft load --bulk --bulk-direct=false:
// transactions on the offline store, internal/bulk) and online (engine
// transactions, weft load). The modes alternate within each run.
type LoadCompare struct {
	RDF    string `json:"rdf"`
	Schema string `json:"schema"`
	Runs   int    `json:"runs"`
	// Direct, Bulk and Online are the runs of each mode, in order.
	Direct []LoadRun `json:"direct"`
	Bulk   []LoadRun `json:"bulk"`
	Online []LoadRun `json:"online"`
	// Medians over the runs (by QuadsPerSec).
	DirectMedian LoadRun `json:"direct_median"`
	BulkMedian   LoadRun `json:"bulk_median"`
	OnlineMedian LoadRun `json:"online_median"`
	// Speedup is the bulk median's quads/s over the online median's,
	// DirectSpeedup the direct median's over the online median's.
	Speedup       float64 `json:"speedup"`
	DirectSpeedup float64 `json:"direct_speedup"`
	// TargetQuadsPerSec is issue 6's aim (20× the report's ~14,000/s).
	TargetQuadsPerSec float64 `json:"target_quads_per_sec"`
}

// LoadRun is one load: wall time from opening the store to the data on
// disk (for bulk, Finish's flush and rename included; online, the engine's
// close), N-Quads and engine edges per second.
type LoadRun struct {
	Quads             int64   `json:"quads"`
	EngineEdges       int64   `json:"engine_edges"`
	Seconds           float64 `json:"seconds"`
	QuadsPerSec       float64 `json:"quads_per_sec"`
	EngineEdgesPerSec float64 `json:"engine_edges_per_sec"`
	CPUSeconds        float64 `json:"cpu_seconds"`
}

// CompareLoads runs the comparison (runs >= 1) in temporary directories.
func CompareLoads(ctx context.Context, rdfPath, schemaPath string, lines, runs int) (*LoadCompare, error) {
	if schemaPath == "" {
		schemaPath = filepath.Join(filepath.Dir(rdfPath), "goldendata.schema")
	}
	sch, err := os.ReadFile(schemaPath)
	if err != nil {
		return nil, err
	}
	out := &LoadCompare{RDF: rdfPath, Schema: schemaPath, Runs: runs,
		TargetQuadsPerSec: dqlLoadTargetFactor * dqlReportEdges / float64(dqlReportSeconds)}
	for i := 0; i < runs; i++ {
		for _, mode := range []string{loadDirect, loadBulk, loadOnline} {
			r, err := loadOnce(ctx, rdfPath, string(sch), lines, mode)
			if err != nil {
				return nil, err
			}
			switch mode {
			case loadDirect:
				out.Direct = append(out.Direct, r)
			case loadBulk:
				out.Bulk = append(out.Bulk, r)
			default:
				out.Online = append(out.Online, r)
			}
		}
	}
	out.DirectMedian, out.BulkMedian, out.OnlineMedian = medianRun(out.Direct), medianRun(out.Bulk), medianRun(out.Online)
	out.Speedup = bench.Round(out.BulkMedian.QuadsPerSec/max(out.OnlineMedian.QuadsPerSec, 1e-9), 2)
	out.DirectSpeedup = bench.Round(out.DirectMedian.QuadsPerSec/max(out.OnlineMedian.QuadsPerSec, 1e-9), 2)
	return out, nil
}

// storedEdges opens the engine in dir, reads its edge count and closes it.
func storedEdges(ctx context.Context, dir string) (int64, error) {
	cfg := engine.DefaultConfig()
	cfg.DataDir = dir
	db, err := engine.Open(cfg)
	if err != nil {
		return 0, err
	}
	st, err := db.Status(ctx)
	if err := errors.Join(err, db.Close()); err != nil {
		return 0, err
	}
	return st.Edges, nil
}

func medianRun(rs []LoadRun) LoadRun {
	s := slices.Clone(rs)
	slices.SortFunc(s, func(a, b LoadRun) int { return cmp.Compare(a.QuadsPerSec, b.QuadsPerSec) })
	return s[len(s)/2]
}

// Load modes of loadOnce.
const (
	loadDirect = "direct"
	loadBulk   = "bulk"
	loadOnline = "online"
)

// loadOnce loads the file into a fresh store in a temporary directory.
func loadOnce(ctx context.Context, rdfPath, sch string, lines int, mode string) (LoadRun, error) {
	tmp, err := os.MkdirTemp("", "weft-dql-load-")
	if err != nil {
		return LoadRun{}, err
	}
	defer os.RemoveAll(tmp)
	dir := filepath.Join(tmp, "db")
	f, err := rdf.Open(rdfPath)
	if err != nil {
		return LoadRun{}, err
	}
	defer f.Close()
	var in io.Reader = f
	if lines > 0 {
		in = &lineLimitReader{r: bufio.NewReaderSize(f, 1<<16), left: int64(lines)}
	}
	lcfg := dgraph.DefaultLoadConfig()
	start, cpu0 := time.Now(), bench.ProcessCPU()
	var (
		st    dgraph.LoadStats
		edges int64
	)
	load := func(db engine.API, gcfg dgraph.Config) error {
		g, err := dgraph.Open(ctx, dgraph.NamespaceView(db, 0), gcfg)
		if err != nil {
			return err
		}
		if _, err := g.Alter(ctx, sch); err != nil {
			return err
		}
		if b, ok := db.(*bulk.DB); ok && mode == loadDirect {
			st, err = g.LoadRDFDirect(ctx, in, rdfPath, lcfg, b, bulk.DefaultConfig(dir).MemBytesMax)
		} else {
			st, err = g.LoadRDF(ctx, in, rdfPath, lcfg)
		}
		return err
	}
	if mode != loadOnline {
		db, err := bulk.Create(bulk.DefaultConfig(dir))
		if err != nil {
			return LoadRun{}, err
		}
		if err := load(db, dgraph.BulkGraphConfig()); err != nil {
			return LoadRun{}, errors.Join(err, db.Abort())
		}
		edges = db.Stats().Edges
		if err := db.Finish(); err != nil {
			return LoadRun{}, err
		}
	} else {
		cfg := engine.DefaultConfig()
		cfg.DataDir, cfg.Sync = dir, false
		db, err := engine.Open(cfg)
		if err != nil {
			return LoadRun{}, err
		}
		err = load(db, dgraph.DefaultConfig())
		if err := errors.Join(err, db.Close()); err != nil {
			return LoadRun{}, err
		}
	}
	secs := time.Since(start).Seconds()
	if mode == loadOnline {
		// Count what the store holds: reopening rebuilds the shards from
		// it, so no commit still on its way to a shard is missed.
		if edges, err = storedEdges(ctx, dir); err != nil {
			return LoadRun{}, err
		}
	}
	return LoadRun{Quads: st.Quads, EngineEdges: edges, Seconds: bench.Round(secs, 3),
		QuadsPerSec: bench.Round(float64(st.Quads)/secs, 0), EngineEdgesPerSec: bench.Round(float64(edges)/secs, 0),
		CPUSeconds: bench.Round((bench.ProcessCPU() - cpu0).Seconds(), 2)}, nil
}
