package engineapi

import (
	"context"
	"sync"
)

// BatchReader is the optional batched read of an API: many vertices at one
// snapshot with one request per shard that owns any of them, instead of one
// request per vertex. The engine's *DB implements it; an API without it is read vertex
// by vertex by GetVertices. Front ends that read many vertices of one
// placement group (txn.GroupOf) at once — the Dgraph face's predicate
// placement — turn a level of a query into one request per (group, shard).
type BatchReader interface {
	// GetVertices reads refs at snap, answering one Vertex per ref in
	// order, each exactly as GetVertex would (Read and AliasRead included,
	// for the caller's read set). requests is the number of shard requests
	// it made (alias resolutions included).
	GetVertices(ctx context.Context, snap Snapshot, refs []VertexRef, opts ReadOptions) (vs []*Vertex, requests int, err error)
}

// BatchRefsMax bounds the refs of one GetVertices call.
const BatchRefsMax = 1 << 16

// GetVertices reads refs at snap through db's BatchReader when it has one,
// else with one GetVertex per ref (fallbackParallelMax at a time). requests
// counts the engine requests made: shard requests for a BatchReader,
// GetVertex calls otherwise.
func GetVertices(ctx context.Context, db API, snap Snapshot, refs []VertexRef, opts ReadOptions) ([]*Vertex, int, error) {
	if br, ok := db.(BatchReader); ok {
		return br.GetVertices(ctx, snap, refs, opts)
	}
	return GetVerticesEach(ctx, db, snap, refs, opts)
}

// GetVerticesEach reads refs at snap with one db.GetVertex per ref
// (fallbackParallelMax at a time), whether or not db batches: GetVertices'
// fallback, and the ref-by-ref read of a batching API whose batch cannot
// serve some refs. requests is len(refs).
func GetVerticesEach(ctx context.Context, db API, snap Snapshot, refs []VertexRef, opts ReadOptions) ([]*Vertex, int, error) {
	out := make([]*Vertex, len(refs))
	errs := make([]error, len(refs))
	sem := make(chan struct{}, fallbackParallelMax)
	var wg sync.WaitGroup
	for i, r := range refs {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			out[i], errs[i] = db.GetVertex(ctx, snap, r, opts)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, len(refs), err
		}
	}
	return out, len(refs), nil
}

// fallbackParallelMax bounds the concurrent GetVertex calls of
// GetVerticesEach.
const fallbackParallelMax = 16
