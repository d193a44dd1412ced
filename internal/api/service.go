package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/weft-db/weft/internal/engine"
	"github.com/weft-db/weft/internal/txn"
)

// service is what both faces call: request checks plus the engine call. It
// holds no state of its own.
type service struct {
	db engine.API
}

// errNoAnswer guards against an engine answering neither a result nor an error.
var errNoAnswer = errors.New("api: engine returned no result and no error")

// snapshot resolves a request's snapshot token; an empty one means a fresh
// snapshot (a one-shot read), which the answer reports back.
func (s service) snapshot(ctx context.Context, token string) (engine.Snapshot, error) {
	if token != "" {
		return engine.Snapshot{Token: token}, nil
	}
	return s.db.Begin(ctx)
}

func (s service) getVertex(ctx context.Context, token string, ref engine.VertexRef, opts engine.ReadOptions) (*engine.Vertex, engine.Snapshot, error) {
	if err := txn.ValidName("vertex", ref.Name, txn.HandleLenMax); err != nil {
		return nil, engine.Snapshot{}, err
	}
	if opts.EdgesMax < 0 {
		return nil, engine.Snapshot{}, invalid(fmt.Sprintf("edges_max %d is negative", opts.EdgesMax))
	}
	snap, err := s.snapshot(ctx, token)
	if err != nil {
		return nil, snap, err
	}
	v, err := s.db.GetVertex(ctx, snap, ref, opts)
	if err == nil && v == nil {
		err = errNoAnswer
	}
	return v, snap, err
}

// Batched reads: at most VerticesMax vertices per call, and at most
// VerticesEdgesMax out-edges in all (edges_max per vertex defaults to, and
// may be at most, VerticesEdgesMax / the vertices asked, capped at
// EdgesMaxDefault), so one answer's size is bounded.
const (
	VerticesMax      = 1000
	VerticesEdgesMax = 100_000
)

// tooManyVertices refuses a batched read of n > VerticesMax vertices.
func tooManyVertices(n int) error {
	return invalid(fmt.Sprintf("vertices: %d asked for, at most %d in one call", n, VerticesMax))
}

// getVertices reads refs at one snapshot (a fresh one for an empty token),
// each as getVertex would, in order.
func (s service) getVertices(ctx context.Context, token string, refs []engine.VertexRef, opts engine.ReadOptions) ([]*engine.Vertex, engine.Snapshot, error) {
	switch {
	case len(refs) == 0:
		return nil, engine.Snapshot{}, invalid("vertices: none asked for")
	case len(refs) > VerticesMax:
		return nil, engine.Snapshot{}, tooManyVertices(len(refs))
	case opts.EdgesMax < 0:
		return nil, engine.Snapshot{}, invalid(fmt.Sprintf("edges_max %d is negative", opts.EdgesMax))
	}
	for i, ref := range refs {
		if err := txn.ValidName(fmt.Sprintf("vertices[%d]", i), ref.Name, txn.HandleLenMax); err != nil {
			return nil, engine.Snapshot{}, err
		}
	}
	per := min(engine.EdgesMaxDefault, VerticesEdgesMax/len(refs))
	switch {
	case opts.EdgesMax == 0:
		opts.EdgesMax = per
	case opts.EdgesMax > per:
		return nil, engine.Snapshot{}, invalid(fmt.Sprintf("edges_max %d for %d vertices: at most %d (%d edges in all, %d per vertex)",
			opts.EdgesMax, len(refs), per, VerticesEdgesMax, engine.EdgesMaxDefault))
	}
	snap, err := s.snapshot(ctx, token)
	if err != nil {
		return nil, snap, err
	}
	vs, _, err := engine.GetVertices(ctx, s.db, snap, refs, opts)
	if err == nil && len(vs) != len(refs) {
		err = errNoAnswer
	}
	return vs, snap, err
}

func (s service) getEdge(ctx context.Context, token string, src engine.VertexRef, edge string) (*engine.Edge, engine.Snapshot, error) {
	if err := txn.ValidName("source vertex", src.Name, txn.HandleLenMax); err != nil {
		return nil, engine.Snapshot{}, err
	}
	if err := txn.ValidName("edge", edge, txn.HandleLenMax); err != nil {
		return nil, engine.Snapshot{}, err
	}
	snap, err := s.snapshot(ctx, token)
	if err != nil {
		return nil, snap, err
	}
	e, err := s.db.GetEdge(ctx, snap, src, edge)
	if err == nil && e == nil {
		err = errNoAnswer
	}
	return e, snap, err
}

func (s service) commit(ctx context.Context, reads []txn.Read, ops []txn.Op) (*engine.CommitResult, error) {
	if err := checkCommit(reads, ops); err != nil {
		return nil, err
	}
	res, err := s.db.Commit(ctx, reads, ops)
	if err == nil && res == nil {
		err = errNoAnswer
	}
	return res, err
}

// run checks the parameters are one JSON value (empty: {}) and runs the program.
func (s service) run(ctx context.Context, program string, params []byte, at string) (json.RawMessage, error) {
	if err := txn.ValidName("program", program, txn.KeyLenMax); err != nil {
		return nil, err
	}
	params = bytes.TrimSpace(params)
	if len(params) == 0 {
		params = []byte("{}")
	}
	if !json.Valid(params) { // cheaper than decoding; the decoder words the error
		var raw json.RawMessage
		return nil, invalid("params: " + jsonErrorMessage(json.Unmarshal(params, &raw)))
	}
	raw := json.RawMessage(params)
	var snap *engine.Snapshot
	if at != "" {
		snap = &engine.Snapshot{Token: at}
	}
	out, err := s.db.Run(ctx, program, raw, snap)
	if err != nil {
		return nil, err
	}
	if !json.Valid(out) {
		return nil, fmt.Errorf("api: program %q returned invalid JSON", program)
	}
	return out, nil
}

func (s service) status(ctx context.Context) (*engine.Status, error) {
	st, err := s.db.Status(ctx)
	if err == nil && st == nil {
		err = errNoAnswer
	}
	return st, err
}
