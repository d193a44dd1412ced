package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"

	"github.com/spf13/cobra"

	"github.com/weft-db/weft/internal/bench"
	"github.com/weft-db/weft/internal/bench/dql"
)

func newBenchDQLCmd() *cobra.Command {
	var (
		opts     dql.Options
		gc       gcFlags
		bulkRuns int
	)
	cmd := &cobra.Command{
		Use:   "dql",
		Short: "The Dgraph report's film-data benchmark: load rate, then two 2-hop DQL queries from 1 to 100 clients",
		Long: `Loads Dgraph's film data (N-Quads, schema first) into a fresh engine in this
process and measures the load rate, then runs the Dgraph report's two 2-hop
queries (adapted to the film data's predicates) from each number of concurrent
clients for --duration, through Dgraph's HTTP API (POST /query on loopback,
the handler weft serve --dgraph-http runs) or --mode inproc. Prints the result
as JSON on stdout and writes film-<mode>-<placement>[-quick].json with
throughput and latency plots to --out. See docs/dgraph.md, "Benchmarks".

  weft bench dql --quick                    # first 5,000 lines, 300 ms cells
  weft bench dql                            # all 200k lines, 3 s cells
  weft bench dql --mode inproc --cpuprofile q.prof --load-cpuprofile load.prof
  weft bench dql --quick --placement predicate   # a predicate's data on one shard`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			gc.apply() // the same collector settings as weft serve
			opts.Log = slog.Default()
			opts.Progress = terminal(os.Stderr)
			if bulkRuns > 0 { // the load rates only: direct, bulk and online, no queries
				res, err := dql.CompareLoads(cmd.Context(), opts.RDF, opts.Schema, opts.Lines, bulkRuns)
				if err != nil {
					return err
				}
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(res)
			}
			return runBench(cmd, func(ctx context.Context) (*bench.Result, error) { return dql.Run(ctx, opts) })
		},
	}
	f := cmd.Flags()
	gc.register(f)
	f.StringVar(&opts.Out, "out", "bench/results/dql", "directory for the JSON and PNG results (\"\" writes none)")
	f.BoolVar(&opts.Quick, "quick", false, "smoke run: the first 5,000 lines, 300 ms cells, clients 1,2,5 unless set otherwise")
	f.StringVar(&opts.RDF, "rdf", dql.DefaultRDF, "the film data (N-Quads, gzipped or not)")
	f.StringVar(&opts.Schema, "schema", "", "its DQL schema (default: goldendata.schema beside --rdf)")
	f.IntVar(&opts.Lines, "lines", 0, "load only the first N lines (default all; 5,000 with --quick)")
	f.DurationVar(&opts.Duration, "duration", 0, "length of each (query, clients) cell (default 3s; 300ms with --quick)")
	f.IntSliceVar(&opts.Clients, "clients", nil, "concurrent client counts (default 1,2,5,10,20,50,100)")
	f.StringVar(&opts.Mode, "mode", "http", "http: POST /query to Dgraph's HTTP API on loopback; inproc: the DQL executor in this process")
	f.StringVar(&opts.Placement, "placement", "vertex", "the Dgraph data's placement: vertex (a node's data on its vertex) or predicate (a predicate's data on one shard)")
	f.StringSliceVar(&opts.Queries, "queries", nil, "queries to run (default film-directors-films,director-films-directors)")
	f.IntVar(&opts.RootsMax, "roots-max", 0, "draw roots from at most this many entities (default all found)")
	f.IntVar(&opts.CallsSample, "calls-sample", 200, "roots per query whose internal calls are counted")
	f.StringVar(&opts.DataDir, "data-dir", "", "store directory, empty or missing (default: a temporary directory, removed afterwards)")
	f.BoolVar(&opts.InMemory, "in-memory", false, "keep the store in memory instead of on disk")
	f.BoolVar(&opts.LoadNoSync, "load-nosync", false, "load without fsync, then reopen the store with fsync for the queries (default: fsync on throughout, as weft serve)")
	f.IntVar(&opts.LoadBatch, "load-batch", 0, "quads per load transaction (default weft load's, 1000)")
	f.IntVar(&opts.Loaders, "loaders", 0, "load transactions in flight (default weft load's, 1)")
	f.IntVar(&opts.Gatekeepers, "gatekeepers", 0, "engine gatekeepers (default: the engine's, 2)")
	f.IntVar(&opts.Shards, "shards", 0, "engine shards (default: the engine's, 4)")
	f.BoolVar(&opts.Cluster, "cluster", false, "run the engine as a cluster in this process (--gatekeepers and --shards roles, each behind its own gRPC server on loopback): reads cross the network, calls counted at the shards")
	f.StringVar(&opts.Target, "target", "", "query an external server's Dgraph HTTP API (e.g. http://127.0.0.1:8080, weft serve --dgraph-http or a gatekeeper's): no load of its own unless --target-load")
	f.BoolVar(&opts.TargetLoad, "target-load", false, "with --target: apply --schema through its /alter and post --rdf's lines (--lines) through its /mutate, --load-batch lines per mutation")
	f.StringSliceVar(&opts.TargetShards, "target-shards", nil, "with --target on a cluster: its shard processes' cluster-protocol addresses; internal calls per query are counted as their Read and ReadBatch calls")
	f.Uint64Var(&opts.Seed, "seed", 1, "seed of the clients' root choices")
	f.IntVar(&bulkRuns, "bulk-load", 0, "measure only the load rate, N runs each of the direct bulk load (weft load --bulk), the transactional bulk load (--bulk-direct=false) and the online load, into fresh temporary stores; prints JSON with the medians; no queries")
	f.StringVar(&opts.LoadCPUProfile, "load-cpuprofile", "", "write a CPU profile of the load to this file")
	f.StringVar(&opts.CPUProfile, "cpuprofile", "", "write a CPU profile of the query cells to this file")
	return cmd
}
