package main

import (
	"bytes"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/weft-db/weft/client/weft"
	"github.com/weft-db/weft/examples/internal/exweft"
)

// The example against a real server (an in-process engine behind the gRPC
// front end), twice on the same server; what it printed is checked against
// the generator and against independent reads.
func TestCoinGraph(t *testing.T) {
	addr, c := exweft.Serve(t)
	ctx := t.Context()

	cfg := defaults()
	cfg.Addr = addr
	var out bytes.Buffer
	r, err := run(ctx, &out, cfg)
	t.Logf("output:\n%s", out.String())
	if err != nil {
		t.Fatal(err)
	}
	ch := r.Chain
	g := &Graph{c: c, prefix: r.Prefix}

	// Height and transactions: the generator's.
	txs := 0
	for _, b := range ch.Blocks {
		txs += len(b.Txs)
		if !b.Txs[0].Coinbase || len(b.Txs[0].Inputs) != 0 || b.Txs[0].Outputs[0].Amount != ch.Reward {
			t.Fatalf("a block's first transaction is not a coinbase: %+v", b.Txs[0])
		}
	}
	if r.Height != int64(cfg.Blocks) || r.Txs != int64(txs) {
		t.Errorf("read height %d with %d transactions; generated %d blocks, %d transactions", r.Height, r.Txs, cfg.Blocks, txs)
	}
	if !strings.Contains(out.String(), fmt.Sprintf("chain height %d: %d transactions, %d addresses", cfg.Blocks, txs, len(ch.Owner))) {
		t.Errorf("the output does not give height %d, %d transactions, %d addresses", cfg.Blocks, txs, len(ch.Owner))
	}
	// A realistic shape: hot exchange addresses, most addresses used once or twice.
	uses := make([]int, len(ch.Owner))
	for _, b := range ch.Blocks {
		for _, tx := range b.Txs {
			for _, f := range append(slices.Clone(tx.Inputs), tx.Outputs...) {
				uses[f.Addr]++
			}
		}
	}
	few := 0
	for _, u := range uses[ch.Exchanges:] {
		if u <= 2 {
			few++
		}
	}
	if few*10 < 8*(len(uses)-ch.Exchanges) || uses[0] < 10 || uses[1] < 10 {
		t.Errorf("shape: %d of %d user addresses used at most twice; exchanges used %v times", few, len(uses)-ch.Exchanges, uses[:ch.Exchanges])
	}

	// The concurrent reader saw the chain mid-growth, and only whole blocks.
	partial := 0
	for _, o := range r.Observations {
		if !o.Whole(ch.Reward) {
			t.Errorf("a snapshot saw a partial block: %+v", o)
		}
		if o.Height > 0 && o.Height < int64(cfg.Blocks) {
			partial++
			want := 0
			for _, b := range ch.Blocks[:o.Height] {
				want += len(b.Txs)
			}
			if o.Txs != want {
				t.Errorf("at height %d the reader saw %d transactions, the generator's first %d blocks hold %d", o.Height, o.Txs, o.Height, want)
			}
		}
	}
	if partial == 0 {
		t.Errorf("no snapshot saw the chain mid-growth: %+v", r.Observations)
	}

	// The rendered block: the generator's transactions, inputs, outputs, totals.
	b := ch.Blocks[cfg.Render]
	if r.Block.Handle != g.Block(cfg.Render) || r.Block.Prev != g.Block(cfg.Render-1) || len(r.Block.Txs) != len(b.Txs) {
		t.Fatalf("rendered %s (prev %s) with %d txs; want %s with %d", r.Block.Handle, r.Block.Prev, len(r.Block.Txs), g.Block(cfg.Render), len(b.Txs))
	}
	var in, outSum int64
	flows := func(fs []Flow) []RFlow {
		var o []RFlow
		for _, f := range fs {
			o = append(o, RFlow{g.Addr(f.Addr), f.Amount})
		}
		return o
	}
	for i, tx := range b.Txs {
		rt := r.Block.Txs[i]
		wantOut := flows(tx.Outputs)
		sort.Slice(wantOut, func(i, j int) bool { return wantOut[i].Addr < wantOut[j].Addr })
		if rt.Handle != g.Tx(cfg.Render, i) || rt.Coinbase != tx.Coinbase || !slices.Equal(rt.Inputs, flows(tx.Inputs)) || !slices.Equal(rt.Outputs, wantOut) {
			t.Errorf("rendered tx %d = %+v; generator %+v", i, rt, tx)
		}
		for _, f := range tx.Inputs {
			in += f.Amount
		}
		for _, f := range tx.Outputs {
			outSum += f.Amount
		}
	}
	if r.Block.In != in || r.Block.Out != outSum || outSum != in+ch.Reward {
		t.Errorf("rendered totals in %d out %d; generator in %d out %d (reward %d)", r.Block.In, r.Block.Out, in, outSum, ch.Reward)
	}
	if !strings.Contains(out.String(), fmt.Sprintf("inputs %s, outputs %s", coins(in), coins(outSum))) {
		t.Errorf("the output does not give the block's totals %s and %s", coins(in), coins(outSum))
	}

	// Taint: a BFS over the generator's money edges carrying at least TaintMin.
	adj := map[string][]string{}   // every money edge
	heavy := map[string][]string{} // those with at least TaintMin
	for h, b := range ch.Blocks {
		for i, tx := range b.Txs {
			th := g.Tx(h, i)
			for _, f := range tx.Inputs {
				adj[g.Addr(f.Addr)] = append(adj[g.Addr(f.Addr)], th)
				if f.Amount >= cfg.TaintMin {
					heavy[g.Addr(f.Addr)] = append(heavy[g.Addr(f.Addr)], th)
				}
			}
			for _, f := range tx.Outputs {
				adj[th] = append(adj[th], g.Addr(f.Addr))
				if f.Amount >= cfg.TaintMin {
					heavy[th] = append(heavy[th], g.Addr(f.Addr))
				}
			}
		}
	}
	bfs := func(adj map[string][]string, src string) map[string]int {
		d := map[string]int{src: 0}
		for q := []string{src}; len(q) > 0; q = q[1:] {
			for _, n := range adj[q[0]] {
				if _, ok := d[n]; !ok {
					d[n] = d[q[0]] + 1
					q = append(q, n)
				}
			}
		}
		return d
	}
	var want []string
	for h := range bfs(heavy, r.Tainted) {
		if h != r.Tainted && strings.Contains(h, "/addr/") {
			want = append(want, h)
		}
	}
	sort.Strings(want)
	if !slices.Equal(r.Taint, want) {
		t.Errorf("taint set %d addresses %v; generator BFS %d: %v", len(r.Taint), r.Taint, len(want), want)
	}
	if len(want) < 5 {
		t.Errorf("taint reaches only %d addresses: want a set worth showing", len(want))
	}

	// Flow: a path of the generator's money edges, as short as any.
	d := bfs(adj, r.Tainted)
	if hops, ok := d[r.FlowDst]; !ok {
		if r.Flow != nil {
			t.Errorf("flow %v, but the generator has no path", r.Flow)
		}
	} else {
		if len(r.Flow) != hops+1 || r.Flow[0] != r.Tainted || r.Flow[len(r.Flow)-1] != r.FlowDst {
			t.Errorf("flow %v; want %d hops from %s to %s", r.Flow, hops, r.Tainted, r.FlowDst)
		}
		for i := 0; i+1 < len(r.Flow); i++ {
			if !slices.Contains(adj[r.Flow[i]], r.Flow[i+1]) {
				t.Errorf("flow step %s → %s is no money edge", r.Flow[i], r.Flow[i+1])
			}
		}
	}

	// Clusters: union-find over the generator's transaction inputs.
	parent := make([]int, len(ch.Owner))
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(i int) int {
		if parent[i] != i {
			parent[i] = find(parent[i])
		}
		return parent[i]
	}
	for _, b := range ch.Blocks {
		for _, tx := range b.Txs {
			for _, f := range tx.Inputs[min(1, len(tx.Inputs)):] {
				parent[find(f.Addr)] = find(tx.Inputs[0].Addr)
			}
		}
	}
	groups := map[int][]string{}
	for a := range ch.Owner {
		groups[find(a)] = append(groups[find(a)], g.Addr(a))
	}
	var wantCl [][]string
	for _, cl := range groups {
		sort.Strings(cl)
		wantCl = append(wantCl, cl)
	}
	sort.Slice(wantCl, func(i, j int) bool {
		if len(wantCl[i]) != len(wantCl[j]) {
			return len(wantCl[i]) > len(wantCl[j])
		}
		return wantCl[i][0] < wantCl[j][0]
	})
	if !slices.EqualFunc(r.Clusters, wantCl, slices.Equal) {
		t.Errorf("clusters %v; generator %v", r.Clusters, wantCl)
	}
	// The planted owner: all four addresses, and only its own.
	var planted []string
	for _, a := range ch.Planted {
		planted = append(planted, g.Addr(a))
	}
	sort.Strings(planted)
	if len(planted) != 4 || !slices.Equal(r.Planted, planted) {
		t.Errorf("the planted owner's cluster %v; want its addresses %v", r.Planted, planted)
	}
	for _, cl := range r.Clusters {
		for _, h := range cl[1:] {
			var a, b int
			fmt.Sscanf(strings.TrimPrefix(h, r.Prefix+"/addr/"), "%d", &a)
			fmt.Sscanf(strings.TrimPrefix(cl[0], r.Prefix+"/addr/"), "%d", &b)
			if ch.Owner[a] != ch.Owner[b] {
				t.Errorf("cluster %v mixes owners %d and %d", cl, ch.Owner[a], ch.Owner[b])
			}
		}
	}

	// Independent reads: every address's money edges are the generator's.
	tx, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for a := range ch.Owner {
		v, err := tx.GetVertex(ctx, weft.Handle(g.Addr(a)))
		if err != nil || !v.Exists {
			t.Fatalf("address %d: %+v %v", a, v, err)
		}
		var got []string
		for _, e := range v.Edges {
			if e.Props["kind"] == KindIn {
				got = append(got, e.Dst)
			}
		}
		sort.Strings(got)
		w := slices.Clone(adj[g.Addr(a)])
		sort.Strings(w)
		if !slices.Equal(got, w) {
			t.Fatalf("address %d spends in %v; generator %v", a, got, w)
		}
	}
	st, err := c.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(1 + cfg.Blocks + txs + len(ch.Owner)); st.Vertices != want {
		t.Errorf("server holds %d vertices, want chain + %d blocks + %d txs + %d addresses = %d", st.Vertices, cfg.Blocks, txs, len(ch.Owner), want)
	}

	// Runs again against the same server, under a new prefix.
	out.Reset()
	r2, err := run(ctx, &out, cfg)
	if err != nil {
		t.Fatalf("second run: %v\n%s", err, out.String())
	}
	if r2.Prefix == r.Prefix || len(r2.Taint) != len(r.Taint) || len(r2.Clusters) != len(r.Clusters) || r2.Height != r.Height {
		t.Errorf("second run: prefix %s (first %s), taint %d (first %d), clusters %d (first %d), height %d (first %d)",
			r2.Prefix, r.Prefix, len(r2.Taint), len(r.Taint), len(r2.Clusters), len(r.Clusters), r2.Height, r.Height)
	}
}
