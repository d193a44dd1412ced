package main

import (
	"context"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/weft-db/weft/internal/bench"
	"github.com/weft-db/weft/internal/bench/twohop"
)

func newBenchTwoHopCmd() *cobra.Command {
	var opts twohop.Options
	cmd := &cobra.Command{
		Use:   "twohop",
		Short: "the two-hop count (distinct c with v→b→c) through every interface, answers checked, server CPU per query",
		Long: `Generates a seeded random directed graph (100k vertices, 1M edges), starts
weft serve as a process of its own, loads the graph through the Go client,
then asks "how many distinct c with v→b→c" for 1,000 random v through each
interface (` + strings.Join(twohop.Interfaces, ", ") + `)
with 1 and 8 clients, round after round (interleaved), checking every answer
against the generator. Prints the result as JSON on stdout and writes
twohop[-quick].json with its plots to --out. See docs/benchmarks.md.

  weft bench twohop --quick
  weft bench twohop --rounds 5 --interfaces go-grpc,go-grpc-count
  weft bench twohop --shards 1 --gatekeepers 1
  weft bench twohop --peers redis                 # Redis 7 + a Lua script, in the same rounds`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Log = slog.Default()
			opts.Progress = terminal(os.Stderr)
			opts.Summary = cmd.ErrOrStderr()
			return runBench(cmd, func(ctx context.Context) (*bench.Result, error) { return twohop.Run(ctx, opts) })
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Out, "out", "bench/results/twohop", "directory for the JSON and PNG results (\"\" writes none)")
	f.BoolVar(&opts.Quick, "quick", false, "smoke run: 5,000 vertices, 50,000 edges, 200 queries per cell unless the flags below say otherwise")
	f.IntVar(&opts.Vertices, "vertices", 0, "vertices of the graph (default 100,000)")
	f.IntVar(&opts.Edges, "edges", 0, "edges of the graph, random sources and destinations (default 1,000,000)")
	f.IntVar(&opts.Queries, "queries", 0, "queries per cell and round (default 1,000)")
	f.IntVar(&opts.Rounds, "rounds", 3, "rounds over every cell; each cell reports the medians")
	f.IntSliceVar(&opts.Clients, "clients", []int{1, 8}, "client counts")
	f.StringSliceVar(&opts.Interfaces, "interfaces", nil, "interfaces to measure (default all: "+strings.Join(twohop.Interfaces, ",")+")")
	f.StringSliceVar(&opts.Peers, "peers", nil, "other databases measured in the same rounds: redis (Debian's redis-server with a Lua script, interface redis-lua; each Weft cell's vs_redis is its q/s over redis-lua's)")
	f.StringVar(&opts.Python, "python", "", "a Python with the weft package for the python-* interfaces (default clients/python/.venv/bin/python, which make creates)")
	f.IntVar(&opts.Shards, "shards", 0, "the server's shards (default weft serve's)")
	f.IntVar(&opts.Gatekeepers, "gatekeepers", 0, "the server's gatekeepers (default weft serve's)")
	f.IntVar(&opts.LoadBatch, "load-batch", 10_000, "operations per load transaction")
	f.IntVar(&opts.Loaders, "loaders", 1, "edge transactions in flight during the load (random destinations: parallel loaders contend; the JSON counts the aborts)")
	f.BoolVar(&opts.InMemory, "in-memory", false, "the server keeps its store in memory (weft serve --in-memory)")
	f.StringVar(&opts.DataDir, "data-dir", "", "directory for the server's store and log (default: a temporary one, removed afterwards)")
	f.StringVar(&opts.ServerCPUProfile, "server-cpuprofile", "", "the server writes a CPU profile of its whole life, the load included, to this file")
	f.Uint64Var(&opts.Seed, "seed", 1, "seed of the graph and the queries")
	return cmd
}
