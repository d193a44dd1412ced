package engine

import (
	"context"
	"fmt"

	"google.golang.org/grpc"

	"github.com/weft-db/weft/internal/gatekeeper"
	"github.com/weft-db/weft/internal/shard"
	"github.com/weft-db/weft/internal/store"
	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/vclock"
)

// Online moves on a cluster (docs/online-moves.md): the same move
// transaction as DB.MoveUnit, run by a gatekeeper process against the
// shared store, its hand-off carried to the shard processes on the FIFO
// streams (gatekeeper.AppendEntry encodes the unit's state). Every
// gatekeeper routes by its own copy of the directory: the mover switches
// its copy at once; the others find out when a commit's critical section
// says a unit it wrote moved (gatekeeper.ErrUnitMoved: the copy is read
// again from the store and the transaction re-executed), and reads follow
// the shards' forwarding answers meanwhile.

// ClusterMessageBytesMax bounds a message a cluster role receives (gRPC's
// default is 4 MiB): an entry carries a whole transaction's operations
// for a shard, or a moving unit's state.
const ClusterMessageBytesMax = 256 << 20

// MoveBytesMax bounds the state one move of a unit carries to the shard
// processes (the entry holds it twice: MoveOut and MoveIn); a larger
// unit is refused (txn.ErrTooLarge). Moving it in chunks staged at the
// target (docs/online-moves.md) is not built.
const MoveBytesMax = ClusterMessageBytesMax/2 - 1<<20

// ClusterServerOptions are the gRPC server options of every cluster role.
func ClusterServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{grpc.MaxRecvMsgSize(ClusterMessageBytesMax)}
}

// reloadDirectory reads the placement directory from the store.
func (g *ClusterGatekeeper) reloadDirectory() error {
	t, err := g.cfg.Store.Begin()
	if err != nil {
		return err
	}
	defer t.Discard()
	return g.place.Reload(t, g.cfg.Shards)
}

// Directory returns the placement directory as this gatekeeper knows it.
func (g *ClusterGatekeeper) Directory() *txn.Directory { return g.place.Dir() }

// CurrentDirectory implements Mover: the directory read again from the
// store (and kept as this gatekeeper's).
func (g *ClusterGatekeeper) CurrentDirectory(context.Context) (*txn.Directory, error) {
	if err := g.check(); err != nil {
		return nil, err
	}
	if err := g.reloadDirectory(); err != nil {
		return nil, mapStoreErr(err)
	}
	return g.place.Dir(), nil
}

// Moves returns the moves this gatekeeper committed and the reads it
// forwarded since it started.
func (g *ClusterGatekeeper) Moves() (moves, forwards uint64) {
	return g.place.Moves(), g.forwards.Load()
}

// MoveUnit moves placement unit u to shard to while transactions, reads
// and programs go on (DB.MoveUnit's contract).
func (g *ClusterGatekeeper) MoveUnit(ctx context.Context, u txn.Unit, to int) error {
	if err := g.check(); err != nil {
		return err
	}
	d := g.place.Dir()
	if err := checkMoveArgs(d, u, to, g.cfg.Shards); err != nil {
		return err
	}
	return logMove(g.log, u, d.HomeOf(u).Shard, to, func() error { return g.moveUnit(ctx, d, u, to) })
}

// moveUnit is MoveUnit past its checks.
func (g *ClusterGatekeeper) moveUnit(ctx context.Context, d *txn.Directory, u txn.Unit, to int) error {
	if !g.enterCommit() {
		return fmt.Errorf("%w: the gatekeeper is leaving its configuration epoch", ErrOverloaded)
	}
	defer g.inflight.Done()
	st, err := g.cfg.Store.Begin()
	if err != nil {
		return mapStoreErr(err)
	}
	defer st.Discard()
	base := d.Base()
	mv, home, err := planMove(st, u, uint32(to), base)
	if mv == nil || err != nil {
		return err
	}
	ch := make(chan error, 1)
	g.shell.Move(ctx, st, mv, home, func() (gatekeeper.MoveSeen, error) {
		seen, err := readMove(g.cfg.Store, mv, base)
		if n := 0; err == nil {
			if n = gatekeeper.MoveBytes(mv); n > MoveBytesMax {
				err = fmt.Errorf("%w: unit %s holds %d MiB, more than one move carries (%d MiB)", txn.ErrTooLarge, u, n>>20, MoveBytesMax>>20)
			}
		}
		return seen, err
	}, func(_ vclock.Stamp, err error) { ch <- err })
	select {
	case err := <-ch:
		return mapClusterErr(err)
	case <-g.stop:
		select {
		case err := <-ch:
			return mapClusterErr(err)
		default:
			return fmt.Errorf("%w: the gatekeeper stopped after the move was durable: %v", ErrClosed, g.Err())
		}
	}
}

// pinBase pins the store's placement base (txn.BaseKey) to shards unless
// it is pinned already: a cluster's gatekeepers do it when they start, so
// that shards added later start empty and fill by moves (Rebalance)
// instead of every vertex being placed again by the new count.
func pinBase(ctx context.Context, st store.Store, shards int) error {
	return gatekeeper.CommitRetrying(ctx, st, "pinning the placement base", func(c store.Critical) error {
		if _, pinned, err := txn.ReadBase(c, uint32(shards)); err != nil || pinned {
			return err
		}
		return c.Set(txn.BaseKey, txn.EncodeBase(uint32(shards)))
	})
}

// readMove reads the moving unit's state (shard.ReadMove) on a store
// snapshot of its own: the move's transaction keeps in its read set only
// the unit's directory record, so writes elsewhere in the tables the read
// scanned do not abort it. The commit section (gatekeeper.OrderMove)
// checks that the unit's access and population records are still what
// this snapshot saw, which is what makes the state current.
func readMove(s store.Store, mv *txn.UnitMove, base uint32) (gatekeeper.MoveSeen, error) {
	t, err := s.Begin()
	if err != nil {
		return gatekeeper.MoveSeen{}, err
	}
	defer t.Discard()
	return shard.ReadMove(t, mv, base)
}
