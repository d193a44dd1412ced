package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"google.golang.org/grpc"

	kc "github.com/weft-db/weft/client/kronos"
	"github.com/weft-db/weft/internal/api"
	"github.com/weft-db/weft/internal/coord"
	"github.com/weft-db/weft/internal/engine"
	"github.com/weft-db/weft/internal/opshttp"
	"github.com/weft-db/weft/internal/order"
	"github.com/weft-db/weft/internal/roles"
	"github.com/weft-db/weft/internal/store"
)

func init() { subcommands = append(subcommands, newShardCmd, newGatekeeperCmd) }

// roleFlags are what every gatekeeper and shard process of a cluster must
// agree on.
type roleFlags struct {
	id, gatekeepers, shards int
	epoch                   uint64
	listen                  string
	gatekeeperAddrs         string
	shardAddrs              string
	kronos                  string
	coord                   string
	name                    string
	httpAddr                string
	store                   engine.Config
	unreachableAfter        time.Duration
	plantIgnoreLease        bool
	dialVia                 string
}

func (r *roleFlags) register(f *pflag.FlagSet, role string, listen string) {
	f.IntVar(&r.id, "id", 0, "this "+role+"'s number (0-based)")
	f.IntVar(&r.gatekeepers, "gatekeepers", 2, "gatekeepers in the cluster")
	f.IntVar(&r.shards, "shards", 4, "shards in the cluster")
	f.Uint64Var(&r.epoch, "epoch", 0, "the cluster's configuration epoch (every process of the cluster gives the same; a restart of the cluster takes a larger one); with --coord, the base the coordinator's epochs are added to")
	f.StringVar(&r.listen, "listen", listen, "address of the cluster protocol (internal/wire/clusterpb)")
	f.StringVar(&r.gatekeeperAddrs, "gatekeeper-addrs", "", "every gatekeeper's --listen address, in id order, comma-separated")
	f.StringVar(&r.shardAddrs, "shard-addrs", "", "every shard's --listen address, in id order, comma-separated")
	f.StringVar(&r.kronos, "kronos", "127.0.0.1:7400", "Kronos replica addresses, comma-separated")
	f.StringVar(&r.coord, "coord", "", "coordinator replica addresses, comma-separated: register with the coordinator, which assigns the slot (or keeps the process as a backup) and the members' addresses, and fail over (then --id, --gatekeepers, --shards and the address lists are not given)")
	f.StringVar(&r.name, "name", "", "with --coord: the process's name in the coordinator's status (default: role-listen address)")
	if role == "shard" {
		f.StringVar(&r.httpAddr, "http-addr", "", "with --coord: address for /healthz and /metrics (Prometheus) (empty: off)")
	}
	f.DurationVar(&r.unreachableAfter, "unreachable-after", roles.DefaultUnreachableAfter,
		"with --coord: report a peer this process needs (a gatekeeper's shard) to the coordinator once it has failed for this long")
	// A planted bug for fault tests (docs/testing.md): the process serves on
	// after its lease lapsed. Also set by WEFT_PLANT_IGNORE_LEASE=1, which the
	// processes `weft cluster up` starts inherit.
	f.BoolVar(&r.plantIgnoreLease, "plant-ignore-lease", os.Getenv("WEFT_PLANT_IGNORE_LEASE") == "1",
		"planted bug, tests only: serve on after the lease lapsed")
	_ = f.MarkHidden("plant-ignore-lease")
	if role == "gatekeeper" {
		f.StringVar(&r.dialVia, "dial-via", "", "with --coord: shard=proxy,… — dial these addresses instead of the shards' (a proxy per shard; fault tests)")
	}
	r.store = engine.DefaultConfig()
	r.store.Store = engine.StorePostgres // the one store several processes share
	f.StringVar(&r.store.PostgresURL, "postgres-url", "", "PostgreSQL connection string, e.g. postgres://weft@db:5432/weft")
	f.StringVar(&r.store.PostgresSchema, "postgres-schema", r.store.PostgresSchema, "schema holding the store's tables")
	f.BoolVar(&r.store.Sync, "sync", r.store.Sync, "durable commits (PostgreSQL synchronous_commit; Pebble fsync)")
}

func (r *roleFlags) check(role string) ([]string, []string, error) {
	gks, shards := splitAddrs(r.gatekeeperAddrs), splitAddrs(r.shardAddrs)
	switch {
	case r.epoch == 0:
		return nil, nil, fmt.Errorf("%s: --epoch is required (the same on every process; larger after a restart)", role)
	case r.coord != "" && r.store.PostgresURL == "":
		return nil, nil, fmt.Errorf("%s: --postgres-url is required (the store every process of the cluster shares)", role)
	case r.coord != "":
		if r.name == "" {
			r.name = role + "-" + r.listen
		}
		return nil, nil, nil
	case len(gks) != r.gatekeepers:
		return nil, nil, fmt.Errorf("%s: --gatekeeper-addrs has %d addresses for --gatekeepers %d", role, len(gks), r.gatekeepers)
	case len(shards) != r.shards:
		return nil, nil, fmt.Errorf("%s: --shard-addrs has %d addresses for --shards %d", role, len(shards), r.shards)
	case r.store.PostgresURL == "":
		return nil, nil, fmt.Errorf("%s: --postgres-url is required (the store every process of the cluster shares)", role)
	}
	r.store.Shards, r.store.Gatekeepers = r.shards, r.gatekeepers
	return gks, shards, nil
}

// open opens the shared store and dials the Kronos group; done closes both.
func (r *roleFlags) open() (st store.Store, oracle order.Remote, done func(), err error) {
	if st, err = engine.OpenStore(r.store, slog.Default()); err != nil {
		return nil, order.Remote{}, nil, err
	}
	c, err := kc.Dial(splitAddrs(r.kronos))
	if err != nil {
		st.Close()
		return nil, order.Remote{}, nil, err
	}
	return st, order.Remote{C: c}, func() { c.Close(); st.Close() }, nil
}

func newShardCmd() *cobra.Command {
	var r roleFlags
	cmd := &cobra.Command{
		Use:   "shard",
		Short: "Run one shard of a cluster (a process of its own; docs/cluster.md)",
		Long: `Run one shard process of a Weft cluster: it rebuilds its partition of the
graph from the shared store, takes the gatekeepers' FIFO streams of writes, and
answers reads at snapshot stamps. Every process of the cluster is given the
same --epoch, --gatekeepers/--gatekeeper-addrs and --shards/--shard-addrs.

  weft shard --id 0 --listen 127.0.0.1:7601 --epoch 1 --gatekeepers 2 --shards 2 \
    --gatekeeper-addrs 127.0.0.1:7701,127.0.0.1:7702 --shard-addrs 127.0.0.1:7601,127.0.0.1:7602 \
    --kronos 127.0.0.1:7400 --postgres-url postgres://weft@127.0.0.1/weft`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			gkAddrs, shardAddrs, err := r.check("shard")
			if err != nil {
				return err
			}
			st, oracle, done, err := r.open()
			if err != nil {
				return err
			}
			defer done()
			if r.coord != "" {
				return runMemberRole(cmd, &r, st, oracle, nil)
			}
			links, err := engine.DialShardLinks(r.id, gkAddrs, shardAddrs)
			if err != nil {
				return err
			}
			defer links.Close()
			s, err := engine.NewShardServer(engine.ShardConfig{ID: r.id, Shards: r.shards, Gatekeepers: r.gatekeepers,
				Epoch: r.epoch, Store: st, Oracle: oracle, RequestNop: links.RequestNop, Programs: links, Log: slog.Default()})
			if err != nil {
				return err
			}
			defer s.Close()
			return serveRole(cmd, r.listen, fmt.Sprintf("shard %d", r.id), s.Register, nil)
		},
	}
	r.register(cmd.Flags(), "shard", "127.0.0.1:7601")
	return cmd
}

func newGatekeeperCmd() *cobra.Command {
	var r roleFlags
	acfg := api.DefaultConfig()
	var tau time.Duration
	var dg dgraphFlags
	cmd := &cobra.Command{
		Use:   "gatekeeper",
		Short: "Run one gatekeeper of a cluster (a process of its own; docs/cluster.md)",
		Long: `Run one gatekeeper process of a Weft cluster: it serves the Weft API to
clients (gRPC and HTTP, as weft serve does), stamps and commits transactions on
the shared store, and talks to the shards and the other gatekeepers over the
cluster protocol (--listen). Start the shards first (a gatekeeper waits up to
30 s for them). With weft serve's Dgraph flags (--dgraph-http, --dgraph-grpc,
--dgraph-placement, --acl-*) it also serves Dgraph's API over the cluster
(docs/dgraph.md, "On a cluster"): give every gatekeeper the same ACL secret, and
keep a Dgraph transaction's requests on the gatekeeper that began it.

  weft gatekeeper --id 0 --listen 127.0.0.1:7701 --grpc-addr 127.0.0.1:7500 --http-addr 127.0.0.1:7580 \
    --epoch 1 --gatekeepers 2 --shards 2 --gatekeeper-addrs 127.0.0.1:7701,127.0.0.1:7702 \
    --shard-addrs 127.0.0.1:7601,127.0.0.1:7602 --kronos 127.0.0.1:7400 --postgres-url postgres://weft@127.0.0.1/weft`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			gkAddrs, shardAddrs, err := r.check("gatekeeper")
			if err != nil {
				return err
			}
			if err := dg.check(); err != nil {
				return err
			}
			acfg.Logger = slog.Default()
			if err := acfg.Validate(); err != nil {
				return err
			}
			st, oracle, done, err := r.open()
			if err != nil {
				return err
			}
			defer done()
			if r.coord != "" {
				return runMemberRole(cmd, &r, st, oracle, &memberGK{acfg: acfg, tau: tau, dg: &dg})
			}
			// The port is taken first; the peer protocol is served once
			// the gatekeeper is built (peers and shards retry meanwhile).
			lis, err := net.Listen("tcp", r.listen)
			if err != nil {
				return err
			}
			defer lis.Close()
			gk, err := engine.NewClusterGatekeeper(engine.GatekeeperConfig{ID: r.id, Gatekeepers: r.gatekeepers, Shards: r.shards,
				Epoch: r.epoch, Store: st, Oracle: oracle, ShardAddrs: shardAddrs, PeerAddrs: gkAddrs, AnnounceEvery: tau,
				Log: slog.Default()})
			if err != nil {
				return err
			}
			defer gk.Close()
			srv := grpc.NewServer(engine.ClusterServerOptions()...)
			gk.Register(srv)
			go srv.Serve(lis)
			defer srv.Stop()
			front, err := api.NewServer(gk, acfg)
			if err != nil {
				return err
			}
			if err := front.Start(); err != nil {
				return err
			}
			defer func() {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				front.Stop(ctx)
			}()
			fmt.Fprintf(cmd.OutOrStdout(), "gatekeeper %d serving on %s (Weft gRPC API); HTTP API on %s, cluster protocol on %s\n",
				r.id, orOff(front.GRPCAddr()), orOff(front.HTTPAddr()), lis.Addr())
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			// Dgraph's face opens its model through the gatekeeper, whose
			// first answers wait for every peer's clock: it starts after
			// the ready line, so that the gatekeepers start together.
			ds, err := dg.startServing(ctx, gk)
			if err != nil {
				if ctx.Err() != nil {
					return nil // stopped while the Dgraph face was opening
				}
				return err
			}
			defer stopDgraph(ds)
			if ds != nil {
				fmt.Fprintf(cmd.OutOrStdout(), "gatekeeper %d: %s\n", r.id, ds.describe())
			}
			select {
			case <-ctx.Done():
				return nil
			case err := <-front.Err():
				return err
			case err := <-ds.errs():
				return fmt.Errorf("gatekeeper: the Dgraph API: %w", err)
			}
		},
	}
	r.register(cmd.Flags(), "gatekeeper", "127.0.0.1:7701")
	f := cmd.Flags()
	f.StringVar(&acfg.GRPCAddr, "grpc-addr", acfg.GRPCAddr, "the Weft API's gRPC address (\"\": none)")
	f.StringVar(&acfg.HTTPAddr, "http-addr", acfg.HTTPAddr, "the Weft API's HTTP/JSON address (\"\": none)")
	f.DurationVar(&tau, "announce-every", 10*time.Millisecond, "τ: how often the clock goes to the peers when no answer waits for them")
	dg.cmd = "gatekeeper"
	dg.register(f)
	return cmd
}

// serveRole serves a role's gRPC service on addr until SIGINT/SIGTERM.
func serveRole(cmd *cobra.Command, addr, name string, register func(*grpc.Server), failed <-chan error) error {
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := grpc.NewServer(engine.ClusterServerOptions()...)
	register(srv)
	errs := make(chan error, 1)
	go func() { errs <- srv.Serve(lis) }()
	fmt.Fprintf(cmd.OutOrStdout(), "%s serving on %s (cluster protocol)\n", name, lis.Addr())
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	select {
	case <-ctx.Done():
		srv.GracefulStop()
		return nil
	case err := <-errs:
		return err
	case err := <-failed:
		srv.Stop()
		return err
	}
}

// memberGK is a gatekeeper's API configuration in --coord mode.
type memberGK struct {
	acfg api.Config
	tau  time.Duration
	dg   *dgraphFlags
}

// stopDgraph stops a Dgraph face, letting requests in flight finish for
// up to 5 s.
func stopDgraph(ds *dgraphServer) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ds.stop(ctx)
}

// runMemberRole runs a shard (gk nil) or gatekeeper process that registers
// with the coordinator and follows its epochs (internal/roles), until
// SIGINT/SIGTERM or until it must stop (fenced: a backup holds its slot).
func runMemberRole(cmd *cobra.Command, r *roleFlags, st store.Store, oracle order.Oracle, gk *memberGK) error {
	c, err := coord.NewClient(splitAddrs(r.coord))
	if err != nil {
		return err
	}
	defer c.Close()
	lis, err := net.Listen("tcp", r.listen)
	if err != nil {
		return err
	}
	defer lis.Close()
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg := roles.Config{Coord: c, Name: r.name, Listener: lis, EpochBase: r.epoch, Store: st, Oracle: oracle,
		Log: slog.Default(), Stats: &roles.Stats{}, UnreachableAfter: r.unreachableAfter, PlantIgnoreLease: r.plantIgnoreLease}
	if r.dialVia != "" {
		cfg.DialVia = map[string]string{}
		for _, kv := range splitAddrs(r.dialVia) {
			from, to, ok := strings.Cut(kv, "=")
			if !ok {
				return fmt.Errorf("--dial-via: %q is not shard=proxy", kv)
			}
			cfg.DialVia[from] = to
		}
	}
	if r.plantIgnoreLease {
		slog.Warn("planted bug: this process serves on after its lease lapsed (--plant-ignore-lease)")
	}
	if gk == nil && r.httpAddr != "" {
		ops, err := opshttp.Start(r.httpAddr, opshttp.Config{Namespace: "weft_shard", Gauges: cfg.Stats.Latest,
			Healthy: func() (bool, string) {
				if cfg.Stats.Latest()["serving"] == 1 {
					return true, "serving its slot"
				}
				return false, "not serving: a backup, or between configuration epochs"
			}})
		if err != nil {
			return err
		}
		defer ops.Stop()
		cfg.HTTPAddress = ops.Addr()
	}
	if gk == nil {
		fmt.Fprintf(cmd.OutOrStdout(), "shard %s serving on %s (cluster protocol); registering with the coordinator at %s\n",
			r.name, lis.Addr(), r.coord)
		return roles.RunShard(ctx, cfg)
	}
	g, err := roles.NewGatekeeper(cfg, gk.tau)
	if err != nil {
		return err
	}
	front, err := api.NewServer(g.API, gk.acfg)
	if err != nil {
		return err
	}
	if err := front.Start(); err != nil {
		return err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		front.Stop(sctx)
	}()
	fmt.Fprintf(cmd.OutOrStdout(), "gatekeeper %s serving on %s (Weft gRPC API); HTTP API on %s, cluster protocol on %s; registering with the coordinator at %s\n",
		r.name, orOff(front.GRPCAddr()), orOff(front.HTTPAddr()), lis.Addr(), r.coord)
	errs := make(chan error, 1)
	go func() { errs <- g.Run(ctx, front.GRPCAddr(), front.HTTPAddr()) }()
	// Dgraph's face opens its model once the gatekeeper holds a slot in an
	// epoch (the Switch answers); it serves the Switch, so it survives
	// epoch changes as the Weft API does.
	dgErr := make(chan error, 1)
	dgDone := make(chan *dgraphServer, 1)
	go func() {
		ds, err := gk.dg.startServing(ctx, g.API)
		dgDone <- ds
		switch {
		case err != nil:
			if ctx.Err() == nil {
				dgErr <- err
			}
		case ds != nil:
			fmt.Fprintf(cmd.OutOrStdout(), "gatekeeper %s: %s\n", r.name, ds.describe())
			if err := <-ds.errs(); err != nil {
				dgErr <- fmt.Errorf("gatekeeper: the Dgraph API: %w", err)
			}
		}
	}()
	defer func() {
		stop()
		stopDgraph(<-dgDone)
	}()
	select {
	case err := <-errs:
		return err
	case err := <-front.Err():
		stop()
		<-errs
		return err
	case err := <-dgErr:
		stop()
		<-errs
		return err
	}
}
