package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"os/signal"

	"github.com/spf13/cobra"

	"github.com/weft-db/weft/internal/bench"
	"github.com/weft-db/weft/internal/bench/tao"
)

func newBenchTaoCmd() *cobra.Command {
	var (
		opts tao.Options
		gc   gcFlags
	)
	cmd := &cobra.Command{
		Use:   "tao",
		Short: "TAO social-network mix (Weaver's soc_net_bench) over a LinkBench-shaped graph",
		Long: `Generates a social graph with LinkBench's out-degree distribution, loads it
through engine commits, then runs the TAO mix (reads 99.8%: get_edges 59.4%,
count_edges 11.7%, get_node 28.9%; writes 0.2%: create_edge 80%, delete_edge
20%) from concurrent clients, in-process or over gRPC on loopback. Prints the
result as JSON on stdout and writes <mix>-<mode>[-quick].json with its latency
and throughput plots to --out. See docs/benchmarks.md.

  weft bench tao --quick                          # 20k vertices, 3 s
  weft bench tao --duration 20s                   # 1M vertices, in-process
  weft bench tao --mode net --mix 75`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			gc.apply() // the same collector settings as weft serve
			opts.Log = slog.Default()
			opts.Progress = terminal(os.Stderr)
			return runBench(cmd, func(ctx context.Context) (*bench.Result, error) { return tao.Run(ctx, opts) })
		},
	}
	f := cmd.Flags()
	gc.register(f)
	f.StringVar(&opts.Out, "out", "bench/results/tao", "directory for the JSON and PNG results (\"\" writes none)")
	f.BoolVar(&opts.Quick, "quick", false, "smoke run: 20,000 vertices for 3 s unless --vertices/--duration say otherwise")
	f.IntVar(&opts.Vertices, "vertices", 0, "vertices in the generated graph (default 1,000,000; 20,000 with --quick)")
	f.DurationVar(&opts.Duration, "duration", 0, "length of the measured run (default 30s; 3s with --quick)")
	f.IntVar(&opts.Clients, "clients", 64, "concurrent clients (goroutines issuing operations back to back)")
	f.IntSliceVar(&opts.SweepClients, "sweep-clients", nil, "after the main run, one more run of --duration per client count on the same graph (e.g. 16,32,128): throughput and read latency by clients")
	f.StringVar(&opts.Mix, "mix", "tao", "operation mix: tao (99.8% reads), reads (100%), 75 (75% reads)")
	f.StringVar(&opts.Mode, "mode", "inproc", "inproc: call the engine in this process; net: through the gRPC server on loopback and the Go client")
	f.IntVar(&opts.Conns, "conns", 2, "net mode: client connections the clients share")
	f.IntVar(&opts.Streams, "streams", 2, "net mode: RunStream streams per connection carrying the read programs (-1: one unary call per program)")
	f.StringVar(&opts.Dst, "dst", "uniform", "edge destinations: uniform, or zipf (skewed in-degree)")
	f.StringVar(&opts.DataDir, "data-dir", "", "store directory, empty or missing (default: a temporary directory, removed afterwards)")
	f.BoolVar(&opts.InMemory, "in-memory", false, "keep the store in memory instead of on disk")
	f.BoolVar(&opts.LoadNoSync, "load-nosync", false, "load without fsync, then reopen the store with fsync for the run (default: the engine's default, fsync on, throughout)")
	f.IntVar(&opts.LoadBatch, "load-batch", 1000, "operations per load transaction")
	f.IntVar(&opts.Loaders, "loaders", 1, "load transactions in flight (more abort each other)")
	f.IntVar(&opts.Gatekeepers, "gatekeepers", 0, "engine gatekeepers (default: the engine's, 2)")
	f.IntVar(&opts.Shards, "shards", 0, "engine shards (default: the engine's, 4)")
	f.BoolVar(&opts.NodeEdges, "node-edges", false, "get_node also returns the vertex's out-edges (default: the object only, like TAO's obj_get)")
	f.StringVar(&opts.Distribution, "distribution", "", "LinkBench Distribution.dat to take out-degrees from (default: the embedded copy)")
	f.Uint64Var(&opts.Seed, "seed", 1, "seed of the graph and the clients")
	f.StringVar(&opts.CPUProfile, "cpuprofile", "", "write a CPU profile of the measured run to this file")
	return cmd
}

// runBench runs a benchmark until done or interrupted (Ctrl-C) and prints
// its result as indented JSON on stdout, also when the run failed part way.
func runBench(cmd *cobra.Command, run func(context.Context) (*bench.Result, error)) error {
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
	defer stop()
	res, runErr := run(ctx)
	return printResult(cmd, res, runErr)
}

// printResult prints a benchmark's result (if any) as indented JSON on
// stdout and returns the run's error.
func printResult(cmd *cobra.Command, res *bench.Result, runErr error) error {
	if res != nil {
		enc := json.NewEncoder(cmd.OutOrStdout())
		enc.SetIndent("", "  ")
		if err := enc.Encode(res); err != nil {
			return err
		}
	}
	return runErr
}
