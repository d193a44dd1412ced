package api

import (
	"context"
	"testing"

	"github.com/weft-db/weft/internal/dgraph"
	"github.com/weft-db/weft/internal/engine"
	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/value"
)

// fakeReader answers fixed vertices and counts reads.
type fakeReader struct {
	vs    map[string]*engine.Vertex
	reads int
}

func (f *fakeReader) GetVertex(_ context.Context, ref engine.VertexRef, _ engine.ReadOptions) (*engine.Vertex, error) {
	f.reads++
	if v, ok := f.vs[ref.Name]; ok && !ref.Alias {
		cp := *v
		return &cp, nil
	}
	return &engine.Vertex{Handle: ref.Name}, nil
}

func TestOverlayReplaysOwnWrites(t *testing.T) {
	base := &fakeReader{vs: map[string]*engine.Vertex{
		"v": {Handle: "v", Exists: true, Props: map[string]value.Value{"a": value.I64(1), "b": value.I64(2)},
			Edges: []engine.Edge{{Handle: "e1", Dst: "w", Exists: true, Props: map[string]value.Value{"f": value.I64(1)}},
				{Handle: "e2", Dst: "x", Exists: true}}},
	}}
	o := newOverlayReader(base, []txn.Op{
		{Kind: txn.SetVertexProp, Vertex: "v", Key: "a", Value: value.I64(10)},
		{Kind: txn.DeleteVertexProp, Vertex: "v", Key: "b"},
		{Kind: txn.DeleteEdge, Vertex: "v", Edge: "e2"},
		{Kind: txn.SetEdgeProp, Vertex: "v", Edge: "e1", Key: "f", Value: value.I64(5)},
		{Kind: txn.CreateEdge, Vertex: "v", Edge: "e0", Dst: "y"},
		{Kind: txn.CreateVertex, Vertex: "n"},
		{Kind: txn.AddAlias, Vertex: "n", Alias: "xid|n"},
		{Kind: txn.SetVertexProp, Vertex: "n", Key: "name", Value: value.Str("new")},
	})
	ctx := context.Background()
	v, err := o.GetVertex(ctx, engine.VertexRef{Name: "v"}, engine.DefaultReadOptions())
	if err != nil {
		t.Fatal(err)
	}
	if v.Props["a"].Int() != 10 || len(v.Props) != 1 {
		t.Fatalf("props %v: want a=10 only", v.Props)
	}
	if len(v.Edges) != 2 || v.Edges[0].Handle != "e0" || v.Edges[0].Dst != "y" || v.Edges[1].Props["f"].Int() != 5 {
		t.Fatalf("edges %+v: want e0→y and e1 with f=5, sorted", v.Edges)
	}
	if base.vs["v"].Props["a"].Int() != 1 || base.vs["v"].Edges[0].Props["f"].Int() != 1 {
		t.Fatal("the overlay changed the base's vertex")
	}
	n, err := o.GetVertex(ctx, engine.VertexRef{Name: "xid|n", Alias: true}, engine.ReadOptions{Props: true})
	if err != nil {
		t.Fatal(err)
	}
	if !n.Exists || n.Handle != "n" || n.Props["name"].Str() != "new" || n.Edges != nil || n.Aliases != nil {
		t.Fatalf("new vertex by its new alias: %+v", n)
	}
	u, err := o.GetVertex(ctx, engine.VertexRef{Name: "u"}, engine.DefaultReadOptions())
	if err != nil || u.Exists || base.reads != 3 {
		t.Fatalf("untouched vertex: %+v %v; %d base reads, want 3 (every read goes to the base)", u, err, base.reads)
	}
}

// batchFake is a fakeReader that also batches, counting its batched calls.
type batchFake struct {
	fakeReader
	batches int
}

func (b *batchFake) GetVertices(ctx context.Context, refs []engine.VertexRef, opts engine.ReadOptions) ([]*engine.Vertex, error) {
	b.batches++
	out := make([]*engine.Vertex, len(refs))
	for i, r := range refs {
		out[i], _ = b.GetVertex(ctx, r, opts)
	}
	return out, nil
}

// TestOverlayBatchedReads: GetVertices answers what GetVertex answers for
// each ref (own writes replayed, new aliases resolved), in one batched read
// of a batching base and vertex by vertex otherwise.
func TestOverlayBatchedReads(t *testing.T) {
	ops := []txn.Op{
		{Kind: txn.SetVertexProp, Vertex: "v", Key: "a", Value: value.I64(10)},
		{Kind: txn.CreateVertex, Vertex: "n"},
		{Kind: txn.AddAlias, Vertex: "n", Alias: "xid|n"},
	}
	vs := map[string]*engine.Vertex{"v": {Handle: "v", Exists: true, Props: map[string]value.Value{"a": value.I64(1)}}}
	refs := []engine.VertexRef{{Name: "v"}, {Name: "xid|n", Alias: true}, {Name: "u"}}
	ctx := context.Background()
	batching := &batchFake{fakeReader: fakeReader{vs: vs}}
	plain := &fakeReader{vs: vs}
	for _, base := range []dgraph.Reader{batching, plain} {
		o := newOverlayReader(base, ops)
		got, err := o.GetVertices(ctx, refs, engine.DefaultReadOptions())
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range refs {
			want, err := o.GetVertex(ctx, r, engine.DefaultReadOptions())
			if err != nil {
				t.Fatal(err)
			}
			if got[i].Handle != want.Handle || got[i].Exists != want.Exists || len(got[i].Props) != len(want.Props) ||
				got[i].Props["a"].Int() != want.Props["a"].Int() {
				t.Errorf("%T: ref %v: batched %+v, single %+v", base, r, got[i], want)
			}
		}
		if got[0].Props["a"].Int() != 10 || !got[1].Exists || got[1].Handle != "n" || got[2].Exists {
			t.Errorf("%T: batched reads %+v %+v %+v", base, got[0], got[1], got[2])
		}
	}
	if batching.batches != 1 {
		t.Errorf("a batching base got %d batched calls, want 1", batching.batches)
	}
}
