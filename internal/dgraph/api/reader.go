package api

import (
	"context"
	"sync"

	"github.com/weft-db/weft/internal/engineapi"
	"github.com/weft-db/weft/internal/txn"
)

// Reader reads vertices at one snapshot; the executor reads only through
// it. Its method set is exec.Reader's, so a *snapshotReader is one.
type Reader interface {
	GetVertex(ctx context.Context, v engineapi.VertexRef, opts engineapi.ReadOptions) (*engineapi.Vertex, error)
}

// snapshotReader reads db at snap and, when recording, keeps the
// read-set entry of every vertex (and alias) read, for the commit to
// validate. Safe for concurrent use (an executor reads in parallel).
type snapshotReader struct {
	db     engineapi.API
	snap   engineapi.Snapshot
	record bool
	mu     sync.Mutex
	reads  map[txnReadKey][]byte
}

type txnReadKey struct {
	vertex string
	alias  bool
}

func newSnapshotReader(db engineapi.API, snap engineapi.Snapshot, record bool) *snapshotReader {
	return &snapshotReader{db: db, snap: snap, record: record, reads: map[txnReadKey][]byte{}}
}

func (s *snapshotReader) GetVertex(ctx context.Context, v engineapi.VertexRef, opts engineapi.ReadOptions) (*engineapi.Vertex, error) {
	out, err := s.db.GetVertex(ctx, s.snap, v, opts)
	if err != nil || !s.record {
		return out, err
	}
	s.mu.Lock()
	s.reads[txnReadKey{out.Read.Vertex, out.Read.Alias}] = out.Read.Version
	if a := out.AliasRead; a != nil {
		s.reads[txnReadKey{a.Vertex, a.Alias}] = a.Version
	}
	s.mu.Unlock()
	return out, nil
}

// batchReader is exec.BatchReader: a Reader that reads many vertices in
// one go (one engine request per shard), which the executor uses for the
// predicate placement's batches.
type batchReader interface {
	GetVertices(ctx context.Context, refs []engineapi.VertexRef, opts engineapi.ReadOptions) ([]*engineapi.Vertex, error)
}

// GetVertices reads refs in one batched engine read (engineapi.GetVertices),
// recording each vertex as GetVertex does.
func (s *snapshotReader) GetVertices(ctx context.Context, refs []engineapi.VertexRef, opts engineapi.ReadOptions) ([]*engineapi.Vertex, error) {
	out, _, err := engineapi.GetVertices(ctx, s.db, s.snap, refs, opts)
	if err != nil || !s.record {
		return out, err
	}
	s.mu.Lock()
	for _, v := range out {
		s.reads[txnReadKey{v.Read.Vertex, v.Read.Alias}] = v.Read.Version
		if a := v.AliasRead; a != nil {
			s.reads[txnReadKey{a.Vertex, a.Alias}] = a.Version
		}
	}
	s.mu.Unlock()
	return out, nil
}

// note records a read made elsewhere at the same snapshot (the namespace's
// registry vertex), for the commit to validate.
func (s *snapshotReader) note(r txn.Read) {
	s.mu.Lock()
	s.reads[txnReadKey{r.Vertex, r.Alias}] = r.Version
	s.mu.Unlock()
}

// Reads returns the recorded reads (at one snapshot a vertex has one
// version, so one entry per vertex).
func (s *snapshotReader) Reads() []txn.Read {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]txn.Read, 0, len(s.reads))
	for k, ver := range s.reads {
		out = append(out, txn.Read{Vertex: k.vertex, Alias: k.alias, Version: ver})
	}
	return out
}
