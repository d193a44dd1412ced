package api

import (
	"context"
	"maps"
	"slices"
	"strings"

	"github.com/weft-db/weft/internal/dgraph"
	"github.com/weft-db/weft/internal/engineapi"
	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/value"
)

// overlayReader shows a transaction its own buffered writes: every vertex
// is read through base (which records the read, validated at commit) and
// then has the transaction's operations on it replayed. The executor reads
// everything — nodes, index and has-set vertices, the schema — through its
// Reader, so queries see their transaction's mutations consistently.
//
// Sound because what a query sees is the snapshot's state (recorded and
// validated at commit) plus writes the transaction itself makes; a commit
// that re-evaluates the mutations at a newer snapshot first checks that
// every recorded read is unchanged, so the writes it replays over those
// vertices are the ones the query saw.
type overlayReader struct {
	base    dgraph.Reader
	ops     map[string][]txn.Op // by vertex handle, in transaction order
	aliases map[string]string   // alias added by the transaction → vertex handle
}

func newOverlayReader(base dgraph.Reader, ops []txn.Op) *overlayReader {
	o := &overlayReader{base: base, ops: map[string][]txn.Op{}, aliases: map[string]string{}}
	for _, op := range ops {
		if op.VertexAlias { // the mapping names vertices by handle; kept for completeness
			continue
		}
		o.ops[op.Vertex] = append(o.ops[op.Vertex], op)
		switch op.Kind {
		case txn.AddAlias:
			o.aliases[op.Alias] = op.Vertex
		case txn.RemoveAlias:
			delete(o.aliases, op.Alias)
		}
	}
	return o
}

func (o *overlayReader) GetVertex(ctx context.Context, ref engineapi.VertexRef, opts engineapi.ReadOptions) (*engineapi.Vertex, error) {
	ref = o.resolve(ref)
	v, err := o.base.GetVertex(ctx, ref, opts)
	if err != nil {
		return nil, err
	}
	return o.apply(v, ref, opts), nil
}

// GetVertices is GetVertex for many refs, in one batched read of the base
// when it batches (dgraph.ReadVertices).
func (o *overlayReader) GetVertices(ctx context.Context, refs []engineapi.VertexRef, opts engineapi.ReadOptions) ([]*engineapi.Vertex, error) {
	rs := make([]engineapi.VertexRef, len(refs))
	for i, r := range refs {
		rs[i] = o.resolve(r)
	}
	vs, err := dgraph.ReadVertices(ctx, o.base, rs, opts, 1)
	if err != nil {
		return nil, err
	}
	for i, v := range vs {
		vs[i] = o.apply(v, rs[i], opts)
	}
	return vs, nil
}

// resolve names a vertex the transaction aliased by its handle.
func (o *overlayReader) resolve(ref engineapi.VertexRef) engineapi.VertexRef {
	if h, ok := o.aliases[ref.Name]; ref.Alias && ok {
		return engineapi.VertexRef{Name: h}
	}
	return ref
}

// apply replays the transaction's operations on v, read as ref.
func (o *overlayReader) apply(v *engineapi.Vertex, ref engineapi.VertexRef, opts engineapi.ReadOptions) *engineapi.Vertex {
	h := ref.Name
	if ref.Alias {
		if !v.Exists {
			return v
		}
		h = v.Handle
	}
	ops := o.ops[h]
	if len(ops) == 0 {
		return v
	}
	return replay(v, h, ops, opts)
}

// replay returns a copy of v with ops applied.
func replay(v *engineapi.Vertex, h string, ops []txn.Op, opts engineapi.ReadOptions) *engineapi.Vertex {
	out := *v
	out.Handle = h
	out.Props = maps.Clone(v.Props)
	edges := map[string]engineapi.Edge{}
	for _, e := range v.Edges {
		e.Props = maps.Clone(e.Props)
		edges[e.Handle] = e
	}
	aliases := slices.Clone(v.Aliases)
	for _, op := range ops {
		switch op.Kind {
		case txn.CreateVertex:
			out.Exists = true
		case txn.DeleteVertex:
			out.Exists, out.Props, edges, aliases = false, nil, map[string]engineapi.Edge{}, nil
		case txn.SetVertexProp:
			if out.Props == nil {
				out.Props = map[string]value.Value{}
			}
			out.Props[op.Key] = op.Value
		case txn.DeleteVertexProp:
			delete(out.Props, op.Key)
		case txn.CreateEdge:
			edges[op.Edge] = engineapi.Edge{Handle: op.Edge, Src: h, Dst: op.Dst, Exists: true, Props: map[string]value.Value{}}
		case txn.DeleteEdge:
			delete(edges, op.Edge)
		case txn.SetEdgeProp, txn.DeleteEdgeProp:
			e, ok := edges[op.Edge]
			if !ok {
				continue
			}
			if op.Kind == txn.SetEdgeProp {
				if e.Props == nil {
					e.Props = map[string]value.Value{}
				}
				e.Props[op.Key] = op.Value
			} else {
				delete(e.Props, op.Key)
			}
			edges[op.Edge] = e
		case txn.AddAlias:
			aliases = append(aliases, op.Alias)
		case txn.RemoveAlias:
			aliases = slices.DeleteFunc(aliases, func(a string) bool { return a == op.Alias })
		}
	}
	if !opts.Props {
		out.Props = nil
	}
	out.Edges = nil
	if opts.Edges {
		for _, k := range slices.Sorted(maps.Keys(edges)) {
			out.Edges = append(out.Edges, edges[k])
		}
		// Edges past the base read's EdgesMax stay unknown: keep the flag.
		if max := opts.EdgesMax; max > 0 && len(out.Edges) > max && !v.EdgesTruncated {
			out.EdgesTruncated = true
			out.Edges = out.Edges[:max]
		}
	}
	if opts.Aliases {
		slices.SortFunc(aliases, strings.Compare)
		out.Aliases = aliases
	} else {
		out.Aliases = nil
	}
	return &out
}
