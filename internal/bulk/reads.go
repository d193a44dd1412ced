package bulk

import (
	"context"

	"github.com/weft-db/weft/internal/engine"
	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/value"
)

// GetVertex implements engine.API: the vertex as the engine would answer it
// (the read-set entries carry the records' last-write stamps, as Exec checks
// them).
func (db *DB) GetVertex(_ context.Context, _ engine.Snapshot, v engine.VertexRef, opts engine.ReadOptions) (*engine.Vertex, error) {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.done {
		return nil, ErrDone
	}
	return db.getVertex(v, opts)
}

// GetVertices implements engine.BatchReader (one request: it is all local).
func (db *DB) GetVertices(_ context.Context, _ engine.Snapshot, refs []engine.VertexRef, opts engine.ReadOptions) ([]*engine.Vertex, int, error) {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.done {
		return nil, 0, ErrDone
	}
	out := make([]*engine.Vertex, len(refs))
	for i, r := range refs {
		v, err := db.getVertex(r, opts)
		if err != nil {
			return nil, 1, err
		}
		out[i] = v
	}
	return out, 1, nil
}

// resolve names the vertex ref denotes ("" for an unbound alias) and the
// alias's read-set entry.
func (db *DB) resolve(ref engine.VertexRef) (string, *txn.Read, error) {
	if err := txn.ValidName("vertex", ref.Name, txn.HandleLenMax); err != nil {
		return "", nil, err
	}
	if !ref.Alias {
		return ref.Name, nil, nil
	}
	b, ok, err := db.kv.Get(txn.AliasKey(ref.Name))
	if err != nil {
		return "", nil, err
	}
	var a txn.AliasRec
	if ok {
		if a, err = txn.DecodeAliasRec(b); err != nil {
			return "", nil, err
		}
	}
	return a.Handle, &txn.Read{Vertex: ref.Name, Alias: true, Version: txn.EncodeStamp(a.LastWrite)}, nil
}

// record reads h's vertex record: its read-set entry and whether it is live.
func (db *DB) record(h string) (txn.Read, bool, error) {
	b, ok, err := db.kv.Get(txn.VertexKey(h))
	if err != nil || !ok {
		return txn.Read{Vertex: h}, false, err
	}
	rec, err := txn.DecodeVertexRec(b)
	if err != nil {
		return txn.Read{}, false, err
	}
	return txn.Read{Vertex: h, Version: txn.EncodeStamp(rec.LastWrite)}, rec.Exists, nil
}

func (db *DB) getVertex(ref engine.VertexRef, opts engine.ReadOptions) (*engine.Vertex, error) {
	h, aliasRead, err := db.resolve(ref)
	if err != nil {
		return nil, err
	}
	out := &engine.Vertex{Handle: h, AliasRead: aliasRead}
	if h == "" {
		return out, nil
	}
	read, live, err := db.record(h)
	if err != nil {
		return nil, err
	}
	out.Read = read
	if !live {
		return out, nil
	}
	out.Exists = true
	if opts.Props {
		start, end := txn.PropPrefix(h)
		err := db.kv.Scan(start, end, 0, func(k, v []byte) error {
			val, _, err := value.Decode(v)
			if err != nil {
				return err
			}
			if out.Props == nil {
				out.Props = map[string]value.Value{}
			}
			out.Props[txn.KeyParts(k)[1]] = val
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	if opts.Aliases {
		start, end := txn.VAliasPrefix(h)
		if err := db.kv.Scan(start, end, 0, func(k, _ []byte) error {
			out.Aliases = append(out.Aliases, txn.KeyParts(k)[1])
			return nil
		}); err != nil {
			return nil, err
		}
	}
	if opts.Edges {
		if err := db.edges(out, h, opts.EdgesMax); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// edges fills out's edges, at most max (<= 0: engine.EdgesMaxDefault).
func (db *DB) edges(out *engine.Vertex, h string, max int) error {
	if max <= 0 {
		max = engine.EdgesMaxDefault
	}
	start, end := txn.EdgePrefix(h)
	return db.kv.Scan(start, end, max+1, func(k, v []byte) error {
		if len(out.Edges) == max {
			out.EdgesTruncated = true
			return nil
		}
		e, err := edgeOf(h, k, v)
		if err != nil {
			return err
		}
		out.Edges = append(out.Edges, e)
		return nil
	})
}

func edgeOf(src string, k, v []byte) (engine.Edge, error) {
	rec, err := txn.DecodeEdgeRec(v)
	if err != nil {
		return engine.Edge{}, err
	}
	e := engine.Edge{Handle: txn.KeyParts(k)[1], Src: src, Dst: rec.Dst, Exists: true}
	for _, p := range rec.Props {
		if e.Props == nil {
			e.Props = map[string]value.Value{}
		}
		e.Props[p.Key] = p.Value
	}
	return e, nil
}

// GetEdge implements engine.API.
func (db *DB) GetEdge(_ context.Context, _ engine.Snapshot, src engine.VertexRef, edge string) (*engine.Edge, error) {
	if err := txn.ValidName("edge", edge, txn.HandleLenMax); err != nil {
		return nil, err
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.done {
		return nil, ErrDone
	}
	h, aliasRead, err := db.resolve(src)
	if err != nil {
		return nil, err
	}
	out := &engine.Edge{Handle: edge, Src: h, AliasRead: aliasRead}
	if h == "" {
		return out, nil
	}
	read, live, err := db.record(h)
	if err != nil {
		return nil, err
	}
	out.Read = read
	if !live {
		return out, nil
	}
	b, ok, err := db.kv.Get(txn.EdgeKey(h, edge))
	if err != nil || !ok {
		return out, err
	}
	e, err := edgeOf(h, txn.EdgeKey(h, edge), b)
	if err != nil {
		return nil, err
	}
	e.Read, e.AliasRead = read, aliasRead
	return &e, nil
}
