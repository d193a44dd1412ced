package main

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/spf13/cobra"

	kvclient "github.com/weft-db/weft/client/kv"
	"github.com/weft-db/weft/internal/kv"
	"github.com/weft-db/weft/internal/kv/apps"
	"github.com/weft-db/weft/internal/kv/kvcore"
)

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
	f.StringVar(&a.servers, "servers", "127.0.0.1:7800", "any servers of the ring, comma-separated")
	f.IntVar(&a.r, "r", 1, "R of every client")
	f.IntVar(&a.w, "w", 1, "W of every client (1: eventual; N: sequential)")
	f.DurationVar(&a.duration, "duration", 10*time.Second, "how long to run")
}

func (a *appFlags) ring() (*kvcore.Ring, error) { return kvcore.NewRing(a.serversCount, a.vnodes) }

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
  weft kv graph run --servers 127.0.0.1:7800 --r 1 --w 1 --duration 30s`,
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
  weft kv synthetic run --servers 127.0.0.1:7800 --beta 0.01 --put-pct 50`,
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
			ring, err := kvcore.NewRing(len(c.Meta().Peers), c.Meta().VNodes)
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
