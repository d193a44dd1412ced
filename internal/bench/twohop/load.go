package twohop

import (
	"context"
	"fmt"
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
}

// load creates the vertices, then each vertex's out-edges (edge handles
// "0", "1", … per source), through c in transactions of batch operations.
func load(ctx context.Context, c *weft.Client, g *Graph, batch int, progress func(int)) (LoadStats, error) {
	st := LoadStats{Vertices: g.Vertices(), Edges: g.Edges()}
	start := time.Now()
	var ops []func(tx *weft.Tx)
	flush := func() error {
		if len(ops) == 0 {
			return nil
		}
		err := c.Update(ctx, func(tx *weft.Tx) error {
			for _, op := range ops {
				op(tx)
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("bench: loading the graph: %w", err)
		}
		st.Transactions++
		progress(len(ops))
		ops = ops[:0]
		return nil
	}
	for v := range g.Vertices() {
		h := Handle(v)
		ops = append(ops, func(tx *weft.Tx) { tx.CreateVertex(h) })
		if len(ops) >= batch {
			if err := flush(); err != nil {
				return st, err
			}
		}
	}
	if err := flush(); err != nil {
		return st, err
	}
	for v := range g.Vertices() {
		src := weft.Ref{Name: Handle(v)}
		for j, d := range g.Out(v) {
			e, dst := fmt.Sprint(j), weft.Ref{Name: Handle(int(d))}
			ops = append(ops, func(tx *weft.Tx) { tx.CreateEdge(src, e, dst) })
			if len(ops) >= batch {
				if err := flush(); err != nil {
					return st, err
				}
			}
		}
	}
	if err := flush(); err != nil {
		return st, err
	}
	st.Seconds = time.Since(start).Seconds()
	st.OpsPerSec = float64(st.Vertices+st.Edges) / st.Seconds
	return st, nil
}
