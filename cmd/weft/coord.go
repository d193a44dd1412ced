package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/weft-db/weft/internal/coord"
	"github.com/weft-db/weft/internal/wire/coordclient"
	pb "github.com/weft-db/weft/internal/wire/coordpb"
)

func init() { subcommands = append(subcommands, newCoordCmd) }

func newCoordCmd() *cobra.Command {
	cfg := coord.DefaultServerConfig()
	var peers string
	cmd := &cobra.Command{
		Use:   "coord",
		Short: "Run a cluster coordinator replica (membership, heartbeats, failover, epochs)",
		Long: `Run one replica of the cluster coordinator (the dissertation's cluster
manager, §3.3.2.4 and §4.6). Gatekeepers, shards, Kronos replicas and backups
register with it and heartbeat; a member silent for --suspect-after is
declared failed and fenced, a registered backup of its role takes its slot,
and the configuration epoch is bumped behind a barrier (an epoch is active
once every live member acknowledged it).

Replicated with etcd raft: start 3 or 5 replicas, each with its --id and the
same --peers list; the group survives the loss of a minority.

  weft coord --id 1 --addr 127.0.0.1:7601 --http-addr 127.0.0.1:7611 \
    --peers 1=127.0.0.1:7601,2=127.0.0.1:7602,3=127.0.0.1:7603 --data-dir d1 --gatekeepers 2 --shards 4

HTTP: GET /healthz, /metrics (Prometheus), /status (HTML), /status.json.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, err := parsePeers(peers)
			if err != nil {
				return err
			}
			cfg.Peers = p
			if cfg.DataDir == "" {
				cfg.DataDir = fmt.Sprintf("weft-data/coord-%d", cfg.ID)
			}
			s, err := coord.NewServer(cfg, slog.Default())
			if err != nil {
				return err
			}
			if err := s.Start(); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "coord replica %d serving on %s http %s\n", cfg.ID, s.Addr(), s.HTTPAddr())
			sig := make(chan os.Signal, 1)
			signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
			<-sig
			s.Stop()
			return nil
		},
	}
	f := cmd.Flags()
	f.Uint64Var(&cfg.ID, "id", cfg.ID, "this replica's id (1..n)")
	f.StringVar(&cfg.Addr, "addr", cfg.Addr, "address for the Coord API and raft transport (gRPC)")
	f.StringVar(&cfg.HTTPAddr, "http-addr", cfg.HTTPAddr, "address for /healthz, /metrics and /status (empty: off)")
	f.StringVar(&peers, "peers", "", "every replica as id=host:port, comma-separated (empty: a group of one)")
	f.StringVar(&cfg.DataDir, "data-dir", "", "raft log and snapshots (default weft-data/coord-<id>)")
	f.BoolVar(&cfg.Sync, "sync", cfg.Sync, "fsync every log write before acknowledging (false: benchmarks only)")
	f.DurationVar(&cfg.Tick, "tick", cfg.Tick, "raft tick")
	f.IntVar(&cfg.ElectionTicks, "election-ticks", cfg.ElectionTicks, "ticks without a leader before campaigning")
	f.DurationVar(&cfg.SuspectAfter, "suspect-after", cfg.SuspectAfter, "declare a member failed after this long without a heartbeat (> 2*election-ticks*tick)")
	f.DurationVar(&cfg.Lease, "lease", cfg.Lease, "a member serves this long after sending a heartbeat the leader answered (0: half of --suspect-after; lease + max-drift < suspect-after)")
	f.DurationVar(&cfg.MaxDrift, "max-drift", cfg.MaxDrift, "the clock drift leases allow for: a slot changes hands only lease + max-drift after its holder's last grant")
	f.Int32Var(&cfg.Gatekeepers, "gatekeepers", cfg.Gatekeepers, "gatekeeper slots to create")
	f.Int32Var(&cfg.Shards, "shards", cfg.Shards, "shard slots to create")
	cmd.AddCommand(newCoordMemberCmd(), newCoordAddSlotCmd())
	return cmd
}

// newCoordMemberCmd runs a process that only registers and heartbeats: a
// stand-in for a role's process in tests and demos of failover (it serves
// nothing). Real gatekeepers and shards embed coord.RunMember.
func newCoordMemberCmd() *cobra.Command {
	var addrs, role string
	mc := coord.MemberConfig{Interval: 100 * time.Millisecond}
	cmd := &cobra.Command{
		Use:   "member",
		Short: "Register with the coordinator and heartbeat (a stand-in member for tests and demos)",
		Long: `Register with the coordinator as --role and heartbeat until SIGTERM, printing
each configuration the member adopts. It serves nothing: it shows how a
process joins, waits as a backup, is promoted into a failed member's slot, and
is fenced when declared failed (it then exits with an error).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			r, ok := coord.ParseRole(role)
			if !ok {
				return fmt.Errorf("unknown role %q: want gatekeeper, shard or kronos", role)
			}
			mc.Role = r
			if mc.Name == "" {
				h, _ := os.Hostname()
				mc.Name = fmt.Sprintf("%s-%s-%d", role, h, os.Getpid())
			}
			c, err := coordclient.NewClient(splitAddrs(addrs))
			if err != nil {
				return err
			}
			defer c.Close()
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			out := cmd.OutOrStdout()
			mc.OnConfig = func(_ context.Context, cfg *pb.Config, self *pb.Member) error {
				fmt.Fprintf(out, "member %d (%s) slot %d epoch %d active %d\n", self.Id, mc.Name, self.Slot, cfg.Epoch, cfg.ActiveEpoch)
				return nil
			}
			err = coord.RunMember(ctx, c, mc, slog.Default())
			if errors.Is(err, coordclient.ErrFenced) {
				return fmt.Errorf("%s: %w", mc.Name, err)
			}
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&addrs, "coord", "127.0.0.1:7600", "coordinator replicas, comma-separated host:port")
	f.StringVar(&role, "role", "shard", "gatekeeper, shard or kronos")
	f.StringVar(&mc.Name, "name", "", "member name (default role-host-pid)")
	f.StringVar(&mc.Address, "addr", "", "address the member would serve on (shown to clients)")
	f.DurationVar(&mc.Interval, "interval", mc.Interval, "heartbeat interval")
	return cmd
}

func newCoordAddSlotCmd() *cobra.Command {
	var addrs, role string
	cmd := &cobra.Command{
		Use:   "add-slot",
		Short: "Add a gatekeeper or shard slot (a registered backup takes it at once)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			r, ok := coord.ParseRole(role)
			if !ok || r == pb.Role_KRONOS {
				return fmt.Errorf("unknown slotted role %q: want gatekeeper or shard", role)
			}
			c, err := coordclient.NewClient(splitAddrs(addrs))
			if err != nil {
				return err
			}
			defer c.Close()
			ctx, cancel := context.WithTimeout(cmd.Context(), 10*time.Second)
			defer cancel()
			st, err := c.LeaderStatus(ctx)
			if err != nil {
				return err
			}
			n := int32(0)
			for _, s := range st.Slots {
				if s.Role == r {
					n++
				}
			}
			resp, err := c.AddSlot(ctx, &pb.AddSlotRequest{Role: r, Count: n + 1})
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s slots: %d, epoch %d\n", role, n+1, resp.Config.Epoch)
			return nil
		},
	}
	cmd.Flags().StringVar(&addrs, "coord", "127.0.0.1:7600", "coordinator replicas, comma-separated host:port")
	cmd.Flags().StringVar(&role, "role", "shard", "gatekeeper or shard")
	return cmd
}

func splitAddrs(s string) []string {
	var out []string
	for _, a := range strings.Split(s, ",") {
		if a = strings.TrimSpace(a); a != "" {
			out = append(out, a)
		}
	}
	return out
}
