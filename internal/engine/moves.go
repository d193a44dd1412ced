package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/weft-db/weft/internal/gatekeeper"
	"github.com/weft-db/weft/internal/store"
	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/vclock"
)

// Online moves of placement units (docs/online-moves.md): MoveUnit runs a
// move as a transaction of a gatekeeper, the protocol the simulation checks
// (internal/sim/moves.go). Commits check the directory in their commit
// sections (gatekeeper.OrderCommit, gknode.go), and shards forward reads
// and program hops for units they did not have at the stamp
// (shard.Shell.Locate).

// forwardsMax bounds how often one read is forwarded: every forward follows
// a move, so a longer chain is a bug.
const forwardsMax = 64

// MoveUnit moves placement unit u (txn.UnitOf: a slot of vertex handles and
// aliases, or a placement group) to shard to while transactions, reads and
// programs go on: reads at stamps before the move are still answered by
// the shard it left, later ones by the new one, and commits that routed
// the unit by the old directory abort (retryable). It fails with a
// retryable txn.ErrAborted when the unit changed while the move read it
// (retry), and with ErrBadRequest for a shard that still holds a copy of
// the unit: a unit does not yet move back to a shard it left (the copy it
// left there is not tracked as collected). Moving a unit to where it is
// does nothing. The move reads the store's tables once for a slot, only
// the group's keys for a group.
func (db *DB) MoveUnit(ctx context.Context, u txn.Unit, to int) error {
	if err := db.check(); err != nil {
		return err
	}
	d := db.dir.Load()
	if err := checkMoveArgs(d, u, to, db.cfg.Shards); err != nil {
		return err
	}
	return logMove(db.log, u, d.HomeOf(u).Shard, to, func() error { return db.gk().move(ctx, u, uint32(to)) })
}

// logMove runs move, an online move of u from shard from to shard to, and
// logs its start and its end: done (INFO, with its duration) or failed
// (WARN, with the error). A move to where u is already logs nothing.
// Moves are not rate-limited: each is one operator's or rebalance's
// request, and a rebalance moves each placement slot at most once.
func logMove(log *slog.Logger, u txn.Unit, from uint32, to int, move func() error) error {
	if int(from) == to {
		return move()
	}
	log.Info("move started", "unit", u.String(), "from_shard", from, "to_shard", to)
	t0 := time.Now()
	err := move()
	if err != nil {
		log.Warn("move failed", "unit", u.String(), "from_shard", from, "to_shard", to, "err", err)
		return err
	}
	log.Info("move done", "unit", u.String(), "from_shard", from, "to_shard", to, "took", time.Since(t0).Round(time.Millisecond).String())
	return nil
}

// checkMoveArgs checks a move's unit and target shard of shards.
func checkMoveArgs(d *txn.Directory, u txn.Unit, to, shards int) error {
	switch {
	case to < 0 || to >= shards:
		return fmt.Errorf("%w: shard %d of %d", ErrBadRequest, to, shards)
	case u.Group == "" && u.Slot >= txn.SlotsPerShard*d.Base():
		return fmt.Errorf("%w: slot %d of %d", ErrBadRequest, u.Slot, txn.SlotsPerShard*d.Base())
	}
	return nil
}

// planMove reads unit u's home in st (its directory record, else its base
// home over base) and returns the move to shard to, or nil when the unit
// is there already. ErrBadRequest: to still holds the copy u left there.
func planMove(st store.Txn, u txn.Unit, to, base uint32) (*txn.UnitMove, txn.Home, error) {
	home := txn.BaseHome(u, base)
	if b, ok, err := st.Get(txn.DirKey(u)); err != nil {
		return nil, home, mapStoreErr(err)
	} else if ok {
		if home, err = txn.DecodeHome(b); err != nil {
			return nil, home, err
		}
	}
	if home.Shard == to {
		return nil, home, nil
	}
	if slices.Contains(home.Held, to) {
		return nil, home, fmt.Errorf("%w: shard %d still holds the copy unit %s left there", ErrBadRequest, to, u)
	}
	return &txn.UnitMove{Unit: u, From: home.Shard, To: to}, home, nil
}

// Moves returns the moves committed and the reads and program hops
// forwarded since Open.
func (db *DB) Moves() (moves, forwards uint64) { return db.moves.Load(), db.forwards.Load() }

// Directory returns the current placement directory.
func (db *DB) Directory() *txn.Directory { return db.dir.Load() }

// CurrentDirectory implements Mover: in one process every move is in dir.
func (db *DB) CurrentDirectory(context.Context) (*txn.Directory, error) {
	if err := db.check(); err != nil {
		return nil, err
	}
	return db.dir.Load(), nil
}

// move is MoveUnit at gatekeeper g: the unit's home read in the move's
// store transaction, then the shell's move (gatekeeper.Shell.Move: stamp,
// read the unit at a snapshot of its own, declare both shards, commit with
// gatekeeper.OrderMove, adopt the new home, hand MoveOut and MoveIn to the
// shards).
func (g *gkNode) move(ctx context.Context, u txn.Unit, to uint32) error {
	db := g.db
	st, err := db.st.Begin()
	if err != nil {
		return mapStoreErr(err)
	}
	base := db.dir.Load().Base()
	mv, home, err := planMove(st, u, to, base)
	if mv == nil || err != nil {
		st.Discard()
		return err
	}
	ch := make(chan error, 1)
	g.shell.Move(ctx, st, mv, home, func() (gatekeeper.MoveSeen, error) { return readMove(db.st, mv, base) },
		func(_ vclock.Stamp, err error) { ch <- err })
	err = <-ch
	if errors.Is(err, gatekeeper.ErrOverloaded) {
		return fmt.Errorf("%w: %v", ErrOverloaded, err)
	}
	return mapStoreErr(err)
}
