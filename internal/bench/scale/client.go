package scale

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/weft-db/weft/client/weft"
	"github.com/weft-db/weft/internal/engine"
	"github.com/weft-db/weft/internal/txn"
)

// loadAPI is the engine.API the TAO loader (tao.LoadGraph) commits through:
// Commit sends each transaction to the gatekeepers in turn over the Go
// client; retryable answers match engine.ErrAborted, as the loader expects.
// Only what the loader and tao.Settle call is served: Commit and Status.
// Begin, GetVertex, GetEdge and Run answer errLoadAPI.
type loadAPI struct {
	gks  []*weft.Client
	next atomic.Uint64
}

var errLoadAPI = errors.New("bench: the scale loader's client adapter serves only Commit, Programs and Status")

func (l *loadAPI) Begin(context.Context) (engine.Snapshot, error) {
	return engine.Snapshot{}, errLoadAPI
}

func (l *loadAPI) GetVertex(context.Context, engine.Snapshot, engine.VertexRef, engine.ReadOptions) (*engine.Vertex, error) {
	return nil, errLoadAPI
}

func (l *loadAPI) GetEdge(context.Context, engine.Snapshot, engine.VertexRef, string) (*engine.Edge, error) {
	return nil, errLoadAPI
}

func (l *loadAPI) Run(context.Context, string, json.RawMessage, *engine.Snapshot) (json.RawMessage, error) {
	return nil, errLoadAPI
}

func (l *loadAPI) Programs() []engine.ProgramInfo { return nil }

// Commit sends ops (create_vertex and create_edge: what the loader makes)
// without reads: a transaction without reads needs no snapshot.
func (l *loadAPI) Commit(ctx context.Context, reads []txn.Read, ops []txn.Op) (*engine.CommitResult, error) {
	if len(reads) > 0 {
		return nil, fmt.Errorf("%w (a commit with reads)", errLoadAPI)
	}
	c := l.gks[l.next.Add(1)%uint64(len(l.gks))]
	tx := c.BeginAt("")
	for _, op := range ops {
		switch op.Kind {
		case txn.CreateVertex:
			tx.CreateVertex(op.Vertex)
		case txn.CreateEdge:
			tx.CreateEdge(weft.Handle(op.Vertex), op.Edge, weft.Handle(op.Dst))
		default:
			return nil, fmt.Errorf("%w (operation %v)", errLoadAPI, op.Kind)
		}
	}
	res, err := tx.Commit(ctx)
	if err != nil {
		if weft.IsRetryable(err) {
			return nil, fmt.Errorf("%w: %w", engine.ErrAborted, err)
		}
		return nil, err
	}
	return &engine.CommitResult{Handles: res.Handles, Snapshot: engine.Snapshot{Token: res.Snapshot}}, nil
}

// Status is the first gatekeeper's (the graph's size is every shard's sum).
func (l *loadAPI) Status(ctx context.Context) (*engine.Status, error) {
	s, err := l.gks[0].Status(ctx)
	if err != nil {
		return nil, err
	}
	return &engine.Status{Gatekeepers: s.Gatekeepers, Shards: s.Shards, Vertices: s.Vertices, Edges: s.Edges,
		Epoch: s.Epoch, Commits: s.Commits, Aborts: s.Aborts, Programs: s.Programs, KronosCalls: s.KronosCalls}, nil
}

var _ engine.API = (*loadAPI)(nil)
