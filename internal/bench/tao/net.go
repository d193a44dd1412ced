package tao

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/weft-db/weft/client/weft"
	"github.com/weft-db/weft/internal/api"
	"github.com/weft-db/weft/internal/engine"
)

// netBackend drives the engine through `weft serve`'s front end: the real
// gRPC server (internal/api) on a loopback port, and the Go client
// (client/weft) over conns connections, shared round-robin by the clients
// (gRPC multiplexes concurrent calls over each). Programs go over the
// client's RunStream streams (streams per connection), or as unary calls
// when streams < 0.
type netBackend struct {
	srv       *api.Server
	conns     []*weft.Client
	next      atomic.Uint64
	nodeTail  string
	edgesTail string
}

func newNetBackend(db engine.API, conns, streams int, nodeEdges bool, limit int) (*netBackend, error) {
	cfg := api.DefaultConfig()
	cfg.GRPCAddr, cfg.HTTPAddr = "127.0.0.1:0", ""
	srv, err := api.NewServer(db, cfg)
	if err != nil {
		return nil, err
	}
	if err := srv.Start(); err != nil {
		return nil, err
	}
	b := &netBackend{srv: srv, nodeTail: nodeTail(nodeEdges), edgesTail: fmt.Sprintf(`","limit":%d}`, limit)}
	for range max(conns, 1) {
		c, err := weft.Dial(srv.GRPCAddr(), weft.Options{Streams: max(streams, 0), NoStream: streams < 0})
		if err != nil {
			b.close()
			return nil, err
		}
		b.conns = append(b.conns, c)
	}
	return b, nil
}

func (b *netBackend) client() *weft.Client {
	return b.conns[b.next.Add(1)%uint64(len(b.conns))]
}

func (b *netBackend) run(ctx context.Context, prog string, params []byte) ([]byte, error) {
	return b.client().RunRaw(ctx, "", prog, params)
}

func (b *netBackend) getNode(ctx context.Context, h string) (bool, error) {
	var buf [64]byte
	out, err := b.run(ctx, "get_node", nodeParams(buf[:0], h, b.nodeTail))
	if err != nil {
		return false, err
	}
	return nodeFound(out)
}

func (b *netBackend) getEdges(ctx context.Context, h string, _ int) (int, error) {
	var buf [64]byte
	out, err := b.run(ctx, "get_edges", nodeParams(buf[:0], h, b.edgesTail))
	if err != nil {
		return 0, err
	}
	return edgesReturned(out)
}

func (b *netBackend) countEdges(ctx context.Context, h string) (int, error) {
	var buf [64]byte
	out, err := b.run(ctx, "count_edges", nodeParams(buf[:0], h, `"}`))
	if err != nil {
		return 0, err
	}
	return countResult(out)
}

func (b *netBackend) createEdge(ctx context.Context, src, edge, dst string) error {
	tx, err := b.client().Begin(ctx)
	if err != nil {
		return err
	}
	tx.CreateEdge(weft.Handle(src), edge, weft.Handle(dst))
	_, err = tx.Commit(ctx)
	return err
}

func (b *netBackend) deleteEdge(ctx context.Context, src string, limit int, r *rand.Rand) error {
	tx, err := b.client().Begin(ctx)
	if err != nil {
		return err
	}
	v, err := tx.GetVertex(ctx, weft.Handle(src), weft.ReadOptions{NoProps: true, NoAliases: true, EdgesMax: limit})
	if err != nil {
		return err
	}
	if !v.Exists || len(v.Edges) == 0 {
		return errNoEdges
	}
	tx.DeleteEdge(weft.Handle(src), v.Edges[r.IntN(len(v.Edges))].Handle)
	_, err = tx.Commit(ctx)
	return err
}

func (b *netBackend) status(ctx context.Context) (*engine.Status, error) {
	s, err := b.client().Status(ctx)
	if err != nil {
		return nil, err
	}
	return &engine.Status{Gatekeepers: s.Gatekeepers, Shards: s.Shards, Vertices: s.Vertices, Edges: s.Edges,
		Epoch: s.Epoch, Commits: s.Commits, Aborts: s.Aborts, Programs: s.Programs, KronosCalls: s.KronosCalls}, nil
}

func (b *netBackend) retryable(err error) bool { return weft.IsRetryable(err) }

func (b *netBackend) close() error {
	var errs []error
	for _, c := range b.conns {
		errs = append(errs, c.Close())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	b.srv.Stop(ctx)
	return errors.Join(errs...)
}

// NewClientBackend is the backend over conns, client connections to one
// server (a gatekeeper of weft bench scale's cluster) that the caller owns:
// the net mode's operations, without a server of its own to stop.
func NewClientBackend(conns []*weft.Client, nodeEdges bool, limit int) Backend {
	return clientBackend{&netBackend{conns: conns, nodeTail: nodeTail(nodeEdges), edgesTail: fmt.Sprintf(`","limit":%d}`, limit)}}
}

// clientBackend is netBackend over connections it does not own.
type clientBackend struct{ *netBackend }

// close leaves the connections to their owner.
func (clientBackend) close() error { return nil }
