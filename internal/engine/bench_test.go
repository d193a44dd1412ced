package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/weft-db/weft/internal/txn"
)

// BenchmarkProgramGetEdges measures in-process get_edges programs from
// parallel clients on a 10k-vertex graph (10 out-edges each).
func BenchmarkProgramGetEdges(b *testing.B) {
	ctx := context.Background()
	db, err := Open(memConfig())
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	const n = 10000
	var ops []txn.Op
	for i := 0; i < n; i++ {
		ops = append(ops, txn.Op{Kind: txn.CreateVertex, Vertex: fmt.Sprint("v", i)})
		if len(ops) == 5000 {
			if _, err := db.Commit(ctx, nil, ops); err != nil {
				b.Fatal(err)
			}
			ops = ops[:0]
		}
	}
	for i := 0; i < n; i++ {
		for j := 0; j < 10; j++ {
			ops = append(ops, txn.Op{Kind: txn.CreateEdge, Vertex: fmt.Sprint("v", i), Dst: fmt.Sprint("v", (i*7+j*13)%n)})
		}
		if len(ops) >= 5000 {
			if _, err := db.Commit(ctx, nil, ops); err != nil {
				b.Fatal(err)
			}
			ops = ops[:0]
		}
	}
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		rng := rand.New(rand.NewPCG(rand.Uint64(), 1))
		for pb.Next() {
			p := json.RawMessage(fmt.Sprintf(`{"node":"v%d","limit":50}`, rng.IntN(n)))
			if _, err := db.Run(ctx, "get_edges", p, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkProgramTwoHop measures the two-hop count (traverse_props over
// three levels, ~100 vertices at the last) from one in-process client on a
// random graph of 10k vertices and 100k edges: the server side of `weft
// bench twohop` without the transport. The handles variant returns the
// sorted vertex list, the count variant its aggregate.
func BenchmarkProgramTwoHop(b *testing.B) {
	ctx := context.Background()
	db, err := Open(memConfig())
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	const n, m = 10000, 100000
	r := rand.New(rand.NewPCG(1, 2))
	var ops []txn.Op
	flush := func() {
		if _, err := db.Commit(ctx, nil, ops); err != nil {
			b.Fatal(err)
		}
		ops = ops[:0]
	}
	for i := range n {
		ops = append(ops, txn.Op{Kind: txn.CreateVertex, Vertex: fmt.Sprint("v", i)})
		if len(ops) == 5000 {
			flush()
		}
	}
	for i := range m {
		ops = append(ops, txn.Op{Kind: txn.CreateEdge, Vertex: fmt.Sprint("v", r.IntN(n)), Edge: fmt.Sprint(i), Dst: fmt.Sprint("v", r.IntN(n))})
		if len(ops) == 5000 {
			flush()
		}
	}
	for _, tc := range []struct{ name, tail string }{{"handles", "}"}, {"count", `,"aggregate":"count"}`}} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				p := json.RawMessage(fmt.Sprintf(`{"src":"v%d","node_props":[{},{},{}],"edge_props":[{},{}]%s`, (i*7919)%n, tc.tail))
				if _, err := db.Run(ctx, "traverse_props", p, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkProgramOneVertex is a program's fixed cost: traverse_props at
// its source alone (one vertex visited, one emitted), in process.
func BenchmarkProgramOneVertex(b *testing.B) {
	ctx := context.Background()
	db, err := Open(memConfig())
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Commit(ctx, nil, []txn.Op{{Kind: txn.CreateVertex, Vertex: "v0"}}); err != nil {
		b.Fatal(err)
	}
	p := json.RawMessage(`{"src":"v0","node_props":[{}],"aggregate":"count"}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := db.Run(ctx, "traverse_props", p, nil); err != nil {
			b.Fatal(err)
		}
	}
}
