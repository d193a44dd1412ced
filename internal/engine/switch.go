package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/weft-db/weft/internal/nodeprog"
	"github.com/weft-db/weft/internal/txn"
)

// Switch is an API whose backend changes while its front ends keep serving:
// a gatekeeper process of a cluster builds a new ClusterGatekeeper in every
// configuration epoch (docs/cluster.md, failover). Between two backends
// every call fails with ErrOverloaded, which clients retry: nothing was
// done. A call that reached the old backend finishes there (or fails as the
// old backend closes).
type Switch struct {
	mu    sync.RWMutex
	api   API
	why   string
	progs []ProgramInfo
}

var _ API = (*Switch)(nil)

// NewSwitch returns a Switch without a backend; why says, in errors, why.
// Programs lists a cluster gatekeeper's programs from the start.
func NewSwitch(why string) *Switch { return &Switch{why: why, progs: programsOf(nodeprog.Builtins())} }

// Set makes a the backend and returns the previous one (nil if none).
func (s *Switch) Set(a API) API {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.api
	s.api = a
	if a != nil {
		s.progs = a.Programs()
	}
	return old
}

// Clear removes the backend (calls fail with ErrOverloaded and why) and
// returns it, for the caller to drain and close.
func (s *Switch) Clear(why string) API {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.api
	s.api, s.why = nil, why
	return old
}

// Current returns the backend, or nil between backends.
func (s *Switch) Current() API {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.api
}

func (s *Switch) get() (API, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.api == nil {
		return nil, fmt.Errorf("%w: %s", ErrOverloaded, s.why)
	}
	return s.api, nil
}

// Begin implements API.
func (s *Switch) Begin(ctx context.Context) (Snapshot, error) {
	a, err := s.get()
	if err != nil {
		return Snapshot{}, err
	}
	return a.Begin(ctx)
}

// GetVertex implements API.
func (s *Switch) GetVertex(ctx context.Context, snap Snapshot, v VertexRef, opts ReadOptions) (*Vertex, error) {
	a, err := s.get()
	if err != nil {
		return nil, err
	}
	return a.GetVertex(ctx, snap, v, opts)
}

// GetVertices implements BatchReader: the backend's batched read when it
// has one (a ClusterGatekeeper does), else vertex by vertex
// (engine.GetVertices).
func (s *Switch) GetVertices(ctx context.Context, snap Snapshot, refs []VertexRef, opts ReadOptions) ([]*Vertex, int, error) {
	a, err := s.get()
	if err != nil {
		return nil, 0, err
	}
	return GetVertices(ctx, a, snap, refs, opts)
}

// GetEdge implements API.
func (s *Switch) GetEdge(ctx context.Context, snap Snapshot, src VertexRef, edge string) (*Edge, error) {
	a, err := s.get()
	if err != nil {
		return nil, err
	}
	return a.GetEdge(ctx, snap, src, edge)
}

// Commit implements API.
func (s *Switch) Commit(ctx context.Context, reads []txn.Read, ops []txn.Op) (*CommitResult, error) {
	a, err := s.get()
	if err != nil {
		return nil, err
	}
	return a.Commit(ctx, reads, ops)
}

// Run implements API.
func (s *Switch) Run(ctx context.Context, program string, params json.RawMessage, at *Snapshot) (json.RawMessage, error) {
	a, err := s.get()
	if err != nil {
		return nil, err
	}
	return a.Run(ctx, program, params, at)
}

// Programs implements API: the last backend's list (the programs do not
// change between epochs).
func (s *Switch) Programs() []ProgramInfo {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.progs
}

// Status implements API.
func (s *Switch) Status(ctx context.Context) (*Status, error) {
	a, err := s.get()
	if err != nil {
		return nil, err
	}
	return a.Status(ctx)
}

// MoveUnit implements Mover over the current backend.
func (s *Switch) MoveUnit(ctx context.Context, u txn.Unit, to int) error {
	a, err := s.get()
	if err != nil {
		return err
	}
	m, ok := a.(Mover)
	if !ok {
		return fmt.Errorf("%w: this engine does not move placement units", ErrBadRequest)
	}
	return m.MoveUnit(ctx, u, to)
}

// Directory implements Mover: the current backend's (nil between backends).
func (s *Switch) Directory() *txn.Directory {
	if m, ok := s.Current().(Mover); ok {
		return m.Directory()
	}
	return nil
}

// CurrentDirectory implements Mover over the current backend.
func (s *Switch) CurrentDirectory(ctx context.Context) (*txn.Directory, error) {
	a, err := s.get()
	if err != nil {
		return nil, err
	}
	m, ok := a.(Mover)
	if !ok {
		return nil, fmt.Errorf("%w: this engine does not move placement units", ErrBadRequest)
	}
	return m.CurrentDirectory(ctx)
}
