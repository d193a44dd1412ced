// Command coingraph is CoinGraph, a blockchain explorer on Weft's graph
// database (Weaver dissertation §4.8). It generates a seeded chain —
// blocks (each with an edge to its predecessor), transactions (edges from
// their block), addresses, and money edges address → tx (inputs) and
// tx → address (outputs) with an amount — and loads it as it grows: one
// Weft transaction per block, appended block after block, while a reader
// queries concurrently and checks that every snapshot sees whole blocks
// only (the coinbase rewards it sees sum to reward × the blocks it sees).
// Then it renders a block, tracks taint from an address (the bfs node
// program with an edge-property filter), finds a money flow between two
// addresses (reachability) and clusters addresses by the common-input
// heuristic.
//
//	go run ./examples/coingraph                      # an in-process engine
//	go run ./examples/coingraph --addr 127.0.0.1:7500 # a running `weft serve`
//
// Every run stores its chain under a fresh handle prefix, so it can run
// again against the same server.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/weft-db/weft/examples/internal/exweft"
)

// config is what one run does.
type config struct {
	Addr     string
	Seed     uint64
	Blocks   int
	Render   int   // the block rendered
	TaintMin int64 // the smallest amount taint follows
	Prefix   string
}

func defaults() config {
	return config{Seed: 1, Blocks: 40, Render: 8, TaintMin: Coin / 10}
}

// report is what a run printed, for the test to check.
type report struct {
	Prefix       string
	Chain        *Chain
	Height, Txs  int64
	Observations []Observation
	Block        *Rendered
	Tainted      string
	Taint        []string
	FlowDst      string
	Flow         []string
	Clusters     [][]string
	Planted      []string // the planted owner's cluster
}

func main() {
	cfg := defaults()
	flag.StringVar(&cfg.Addr, "addr", "", "gRPC address of a running `weft serve` (default: an in-process engine)")
	flag.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "seed of the generated chain")
	flag.IntVar(&cfg.Blocks, "blocks", cfg.Blocks, "blocks (at least 12)")
	flag.IntVar(&cfg.Render, "render", cfg.Render, "the block rendered")
	flag.Parse()
	if _, err := run(context.Background(), os.Stdout, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "coingraph:", err)
		os.Exit(1)
	}
}

func coins(a int64) string { return fmt.Sprintf("%d.%08d", a/Coin, a%Coin) }

func run(ctx context.Context, w io.Writer, cfg config) (*report, error) {
	if cfg.Blocks < 12 || cfg.Render < 0 || cfg.Render >= cfg.Blocks {
		return nil, fmt.Errorf("want at least 12 blocks and a rendered block below them, have %d and %d", cfg.Blocks, cfg.Render)
	}
	c, closeC, err := exweft.Connect(ctx, cfg.Addr)
	if err != nil {
		return nil, err
	}
	defer closeC()
	r := &report{Prefix: exweft.Prefix("coingraph", cfg.Prefix)}
	g := &Graph{c: c, prefix: r.Prefix}
	ch := Generate(cfg.Seed, cfg.Blocks)
	r.Chain = ch

	// The chain grows block by block while a reader observes it.
	done := make(chan struct{})
	seenMid := make(chan struct{}) // closed once the reader has observed a partial chain
	var rerr error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		mid := false
		for {
			select {
			case <-done:
				return
			default:
			}
			o, err := g.Observe(ctx)
			if err != nil {
				rerr = err
				return
			}
			r.Observations = append(r.Observations, o)
			if !mid && o.Height > 0 && o.Height < int64(cfg.Blocks) {
				mid = true
				close(seenMid)
			}
		}
	}()
	start := time.Now()
	seen := map[int]bool{}
	var lerr error
	for h := range cfg.Blocks {
		if h == cfg.Blocks-1 {
			// Let the reader see the chain mid-growth at least once, however
			// the goroutines are scheduled.
			select {
			case <-seenMid:
			case <-time.After(10 * time.Second):
			}
		}
		if lerr = g.AppendBlock(ctx, ch, h, seen); lerr != nil {
			break
		}
	}
	close(done)
	wg.Wait()
	if lerr != nil {
		return nil, lerr
	}
	if rerr != nil {
		return nil, fmt.Errorf("reader: %w", rerr)
	}
	elapsed := time.Since(start)
	final, err := g.Observe(ctx)
	if err != nil {
		return nil, err
	}
	r.Height, r.Txs = final.Height, int64(final.Txs)
	fmt.Fprintf(w, "chain height %d: %d transactions, %d addresses, appended one Weft transaction per block in %v\n",
		r.Height, r.Txs, len(seen), elapsed.Round(time.Millisecond))
	fmt.Fprintf(w, "handles start with %s/\n", r.Prefix)
	whole, partial := 0, 0
	var heights []string
	for _, o := range r.Observations {
		if o.Whole(ch.Reward) {
			whole++
		}
		if o.Height > 0 && o.Height < int64(cfg.Blocks) {
			partial++
		}
		if len(heights) < 8 && (len(heights) == 0 || heights[len(heights)-1] != fmt.Sprint(o.Height)) {
			heights = append(heights, fmt.Sprint(o.Height))
		}
	}
	fmt.Fprintf(w, "a reader took %d snapshots while it grew (%d mid-chain; heights %s …): %d saw only whole blocks\n",
		len(r.Observations), partial, strings.Join(heights, ", "), whole)
	fmt.Fprintf(w, "  e.g. at height %d: coinbase rewards %s = %s × %d blocks (bfs over prev edges reaches %d)\n",
		final.Height, coins(final.Rewards), coins(ch.Reward), final.Height, final.Blocks)
	if whole != len(r.Observations) || !final.Whole(ch.Reward) {
		return r, fmt.Errorf("%d of %d snapshots saw a partial block", len(r.Observations)-whole, len(r.Observations))
	}

	if r.Block, err = g.Render(ctx, cfg.Render); err != nil {
		return nil, err
	}
	fmt.Fprintf(w, "\n%s (prev %s), %d transactions, read at one snapshot:\n", g.short(r.Block.Handle), g.short(r.Block.Prev), len(r.Block.Txs))
	flows := func(fs []RFlow) string {
		var s []string
		for _, f := range fs {
			s = append(s, g.short(f.Addr)+" "+coins(f.Amount))
		}
		return strings.Join(s, ", ")
	}
	for _, t := range r.Block.Txs {
		in := flows(t.Inputs)
		if t.Coinbase {
			in = "coinbase"
		}
		fmt.Fprintf(w, "  %-9s %s → %s\n", g.short(t.Handle), in, flows(t.Outputs))
	}
	fmt.Fprintf(w, "  inputs %s, outputs %s (the inputs and the coinbase's %s)\n", coins(r.Block.In), coins(r.Block.Out), coins(ch.Reward))

	if ch.Tainted < 0 {
		return nil, fmt.Errorf("the generated chain has no theft to taint from (seed %d, %d blocks)", cfg.Seed, cfg.Blocks)
	}
	r.Tainted = g.Addr(ch.Tainted)
	if r.Taint, err = g.Taint(ctx, r.Tainted, cfg.TaintMin); err != nil {
		return nil, err
	}
	fmt.Fprintf(w, "\ntaint from %s (bfs over tx-in/tx-out edges of at least %s): %d addresses: %s\n",
		g.short(r.Tainted), coins(cfg.TaintMin), len(r.Taint), g.list(r.Taint, 8))
	r.FlowDst = g.Addr(0) // exchange 0's hot address
	if r.Flow, err = g.Flow(ctx, r.Tainted, r.FlowDst); err != nil {
		return nil, err
	}
	if r.Flow == nil {
		fmt.Fprintf(w, "no money flows from %s to %s (exchange 0)\n", g.short(r.Tainted), g.short(r.FlowDst))
	} else {
		var s []string
		for _, h := range r.Flow {
			s = append(s, g.short(h))
		}
		fmt.Fprintf(w, "flow %s → %s (exchange 0), reachability: %s\n", g.short(r.Tainted), g.short(r.FlowDst), strings.Join(s, " → "))
	}

	if r.Clusters, err = g.Clusters(ctx); err != nil {
		return nil, err
	}
	multi := 0
	for _, cl := range r.Clusters {
		if len(cl) > 1 {
			multi++
		}
		for _, a := range cl {
			if a == g.Addr(ch.Planted[0]) {
				r.Planted = cl
			}
		}
	}
	fmt.Fprintf(w, "\nclusters by common input (client-side union-find over tx-in edges at one snapshot): %d, %d with more than one address\n",
		len(r.Clusters), multi)
	for _, cl := range r.Clusters[:min(3, len(r.Clusters))] {
		fmt.Fprintf(w, "  %2d addresses: %s\n", len(cl), g.list(cl, 8))
	}
	fmt.Fprintf(w, "  the planted owner's cluster (%s): %s\n", g.short(g.Addr(ch.Planted[0])), g.list(r.Planted, 8))
	return r, nil
}

func (g *Graph) list(hs []string, max int) string {
	var b strings.Builder
	for i, h := range hs {
		if i == max {
			fmt.Fprintf(&b, " … (%d more)", len(hs)-max)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(g.short(h))
	}
	return b.String()
}
