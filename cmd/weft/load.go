package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/weft-db/weft/internal/bulk"
	"github.com/weft-db/weft/internal/dgraph"
	"github.com/weft-db/weft/internal/engine"
	"github.com/weft-db/weft/internal/rdf"
)

func init() { subcommands = append(subcommands, newLoadCmd) }

func newLoadCmd() *cobra.Command {
	cfg := engine.DefaultConfig()
	lcfg := dgraph.DefaultLoadConfig()
	var rdfFile, jsonFile, schemaFile string
	var noProgress, bulkMode, bulkDirect bool
	var cpuProfile string
	bulkMem := 1024
	var placement string
	cmd := &cobra.Command{
		Use:   "load",
		Short: "Load Dgraph RDF (N-Quads) or JSON files into an embedded Weft store",
		Long: `Load data in Dgraph's formats into the store in --data-dir, the way Dgraph's
live loader does: batches of --batch quads, each one transaction, committed
by --loaders loaders in parallel, each with its own leased UID range. XIDs
(<m.0abc>) become nodes once, across loads, through the XID index; blank
nodes (_:x) are shared by the whole load. Files may be gzipped.

  weft load --rdf film.rdf.gz --schema film.schema --data-dir weft-data/film

Lines whose values Weft cannot hold (datetimes before 1677 or after 2262,
integers beyond int64) are skipped and listed with file:line; other bad lines
stop the load unless --skip-invalid.

With --bulk, the load is offline (Dgraph's bulk loader): --data-dir must be
absent or empty, no server may run, and the store is built directly — the
same keys and values the engine's transactions write, without gatekeepers,
Kronos or shards — in a temporary directory beside it, renamed onto
--data-dir when the load succeeds (on any error nothing is left behind).
Then weft serve --data-dir DIR serves it (with its shards). Memory: about 120
bytes per store key (~1.5 KB per N-Quad of the film data) up to --bulk-mem,
beyond which sorted tables are written to the store and memory starts again.

An RDF file (without --json, in the vertex placement) is bulk-loaded
directly (--bulk-direct, the default): the quads are read once, each node's
final state is computed from its quads and its records written, in
parallel, as sorted tables, without a transaction per batch. --bulk-mem
bounds the quads' effects and the records it holds; beyond it they are
written to disk (sorted runs, early tables) and merged. The store is the one
the transactional path builds, but for stamps, buckets and the empty index
vertices of replaced values (docs/dgraph.md).

  weft load --bulk --rdf film.rdf.gz --schema film.schema --data-dir weft-data/film`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if rdfFile == "" && jsonFile == "" {
				return errors.New("load: give --rdf or --json")
			}
			if cfg.DataDir == "" {
				return errors.New("load: --data-dir is empty")
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			if err := dgraph.CheckPlacement(placement); err != nil {
				return fmt.Errorf("load: --dgraph-placement: %w", err)
			}
			if cpuProfile != "" {
				f, err := os.Create(cpuProfile)
				if err != nil {
					return err
				}
				defer f.Close()
				if err := pprof.StartCPUProfile(f); err != nil {
					return err
				}
				defer pprof.StopCPUProfile()
			}
			if bulkMode {
				return runBulkLoad(ctx, cmd, cfg, lcfg, bulkMem, bulkDirect, placement, rdfFile, jsonFile, schemaFile, !noProgress)
			}
			return runLoad(ctx, cmd, cfg, lcfg, placement, rdfFile, jsonFile, schemaFile, !noProgress)
		},
	}
	f := cmd.Flags()
	f.StringVar(&rdfFile, "rdf", "", "N-Quads file to load (.rdf, .nq, gzipped or not)")
	f.StringVar(&jsonFile, "json", "", "JSON file to load: a list of Dgraph JSON mutation objects (gzipped or not)")
	f.StringVar(&schemaFile, "schema", "", "DQL schema file to apply before loading")
	f.StringVar(&cfg.DataDir, "data-dir", "weft-data/serve", "the store's directory (a stopped weft serve's)")
	f.IntVar(&cfg.Shards, "shards", 0, "shards vertices are hashed to (must match the store's; 0: the store's, or for a new store weft serve's default, one per two CPUs)")
	f.IntVar(&cfg.Gatekeepers, "gatekeepers", 0, "gatekeepers (1..64; 0: one per four CPUs)")
	f.BoolVar(&cfg.Sync, "sync", cfg.Sync, "fsync every commit group")
	f.IntVar(&lcfg.BatchQuads, "batch", lcfg.BatchQuads, "quads per transaction")
	f.IntVar(&lcfg.Loaders, "loaders", lcfg.Loaders, "parallel loaders (transactions in flight), each with its own UID lease")
	f.BoolVar(&lcfg.SkipInvalid, "skip-invalid", false, "skip (and list) lines that do not parse or that the schema rejects")
	f.BoolVar(&noProgress, "no-progress", false, "no progress bar")
	f.IntVar(&bulkMem, "bulk-mem", bulkMem, "with --bulk: MiB of data kept in memory before it is written to disk as sorted tables (and, in a direct load, sorted runs of the quads) (1..2047)")
	f.StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile of the load to this file")
	f.BoolVar(&bulkDirect, "bulk-direct", true, "with --bulk, an RDF file and the vertex placement: build the store's records straight from the quads (map/reduce, all CPUs) instead of running them through transactions on the new store; see above")
	f.BoolVar(&bulkMode, "bulk", false, "offline bulk load into a new, empty --data-dir (no server running); see above")
	f.StringVar(&placement, "dgraph-placement", "", `where the Dgraph data lives, chosen when it is first created: "vertex" or "predicate" (as weft serve --dgraph-placement); "" loads into existing data in its own and creates new data with "vertex"; a placement other than the data's is refused`)
	return cmd
}

// countingReader counts the bytes read from a file, for the progress bar.
type countingReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

func runLoad(ctx context.Context, cmd *cobra.Command, cfg engine.Config, lcfg dgraph.LoadConfig, placement,
	rdfFile, jsonFile, schemaFile string, progress bool) (err error) {
	db, err := engine.Open(cfg)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, db.Close()) }()
	return loadInto(ctx, cmd, db, dgraph.DefaultConfig(), lcfg, placement, rdfFile, jsonFile, schemaFile, progress, nil, 0)
}

// runBulkLoad loads into a new store built offline (internal/bulk): the
// same loader, on a bulk.DB instead of an engine.
func runBulkLoad(ctx context.Context, cmd *cobra.Command, cfg engine.Config, lcfg dgraph.LoadConfig, memMiB int, direct bool, placement,
	rdfFile, jsonFile, schemaFile string, progress bool) error {
	if cfg.Store != "" && cfg.Store != engine.StorePebble {
		return fmt.Errorf("load: --bulk builds a Pebble store, not %s", cfg.Store)
	}
	bcfg := bulk.DefaultConfig(cfg.DataDir)
	bcfg.Shards, bcfg.Gatekeepers, bcfg.MemBytesMax = cfg.Shards, cfg.Gatekeepers, memMiB<<20
	shards, gks := engine.MachineTopology() // a new store: weft serve's defaults
	if bcfg.Shards == 0 {
		bcfg.Shards = shards
	}
	if bcfg.Gatekeepers == 0 {
		bcfg.Gatekeepers = gks
	}
	start := time.Now()
	db, err := bulk.Create(bcfg)
	if err != nil {
		return fmt.Errorf("load: %w", err)
	}
	var sink dgraph.DirectSink
	if direct && jsonFile == "" && placement != dgraph.PlacementPredicate {
		sink = db
	}
	if err := loadInto(ctx, cmd, db, dgraph.BulkGraphConfig(), lcfg, placement, rdfFile, jsonFile, schemaFile, progress,
		sink, memMiB<<20); err != nil {
		return errors.Join(err, db.Abort())
	}
	st := db.Stats()
	if err := db.Finish(); err != nil {
		return fmt.Errorf("load: %w", err)
	}
	secs := time.Since(start).Seconds()
	st = db.Stats()
	fmt.Fprintf(cmd.OutOrStdout(), "bulk store %s written: %d vertices, %d engine edges, %d transactions, %d keys in %d sorted tables (memory peak %.0f MiB) in %.1f s (%.0f engine edges/s, schema and writing included)\n",
		cfg.DataDir, st.Vertices, st.Edges, st.Commits, st.Entries, st.Spills, float64(st.MemBytesPeak)/(1<<20), secs, float64(st.Edges)/max(secs, 1e-9))
	return nil
}

// loadInto applies the schema and loads the files into db's Dgraph data;
// with sink (a new bulk store's), the RDF file by a direct load using at
// most memMax bytes.
func loadInto(ctx context.Context, cmd *cobra.Command, db engine.API, gcfg dgraph.Config, lcfg dgraph.LoadConfig, placement,
	rdfFile, jsonFile, schemaFile string, progress bool, sink dgraph.DirectSink, memMax int) error {
	gcfg.Placement = placement
	// Through namespace 0's view, as the Dgraph API opens it: a wildcard
	// delete then leaves other namespaces' values on a node alone.
	g, err := dgraph.Open(ctx, dgraph.NamespaceView(db, 0), gcfg)
	if err != nil {
		return err
	}
	if schemaFile != "" {
		text, err := os.ReadFile(schemaFile)
		if err != nil {
			return err
		}
		diff, err := g.Alter(ctx, string(text))
		if err != nil {
			return fmt.Errorf("%s: %w", schemaFile, err)
		}
		fmt.Fprintf(cmd.OutOrStdout(), "schema %s applied: %d predicate and %d type changes\n", schemaFile, len(diff.Predicates), len(diff.Types))
	}
	for _, in := range []struct {
		name string
		load func(context.Context, io.Reader, string, dgraph.LoadConfig) (dgraph.LoadStats, error)
	}{{rdfFile, g.LoadRDF}, {jsonFile, g.LoadJSON}} {
		if sink != nil && in.name == rdfFile {
			in.load = func(ctx context.Context, r io.Reader, name string, c dgraph.LoadConfig) (dgraph.LoadStats, error) {
				return g.LoadRDFDirect(ctx, r, name, c, sink, memMax)
			}
		}
		if in.name == "" {
			continue
		}
		if err := loadFile(ctx, cmd, in.name, in.load, lcfg, progress); err != nil {
			return err
		}
	}
	return nil
}

func loadFile(ctx context.Context, cmd *cobra.Command, name string,
	load func(context.Context, io.Reader, string, dgraph.LoadConfig) (dgraph.LoadStats, error), lcfg dgraph.LoadConfig, progress bool) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return err
	}
	cr := &countingReader{r: f}
	r, err := rdf.Decompress(cr)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	var quads atomic.Int64
	lcfg.Progress = func(q int64) { quads.Store(q) }
	var stage atomic.Value // a direct load's phase after reading
	lcfg.Stage = func(s string) { stage.Store(s) }
	start := time.Now()
	stopBar := func() {}
	if progress {
		stopBar = drawProgress(cmd.ErrOrStderr(), name, info.Size(), cr, &quads, &stage, start)
	}
	st, err := load(ctx, r, name, lcfg)
	stopBar()
	out := cmd.OutOrStdout()
	for _, s := range st.SkippedLines {
		fmt.Fprintf(out, "skipped %s: %s\n", s.Where, s.Err)
	}
	if st.Skipped > int64(len(st.SkippedLines)) {
		fmt.Fprintf(out, "(and %d more skipped lines)\n", st.Skipped-int64(len(st.SkippedLines)))
	}
	secs := st.Elapsed.Seconds()
	how := fmt.Sprintf("%d transactions, %d retries after conflicts", st.Batches, st.Attempts-st.Batches)
	if st.Direct {
		how = fmt.Sprintf("records written directly, %d runs of quads sorted on disk", st.Runs)
	}
	fmt.Fprintf(out, "%s: %d quads (%d nodes created, %d edges, %d values) in %.1f s: %.0f quads/s; %d lines skipped; %s\n",
		name, st.Quads, st.Nodes, st.Edges, st.Values, secs, float64(st.Quads)/max(secs, 1e-9), st.Skipped, how)
	return err
}

// drawProgress redraws a bar over the file's bytes with the quad rate (or a
// direct load's phase after the reading) until
// the returned function is called.
func drawProgress(w io.Writer, name string, size int64, cr *countingReader, quads *atomic.Int64, stage *atomic.Value, start time.Time) func() {
	bar := progressbar.NewOptions64(size,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetWidth(30),
		progressbar.OptionShowBytes(true),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionThrottle(200*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				q := quads.Load()
				if st, ok := stage.Load().(string); ok {
					bar.Describe(fmt.Sprintf("%s: %d quads read; %s", name, q, st))
					_ = bar.RenderBlank() // the bytes no longer move, which would redraw
				} else {
					bar.Describe(fmt.Sprintf("%s: %d quads, %.0f/s", name, q, float64(q)/time.Since(start).Seconds()))
				}
				_ = bar.Set64(cr.n.Load())
			}
		}
	}()
	return func() {
		close(done)
		<-finished
		_ = bar.Finish()
	}
}
