package engine

import (
	"context"
	"testing"

	"github.com/weft-db/weft/internal/txn"
)

// BenchmarkStampRead: a read's stamp (fresh: nothing in flight) and its
// release, through one gatekeeper, the hot path of every read.
func BenchmarkStampRead(b *testing.B) {
	db, err := Open(memConfig())
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Commit(context.Background(), nil, []txn.Op{{Kind: txn.CreateVertex, Vertex: "v"}}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			g := db.gk()
			_, key := g.stampRead()
			g.endRead(key)
		}
	})
}
