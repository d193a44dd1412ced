package main

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/weft-db/weft/internal/bench/scale"
)

func newBenchScaleCmd() *cobra.Command {
	var (
		opts   scale.Options
		shapes []string
	)
	cmd := &cobra.Command{
		Use:   "scale",
		Short: "Scale-out: the TAO mix and get_node over local clusters of 1-4 gatekeepers and 1-8 shards",
		Long: `For each shape of a grid of gatekeeper and shard counts, starts a cluster of
real processes with this binary's ` + "`weft cluster up`" + ` (Kronos, coordinator,
PostgreSQL, shards, gatekeepers) in a temporary directory, loads a generated
TAO graph through the gatekeepers, runs the TAO mix and a get_node-only mix
for --duration each from clients spread over every gatekeeper, reads the CPU
every process used, and stops the cluster (always, also on error or Ctrl-C).
Reports ops/s, latency percentiles, CPU by role, throughput per core, Kronos
traffic per operation, and a model's prediction of the throughput with one
--model-cores machine per process. Prints the result as JSON on stdout and
writes scale[-quick].json and its plots to --out. See docs/scale-out.md.

  weft bench scale --quick                                 # 1×1 and 2×2, 5k vertices, 2 s each
  weft bench scale                                         # 3 × 4 shapes, 50k vertices, 10 s per mix
  weft bench scale --gatekeepers 1,2 --shards 2,4 --duration 5s
  weft bench scale --shape 2x4 --shape 4x8`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			for _, s := range shapes {
				sh, err := scale.ParseShape(s)
				if err != nil {
					return err
				}
				opts.Shapes = append(opts.Shapes, sh)
			}
			opts.Log, opts.Progress = slog.Default(), terminal(os.Stderr)
			// Ctrl-C and SIGTERM stop the grid; the cluster being measured
			// is stopped before the command returns.
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return runBenchScale(ctx, cmd, opts)
		},
	}
	f := cmd.Flags()
	f.IntSliceVar(&opts.Gatekeepers, "gatekeepers", nil, "gatekeeper counts of the grid (default 1,2,4)")
	f.IntSliceVar(&opts.Shards, "shards", nil, "shard counts of the grid (default 1,2,4,8)")
	f.StringSliceVar(&shapes, "shape", nil, "measure these GxS shapes instead of the grid, e.g. 2x4 (repeatable)")
	f.IntVar(&opts.Kronos, "kronos-replicas", 1, "Kronos replicas of each cluster")
	f.IntVar(&opts.Coord, "coord-replicas", 1, "coordinator replicas of each cluster")
	deprecatedAlias(f, "kronos", "kronos-replicas")
	deprecatedAlias(f, "coord", "coord-replicas")
	f.IntVar(&opts.Vertices, "vertices", 0, "vertices of the generated TAO graph (default 50,000; 5,000 with --quick)")
	f.DurationVar(&opts.Duration, "duration", 0, "measured run per shape and mix (default 10s; 2s with --quick)")
	f.IntVar(&opts.Clients, "clients", 0, "concurrent clients, spread over the gatekeepers (default 32; 8 with --quick)")
	f.IntVar(&opts.Conns, "conns", 2, "client connections per gatekeeper")
	f.IntVar(&opts.Streams, "streams", 2, "RunStream streams per connection carrying the read programs")
	f.StringSliceVar(&opts.Mixes, "mixes", nil, "mixes to measure: tao, get_node (default both)")
	f.IntVar(&opts.LoadBatch, "load-batch", 5000, "operations per load transaction")
	f.IntVar(&opts.Loaders, "loaders", 1, "load transactions in flight, sent to the gatekeepers in turn (more abort each other)")
	f.IntVar(&opts.ModelCores, "model-cores", 8, "cores per machine in the extrapolation model")
	f.DurationVar(&opts.IdleWindow, "idle", 0, "measure each cluster's idle CPU (the model's idle load) this long before the loads (default 2s; 500ms with --quick)")
	f.DurationVar(&opts.ReadyTimeout, "ready-timeout", 0, "wait this long for each cluster to serve (default 1m)")
	f.BoolVar(&opts.KeepDirs, "keep", false, "keep each cluster's directory (data and logs; a failed shape's is always kept)")
	f.BoolVar(&opts.Quick, "quick", false, "smoke run: shapes 1x1 and 2x2, 5,000 vertices, 2 s per mix, unless set otherwise")
	f.Uint64Var(&opts.Seed, "seed", 1, "seed of the graph and the clients")
	f.StringVar(&opts.Out, "out", "bench/results/scale", "directory for the JSON and PNG results (\"\" writes none)")
	return cmd
}

func runBenchScale(ctx context.Context, cmd *cobra.Command, opts scale.Options) error {
	res, runErr := scale.Run(ctx, opts)
	return printResult(cmd, res, runErr)
}
