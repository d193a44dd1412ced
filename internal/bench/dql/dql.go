package dql

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/weft-db/weft/internal/bench"
	"github.com/weft-db/weft/internal/dgraph"
	"github.com/weft-db/weft/internal/engine"
)

// Options configures a run. Zero fields take the defaults in brackets.
type Options struct {
	// Out is the directory for the JSON and PNG files ("" writes none).
	Out string
	// Quick is the smoke run: the first 5,000 lines, 300 ms per cell and
	// clients 1, 2 and 5, unless set otherwise.
	Quick bool
	// RDF and Schema are the film data and its DQL schema
	// [testdata/film/goldendata_first_200k.rdf.gz, goldendata.schema
	// beside it].
	RDF, Schema string
	// Lines loads only the first Lines lines of RDF [0: all].
	Lines int
	// DataDir holds the store; it must be empty or missing ["": a
	// temporary directory, removed afterwards]. InMemory keeps the store in
	// memory.
	DataDir  string
	InMemory bool
	// LoadNoSync loads with fsync off, then closes and reopens the store
	// with fsync on for the queries [false: fsync on throughout, as weft
	// serve and weft load run].
	LoadNoSync bool
	// LoadBatch is quads per load transaction and Loaders the transactions
	// in flight [weft load's defaults: 1000 and 1].
	LoadBatch, Loaders int
	// Gatekeepers and Shards override the engine's defaults (2 and 4).
	Gatekeepers, Shards int
	// Duration of each (query, clients) cell [3s].
	Duration time.Duration
	// Clients lists the concurrent client counts [1 2 5 10 20 50 100].
	Clients []int
	// Mode is http (POST /query to the Dgraph HTTP API on loopback) or
	// inproc (the DQL executor called directly) [http].
	Mode string
	// Placement is the Dgraph data's placement: vertex (a node's data on
	// its vertex) or predicate (a predicate's data on one shard; the
	// executor reads one batch per predicate and shard per level) [vertex].
	// With Target it only labels the results (the server's data has its
	// own).
	Placement string
	// Cluster runs the engine as a cluster in this process: Gatekeepers
	// gatekeeper roles and Shards shard roles, each behind its own gRPC
	// server on loopback (engine.StartLocalCluster, the code weft
	// gatekeeper and weft shard run), sharing an in-memory store. The film
	// data loads through gatekeeper 0's Dgraph face; every gatekeeper
	// serves Dgraph's HTTP API (the handler weft gatekeeper --dgraph-http
	// runs) and the clients take them in turn. Internal calls are counted
	// as the shards' Read and ReadBatch calls: network round trips.
	Cluster bool
	// Target is an external Dgraph HTTP API (e.g. http://127.0.0.1:8080,
	// a weft serve --dgraph-http or weft gatekeeper --dgraph-http) whose
	// data is already loaded: no load, roots found through the API
	// (has(pred)), internal calls not counted ["": the benchmark's own
	// engine].
	Target string
	// TargetLoad (with Target) first applies Schema through the target's
	// /alter and posts RDF's first Lines lines through its
	// /mutate?commitNow=true, LoadBatch lines per mutation (a mutation the
	// target refuses is split until the refused lines are found and
	// skipped).
	TargetLoad bool
	// TargetShards (with Target) are the cluster-protocol addresses of the
	// target cluster's shard processes: the internal calls of CallsSample
	// queries per query, sent one at a time, are counted as the change in
	// the shards' Read and ReadBatch counters (Shard.Status). Nothing else
	// may use the cluster meanwhile.
	TargetShards []string
	// Queries names the queries to run [all of Queries, in order].
	Queries []string
	// RootsMax bounds the root entities a query draws from [0: all found].
	RootsMax int
	// CallsSample is the number of roots whose internal calls are counted
	// per query [200].
	CallsSample int
	// Seed seeds the clients' root choices [1 when zero].
	Seed uint64
	// LoadCPUProfile and CPUProfile, when set, receive CPU profiles of the
	// load and of the query cells.
	LoadCPUProfile, CPUProfile string
	// Progress receives progress bars (nil: none); Log a line per phase.
	Progress io.Writer
	Log      *slog.Logger
}

// Film data defaults, relative to the checkout's root (testdata/film; docs/dgraph.md).
const (
	DefaultRDF    = "testdata/film/goldendata_first_200k.rdf.gz"
	DefaultSchema = "testdata/film/goldendata.schema"
)

// dqlClientsDefault is the report's range of connections cut to what two
// cores can drive (the report went from 1 to 1000).
var dqlClientsDefault = []int{1, 2, 5, 10, 20, 50, 100}

func (o *Options) setDefaults() {
	if o.Quick {
		if o.Lines <= 0 {
			o.Lines = 5000
		}
		if o.Duration <= 0 {
			o.Duration = 300 * time.Millisecond
		}
		if len(o.Clients) == 0 {
			o.Clients = []int{1, 2, 5}
		}
	}
	if o.RDF == "" {
		o.RDF = DefaultRDF
	}
	if o.Schema == "" {
		o.Schema = filepath.Join(filepath.Dir(o.RDF), "goldendata.schema")
	}
	if o.Duration <= 0 {
		o.Duration = 3 * time.Second
	}
	if len(o.Clients) == 0 {
		o.Clients = slices.Clone(dqlClientsDefault)
	}
	if o.Mode == "" {
		o.Mode = "http"
	}
	if o.Placement == "" {
		o.Placement = dgraph.PlacementVertex
	}
	if len(o.Queries) == 0 {
		for _, q := range Queries {
			o.Queries = append(o.Queries, q.Name)
		}
	}
	if o.LoadBatch <= 0 && o.Target != "" {
		// A film line is about ten engine operations: 400 lines stay
		// under the 10,000 one transaction holds.
		o.LoadBatch = 400
	}
	if o.LoadBatch <= 0 {
		o.LoadBatch = dgraph.DefaultLoadConfig().BatchQuads
	}
	if o.Loaders <= 0 {
		o.Loaders = dgraph.DefaultLoadConfig().Loaders
	}
	if o.CallsSample <= 0 {
		o.CallsSample = 200
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
}

// validate checks the options after setDefaults.
func (o *Options) validate() error {
	if o.Mode != "http" && o.Mode != "inproc" {
		return fmt.Errorf("bench: --mode %q: want http or inproc", o.Mode)
	}
	if o.Target != "" {
		if o.Cluster || o.Mode != "http" {
			return errors.New("bench: --target runs over HTTP against its server: not with --cluster or --mode inproc")
		}
		if !strings.HasPrefix(o.Target, "http://") && !strings.HasPrefix(o.Target, "https://") {
			return fmt.Errorf("bench: --target %q: want an http:// or https:// URL", o.Target)
		}
	}
	if o.Target == "" && (o.TargetLoad || len(o.TargetShards) > 0) {
		return errors.New("bench: --target-load and --target-shards need --target")
	}
	if err := dgraph.CheckPlacement(o.Placement); err != nil {
		return fmt.Errorf("bench: --placement: %w", err)
	}
	for _, c := range o.Clients {
		if c < 1 || c > 10_000 {
			return fmt.Errorf("bench: %d clients out of range [1, 10000]", c)
		}
	}
	for _, name := range o.Queries {
		if _, ok := dqlQuery(name); !ok {
			return fmt.Errorf("bench: unknown query %q (known: %s, %s)", name, Queries[0].Name, Queries[1].Name)
		}
	}
	if o.InMemory && (o.LoadNoSync || o.DataDir != "") {
		// A memory store does not survive the reopen --load-nosync does.
		return errors.New("bench: --in-memory cannot be combined with --load-nosync or --data-dir")
	}
	return nil
}

// Name is the results' base name: film-<mode>-<placement>, with
// cluster- or target- before the mode and -quick after for a smoke run.
func (o Options) Name() string {
	mode := o.Mode
	switch {
	case o.Cluster:
		mode = "cluster-" + mode
	case o.Target != "":
		mode = "target-" + mode
	}
	name := "film-" + mode + "-" + o.Placement
	if o.Quick {
		name += "-quick"
	}
	return name
}

// dqlBench is one run's state.
type dqlBench struct {
	opts    Options
	cfg     engine.Config
	db      *engine.DB
	g       *dgraph.Graph
	lc      *engine.LocalCluster // Cluster
	res     dqlResults
	cleanup []func()
}

// Run loads the film data, runs the query cells, and returns (and
// writes to opts.Out) the result. A run whose queries failed still returns
// its result, with an error.
func Run(ctx context.Context, opts Options) (*bench.Result, error) {
	opts.setDefaults()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	b := &dqlBench{opts: opts}
	defer b.close()
	start, load := time.Now(), bench.LoadAvg()
	var runErr error
	switch {
	case opts.Target != "":
		runErr = b.runTarget(ctx)
	case opts.Cluster:
		runErr = b.runCluster(ctx)
	default:
		if err := b.prepare(); err != nil {
			return nil, err
		}
		if err := b.load(ctx); err != nil {
			return nil, err
		}
		runErr = b.queries(ctx)
	}
	if runErr != nil && len(b.res.Cells) == 0 {
		return nil, runErr
	}
	res := b.result()
	b.describeFront(res)
	return bench.Finish(res, start, load, b.opts.Out, b.opts.Name(), b.savePlots, runErr)
}

func (b *dqlBench) close() {
	if b.db != nil {
		b.db.Close()
	}
	for i := len(b.cleanup) - 1; i >= 0; i-- {
		b.cleanup[i]()
	}
}

// graphConfig is the Dgraph face's configuration: the chosen placement.
func (b *dqlBench) graphConfig() dgraph.Config {
	cfg := dgraph.DefaultConfig()
	cfg.Placement = b.opts.Placement
	return cfg
}

// prepare configures the engine and its directory.
func (b *dqlBench) prepare() error {
	o := &b.opts
	for _, p := range []string{o.RDF, o.Schema} {
		if _, err := os.Stat(p); err != nil {
			return fmt.Errorf("bench: the film data: %w", err)
		}
	}
	b.cfg = engine.DefaultConfig()
	if o.Gatekeepers > 0 {
		b.cfg.Gatekeepers = o.Gatekeepers
	}
	if o.Shards > 0 {
		b.cfg.Shards = o.Shards
	}
	switch {
	case o.InMemory:
		return nil
	case o.DataDir == "":
		dir, err := os.MkdirTemp("", "weft-bench-dql-")
		if err != nil {
			return err
		}
		b.cleanup = append(b.cleanup, func() { os.RemoveAll(dir) })
		b.cfg.DataDir = dir
		return nil
	}
	if ents, err := os.ReadDir(o.DataDir); err == nil && len(ents) > 0 {
		return fmt.Errorf("bench: --data-dir %s is not empty (the benchmark loads a fresh store)", o.DataDir)
	}
	b.cfg.DataDir = o.DataDir
	return nil
}
