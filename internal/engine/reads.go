package engine

import (
	"context"
	"fmt"

	"github.com/weft-db/weft/internal/graph"
	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/value"
	"github.com/weft-db/weft/internal/vclock"
)

// resolve names the vertex a ref denotes at s: aliases are looked up on the
// shard that owns the alias. aliasRead is the read-set entry of the alias
// (nil for a handle).
func (db *DB) resolveRef(ctx context.Context, s vclock.Stamp, v VertexRef) (string, *txn.Read, error) {
	if err := txn.ValidName("vertex", v.Name, txn.HandleLenMax); err != nil {
		return "", nil, err
	}
	if !v.Alias {
		return v.Name, nil, nil
	}
	var h string
	var lw vclock.Stamp
	err := db.readName(ctx, v.Name, s, func(r *reader) {
		h, _ = r.S.Alias.Resolve(v.Name, s, r.Ord)
		lw = r.S.Alias.LastWrite(v.Name, s, r.Ord)
	})
	if err != nil {
		return "", nil, err
	}
	return h, &txn.Read{Vertex: v.Name, Alias: true, Version: txn.EncodeStamp(lw)}, nil
}

// readVertex resolves ref at snap and, when it names a vertex, runs fn with
// the vertex's read-set entry and its view (nil when it does not exist at
// the snapshot) on the vertex's shard. h is "" for an unbound alias.
func (db *DB) readVertex(ctx context.Context, snap Snapshot, ref VertexRef,
	fn func(read txn.Read, view graph.VertexView, ok bool)) (h string, aliasRead *txn.Read, err error) {
	if err := db.check(); err != nil {
		return "", nil, err
	}
	s, release, err := db.atSnapshot(&snap)
	if err != nil {
		return "", nil, err
	}
	defer release()
	if h, aliasRead, err = db.resolveRef(ctx, s, ref); err != nil || h == "" {
		return h, aliasRead, err
	}
	err = db.readName(ctx, h, s, func(r *reader) {
		read := txn.Read{Vertex: h, Version: txn.EncodeStamp(r.S.G.LastWrite(h, s, r.Ord))}
		view, ok := r.S.G.View(h, s, r.Ord)
		fn(read, view, ok)
	})
	return h, aliasRead, err
}

// GetVertex implements API.
func (db *DB) GetVertex(ctx context.Context, snap Snapshot, v VertexRef, opts ReadOptions) (*Vertex, error) {
	max := opts.EdgesMax
	if max <= 0 {
		max = EdgesMaxDefault
	}
	out := &Vertex{}
	h, aliasRead, err := db.readVertex(ctx, snap, v, func(read txn.Read, view graph.VertexView, ok bool) {
		fillVertex(out, read, view, ok, opts, max)
	})
	if err != nil {
		return nil, err
	}
	out.Handle, out.AliasRead = h, aliasRead
	return out, nil
}

// fillVertex copies what opts ask for of a vertex's view (ok false: absent
// at the snapshot) into out, with at most max edges.
func fillVertex(out *Vertex, read txn.Read, view graph.VertexView, ok bool, opts ReadOptions, max int) {
	out.Read = read
	if !ok {
		return
	}
	out.Exists = true
	if opts.Props {
		out.Props = props(view.Props())
	}
	if opts.Aliases {
		for a := range view.Aliases() {
			out.Aliases = append(out.Aliases, a)
		}
	}
	if opts.Edges {
		for e := range view.Edges() {
			if len(out.Edges) == max {
				out.EdgesTruncated = true
				break
			}
			out.Edges = append(out.Edges, edgeOf(view.Handle(), e))
		}
	}
}

// GetEdge implements API.
func (db *DB) GetEdge(ctx context.Context, snap Snapshot, src VertexRef, edge string) (*Edge, error) {
	if err := txn.ValidName("edge", edge, txn.HandleLenMax); err != nil {
		return nil, err
	}
	out := &Edge{Handle: edge}
	h, aliasRead, err := db.readVertex(ctx, snap, src, func(read txn.Read, view graph.VertexView, ok bool) {
		out.Read = read
		if !ok {
			return
		}
		if e, found := view.Edge(edge); found {
			got := edgeOf(view.Handle(), e)
			got.Read = read
			*out = got
		}
	})
	if err != nil {
		return nil, fmt.Errorf("reading edge %q of %q: %w", edge, h, err)
	}
	out.Src, out.AliasRead = h, aliasRead
	return out, nil
}

func props(seq func(func(string, value.Value) bool)) map[string]value.Value {
	m := map[string]value.Value{}
	seq(func(k string, v value.Value) bool {
		m[k] = v
		return true
	})
	if len(m) == 0 {
		return nil
	}
	return m
}

func edgeOf(src string, e graph.EdgeView) Edge {
	return Edge{Handle: e.Handle(), Src: src, Dst: e.Dst(), Exists: true, Props: props(e.Props())}
}
