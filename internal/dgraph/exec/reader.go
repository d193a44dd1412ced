package exec

import (
	"context"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/weft-db/weft/internal/engineapi"
	"github.com/weft-db/weft/internal/txn"
)

// Reader reads vertices at one snapshot. Every read a query makes goes
// through it, so that a transaction can record what it read (for OCC
// validation at commit).
type Reader interface {
	GetVertex(ctx context.Context, v engineapi.VertexRef, opts engineapi.ReadOptions) (*engineapi.Vertex, error)
}

// BatchReader is a Reader that also reads many vertices in one go (one
// engine request per shard involved: engineapi.BatchReader). The executor
// uses it for the predicate placement's per-predicate reads when the
// Reader has it, and reads vertex by vertex otherwise.
type BatchReader interface {
	Reader
	GetVertices(ctx context.Context, refs []engineapi.VertexRef, opts engineapi.ReadOptions) ([]*engineapi.Vertex, error)
}

// SnapshotReader reads an engine at one snapshot and, when recording,
// keeps the read-set entry (vertex and version) of every vertex read. Safe
// for concurrent use.
type SnapshotReader struct {
	db     engineapi.API
	snap   engineapi.Snapshot
	record bool
	mu     sync.Mutex
	reads  map[readKey][]byte
	calls  atomic.Int64
}

type readKey struct {
	vertex string
	alias  bool
}

// NewSnapshotReader reads db at snap, recording txn.Read entries when record is set.
func NewSnapshotReader(db engineapi.API, snap engineapi.Snapshot, record bool) *SnapshotReader {
	return &SnapshotReader{db: db, snap: snap, record: record, reads: map[readKey][]byte{}}
}

// Snapshot is the snapshot the reader reads at.
func (s *SnapshotReader) Snapshot() engineapi.Snapshot { return s.snap }

// GetVertex implements Reader.
func (s *SnapshotReader) GetVertex(ctx context.Context, v engineapi.VertexRef, opts engineapi.ReadOptions) (*engineapi.Vertex, error) {
	s.calls.Add(1)
	out, err := s.db.GetVertex(ctx, s.snap, v, opts)
	if err != nil || !s.record {
		return out, err
	}
	s.note(out)
	return out, nil
}

// note records v's read-set entries.
func (s *SnapshotReader) note(vs ...*engineapi.Vertex) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, out := range vs {
		s.reads[readKey{out.Read.Vertex, out.Read.Alias}] = out.Read.Version
		if a := out.AliasRead; a != nil {
			s.reads[readKey{a.Vertex, a.Alias}] = a.Version
		}
	}
}

// GetVertices implements BatchReader: one batched engine read
// (engineapi.GetVertices), recorded as GetVertex records each vertex, and
// counted as the engine requests it made.
func (s *SnapshotReader) GetVertices(ctx context.Context, refs []engineapi.VertexRef, opts engineapi.ReadOptions) ([]*engineapi.Vertex, error) {
	out, requests, err := engineapi.GetVertices(ctx, s.db, s.snap, refs, opts)
	s.calls.Add(int64(requests))
	if err != nil || !s.record {
		return out, err
	}
	s.note(out...)
	return out, nil
}

// Calls is the number of engine requests so far: a query's internal calls
// (a GetVertex is one; a batched read is one per shard it asked).
func (s *SnapshotReader) Calls() int64 { return s.calls.Load() }

// Reads returns the recorded reads, one per vertex (or alias), sorted by
// name: at one snapshot a vertex has one version, so repeats are equal.
func (s *SnapshotReader) Reads() []txn.Read {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]txn.Read, 0, len(s.reads))
	for k, ver := range s.reads {
		out = append(out, txn.Read{Vertex: k.vertex, Alias: k.alias, Version: ver})
	}
	slices.SortFunc(out, func(a, b txn.Read) int {
		if c := strings.Compare(a.Vertex, b.Vertex); c != 0 {
			return c
		}
		switch {
		case a.Alias == b.Alias:
			return 0
		case a.Alias:
			return 1
		}
		return -1
	})
	return out
}
