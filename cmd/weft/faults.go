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
	cc := faults.DefaultClusterConfig()
	var workloads, nemeses string
	var cluster bool
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
which), or the run could not be carried out.

With --cluster the target is a cluster of real processes started by
weft cluster up in OUT/cluster (Kronos and coordinator raft groups, a
PostgreSQL, gatekeepers and shards with backups); the clients spread over
the gatekeepers and move to another when theirs is gone, and the nemesis
kills with SIGKILL, in turn, a gatekeeper slot holder, a shard slot holder,
a Kronos replica and a coordinator replica (leaders first), restarting each
with its command line after the fault's hold (--nemesis all adds SIGSTOP
pauses of the same processes). The report gives each fault's recovery time
(every client's next success; the configuration active with every slot
held) and their spread per fault kind. The cluster is stopped with
weft cluster down at the end, also after an error or Ctrl-C.

With --cluster --move-every D, placement units also move between shards
while the workloads run: about every D (jittered, seeded) a mover asks a
gatekeeper for the placement (GET /v1/placement) and moves the unit of a
vertex the workloads write, or a random slot, to a shard that may take it
(POST /v1/move). Failed or refused moves are expected under the nemesis;
the report counts moves, refusals and failures.

With --cluster --proxied every gatekeeper and shard reaches the coordinators
(and every gatekeeper every shard) through fault proxies of its own, and
the partition kinds isolate-holders (every slot holder cut off from the
coordinators, clients still reaching them) and isolate-gk-shard (one
gatekeeper cut from one shard) — --nemesis partitions — test the leases and
the unreachable-peer rule (docs/cluster.md, "Leases"); the report counts
the members' lease refusals. --plant-ignore-lease runs members that serve
on after their leases lapsed (a planted bug the checkers must catch; with
--pinned-clients, the first clients of each workload stay on their first
gatekeeper).

  weft faults --cluster --duration 10m --workloads list-append,bank,set-full --out weft-data/faults-cluster
  weft faults --cluster --duration 2m --move-every 200ms --nemesis all
  weft faults --cluster --proxied --nemesis partitions --gatekeepers 1 --backup-gatekeepers 1 --backup-shards 2 --fault-min 12s --fault-max 12s --duration 2m`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			if cfg.Workloads, err = faults.ParseWorkloads(workloads); err != nil {
				return err
			}
			parse := faults.ParseNemeses
			if !cluster && cmd.Flags().Changed("move-every") {
				return errors.New("faults: --move-every needs --cluster")
			}
			if cluster {
				cfg.Cluster, parse = &cc, faults.ParseClusterNemeses
				if !cmd.Flags().Changed("nemesis") {
					nemeses = "kills"
				}
			}
			if cfg.Nemeses, err = parse(nemeses); err != nil {
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
	f.StringVar(&nemeses, "nemesis", "all", "comma-separated fault kinds: kill,pause,partition,clog; with --cluster "+
		"kill-gatekeeper,kill-shard,kill-kronos,kill-coord (kills, the default) and pause-gatekeeper,pause-shard,pause-kronos,pause-coord (all: both) (none: no faults); "+
		"with --cluster --proxied also isolate-holders,isolate-gk-shard (partitions: both)")
	f.Uint64Var(&cfg.Seed, "seed", 0, "seed of the fault plan and the clients' choices (default: from the clock, printed)")
	f.StringVar(&cfg.OutDir, "out", "weft-data/faults", "directory for histories, logs and the report (and the server's data while it runs)")
	f.StringVar(&cfg.Bin, "bin", "", "the weft binary to run as the server (default: this one)")
	f.StringVar(&cfg.Adya, "adya", "", "the adya binary (default: adya on PATH or in ~/.cargo/bin; none: skip)")
	f.BoolVar(&cfg.KeepData, "keep-data", false, "keep the server's data directory after a valid run")
	f.DurationVar(&cfg.OpTimeout, "op-timeout", cfg.OpTimeout, "bound on one operation, retries of aborted attempts included")
	f.DurationVar(&cfg.Timing.FaultMin, "fault-min", cfg.Timing.FaultMin, "shortest fault (a killed process stays down this long at least)")
	f.DurationVar(&cfg.Timing.FaultMax, "fault-max", cfg.Timing.FaultMax, "longest fault")
	f.DurationVar(&cfg.Timing.QuietMin, "quiet-min", cfg.Timing.QuietMin, "shortest quiet gap before a fault")
	f.DurationVar(&cfg.Timing.QuietMax, "quiet-max", cfg.Timing.QuietMax, "longest quiet gap before a fault")
	f.BoolVar(&cluster, "cluster", false, "run against a cluster of processes (weft cluster up) instead of one weft serve")
	f.IntVar(&cc.Gatekeepers, "gatekeepers", cc.Gatekeepers, "with --cluster: gatekeeper slots")
	f.IntVar(&cc.Shards, "shards", cc.Shards, "with --cluster: shard slots")
	f.IntVar(&cc.Kronos, "kronos-replicas", cc.Kronos, "with --cluster: Kronos replicas (1, 3, 5 or 7)")
	f.IntVar(&cc.Coord, "coord-replicas", cc.Coord, "with --cluster: coordinator replicas (1, 3, 5 or 7)")
	deprecatedAlias(f, "kronos", "kronos-replicas")
	deprecatedAlias(f, "coord", "coord-replicas")
	f.IntVar(&cc.BackupGatekeepers, "backup-gatekeepers", cc.BackupGatekeepers, "with --cluster: backup gatekeeper processes")
	f.IntVar(&cc.BackupShards, "backup-shards", cc.BackupShards, "with --cluster: backup shard processes")
	f.DurationVar(&cc.RecoveryTimeout, "recovery-timeout", cc.RecoveryTimeout, "with --cluster: a kill not recovered within this makes the run invalid")
	f.DurationVar(&cc.MoveEvery, "move-every", cc.MoveEvery, "with --cluster: move a placement unit between shards about this often (POST /v1/move; 0: no moves)")
	f.BoolVar(&cc.Proxied, "proxied", false, "with --cluster: members reach the coordinators and gatekeepers the shards through fault proxies (for the partition kinds)")
	f.BoolVar(&cc.PlantIgnoreLease, "plant-ignore-lease", false, "with --cluster --proxied: planted bug, members serve on after their leases lapsed")
	f.IntVar(&cc.PinnedClients, "pinned-clients", 0, "with --cluster: the first N clients of each workload never leave their first gatekeeper")
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
	target := "one weft serve"
	if c := cfg.Cluster; c != nil {
		target = fmt.Sprintf("a cluster of %d+%d gatekeepers, %d+%d shards, %d Kronos, %d coordinator replicas",
			c.Gatekeepers, c.BackupGatekeepers, c.Shards, c.BackupShards, c.Kronos, c.Coord)
		if c.MoveEvery > 0 {
			target += fmt.Sprintf(", a unit moved about every %v", c.MoveEvery)
		}
	}
	fmt.Fprintf(cmd.OutOrStdout(), "weft faults: seed %d, duration %v, %s, out %s\n", cfg.Seed, cfg.Duration, target, cfg.OutDir)
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
