package main

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/weft-db/weft/client/weft"
)

// Edge kinds, in the edges' "kind" property. Money moves along tx-in
// (address → transaction) and tx-out (transaction → address) edges, each
// with an "amount".
const (
	KindPrev     = "prev"     // block → its predecessor
	KindContains = "contains" // block → transaction
	KindIn       = "tx-in"    // input address → transaction
	KindOut      = "tx-out"   // transaction → output address
	moneyPrefix  = "tx-"      // both money edges' kinds start with it
)

// Graph is a chain stored under one handle prefix.
type Graph struct {
	c      *weft.Client
	prefix string
}

func (g *Graph) chainV() string        { return g.prefix + "/chain" }
func (g *Graph) Block(h int) string    { return fmt.Sprintf("%s/block/%d", g.prefix, h) }
func (g *Graph) Tx(h, i int) string    { return fmt.Sprintf("%s/tx/%d.%d", g.prefix, h, i) }
func (g *Graph) Addr(a int) string     { return fmt.Sprintf("%s/addr/%d", g.prefix, a) }
func (g *Graph) short(h string) string { return strings.TrimPrefix(h, g.prefix+"/") }

func inEdge(tx string) string    { return "in:" + tx }
func outEdge(addr string) string { return "out:" + addr }

// AppendBlock writes block h of ch — the block, its edge to its
// predecessor, its transactions, any address it uses first and the money
// edges — and moves the chain's tip, in one transaction. seen holds the
// addresses already written (AppendBlock adds to it once committed).
func (g *Graph) AppendBlock(ctx context.Context, ch *Chain, h int, seen map[int]bool) error {
	b := ch.Blocks[h]
	fresh := map[int]bool{}
	err := g.c.Update(ctx, func(tx *weft.Tx) error {
		clear(fresh)
		bh := weft.Handle(g.Block(h))
		if h == 0 {
			tx.CreateVertex(g.chainV())
		}
		tx.CreateVertex(g.Block(h))
		tx.SetVertexProp(bh, "kind", "block")
		tx.SetVertexProp(bh, "height", h)
		tx.SetVertexProp(bh, "txs", len(b.Txs))
		tx.SetVertexProp(bh, "coinbase", g.Tx(h, 0))
		if h > 0 {
			tx.CreateEdge(bh, KindPrev, weft.Handle(g.Block(h-1)))
			tx.SetEdgeProp(bh, KindPrev, "kind", KindPrev)
		}
		addr := func(a int) weft.Ref {
			if !seen[a] && !fresh[a] {
				fresh[a] = true
				tx.CreateVertex(g.Addr(a))
				tx.SetVertexProp(weft.Handle(g.Addr(a)), "kind", "address")
			}
			return weft.Handle(g.Addr(a))
		}
		for i, t := range b.Txs {
			th := g.Tx(h, i)
			tx.CreateVertex(th)
			tx.SetVertexProp(weft.Handle(th), "kind", "tx")
			tx.SetVertexProp(weft.Handle(th), "block", h)
			tx.SetVertexProp(weft.Handle(th), "index", i)
			tx.SetVertexProp(weft.Handle(th), "coinbase", t.Coinbase)
			ins := make([]string, len(t.Inputs))
			for j, in := range t.Inputs {
				ins[j] = g.Addr(in.Addr)
			}
			tx.SetVertexProp(weft.Handle(th), "inputs", strings.Join(ins, ","))
			e := "tx:" + th
			tx.CreateEdge(bh, e, weft.Handle(th))
			tx.SetEdgeProp(bh, e, "kind", KindContains)
			tx.SetEdgeProp(bh, e, "index", i)
			for _, in := range t.Inputs {
				src := addr(in.Addr)
				tx.CreateEdge(src, inEdge(th), weft.Handle(th))
				tx.SetEdgeProp(src, inEdge(th), "kind", KindIn)
				tx.SetEdgeProp(src, inEdge(th), "amount", in.Amount)
			}
			for _, out := range t.Outputs {
				dst := addr(out.Addr)
				tx.CreateEdge(weft.Handle(th), outEdge(g.Addr(out.Addr)), dst)
				tx.SetEdgeProp(weft.Handle(th), outEdge(g.Addr(out.Addr)), "kind", KindOut)
				tx.SetEdgeProp(weft.Handle(th), outEdge(g.Addr(out.Addr)), "amount", out.Amount)
			}
		}
		cv := weft.Handle(g.chainV())
		tx.SetVertexProp(cv, "height", h+1)
		tx.SetVertexProp(cv, "tip", g.Block(h))
		tx.SetVertexProp(cv, "addresses", len(seen)+len(fresh))
		return nil
	})
	if err != nil {
		return fmt.Errorf("append block %d: %w", h, err)
	}
	for a := range fresh {
		seen[a] = true
	}
	return nil
}

// Observation is what a reader saw at one snapshot while the chain grew.
type Observation struct {
	Height      int64 // the chain vertex's height (0: no block yet)
	Blocks      int   // blocks the bfs over prev edges from the tip reaches
	Rewards     int64 // the coinbase outputs' total over blocks 0..Height-1
	NextMissing bool  // block Height is not visible
	Txs         int   // contains edges over the blocks seen
	TxsProp     int64 // the blocks' "txs" properties, summed
}

// Whole reports whether the snapshot saw only whole blocks.
func (o Observation) Whole(reward int64) bool {
	return o.Rewards == reward*o.Height && int64(o.Blocks) == o.Height && o.NextMissing && int64(o.Txs) == o.TxsProp
}

func prop[T any](v *weft.Vertex, k string) T {
	x, _ := v.Props[k].(T)
	return x
}

func edgeProp[T any](e weft.Edge, k string) T {
	x, _ := e.Props[k].(T)
	return x
}

// Observe reads the chain at one snapshot: its height, every block's
// coinbase output and transaction edges, that the next block is not
// there, and (the bfs node program, at the same snapshot) how many blocks
// the tip's prev edges reach.
func (g *Graph) Observe(ctx context.Context) (Observation, error) {
	var o Observation
	tx, err := g.c.Begin(ctx)
	if err != nil {
		return o, err
	}
	cv, err := tx.GetVertex(ctx, weft.Handle(g.chainV()), weft.ReadOptions{NoEdges: true, NoAliases: true})
	if err != nil {
		return o, err
	}
	if cv.Exists {
		o.Height = prop[int64](cv, "height")
		var bfs struct {
			Depths map[string]int `json:"depths"`
		}
		if err := g.c.RunAt(ctx, tx.Snapshot(), "bfs", map[string]any{
			"src": prop[string](cv, "tip"), "edge_props": map[string]any{"kind": KindPrev},
		}, &bfs); err != nil {
			return o, err
		}
		o.Blocks = len(bfs.Depths)
	}
	for h := range int(o.Height) {
		bv, err := tx.GetVertex(ctx, weft.Handle(g.Block(h)), weft.ReadOptions{NoAliases: true})
		if err != nil {
			return o, err
		}
		o.TxsProp += prop[int64](bv, "txs")
		for _, e := range bv.Edges {
			if e.Props["kind"] == KindContains {
				o.Txs++
			}
		}
		cb, err := tx.GetVertex(ctx, weft.Handle(prop[string](bv, "coinbase")), weft.ReadOptions{NoAliases: true})
		if err != nil {
			return o, err
		}
		for _, e := range cb.Edges {
			if e.Props["kind"] == KindOut {
				o.Rewards += edgeProp[int64](e, "amount")
			}
		}
	}
	next, err := tx.GetVertex(ctx, weft.Handle(g.Block(int(o.Height))), weft.ReadOptions{NoEdges: true, NoProps: true, NoAliases: true})
	if err != nil {
		return o, err
	}
	o.NextMissing = !next.Exists
	return o, nil
}

// RTx is a rendered transaction.
type RTx struct {
	Handle          string
	Coinbase        bool
	Inputs, Outputs []RFlow
}

// RFlow is an input or output as read: the address handle and amount.
type RFlow struct {
	Addr   string
	Amount int64
}

// Rendered is a block as read at one snapshot.
type Rendered struct {
	Handle, Prev string
	Txs          []RTx
	In, Out      int64 // totals over its transactions
}

// Render reads block h with its transactions, their inputs (each input
// address's tx-in edge) and outputs (the transaction's tx-out edges) at one
// snapshot.
func (g *Graph) Render(ctx context.Context, h int) (*Rendered, error) {
	tx, err := g.c.Begin(ctx)
	if err != nil {
		return nil, err
	}
	bv, err := tx.GetVertex(ctx, weft.Handle(g.Block(h)), weft.ReadOptions{NoAliases: true})
	if err != nil {
		return nil, err
	}
	if !bv.Exists {
		return nil, fmt.Errorf("%s: %w", g.Block(h), weft.ErrNotFound)
	}
	r := &Rendered{Handle: bv.Handle}
	type ref struct {
		h string
		i int64
	}
	var txs []ref
	for _, e := range bv.Edges {
		switch e.Props["kind"] {
		case KindPrev:
			r.Prev = e.Dst
		case KindContains:
			txs = append(txs, ref{e.Dst, edgeProp[int64](e, "index")})
		}
	}
	sort.Slice(txs, func(i, j int) bool { return txs[i].i < txs[j].i })
	for _, t := range txs {
		tv, err := tx.GetVertex(ctx, weft.Handle(t.h), weft.ReadOptions{NoAliases: true})
		if err != nil {
			return nil, err
		}
		rt := RTx{Handle: t.h, Coinbase: prop[bool](tv, "coinbase")}
		for _, e := range tv.Edges {
			if e.Props["kind"] == KindOut {
				rt.Outputs = append(rt.Outputs, RFlow{e.Dst, edgeProp[int64](e, "amount")})
				r.Out += edgeProp[int64](e, "amount")
			}
		}
		sort.Slice(rt.Outputs, func(i, j int) bool { return rt.Outputs[i].Addr < rt.Outputs[j].Addr })
		if ins := prop[string](tv, "inputs"); ins != "" {
			for _, a := range strings.Split(ins, ",") {
				e, err := tx.GetEdge(ctx, weft.Handle(a), inEdge(t.h))
				if err != nil {
					return nil, err
				}
				if !e.Exists {
					return nil, fmt.Errorf("%s lists input %s without its edge", t.h, a)
				}
				amt := edgeProp[int64](*e, "amount")
				rt.Inputs = append(rt.Inputs, RFlow{a, amt})
				r.In += amt
			}
		}
		r.Txs = append(r.Txs, rt)
	}
	return r, nil
}

// moneyEdges is the edge filter of the money edges with at least min.
func moneyEdges(min int64) []map[string]any {
	f := []map[string]any{{"key": "kind", "rel": "STARTS_WITH", "value": moneyPrefix}}
	if min > 0 {
		f = append(f, map[string]any{"key": "amount", "rel": "GREATER_EQUAL", "value": min})
	}
	return f
}

// Taint is the addresses (sorted, the source left out) reachable from src
// through money edges each carrying at least min: the bfs node program
// with an edge-property filter.
func (g *Graph) Taint(ctx context.Context, src string, min int64) ([]string, error) {
	var res struct {
		Depths map[string]int `json:"depths"`
	}
	if err := g.c.Run(ctx, "bfs", map[string]any{"src": src, "edge_props": moneyEdges(min)}, &res); err != nil {
		return nil, err
	}
	var out []string
	for h := range res.Depths {
		if h != src && strings.HasPrefix(h, g.prefix+"/addr/") {
			out = append(out, h)
		}
	}
	sort.Strings(out)
	return out, nil
}

// Flow is the fewest-hop money path from src to dst (address, tx,
// address, …; nil when there is none): the reachability node program.
func (g *Graph) Flow(ctx context.Context, src, dst string) ([]string, error) {
	var res struct {
		Reachable bool     `json:"reachable"`
		Path      []string `json:"path"`
	}
	if err := g.c.Run(ctx, "reachability", map[string]any{"src": src, "dest": dst, "edge_props": moneyEdges(0)}, &res); err != nil {
		return nil, err
	}
	if !res.Reachable {
		return nil, nil
	}
	return res.Path, nil
}

// Clusters groups addresses by the common-input heuristic — the inputs of
// one transaction have one owner — by union-find on the client over every
// address's tx-in edges, read at one snapshot. (The built-in wcc analysis
// does not fit: it takes every edge of the whole snapshot, not only input
// edges, and not only this chain's.) Clusters come largest first (ties:
// by first handle), each sorted.
func (g *Graph) Clusters(ctx context.Context) ([][]string, error) {
	tx, err := g.c.Begin(ctx)
	if err != nil {
		return nil, err
	}
	cv, err := tx.GetVertex(ctx, weft.Handle(g.chainV()), weft.ReadOptions{NoEdges: true, NoAliases: true})
	if err != nil {
		return nil, err
	}
	n := int(prop[int64](cv, "addresses"))
	parent := make([]int, n)
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	firstInput := map[string]int{} // tx → the first address seen spending in it
	for a := range n {
		v, err := tx.GetVertex(ctx, weft.Handle(g.Addr(a)), weft.ReadOptions{NoProps: true, NoAliases: true})
		if err != nil {
			return nil, err
		}
		if !v.Exists {
			return nil, fmt.Errorf("%s: %w", g.Addr(a), weft.ErrNotFound)
		}
		for _, e := range v.Edges {
			if e.Props["kind"] != KindIn {
				continue
			}
			if b, ok := firstInput[e.Dst]; ok {
				if x, y := find(a), find(b); x != y {
					parent[max(x, y)] = min(x, y)
				}
			} else {
				firstInput[e.Dst] = a
			}
		}
	}
	groups := map[int][]string{}
	for a := range n {
		groups[find(a)] = append(groups[find(a)], g.Addr(a))
	}
	out := make([][]string, 0, len(groups))
	for _, c := range groups {
		sort.Strings(c)
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool {
		if len(out[i]) != len(out[j]) {
			return len(out[i]) > len(out[j])
		}
		return out[i][0] < out[j][0]
	})
	return out, nil
}
