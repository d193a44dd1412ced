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
	err := db.read(ctx, int(txn.ShardOf(v.Name, uint32(db.cfg.Shards))), s, func(r *reader) {
		h, _ = r.s.alias.Resolve(v.Name, s, r.ord)
		lw = r.s.alias.LastWrite(v.Name, s, r.ord)
	})
	if err != nil {
		return "", nil, err
	}
	return h, &txn.Read{Vertex: v.Name, Alias: true, Version: txn.EncodeStamp(lw)}, nil
}

// GetVertex implements API.
func (db *DB) GetVertex(ctx context.Context, snap Snapshot, v VertexRef, opts ReadOptions) (*Vertex, error) {
	if err := db.check(); err != nil {
		return nil, err
	}
	s, release, err := db.atSnapshot(&snap)
	if err != nil {
		return nil, err
	}
	defer release()
	h, aliasRead, err := db.resolveRef(ctx, s, v)
	if err != nil {
		return nil, err
	}
	out := &Vertex{Handle: h, AliasRead: aliasRead}
	if h == "" { // an unbound alias
		return out, nil
	}
	max := opts.EdgesMax
	if max <= 0 {
		max = EdgesMaxDefault
	}
	err = db.read(ctx, db.shardOf(h), s, func(r *reader) {
		out.Read = txn.Read{Vertex: h, Version: txn.EncodeStamp(r.s.g.LastWrite(h, s, r.ord))}
		view, ok := r.s.g.View(h, s, r.ord)
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
				out.Edges = append(out.Edges, edgeOf(h, e))
			}
		}
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// GetEdge implements API.
func (db *DB) GetEdge(ctx context.Context, snap Snapshot, src VertexRef, edge string) (*Edge, error) {
	if err := db.check(); err != nil {
		return nil, err
	}
	if err := txn.ValidName("edge", edge, txn.HandleLenMax); err != nil {
		return nil, err
	}
	s, release, err := db.atSnapshot(&snap)
	if err != nil {
		return nil, err
	}
	defer release()
	h, aliasRead, err := db.resolveRef(ctx, s, src)
	if err != nil {
		return nil, err
	}
	out := &Edge{Handle: edge, Src: h, AliasRead: aliasRead}
	if h == "" {
		return out, nil
	}
	err = db.read(ctx, db.shardOf(h), s, func(r *reader) {
		out.Read = txn.Read{Vertex: h, Version: txn.EncodeStamp(r.s.g.LastWrite(h, s, r.ord))}
		view, ok := r.s.g.View(h, s, r.ord)
		if !ok {
			return
		}
		if e, ok := view.Edge(edge); ok {
			got := edgeOf(h, e)
			got.Read, got.AliasRead = out.Read, aliasRead
			*out = got
		}
	})
	if err != nil {
		return nil, fmt.Errorf("reading edge %q of %q: %w", edge, h, err)
	}
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
