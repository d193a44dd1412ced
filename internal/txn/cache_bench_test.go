package txn

import (
	"fmt"
	"testing"

	"github.com/weft-db/weft/internal/value"
)

// BenchmarkRunLoadShaped runs a transaction shaped like a Dgraph bulk-load
// batch: new nodes with an alias and properties, edges between them and to
// stored nodes, and entries on a few stored hub vertices (has-sets and
// index tokens). It reports the store reads per operation, with and
// without the per-transaction caches.
func BenchmarkRunLoadShaped(b *testing.B) {
	base := &mapKV{m: map[string][]byte{}}
	var setup []Op
	for i := range 16 {
		setup = append(setup, Op{Kind: CreateVertex, Vertex: fmt.Sprint("hub", i)})
	}
	for i := range 500 {
		setup = append(setup, Op{Kind: CreateVertex, Vertex: fmt.Sprint("old", i)})
	}
	if _, err := (Exec{Shards: 4}).Run(base, stamp(1), nil, setup); err != nil {
		b.Fatal(err)
	}
	var ops []Op
	for i := range 300 {
		n := fmt.Sprint("new", i)
		ops = append(ops, Op{Kind: CreateVertex, Vertex: n}, Op{Kind: AddAlias, Vertex: n, Alias: "xid|" + n},
			Op{Kind: SetVertexProp, Vertex: n, Key: "name", Value: value.Str(n)},
			Op{Kind: CreateEdge, Vertex: n, Edge: fmt.Sprint("p|", i), Dst: fmt.Sprint("old", i%500)},
			Op{Kind: SetEdgeProp, Vertex: n, Edge: fmt.Sprint("p|", i), Key: "|pred", Value: value.Str("p")},
			Op{Kind: CreateEdge, Vertex: fmt.Sprint("hub", i%16), Edge: n, Dst: n},
			Op{Kind: CreateEdge, Vertex: fmt.Sprint("hub", (i+5)%16), Edge: n, Dst: n})
	}
	for _, mode := range []struct {
		name string
		x    Exec
	}{{"cached", Exec{Shards: 4}}, {"uncached", Exec{Shards: 4, uncached: true}}} {
		b.Run(mode.name, func(b *testing.B) {
			gets := 0
			for i := 0; b.Loop(); i++ {
				c := &countKV{mapKV: base.clone(), gets: map[string]int{}, all: map[string]int{}, written: map[string]bool{}}
				if _, err := mode.x.Run(c, stamp(2), nil, ops); err != nil {
					b.Fatal(err)
				}
				for _, n := range c.all {
					gets += n
				}
			}
			b.ReportMetric(float64(gets)/float64(b.N)/float64(len(ops)), "reads/op")
		})
	}
}
