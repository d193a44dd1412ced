package dgraph

import (
	"context"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/weft-db/weft/internal/engineapi"
	"github.com/weft-db/weft/internal/txn"
)

// Reader reads vertices at one fixed snapshot. It is the one read path of
// the Dgraph wing: the lookups of a Reads view, the DQL executor
// (package exec) and the API servers (package api) read every vertex of a
// query through one, so that a transaction can record what it read (vertex
// and version, for OCC validation at commit) and see its own writes (an
// overlay). SnapshotReader is the implementation over an engine.
type Reader interface {
	GetVertex(ctx context.Context, v engineapi.VertexRef, opts engineapi.ReadOptions) (*engineapi.Vertex, error)
}

// BatchReader is a Reader that also reads many vertices in one go (one
// engine request per shard involved: engineapi.BatchReader). ReadVertices
// uses it when a Reader has it, and reads vertex by vertex otherwise.
type BatchReader interface {
	Reader
	GetVertices(ctx context.Context, refs []engineapi.VertexRef, opts engineapi.ReadOptions) ([]*engineapi.Vertex, error)
}

// ReadVertices reads refs through r: in one batched read when r is a
// BatchReader, else with one GetVertex per ref, parallelMax at a time (1:
// in order), stopping at the first error. The answer has one Vertex per
// ref, in order.
func ReadVertices(ctx context.Context, r Reader, refs []engineapi.VertexRef, opts engineapi.ReadOptions, parallelMax int) ([]*engineapi.Vertex, error) {
	if br, ok := r.(BatchReader); ok {
		return br.GetVertices(ctx, refs, opts)
	}
	out := make([]*engineapi.Vertex, len(refs))
	err := Parallel(ctx, len(refs), parallelMax, func(i int) error {
		v, err := r.GetVertex(ctx, refs[i], opts)
		out[i] = v
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// SnapshotReader reads an engine at one snapshot and, when recording,
// keeps the read-set entry (vertex and version) of every vertex (and
// alias) read, for the commit to validate. Safe for concurrent use (an
// executor reads in parallel).
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

var _ BatchReader = (*SnapshotReader)(nil)

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
	s.noteVertices(out)
	return out, nil
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
	s.noteVertices(out...)
	return out, nil
}

// noteVertices records the read-set entries of vs.
func (s *SnapshotReader) noteVertices(vs ...*engineapi.Vertex) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, out := range vs {
		s.reads[readKey{out.Read.Vertex, out.Read.Alias}] = out.Read.Version
		if a := out.AliasRead; a != nil {
			s.reads[readKey{a.Vertex, a.Alias}] = a.Version
		}
	}
}

// Note records a read made elsewhere at the same snapshot (the Dgraph
// API's namespace registry vertex), for the commit to validate. It records
// whether or not the reader records its own reads.
func (s *SnapshotReader) Note(r txn.Read) {
	s.mu.Lock()
	s.reads[readKey{r.Vertex, r.Alias}] = r.Version
	s.mu.Unlock()
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
