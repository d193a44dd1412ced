package main

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/weft-db/weft/internal/faults"
)

func init() { subcommands = append(subcommands, newFaultsCmd) }

func newFaultsCmd() *cobra.Command {
	cfg := faults.DefaultConfig()
	var workloads, nemeses string
	cmd := &cobra.Command{
		Use:   "faults",
		Short: "Run the real-process fault test: workloads against a weft serve process under kill -9, pauses and partitions",
		Long: `Run Weft's real-process fault test (docs/testing.md): a weft serve process on
loopback behind a fault-injecting TCP proxy, clients running the workloads
(list-append, rw-register, bank, ring, set-full, sideband) through it, and a
nemesis that kills the server with SIGKILL and restarts it, pauses it with
SIGSTOP/SIGCONT, partitions its traffic (both ways or one way) and clogs it.
The last part of the run is fault-free and every client must make progress
in it. The histories are checked (and cross-checked with adya when it is
installed); the histories, logs, nemesis journal and report go to --out.

  weft faults --duration 10m --out weft-data/faults

Exit status 0: valid; 1: an anomaly, a lost acknowledged write, a liveness
failure or an unexpected server exit (report.txt and anomalies.txt say
which), or the run could not be carried out.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			if cfg.Workloads, err = faults.ParseWorkloads(workloads); err != nil {
				return err
			}
			if cfg.Nemeses, err = faults.ParseNemeses(nemeses); err != nil {
				return err
			}
			if !cmd.Flags().Changed("seed") {
				cfg.Seed = uint64(time.Now().UnixNano())
			}
			if cfg.Bin == "" {
				if cfg.Bin, err = os.Executable(); err != nil {
					return err
				}
			}
			return runFaults(cmd, cfg)
		},
	}
	f := cmd.Flags()
	f.DurationVar(&cfg.Duration, "duration", cfg.Duration, "workload time, the final fault-free phase included")
	f.IntVar(&cfg.Clients, "clients", cfg.Clients, "concurrent clients per workload (a sideband client is a writer and a reader)")
	f.Float64Var(&cfg.Rate, "rate", cfg.Rate, "operations per second per client goroutine (0: unlimited)")
	f.StringVar(&workloads, "workloads", "all", "comma-separated: list-append,rw-register,bank,ring,set-full,sideband")
	f.StringVar(&nemeses, "nemesis", "all", "comma-separated fault kinds: kill,pause,partition,clog (none: no faults)")
	f.Uint64Var(&cfg.Seed, "seed", 0, "seed of the fault plan and the clients' choices (default: from the clock, printed)")
	f.StringVar(&cfg.OutDir, "out", "weft-data/faults", "directory for histories, logs and the report (and the server's data while it runs)")
	f.StringVar(&cfg.Bin, "bin", "", "the weft binary to run as the server (default: this one)")
	f.StringVar(&cfg.Adya, "adya", "", "the adya binary (default: adya on PATH or in ~/.cargo/bin; none: skip)")
	f.BoolVar(&cfg.KeepData, "keep-data", false, "keep the server's data directory after a valid run")
	return cmd
}

func runFaults(cmd *cobra.Command, cfg faults.Config) error {
	if err := os.MkdirAll(cfg.OutDir, 0o755); err != nil {
		return err
	}
	logf, err := os.Create(filepath.Join(cfg.OutDir, "harness.log"))
	if err != nil {
		return err
	}
	defer logf.Close()
	cfg.Logger = slog.New(slog.NewTextHandler(logf, nil))
	cfg.Progress = cmd.OutOrStdout()
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	fmt.Fprintf(cmd.OutOrStdout(), "weft faults: seed %d, duration %v, out %s\n", cfg.Seed, cfg.Duration, cfg.OutDir)
	rep, err := faults.Run(ctx, cfg)
	if err != nil {
		return err
	}
	fmt.Fprint(cmd.OutOrStdout(), "\n"+rep.String())
	fmt.Fprintf(cmd.OutOrStdout(), "\nreport: %s\n", filepath.Join(cfg.OutDir, "report.txt"))
	if !rep.Valid {
		return errors.New("faults: the run found problems (see the report)")
	}
	return nil
}
