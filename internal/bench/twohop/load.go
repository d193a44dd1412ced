package twohop

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/weft-db/weft/client/weft"
)

// LoadStats is how the graph got into the server.
type LoadStats struct {
	Vertices     int     `json:"vertices"`
	Edges        int     `json:"edges"`
	Transactions int     `json:"transactions"`
	Seconds      float64 `json:"seconds"`
	OpsPerSec    float64 `json:"ops_per_sec"`
	// Loaders is how many transactions were in flight; Aborts the server's
	// aborts counted over the load (each retried by the client's Update).
	Loaders int    `json:"loaders,omitempty"`
	Aborts  uint64 `json:"aborts"`
}

// load creates the vertices (one loader), then each vertex's out-edges
// (edge handles "0", "1", … per source) from loaders loaders, each
// committing transactions of batch operations through c (Update: an abort
// is retried). The edges' destinations are random, so loaders' transactions
// touch each other's vertices: the contention of parallel writers.
func load(ctx context.Context, c *weft.Client, g *Graph, batch, loaders int, progress func(int)) (LoadStats, error) {
	st := LoadStats{Vertices: g.Vertices(), Edges: g.Edges(), Loaders: loaders}
	before, err := c.Status(ctx)
	if err != nil {
		return st, err
	}
	start := time.Now()
	var (
		mu    sync.Mutex
		first error
	)
	commit := func(ops []func(tx *weft.Tx)) {
		err := c.Update(ctx, func(tx *weft.Tx) error {
			for _, op := range ops {
				op(tx)
			}
			return nil
		})
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			if first == nil {
				first = fmt.Errorf("bench: loading the graph: %w", err)
			}
			return
		}
		st.Transactions++
		progress(len(ops))
	}
	var ops []func(tx *weft.Tx)
	for v := range g.Vertices() {
		h := Handle(v)
		ops = append(ops, func(tx *weft.Tx) { tx.CreateVertex(h) })
		if len(ops) >= batch || v == g.Vertices()-1 {
			commit(ops)
			ops = nil
		}
	}
	if first != nil {
		return st, first
	}
	work := make(chan []func(tx *weft.Tx), loaders)
	var wg sync.WaitGroup
	for range max(loaders, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ops := range work {
				commit(ops)
			}
		}()
	}
	for v := range g.Vertices() {
		src := weft.Ref{Name: Handle(v)}
		for j, d := range g.Out(v) {
			e, dst := fmt.Sprint(j), weft.Ref{Name: Handle(int(d))}
			ops = append(ops, func(tx *weft.Tx) { tx.CreateEdge(src, e, dst) })
			if len(ops) >= batch {
				work <- ops
				ops = nil
			}
		}
	}
	if len(ops) > 0 {
		work <- ops
	}
	close(work)
	wg.Wait()
	if first != nil {
		return st, first
	}
	st.Seconds = time.Since(start).Seconds()
	st.OpsPerSec = float64(st.Vertices+st.Edges) / st.Seconds
	if after, err := c.Status(ctx); err == nil {
		st.Aborts = after.Aborts - before.Aborts
	}
	return st, nil
}
