package main

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"time"

	"github.com/spf13/cobra"

	"github.com/weft-db/weft/internal/bench/monitor"
)

func newBenchMonitorCmd() *cobra.Command {
	var o monitor.Options
	var replot bool
	cmd := &cobra.Command{
		Use:   "monitor",
		Short: "Optimistic execution (§VI): eventual consistency + monitors vs sequential, overhead, detection latency",
		Long: `Reproduces the experiments of "Optimistic Execution in Key-Value Store" §VI on
this machine. For each N (servers = N, separate 'weft kv serve' processes on
loopback, started from this binary) and each mode — sequential (R1, W=N, no
monitors), eventual (R1 W1, no monitors) and eventual+monitor (R1 W1, a
detector on every server, the monitor and rollback on) — it runs 2N clients
of the synthetic conjunctive workload (one variable per server, true with
probability --beta on a write) at each PUT percentage for --duration, and
reports throughput, the benefit over sequential, the monitor's overhead,
violations found and rolled back, and the detection latency distribution.
The three modes' rings run at once and are measured in turn, --repeat
rounds in a rotating order, so a change in the machine's speed falls on
all of them alike. With --net-delay/--net-jitter it also reports
net_benefit: the benefit the configured delays alone account for (computed,
no processing time), and the result's env records the CPU busy and steal
shares over the run. --graph adds the graph application (local mutual
exclusion).

Writes monitor.json and PNGs to --out and prints the JSON on stdout.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if replot {
				return monitor.Replot(o.Out)
			}
			if o.Bin == "" {
				exe, err := os.Executable()
				if err != nil {
					return err
				}
				o.Bin = exe
			}
			o.Log = slog.Default()
			o.Progress = terminal(os.Stderr)
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
			defer stop()
			r, err := monitor.Run(ctx, o)
			if err != nil {
				return err
			}
			enc := json.NewEncoder(cmd.OutOrStdout())
			enc.SetIndent("", "  ")
			if err := enc.Encode(r); err != nil {
				return err
			}
			if o.Out != "" {
				fmt.Fprintf(os.Stderr, "wrote %s/monitor.json and %v\n", o.Out, r.Plots)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Out, "out", "bench/results/monitor", "directory for monitor.json and the PNGs (\"\" writes none)")
	f.StringVar(&o.Bin, "bin", "", "weft binary for the server processes (default: this one)")
	f.IntSliceVar(&o.Ns, "n", []int{2, 3, 5}, "replication factors (servers = N)")
	f.IntSliceVar(&o.PutPcts, "put-pct", []int{10, 25, 50}, "PUT percentages")
	f.DurationVar(&o.Duration, "duration", 5*time.Second, "measured time per cell")
	f.IntVar(&o.Repeat, "repeat", 1, "rounds: each measures every mode of each synthetic cell once (rotating order); the median is reported")
	f.IntVar(&o.ClientsPerServer, "clients-per-server", 2, "client goroutines per server (the paper: 2)")
	f.Float64Var(&o.Beta, "beta", 0.01, "probability that a write makes a synthetic variable true")
	f.DurationVar(&o.Epsilon, "epsilon", 0, "HVC ε of servers and monitor (0: one machine, one clock)")
	f.DurationVar(&o.FlushEvery, "flush-every", 50*time.Millisecond, "detector heartbeat")
	f.BoolVar(&o.Graph, "graph", true, "also run the graph application (local mutual exclusion)")
	f.IntVar(&o.GraphVertices, "graph-vertices", 200, "vertices of the graph application's random graph")
	f.IntVar(&o.GraphDegree, "graph-degree", 4, "average degree of that graph")
	f.Uint64Var(&o.Seed, "seed", 1, "workload seed")
	f.Float64Var(&o.LatencyBeta, "latency-beta", 0.5, "β of the extra detection-latency cell per N (monitor on, rollback off; 0: no such cell)")
	f.Float64Var(&o.RollbackBeta, "rollback-beta", 0.05, "β at N = 2 of the extra rollback cell per N (monitor and rollback on; β^(2/N) at N; 0: no such cell)")
	f.DurationVar(&o.NetDelay, "net-delay", 0, "one-way delay a fault proxy adds in front of every server (0: plain loopback)")
	f.DurationVar(&o.NetJitter, "net-jitter", 0, "extra uniform random delay, up to this, per direction")
	f.StringVar(&o.JitterDist, "net-jitter-dist", "uniform", "distribution of --net-jitter with --net-delay-at client: uniform (on [0, --net-jitter]) or exp (exponential with the same mean, --net-jitter/2, cut at 20 means: a long tail)")
	f.StringVar(&o.DelayAt, "net-delay-at", "proxy", "where --net-delay/--net-jitter are added: proxy (a delaying TCP proxy in front of every server, in the bench process) or client (in the HTTP transport of the clients and the monitor: no proxy CPU)")
	f.BoolVar(&replot, "replot", false, "only redraw the PNGs of --out/monitor.json")
	f.StringVar(&o.Dir, "dir", "", "scratch directory for the servers' data (default: a temporary one)")
	return cmd
}
