package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"os/signal"

	"github.com/spf13/cobra"

	"github.com/weft-db/weft/internal/bench/kronos"
)

func init() { subcommands = append(subcommands, newBenchCmd) }

func newBenchCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Run micro-benchmarks and write their results as JSON and PNG plots",
	}
	cmd.AddCommand(newBenchKronosCmd())
	cmd.AddCommand(newBenchTaoCmd())
	cmd.AddCommand(newBenchTauCmd())
	cmd.AddCommand(newBenchScaleCmd())
	cmd.AddCommand(newBenchDQLCmd())
	cmd.AddCommand(newBenchMonitorCmd())
	cmd.AddCommand(newBenchTwoHopCmd())
	return cmd
}

func newBenchKronosCmd() *cobra.Command {
	var (
		opts kronos.Options
		only string
	)
	cmd := &cobra.Command{
		Use:   "kronos",
		Short: "Kronos micro-benchmarks (paper §4.2): create, query, assign, memory, gc",
		Long: `Runs the Kronos micro-benchmarks and prints their results as one JSON object
on stdout; each sub-benchmark also writes NAME.json and its PNG plots to --out.
Progress bars go to stderr when it is a terminal. See docs/benchmarks.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			if opts.Only, err = kronos.ParseOnly(only); err != nil {
				return err
			}
			if opts.MaxEvents < 0 {
				return errors.New("bench: --max-events must be positive")
			}
			if !cmd.Flags().Changed("max-events") {
				opts.MaxEvents = 0 // the mode's default: 10^8, or 10^6 with --quick
			}
			opts.Log = slog.Default()
			opts.Progress = terminal(os.Stderr)
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
			defer stop()
			return runBenchKronos(ctx, cmd.OutOrStdout(), opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Out, "out", "bench/results/kronos", "directory for the JSON and PNG results (\"\" writes none)")
	f.BoolVar(&opts.Quick, "quick", false, "small, fast workloads (a smoke run; not comparable figures)")
	f.StringVar(&opts.Addr, "addr", "", "time event creation against the Kronos server at this address instead of starting one")
	f.StringVar(&only, "only", "", "comma-separated sub-benchmarks to run: create,query,assign,memory,gc (default all)")
	f.IntVar(&opts.MaxEvents, "max-events", 100_000_000, "largest graph of the memory benchmark (1,000,000 with --quick unless set)")
	f.Uint64Var(&opts.Seed, "seed", 1, "seed of every workload's random generator")
	return cmd
}

// runBenchKronos prints whatever finished, even when a sub-benchmark failed.
func runBenchKronos(ctx context.Context, out io.Writer, opts kronos.Options) error {
	results, runErr := kronos.Run(ctx, opts)
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	if err := enc.Encode(results); err != nil {
		return errors.Join(runErr, err)
	}
	return runErr
}

// terminal returns f if it is a terminal, so progress bars do not fill logs.
func terminal(f *os.File) io.Writer {
	if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
		return f
	}
	return nil
}
