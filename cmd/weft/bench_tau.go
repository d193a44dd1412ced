package main

import (
	"encoding/json"
	"log/slog"
	"os"
	"os/signal"

	"github.com/spf13/cobra"

	"github.com/weft-db/weft/internal/bench/tau"
)

func newBenchTauCmd() *cobra.Command {
	var opts tau.Options
	cmd := &cobra.Command{
		Use:   "tau",
		Short: "Coordination per operation vs the gatekeepers' announce period τ (the dissertation's Figure 5.11)",
		Long: `Runs a cluster — gatekeepers and shards each behind its own gRPC server on
loopback, in this process — once per announce period τ, with clients issuing
get_node programs and create_edge transactions through random gatekeepers,
and counts gatekeeper clock announcements and Kronos calls per operation.
Writes tau.json, tau.png and tau-latency.png to --out.

  weft bench tau                                  # τ = 10µs … 1s, 3 s each
  weft bench tau --taus 100us,10ms --duration 10s`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
			defer stop()
			opts.Progress, opts.Log = os.Stderr, slog.Default()
			res, err := tau.Run(ctx, opts)
			if res != nil {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				_ = enc.Encode(res)
			}
			return err
		},
	}
	f := cmd.Flags()
	f.DurationSliceVar(&opts.Taus, "taus", nil, "announce periods to measure (default 10us,100us,1ms,10ms,100ms,1s)")
	f.IntVar(&opts.Gatekeepers, "gatekeepers", 3, "gatekeepers")
	f.IntVar(&opts.Shards, "shards", 2, "shards")
	f.IntVar(&opts.Vertices, "vertices", 2000, "vertices preloaded")
	f.IntVar(&opts.Clients, "clients", 16, "concurrent clients")
	f.DurationVar(&opts.Duration, "duration", 0, "measured run per τ (default 3s)")
	f.Float64Var(&opts.Writes, "writes", 0.25, "fraction of operations that are create_edge transactions (the rest get_node)")
	f.Uint64Var(&opts.Seed, "seed", 1, "seed of the clients")
	f.StringVar(&opts.Out, "out", "bench/results/cluster", "directory for the JSON and PNG results (\"\" writes none)")
	return cmd
}
