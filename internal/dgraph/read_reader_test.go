package dgraph

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/weft-db/weft/internal/engine"
	"github.com/weft-db/weft/internal/value"
)

// countingReader reads db at one snapshot and remembers the vertices read.
type countingReader struct {
	db   engine.API
	snap engine.Snapshot
	mu   sync.Mutex
	seen map[string]int
}

func (c *countingReader) GetVertex(ctx context.Context, v engine.VertexRef, opts engine.ReadOptions) (*engine.Vertex, error) {
	c.mu.Lock()
	c.seen[v.Name]++
	c.mu.Unlock()
	return c.db.GetVertex(ctx, c.snap, v, opts)
}

// TestReadsThroughReader checks that the reader view answers the lookups as
// the Graph does at the same snapshot, and that every read goes through
// the reader (the schema vertex and each index bucket included).
func TestReadsThroughReader(t *testing.T) {
	ctx := context.Background()
	g := newGraph(t, "name: string @index(exact, term) .\nage: int @index(int) .")
	mustMutate(t, g, `_:a <name> "Ann Lee" .
_:a <age> "30" .
_:b <name> "Bo Lee" .
_:b <age> "40" .`, "")
	snap := snapshot(t, g)
	r := &countingReader{db: g.db, snap: snap, seen: map[string]int{}}
	x := g.ReadsThrough(r)
	if _, err := x.Schema(ctx); err != nil {
		t.Fatal(err)
	}
	if r.seen[SchemaVertex] == 0 {
		t.Fatal("the schema was not read through the reader")
	}
	check := func(what string, got []uint64, err error, want []uint64, werr error) {
		t.Helper()
		if err != nil || werr != nil || !slices.Equal(got, want) || len(got) == 0 {
			t.Errorf("%s: view %v %v, graph %v %v", what, got, err, want, werr)
		}
	}
	got, err := x.Eq(ctx, "name", "", value.Str("Bo Lee"))
	want, werr := g.Eq(ctx, snap, "name", "", value.Str("Bo Lee"))
	check("eq", got, err, want, werr)
	bo := want[0]
	got, err = x.Lookup(ctx, "name", "", "term", "lee")
	want, werr = g.Lookup(ctx, snap, "name", "", "term", "lee")
	check("lookup", got, err, want, werr)
	got, err = x.Range(ctx, "age", "", &Bound{Value: value.Str("35")}, nil)
	want, werr = g.Range(ctx, snap, "age", "", &Bound{Value: value.Str("35")}, nil)
	check("range", got, err, want, werr)
	got, err = x.Has(ctx, "age")
	want, werr = g.Has(ctx, snap, "age")
	check("has", got, err, want, werr)
	index := 0
	for name := range r.seen {
		if strings.HasPrefix(unplacedInternal(name), reservedPrefix) && name != SchemaVertex {
			index++
		}
	}
	if index < 3*Buckets {
		t.Errorf("only %d index vertices read through the reader", index)
	}
	n, err := x.ReadNode(ctx, bo, 0)
	if err != nil || !n.Exists || n.Values["age"].Int() != 40 {
		t.Fatalf("read node: %+v %v", n, err)
	}
	if _, err := (readerAPI{r}).Begin(ctx); err == nil {
		t.Error("a reader view began a transaction")
	}
}
