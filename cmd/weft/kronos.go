package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/weft-db/weft/internal/coord"
	"github.com/weft-db/weft/internal/kronos"
	"github.com/weft-db/weft/internal/opshttp"
	"github.com/weft-db/weft/internal/wire/coordclient"
	"github.com/weft-db/weft/internal/wire/coordpb"
)

func init() { subcommands = append(subcommands, newKronosCmd) }

func newKronosCmd() *cobra.Command {
	cfg := kronos.DefaultServerConfig()
	var peers, coordAddrs, httpAddr string
	cmd := &cobra.Command{
		Use:   "kronos",
		Short: "Run a Kronos event-ordering replica (gRPC)",
		Long: `Run one replica of Kronos, the event ordering service.

One replica by default. For a group of 3 or 5, start each with its --id and
the same --peers list (every replica's id=address, itself included); the
group survives the loss of a minority.

  weft kronos --id 1 --addr 127.0.0.1:7401 --peers 1=127.0.0.1:7401,2=127.0.0.1:7402,3=127.0.0.1:7403 --data-dir d1`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, err := parsePeers(peers)
			if err != nil {
				return err
			}
			cfg.Peers = p
			if cfg.DataDir == "" {
				cfg.DataDir = fmt.Sprintf("weft-data/kronos-%d", cfg.ID)
			}
			s, err := kronos.NewServer(cfg, slog.Default())
			if err != nil {
				return err
			}
			if err := s.Start(); err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			if httpAddr != "" {
				ops, err := opshttp.Start(httpAddr, opshttp.Config{Namespace: "weft_kronos", Gauges: func() map[string]float64 {
					st, err := s.Stats(context.Background(), nil)
					if err != nil {
						return nil
					}
					return map[string]float64{"events": float64(st.Events), "clock_events": float64(st.ClockEvents),
						"edges": float64(st.Edges), "created_total": float64(st.Created), "collected_total": float64(st.Collected),
						"applied_index": float64(st.AppliedIndex), "term": float64(st.Term), "leader_id": float64(st.LeaderId),
						"is_leader": b2f(st.IsLeader)}
				}, Healthy: func() (bool, string) {
					st, err := s.Stats(context.Background(), nil)
					if err != nil || st.LeaderId == 0 {
						return false, "no raft leader known"
					}
					return true, fmt.Sprintf("leader %d, term %d", st.LeaderId, st.Term)
				}})
				if err != nil {
					s.Stop()
					return err
				}
				defer ops.Stop()
				httpAddr = ops.Addr()
			}
			fmt.Fprintf(cmd.OutOrStdout(), "kronos replica %d serving on %s\n", cfg.ID, s.Addr())
			if coordAddrs != "" {
				// Registered for the coordinator's status and the
				// configuration clients read; the raft group, not the
				// coordinator, keeps Kronos available.
				go registerKronos(ctx, coordAddrs, fmt.Sprintf("kronos-%d", cfg.ID), s.Addr(), httpAddr)
			}
			<-ctx.Done()
			s.Stop()
			return nil
		},
	}
	f := cmd.Flags()
	f.Uint64Var(&cfg.ID, "id", cfg.ID, "this replica's id (1..n)")
	f.StringVar(&cfg.Addr, "addr", cfg.Addr, "address for the Kronos API and raft transport")
	f.StringVar(&peers, "peers", "", "every replica as id=host:port, comma-separated (empty: a group of one)")
	f.StringVar(&httpAddr, "http-addr", "", "address for /healthz (200 while a raft leader is known) and /metrics (Prometheus) (empty: off)")
	f.StringVar(&coordAddrs, "coord", "", "coordinator replica addresses, comma-separated: register and heartbeat (shown in the coordinator's status and configuration)")
	f.StringVar(&cfg.DataDir, "data-dir", "", "raft log and snapshots (default weft-data/kronos-<id>)")
	f.BoolVar(&cfg.Sync, "sync", cfg.Sync, "fsync every log write before acknowledging; false is for benchmarks only: it can lose acknowledged writes and break raft safety on kill -9")
	f.DurationVar(&cfg.Tick, "tick", cfg.Tick, "raft tick")
	f.IntVar(&cfg.ProposalsMax, "proposals-max", cfg.ProposalsMax, "queued mutations before OVERLOADED")
	f.IntVar(&cfg.BatchMax, "batch-max", cfg.BatchMax, "commands per replicated log entry")
	f.Uint64Var(&cfg.SnapshotEvery, "snapshot-every", cfg.SnapshotEvery, "log entries between snapshots")
	f.IntVar(&cfg.Graph.CacheSlots, "cache-slots", cfg.Graph.CacheSlots, "answered-order cache slots (power of two, 0 = off)")
	return cmd
}

// registerKronos keeps a Kronos replica registered with the coordinator
// until ctx ends; a replica fenced (declared failed after a pause)
// registers again as a new member.
func registerKronos(ctx context.Context, addrs, name, addr, httpAddr string) {
	c, err := coordclient.NewClient(splitAddrs(addrs))
	if err != nil {
		slog.Error("kronos: coordinator client", "err", err)
		return
	}
	defer c.Close()
	for ctx.Err() == nil {
		err := coord.RunMember(ctx, c, coord.MemberConfig{Name: name, Role: coordpb.Role_KRONOS, Address: addr, HTTPAddress: httpAddr}, slog.Default())
		if err != nil && ctx.Err() == nil {
			slog.Warn("kronos: coordinator membership ended; registering again", "err", err)
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func parsePeers(s string) (map[uint64]string, error) {
	if s == "" {
		return nil, nil
	}
	out := map[uint64]string{}
	for _, part := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		id, err := strconv.ParseUint(k, 10, 64)
		if !ok || err != nil || id == 0 || v == "" {
			return nil, fmt.Errorf("bad peer %q: want id=host:port with id > 0", part)
		}
		if _, dup := out[id]; dup {
			return nil, fmt.Errorf("peer id %d listed twice", id)
		}
		out[id] = v
	}
	return out, nil
}
