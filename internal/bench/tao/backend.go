package tao

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"

	"github.com/weft-db/weft/internal/engine"
	"github.com/weft-db/weft/internal/txn"
)

// Backend is what a TAO client calls: the five operations over one way of
// reaching the engine (in-process engine.API, or the network client). The
// write methods make one attempt: retrying belongs to the caller, which
// counts the retries. Implementations are safe for concurrent use.
type Backend interface {
	// getNode runs get_node; found is false when the vertex is missing.
	getNode(ctx context.Context, h string) (found bool, err error)
	// getEdges runs get_edges with limit and returns the edges it returned.
	getEdges(ctx context.Context, h string, limit int) (int, error)
	// countEdges runs count_edges.
	countEdges(ctx context.Context, h string) (int, error)
	// createEdge commits one create_edge without reads.
	createEdge(ctx context.Context, src, edge, dst string) error
	// deleteEdge reads up to limit out-edges of src at a fresh snapshot
	// (GetVertex: get_edges with a read set), deletes one picked by r and
	// commits with the read. It answers errNoEdges when src has none.
	deleteEdge(ctx context.Context, src string, limit int, r *rand.Rand) error
	status(ctx context.Context) (*engine.Status, error)
	// retryable reports a failure the client retries (a conflict, a
	// snapshot collected meanwhile, overload).
	retryable(err error) bool
	close() error
}

var errNoEdges = errors.New("bench: vertex has no out-edges")

// Program parameters are built by hand: handles are "v" and digits, so they
// need no escaping, and json.Marshal would cost the client more than the
// call it measures.
func nodeParams(buf []byte, h string, tail string) []byte {
	buf = append(buf[:0], `{"node":"`...)
	buf = append(buf, h...)
	return append(buf, tail...)
}

// Results are checked, not decoded: a client that unmarshalled every edge
// would spend more CPU than the engine in an in-process run. get_edges and
// get_node answer null for a missing vertex.
func edgesReturned(out []byte) (int, error) {
	if bytes.Equal(out, []byte("null")) {
		return 0, nil
	}
	if !bytes.HasPrefix(out, []byte(`{"edges":[`)) {
		return 0, fmt.Errorf("bench: get_edges answered %.80q", out)
	}
	return bytes.Count(out, []byte(`"handle":`)), nil
}

func countResult(out []byte) (int, error) {
	if bytes.Equal(out, []byte("null")) {
		return 0, nil
	}
	s, ok := bytes.CutPrefix(out, []byte(`{"count":`))
	s, ok2 := bytes.CutSuffix(s, []byte(`}`))
	n, err := strconv.Atoi(string(s))
	if !ok || !ok2 || err != nil {
		return 0, fmt.Errorf("bench: count_edges answered %.80q", out)
	}
	return n, nil
}

func nodeFound(out []byte) (bool, error) {
	if bytes.Equal(out, []byte("null")) {
		return false, nil
	}
	if !bytes.HasPrefix(out, []byte(`{"handle":`)) {
		return false, fmt.Errorf("bench: get_node answered %.80q", out)
	}
	return true, nil
}

// inprocBackend calls the engine in the same process.
type inprocBackend struct {
	db        engine.API
	nodeTail  string // get_node's parameters after the handle
	edgesTail string
}

func newInprocBackend(db engine.API, nodeEdges bool, limit int) *inprocBackend {
	return &inprocBackend{db: db, nodeTail: nodeTail(nodeEdges), edgesTail: fmt.Sprintf(`","limit":%d}`, limit)}
}

func nodeTail(withEdges bool) string {
	if withEdges {
		return `"}`
	}
	return `","edges":false}`
}

func (b *inprocBackend) run(ctx context.Context, prog string, params []byte) ([]byte, error) {
	return b.db.Run(ctx, prog, json.RawMessage(params), nil)
}

func (b *inprocBackend) getNode(ctx context.Context, h string) (bool, error) {
	var buf [64]byte
	out, err := b.run(ctx, "get_node", nodeParams(buf[:0], h, b.nodeTail))
	if err != nil {
		return false, err
	}
	return nodeFound(out)
}

func (b *inprocBackend) getEdges(ctx context.Context, h string, _ int) (int, error) {
	var buf [64]byte
	out, err := b.run(ctx, "get_edges", nodeParams(buf[:0], h, b.edgesTail))
	if err != nil {
		return 0, err
	}
	return edgesReturned(out)
}

func (b *inprocBackend) countEdges(ctx context.Context, h string) (int, error) {
	var buf [64]byte
	out, err := b.run(ctx, "count_edges", nodeParams(buf[:0], h, `"}`))
	if err != nil {
		return 0, err
	}
	return countResult(out)
}

func (b *inprocBackend) createEdge(ctx context.Context, src, edge, dst string) error {
	_, err := b.db.Commit(ctx, nil, []txn.Op{{Kind: txn.CreateEdge, Vertex: src, Edge: edge, Dst: dst}})
	return err
}

func (b *inprocBackend) deleteEdge(ctx context.Context, src string, limit int, r *rand.Rand) error {
	snap, err := b.db.Begin(ctx)
	if err != nil {
		return err
	}
	v, err := b.db.GetVertex(ctx, snap, engine.VertexRef{Name: src}, engine.ReadOptions{Edges: true, EdgesMax: limit})
	if err != nil {
		return err
	}
	if !v.Exists || len(v.Edges) == 0 {
		return errNoEdges
	}
	e := v.Edges[r.IntN(len(v.Edges))]
	_, err = b.db.Commit(ctx, []txn.Read{v.Read}, []txn.Op{{Kind: txn.DeleteEdge, Vertex: src, Edge: e.Handle}})
	return err
}

func (b *inprocBackend) status(ctx context.Context) (*engine.Status, error) { return b.db.Status(ctx) }

func (b *inprocBackend) retryable(err error) bool { return retryable(err) }

func (b *inprocBackend) close() error { return nil }
