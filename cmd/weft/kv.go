package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	kronosclient "github.com/weft-db/weft/client/kronos"
	kvclient "github.com/weft-db/weft/client/kv"
	"github.com/weft-db/weft/internal/kv"
	"github.com/weft-db/weft/internal/kv/apps"
	"github.com/weft-db/weft/internal/monitor"
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

  weft kv serve --id 0 --peers 127.0.0.1:7600,127.0.0.1:7601,127.0.0.1:7602 --data-dir kv0
  weft kv serve --id 1 --peers ... --data-dir kv1     (and --id 2)
  weft kv put --servers 127.0.0.1:7600 greeting hello
  weft kv get --servers 127.0.0.1:7600 --r 2 greeting`,
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

// kvClientFlags are the flags get and put share.
type kvClientFlags struct {
	servers      string
	r, w         int
	roundTimeout time.Duration
	timeout      time.Duration
	asJSON       bool
}

func (f *kvClientFlags) add(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.servers, "servers", "127.0.0.1:7600", "any servers of the ring, comma-separated (the first that answers gives the metadata)")
	fl.IntVar(&f.r, "r", 0, "R: replicas that must answer a read (0: the servers' suggestion)")
	fl.IntVar(&f.w, "w", 0, "W: replicas that must acknowledge a write (0: the servers' suggestion)")
	fl.DurationVar(&f.roundTimeout, "round-timeout", 500*time.Millisecond, "how long a round waits before the second round")
	fl.DurationVar(&f.timeout, "timeout", 10*time.Second, "overall deadline")
	fl.BoolVar(&f.asJSON, "json", false, "print the answer as JSON")
}

func (f *kvClientFlags) dial(ctx context.Context) (*kvclient.Client, error) {
	return kvclient.Dial(ctx, splitList(f.servers), kvclient.Options{R: f.r, W: f.w, RoundTimeout: f.roundTimeout})
}

func newKVGetCmd() *cobra.Command {
	var cf kvClientFlags
	cmd := &cobra.Command{
		Use:   "get KEY",
		Short: "Read a key from R of its replicas: every concurrent value, one per line",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, cancel := context.WithTimeout(cmd.Context(), cf.timeout)
			defer cancel()
			c, err := cf.dial(ctx)
			if err != nil {
				return err
			}
			defer c.Close()
			res, err := c.Get(ctx, args[0])
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if cf.asJSON {
				return json.NewEncoder(out).Encode(map[string]any{"key": args[0], "siblings": res.Siblings, "acks": res.Acks, "round": res.Round})
			}
			if len(res.Siblings) == 0 {
				return fmt.Errorf("kv get: %q: not found", args[0])
			}
			for _, s := range res.Siblings {
				fmt.Fprintf(out, "%s\t%s\n", printable(s.Value), s.Version)
			}
			return nil
		},
	}
	cf.add(cmd)
	return cmd
}

func newKVPutCmd() *cobra.Command {
	var cf kvClientFlags
	var blind bool
	cmd := &cobra.Command{
		Use:   "put KEY VALUE",
		Short: "Write a key to W of its replicas, superseding the values a read (R) returns",
		Long: `Write VALUE to KEY. By default put first reads the key (R replicas) and
writes a version that supersedes every value it read (Voldemort's put). With
--blind it writes without reading: values it did not see stay as siblings.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, cancel := context.WithTimeout(cmd.Context(), cf.timeout)
			defer cancel()
			c, err := cf.dial(ctx)
			if err != nil {
				return err
			}
			defer c.Close()
			var v kv.Version
			if blind {
				v, err = c.Put(ctx, args[0], []byte(args[1]), nil)
			} else {
				v, err = c.Write(ctx, args[0], []byte(args[1]))
			}
			if err != nil {
				return err
			}
			if cf.asJSON {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(map[string]any{"key": args[0], "version": v})
			}
			fmt.Fprintf(cmd.OutOrStdout(), "ok %s\n", v)
			return nil
		},
	}
	cf.add(cmd)
	cmd.Flags().BoolVar(&blind, "blind", false, "write without reading first (concurrent values stay as siblings)")
	return cmd
}

// loadSpec reads a monitor spec: YAML if the file is named .yaml or .yml,
// JSON otherwise.
func loadSpec(path string) (*monitor.Spec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var spec *monitor.Spec
	if strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml") {
		spec, err = monitor.ParseYAML(data)
	} else {
		spec, err = monitor.ParseJSON(data)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return spec, nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// printable shows a value as text when it is UTF-8, else quoted.
func printable(b []byte) string {
	if utf8.Valid(b) && !strings.ContainsAny(string(b), "\t\n") {
		return string(b)
	}
	return fmt.Sprintf("%q", b)
}

// appFlags are the flags the paper's applications share.
type appFlags struct {
	servers          string
	serversCount     int
	vnodes           int
	vertices, degree int
	clients          int
	seed             uint64
	r, w             int
	duration         time.Duration
	beta, putPct     float64
}

func (a *appFlags) addGraph(cmd *cobra.Command) {
	f := cmd.Flags()
	f.IntVar(&a.vertices, "vertices", 200, "vertices of the random graph")
	f.IntVar(&a.degree, "degree", 4, "average degree of the random graph")
	f.IntVar(&a.clients, "clients", 6, "clients (vertices are dealt to them in contiguous blocks)")
	f.Uint64Var(&a.seed, "seed", 1, "graph and workload seed (spec and run must use the same)")
}

func (a *appFlags) addRing(cmd *cobra.Command) {
	f := cmd.Flags()
	f.IntVar(&a.serversCount, "servers-count", 3, "servers on the ring")
	f.IntVar(&a.vnodes, "vnodes", kv.DefaultServerConfig().VNodes, "virtual nodes per server (the servers' --vnodes)")
}

func (a *appFlags) addRun(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&a.servers, "servers", "127.0.0.1:7600", "any servers of the ring, comma-separated")
	f.IntVar(&a.r, "r", 1, "R of every client")
	f.IntVar(&a.w, "w", 1, "W of every client (1: eventual; N: sequential)")
	f.DurationVar(&a.duration, "duration", 10*time.Second, "how long to run")
}

func (a *appFlags) ring() (*kv.Ring, error) { return kv.NewRing(a.serversCount, a.vnodes) }

func (a *appFlags) graph() (*apps.Graph, error) {
	return apps.RandomGraph(rand.New(rand.NewPCG(a.seed, 77)), a.vertices, a.degree, a.clients)
}

// runClients dials a.clients clients and runs f on each until the duration ends.
func (a *appFlags) runClients(ctx context.Context, f func(context.Context, int, *kvclient.Client) (any, error)) ([]any, error) {
	ctx, cancel := context.WithTimeout(ctx, a.duration)
	defer cancel()
	out := make([]any, a.clients)
	errs := make([]error, a.clients)
	var wg sync.WaitGroup
	for i := range a.clients {
		c, err := kvclient.Dial(ctx, splitList(a.servers), kvclient.Options{R: a.r, W: a.w})
		if err != nil {
			return nil, err
		}
		defer c.Close()
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i], errs[i] = f(ctx, i, c)
		}()
	}
	wg.Wait()
	return out, errors.Join(errs...)
}

func newKVGraphCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "graph",
		Short: "The paper's graph computation with local mutual exclusion (§VI-A)",
		Long: `Clients own blocks of a random graph's vertices and update each from its
neighbours' values, announcing intent and backing off when a neighbour owned
by another client is busy (correct under sequential consistency). 'spec'
prints the predicate ¬P (one clause h_u=1 ∧ h_v=1 per edge between different
clients) for the servers' --predicates and 'weft monitor --spec'; 'run' runs
the clients.

  weft kv graph spec --servers-count 3 > graph.json
  weft kv serve ... --predicates graph.json      (every server)
  weft monitor --spec graph.json --servers ... --rollback
  weft kv graph run --servers 127.0.0.1:7600 --r 1 --w 1 --duration 30s`,
	}
	var a appFlags
	spec := &cobra.Command{
		Use: "spec", Short: "Print the local-mutual-exclusion predicate spec (JSON)", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ring, err := a.ring()
			if err != nil {
				return err
			}
			g, err := a.graph()
			if err != nil {
				return err
			}
			return json.NewEncoder(cmd.OutOrStdout()).Encode(g.Spec(ring))
		},
	}
	a.addGraph(spec)
	a.addRing(spec)
	var b appFlags
	run := &cobra.Command{
		Use: "run", Short: "Run the graph computation's clients and print their counts", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			g, err := b.graph()
			if err != nil {
				return err
			}
			stats, err := b.runClients(cmd.Context(), func(ctx context.Context, i int, c *kvclient.Client) (any, error) {
				return apps.RunGraph(ctx, c, apps.GraphConfig{Graph: g, Client: i, Rand: rand.New(rand.NewPCG(b.seed, uint64(i)))})
			})
			if err != nil {
				return err
			}
			return json.NewEncoder(cmd.OutOrStdout()).Encode(map[string]any{"clients": stats, "seconds": b.duration.Seconds()})
		},
	}
	b.addGraph(run)
	b.addRun(run)
	cmd.AddCommand(spec, run)
	return cmd
}

func newKVSyntheticCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "synthetic",
		Short: "The paper's synthetic conjunctive workload with tunable β (§VI-A)",
		Long: `One variable per server (a key whose first replica is that server); ¬P is
their conjunction. Each client writes its own variable (true with probability
--beta) among GETs and PUTs of ordinary keys, --put-pct of them PUTs.

  weft kv synthetic spec --servers-count 3 > conj.json
  weft kv synthetic run --servers 127.0.0.1:7600 --beta 0.01 --put-pct 50`,
	}
	var a appFlags
	spec := &cobra.Command{
		Use: "spec", Short: "Print the conjunctive predicate spec (JSON)", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ring, err := a.ring()
			if err != nil {
				return err
			}
			return json.NewEncoder(cmd.OutOrStdout()).Encode(apps.SyntheticSpec(ring))
		},
	}
	a.addRing(spec)
	var b appFlags
	run := &cobra.Command{
		Use: "run", Short: "Run the synthetic workload's clients and print their counts", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, cancel := context.WithTimeout(cmd.Context(), 10*time.Second)
			c, err := kvclient.Dial(ctx, splitList(b.servers), kvclient.Options{})
			cancel()
			if err != nil {
				return err
			}
			ring, err := kv.NewRing(len(c.Meta().Peers), c.Meta().VNodes)
			c.Close()
			if err != nil {
				return err
			}
			vars := apps.SyntheticVars(ring)
			stats, err := b.runClients(cmd.Context(), func(ctx context.Context, i int, c *kvclient.Client) (any, error) {
				v := -1
				if i < len(vars) {
					v = i
				}
				return apps.RunSynthetic(ctx, c, apps.SyntheticConfig{Vars: vars, Var: v, Beta: b.beta, PutFraction: b.putPct / 100,
					Client: i, Rand: rand.New(rand.NewPCG(b.seed, uint64(i)))})
			})
			if err != nil {
				return err
			}
			return json.NewEncoder(cmd.OutOrStdout()).Encode(map[string]any{"clients": stats, "seconds": b.duration.Seconds()})
		},
	}
	b.addRun(run)
	f := run.Flags()
	f.IntVar(&b.clients, "clients", 6, "clients (the first of them each write one server's variable)")
	f.Float64Var(&b.beta, "beta", 0.01, "probability that a write makes the variable true")
	f.Float64Var(&b.putPct, "put-pct", 50, "percentage of operations that are PUTs")
	f.Uint64Var(&b.seed, "seed", 1, "workload seed")
	cmd.AddCommand(spec, run)
	return cmd
}
