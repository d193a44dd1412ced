package main

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/weft-db/weft/internal/api"
	"github.com/weft-db/weft/internal/engine"
	"github.com/weft-db/weft/internal/roles"
)

func init() { subcommands = append(subcommands, newShardCmd, newGatekeeperCmd) }

// roleFlags are the command line of a gatekeeper or shard process
// (roles.ProcessConfig).
type roleFlags struct {
	pc                                         roles.ProcessConfig
	gatekeeperAddrs, shardAddrs, kronos, coord string
	dialVia                                    string
}

func (r *roleFlags) register(f *pflag.FlagSet, role string, listen string) {
	pc := &r.pc
	f.IntVar(&pc.ID, "id", 0, "this "+role+"'s number (0-based)")
	f.IntVar(&pc.Gatekeepers, "gatekeepers", 2, "gatekeepers in the cluster")
	f.IntVar(&pc.Shards, "shards", 4, "shards in the cluster")
	f.Uint64Var(&pc.Epoch, "epoch", 0, "the cluster's configuration epoch (every process of the cluster gives the same; a restart of the cluster takes a larger one); with --coord, the base the coordinator's epochs are added to")
	f.StringVar(&pc.Listen, "listen", listen, "address of the cluster protocol (internal/wire/clusterpb)")
	f.StringVar(&r.gatekeeperAddrs, "gatekeeper-addrs", "", "every gatekeeper's --listen address, in id order, comma-separated")
	f.StringVar(&r.shardAddrs, "shard-addrs", "", "every shard's --listen address, in id order, comma-separated")
	f.StringVar(&r.kronos, "kronos", "127.0.0.1:7400", "Kronos replica addresses, comma-separated")
	f.StringVar(&r.coord, "coord", "", "coordinator replica addresses, comma-separated: register with the coordinator, which assigns the slot (or keeps the process as a backup) and the members' addresses, and fail over (then --id, --gatekeepers, --shards and the address lists are not given)")
	f.StringVar(&pc.Name, "name", "", "with --coord: the process's name in the coordinator's status (default: role-listen address)")
	if role == "shard" {
		f.StringVar(&pc.HTTPAddr, "http-addr", "", "with --coord: address for /healthz and /metrics (Prometheus) (empty: off)")
	}
	f.DurationVar(&pc.UnreachableAfter, "unreachable-after", roles.DefaultUnreachableAfter,
		"with --coord: report a peer this process needs (a gatekeeper's shard) to the coordinator once it has failed for this long")
	// A planted bug for fault tests (docs/testing.md): the process serves on
	// after its lease lapsed. Also set by WEFT_PLANT_IGNORE_LEASE=1, which the
	// processes `weft cluster up` starts inherit.
	f.BoolVar(&pc.PlantIgnoreLease, "plant-ignore-lease", os.Getenv("WEFT_PLANT_IGNORE_LEASE") == "1",
		"planted bug, tests only: serve on after the lease lapsed")
	_ = f.MarkHidden("plant-ignore-lease")
	if role == "gatekeeper" {
		f.StringVar(&r.dialVia, "dial-via", "", "with --coord: shard=proxy,… — dial these addresses instead of the shards' (a proxy per shard; fault tests)")
	}
	pc.Store = engine.DefaultConfig()
	pc.Store.Store = engine.StorePostgres // the one store several processes share
	f.StringVar(&pc.Store.PostgresURL, "postgres-url", "", "PostgreSQL connection string, e.g. postgres://weft@db:5432/weft")
	f.StringVar(&pc.Store.PostgresSchema, "postgres-schema", pc.Store.PostgresSchema, "schema holding the store's tables")
	f.BoolVar(&pc.Store.Sync, "sync", pc.Store.Sync, "durable commits (PostgreSQL synchronous_commit; Pebble fsync)")
}

// config is the process's configuration from the flags, checked for role.
func (r *roleFlags) config(cmd *cobra.Command, role string) (roles.ProcessConfig, error) {
	pc := r.pc
	pc.GatekeeperAddrs, pc.ShardAddrs = splitAddrs(r.gatekeeperAddrs), splitAddrs(r.shardAddrs)
	pc.Kronos, pc.Coord = splitAddrs(r.kronos), splitAddrs(r.coord)
	pc.Out = cmd.OutOrStdout()
	if err := pc.Check(role); err != nil {
		return pc, err
	}
	if len(pc.Coord) > 0 && r.dialVia != "" {
		pc.DialVia = map[string]string{}
		for _, kv := range splitAddrs(r.dialVia) {
			from, to, ok := strings.Cut(kv, "=")
			if !ok {
				return pc, fmt.Errorf("--dial-via: %q is not shard=proxy", kv)
			}
			pc.DialVia[from] = to
		}
	}
	return pc, nil
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
			pc, err := r.config(cmd, "shard")
			if err != nil {
				return err
			}
			return roles.RunShardProcess(cmd.Context(), pc)
		},
	}
	r.register(cmd.Flags(), "shard", "127.0.0.1:7601")
	return cmd
}

func newGatekeeperCmd() *cobra.Command {
	var r roleFlags
	front := roles.GatekeeperFront{API: api.DefaultConfig(), Dgraph: roles.DefaultDgraphConfig()}
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
			pc, err := r.config(cmd, "gatekeeper")
			if err != nil {
				return err
			}
			return roles.RunGatekeeperProcess(cmd.Context(), pc, front)
		},
	}
	r.register(cmd.Flags(), "gatekeeper", "127.0.0.1:7701")
	f := cmd.Flags()
	f.StringVar(&front.API.GRPCAddr, "grpc-addr", front.API.GRPCAddr, "the Weft API's gRPC address (\"\": none)")
	f.StringVar(&front.API.HTTPAddr, "http-addr", front.API.HTTPAddr, "the Weft API's HTTP/JSON address (\"\": none)")
	f.DurationVar(&front.AnnounceEvery, "announce-every", 10*time.Millisecond, "τ: how often the clock goes to the peers when no answer waits for them")
	front.Dgraph.Cmd = "gatekeeper"
	registerDgraphFlags(f, &front.Dgraph)
	return cmd
}
