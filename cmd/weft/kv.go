package main

import (
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	kronosclient "github.com/weft-db/weft/client/kronos"
	"github.com/weft-db/weft/internal/kv"
	"github.com/weft-db/weft/internal/order"
)

func init() { subcommands = append(subcommands, newKVCmd) }

func newKVCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "kv",
		Short: "The replicated key-value face: serve a replica, or get and put keys",
		Long: `Weft's key-value face (Voldemort-style, as in "Optimistic Execution in
Key-Value Store" §II): keys map to lists of ⟨version, value⟩ siblings, where a
version is a vector clock; N replicas per key on a consistent-hash ring; the
client chooses R and W per request (sequential when W+R>N and W>N/2,
eventual when W+R≤N). Start one 'weft kv serve' per server, each with the
same --peers list:

  weft kv serve --id 0 --peers 127.0.0.1:7800,127.0.0.1:7801,127.0.0.1:7802 --data-dir kv0
  weft kv serve --id 1 --peers ... --data-dir kv1     (and --id 2)
  weft kv put --servers 127.0.0.1:7800 greeting hello
  weft kv get --servers 127.0.0.1:7800 --r 2 greeting`,
	}
	cmd.AddCommand(newKVServeCmd(), newKVGetCmd(), newKVPutCmd(), newKVGraphCmd(), newKVSyntheticCmd())
	return cmd
}

func newKVServeCmd() *cobra.Command {
	cfg := kv.DefaultServerConfig()
	var peers, predicates, kronosAddrs string
	var epsilon time.Duration
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run one replica of the key-value store (HTTP/JSON)",
		Long: `Run server --id of the ring --peers (addresses in ring order; every server and
client must use the same list). The replica keeps its keys in Pebble under
--data-dir, stamps every request with its hybrid vector clock, and, with
--predicates (a monitor spec in JSON, see internal/monitor), runs a local
predicate detector on every applied PUT and serves its candidates at
GET /v1/kv/candidates?after=<index>.

Endpoints: POST /v1/kv/get, POST /v1/kv/put (one replica's share; clients
replicate), GET /v1/kv/meta, GET /v1/kv/stats, GET /v1/kv/candidates, GET /healthz, and the rollback coordinator's
POST /v1/kv/admin/{pause,restore,resume,advice} (see 'weft monitor'). With
--kronos, POST /v1/kv/txn runs a multi-key transaction (the Kronos
transactional mode: each key's part on its primary replica, ordered by the
shared Kronos), with POST /v1/kv/txn/{prepare,decide} between servers.
SIGINT or SIGTERM stops it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg.Peers = splitList(peers)
			cfg.Replica.Epsilon = uint64(epsilon.Nanoseconds())
			if cfg.Replica.Dir == "" {
				cfg.Replica.Dir = fmt.Sprintf("weft-data/kv-%d", cfg.Replica.Self)
			}
			if predicates != "" {
				var err error
				if cfg.Spec, err = loadSpec(predicates); err != nil {
					return err
				}
			}
			if kronosAddrs != "" {
				// The Kronos transactional mode: every server of the ring
				// must name the same Kronos group.
				kc, err := kronosclient.Dial(splitAddrs(kronosAddrs))
				if err != nil {
					return err
				}
				defer kc.Close()
				cfg.Oracle = order.Remote{C: kc}
			}
			s, err := kv.NewServer(cfg, slog.Default())
			if err != nil {
				return err
			}
			if err := s.Start(); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "weft kv serving on %s (server %d of %d)\n", s.Addr(), cfg.Replica.Self, len(cfg.Peers))
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			<-ctx.Done()
			return s.Stop()
		},
	}
	f := cmd.Flags()
	f.IntVar(&cfg.Replica.Self, "id", 0, "this server's position in --peers (0-based): its ring number, HVC entry and monitor server number")
	f.StringVar(&peers, "peers", "", "every server's host:port, comma-separated, in ring order (required)")
	f.StringVar(&cfg.Addr, "addr", "", "listen address (default: this server's entry in --peers)")
	f.StringVar(&cfg.Replica.Dir, "data-dir", "", "Pebble directory (default weft-data/kv-<id>)")
	f.BoolVar(&cfg.Replica.Sync, "sync", cfg.Replica.Sync, "fsync every applied PUT before acknowledging; false can lose acknowledged writes on a crash")
	f.IntVar(&cfg.N, "n", cfg.N, "replicas per key (the same on every server and client)")
	f.IntVar(&cfg.VNodes, "vnodes", cfg.VNodes, "virtual nodes per server on the ring (the same everywhere)")
	f.IntVar(&cfg.R, "r", cfg.R, "R suggested to clients")
	f.IntVar(&cfg.W, "w", cfg.W, "W suggested to clients")
	f.DurationVar(&epsilon, "epsilon", time.Duration(cfg.Replica.Epsilon), "HVC ε: the bound on clock skew between servers (monitors must use the same)")
	f.IntVar(&cfg.Replica.SiblingsMax, "siblings-max", cfg.Replica.SiblingsMax, "concurrent values a key may hold; a PUT beyond it fails until they are resolved")
	f.IntVar(&cfg.Replica.ValueBytesMax, "value-bytes-max", cfg.Replica.ValueBytesMax, "largest value, in bytes")
	f.IntVar(&cfg.RequestsMax, "requests-max", cfg.RequestsMax, "requests served at once before OVERLOADED")
	f.StringVar(&predicates, "predicates", "", "monitor spec (JSON, or YAML if named .yaml/.yml) whose predicates this server's detector watches")
	f.IntVar(&cfg.Replica.WindowMax, "window-max", cfg.Replica.WindowMax, "undo records kept for rollback (one per applied PUT; 0: no rollback)")
	f.DurationVar(&cfg.PauseTimeout, "pause-timeout", cfg.PauseTimeout, "a rollback pause ends by itself after this unless the coordinator resumes first")
	f.IntVar(&cfg.CandidatesMax, "candidates-max", cfg.CandidatesMax, "detector candidates kept for monitors to fetch")
	f.DurationVar(&cfg.FlushEvery, "flush-every", cfg.FlushEvery, "detector heartbeat period (0: none)")
	f.StringVar(&kronosAddrs, "kronos", "", "Kronos replica addresses, comma-separated: enables multi-key transactions (POST /v1/kv/txn); every server must name the same group")
	f.IntVar(&cfg.TxnPendingMax, "txn-pending-max", cfg.TxnPendingMax, "transactions prepared here and not yet run before OVERLOADED")
	f.DurationVar(&cfg.TxnTimeout, "txn-timeout", cfg.TxnTimeout, "bound on a transaction's prepare round, on each wait for a committed part to run and for W replicas to hold its writes")
	f.IntVar(&cfg.OutboxMax, "outbox-max", cfg.OutboxMax, "transactional writes stored here and not yet acknowledged by another replica before new transactions are refused OVERLOADED")
	f.DurationVar(&cfg.OutboxRetry, "outbox-retry", cfg.OutboxRetry, "how often unacknowledged transactional writes are pushed again to their replicas")
	return cmd
}
