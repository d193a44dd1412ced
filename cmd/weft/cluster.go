package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/weft-db/weft/internal/dgraph"
	"github.com/weft-db/weft/internal/launch"
)

func init() { subcommands = append(subcommands, newClusterCmd) }

// clusterOpts are the flags of `weft cluster` and its subcommands.
type clusterOpts struct {
	up launch.Config
	// readyTimeout is cluster add's (up's is up.ReadyTimeout: each
	// command's help shows its own default).
	readyTimeout, stopTimeout time.Duration
	// noRebalance: cluster add --role shard leaves the new shard empty.
	noRebalance bool
}

func newClusterCmd() *cobra.Command {
	o := &clusterOpts{up: launch.DefaultConfig("weft-cluster")}
	cmd := &cobra.Command{
		Use:   "cluster",
		Short: "Start, inspect and stop a local cluster of separate processes on loopback",
	}
	cmd.PersistentFlags().StringVar(&o.up.Dir, "dir", o.up.Dir, "directory for data, logs and the state file "+launch.StateFile)
	cmd.AddCommand(newClusterUpCmd(o), newClusterStatusCmd(o), newClusterDownCmd(o), newClusterAddCmd(o))
	return cmd
}

func newClusterUpCmd(o *clusterOpts) *cobra.Command {
	up := &cobra.Command{
		Use:   "up",
		Short: "Start a local cluster: Kronos and coordinator replicas, PostgreSQL, shards and gatekeepers, each its own process",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.up.Validate(); err != nil {
				return err
			}
			if err := dgraph.CheckPlacement(o.up.DgraphPlacement); err != nil {
				return fmt.Errorf("--dgraph-placement: %w", err)
			}
			if f := cmd.Flag("log-format"); f != nil && f.Changed {
				o.up.LogFormat = f.Value.String() // the processes log as up does
			}
			return launch.Up(cmd.Context(), cmd.OutOrStdout(), o.up)
		},
	}
	c := &o.up
	f := up.Flags()
	f.IntVar(&c.Gatekeepers, "gatekeepers", c.Gatekeepers, "gatekeeper slots")
	f.IntVar(&c.Shards, "shards", c.Shards, "shard slots")
	f.IntVar(&c.Kronos, "kronos-replicas", c.Kronos, "Kronos replicas: 1, 3, 5 or 7")
	f.IntVar(&c.Coord, "coord-replicas", c.Coord, "coordinator replicas: 1, 3, 5 or 7")
	f.IntVar(&c.BasePort, "base-port", 0, "lay the ports out from this one: Kronos replicas from it, coordinators +100, PostgreSQL +200, shards +300, gatekeepers +400; instance i +10i, its HTTP +1 (docs/operations.md; 0: free ports)")
	f.StringToIntVar(&c.Ports, "port", nil, "give one address its port, NAME.LABEL=PORT with the names and labels up lists, e.g. gatekeeper-1.grpc=7500,gatekeeper-1.http=7580 (repeatable; over the free or --base-port ones)")
	f.IntVar(&c.BackupGatekeepers, "backup-gatekeepers", 0, "extra gatekeeper processes that wait as backups")
	f.IntVar(&c.BackupShards, "backup-shards", 0, "extra shard processes that wait as backups")
	f.DurationVar(&c.ReadyTimeout, "ready-timeout", c.ReadyTimeout, "wait this long for every process to serve")
	f.StringVar(&c.PostgresURL, "postgres-url", "", "PostgreSQL the gatekeepers and shards share (empty: up starts one, `weft postgres`, in DIR/postgres-1)")
	f.StringVar(&c.PostgresSchema, "postgres-schema", "", "schema of the shared store (default: the store's)")
	f.BoolVar(&c.Dgraph, "dgraph", false, "every gatekeeper also serves Dgraph's HTTP and gRPC APIs (weft gatekeeper --dgraph-http/--dgraph-grpc) on ports of its own, listed by up and status")
	f.StringVar(&c.DgraphPlacement, "dgraph-placement", "", `with --dgraph: the Dgraph data's placement when first created, "vertex" or "predicate" (weft serve --dgraph-placement)`)
	deprecatedAlias(f, "kronos", "kronos-replicas")
	deprecatedAlias(f, "coord", "coord-replicas")
	return up
}

func newClusterStatusCmd(o *clusterOpts) *cobra.Command {
	return &cobra.Command{
		Use:   "status",
		Short: "Show the cluster's processes, members, slots and epochs",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := launch.ReadStatus(cmd.Context(), o.up.Dir)
			if err != nil {
				return err
			}
			printClusterStatus(cmd.OutOrStdout(), s)
			return nil
		},
	}
}

func newClusterDownCmd(o *clusterOpts) *cobra.Command {
	down := &cobra.Command{
		Use:   "down",
		Short: "Stop the cluster: SIGTERM, then SIGKILL after --timeout",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return launch.Down(cmd.OutOrStdout(), o.up.Dir, o.stopTimeout)
		},
	}
	down.Flags().DurationVar(&o.stopTimeout, "timeout", 10*time.Second, "wait this long after SIGTERM before SIGKILL")
	return down
}

func newClusterAddCmd(o *clusterOpts) *cobra.Command {
	var role string
	add := &cobra.Command{
		Use:   "add",
		Short: "Grow a running cluster by one shard or gatekeeper: start its process, then add its slot (a new epoch)",
		Long: `Start one more shard (or gatekeeper) process, wait until it registers with the
coordinator as a backup, then add a slot for it: the coordinator gives it the
slot in a new configuration epoch, every shard rebuilds its partition from the
store, and the cluster serves again once the epoch is active (clients see
retryable errors during the switch). A new shard starts empty: then its share
of the placement slots moves to it online, one move transaction per slot,
while transactions and programs go on (weft rebalance; docs/operations.md).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return clusterAdd(cmd.Context(), cmd.OutOrStdout(), o, role)
		},
	}
	add.Flags().StringVar(&role, "role", "shard", "shard or gatekeeper")
	add.Flags().BoolVar(&o.noRebalance, "no-rebalance", false, "with --role shard: leave the new shard empty (weft rebalance moves slots to it later)")
	add.Flags().DurationVar(&o.readyTimeout, "ready-timeout", 60*time.Second, "wait this long for the process and the new epoch")
	return add
}

// clusterAdd adds one process of role; a new shard then gets its share of
// the placement slots (weft rebalance), unless --no-rebalance.
func clusterAdd(ctx context.Context, out io.Writer, o *clusterOpts, role string) error {
	if _, err := launch.Add(ctx, out, o.up.Dir, role, o.readyTimeout); err != nil {
		return err
	}
	if role != "shard" || o.noRebalance {
		return nil
	}
	via, err := launch.RebalanceVia(o.up.Dir)
	if err != nil {
		return err
	}
	_, err = rebalance(ctx, out, terminal(os.Stderr), via)
	return err
}
