package sim

import (
	"errors"
	"fmt"
	"slices"

	"github.com/weft-db/weft/internal/coord"
	"github.com/weft-db/weft/internal/gatekeeper"
	"github.com/weft-db/weft/internal/shard"
	"github.com/weft-db/weft/internal/store"
	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/vclock"
)

// Online moves (docs/online-moves.md). Every MoveEvery ticks (on average) a
// random key's placement unit moves to another shard, through a gatekeeper,
// as the engine will do it: a store transaction reads the unit's state and
// the access records of its vertices, is stamped and declared like a
// commit, and its commit section (gatekeeper.OrderMove) checks nothing of
// the unit changed, orders the move after every access of the unit and
// points the directory at the new shard; then the hand-off (OpUnitOut to
// the old shard, OpUnitIn with the state to the new one) goes down the FIFO
// channels like any entry. Meanwhile ordinary commits check the directory
// in their commit sections (gatekeeper.OrderCommit), and a shard answers a
// read or program batch for a unit that was not there at the stamp by
// forwarding it (shard.Units.Where). The checkers do not change: the
// history must stay strictly serializable and every shard must equal the
// store, now placed by the store's directory.

// forwardsMax bounds how often one read is forwarded: every forward
// follows a move, so a longer chain means a pointer cycle (a bug).
const forwardsMax = 64

func (w *world) scheduleMoves() {
	if w.cfg.MoveEvery == 0 {
		return
	}
	w.after(int64(1+w.rng.IntN(2*w.cfg.MoveEvery)), func() {
		if !w.faultsOn { // the safety phase only: the liveness phase ends it
			return
		}
		w.move()
		w.scheduleMoves()
	})
}

// move picks a key's unit and a shard that holds no copy of it (graph.Load
// needs handles new to the partition, and the simulation has no GC to
// collect a unit's old copy: txn.Home.Held only grows), and runs the move
// through a random gatekeeper.
func (w *world) move() {
	s := w.srv
	if s == nil {
		return
	}
	u := txn.UnitOf(vertexOf(int64(w.rng.IntN(w.cfg.Keys))), s.dir.Base())
	home := s.dir.HomeOf(u)
	var to []uint32
	for _, n := range s.shards {
		if !slices.Contains(home.Held, uint32(n.id)) {
			to = append(to, uint32(n.id))
		}
	}
	if len(to) == 0 {
		return
	}
	mv := &txn.UnitMove{Unit: u, From: home.Shard, To: to[w.rng.IntN(len(to))]}
	g := w.rng.IntN(len(s.gks))
	st, err := s.stores[g].Begin()
	if errors.Is(err, store.ErrFailed) {
		return // its process is stopping
	}
	if err != nil {
		panic(err)
	}
	base := s.dir.Base()
	// The unit is read on a snapshot of its own, as the engine does: the
	// move's transaction then conflicts with no concurrent write to the
	// tables it scanned, and the commit section's checks of the access and
	// population records alone keep the move correct.
	read := func() (gatekeeper.MoveSeen, error) {
		rs, err := s.st.Begin()
		if err != nil {
			return gatekeeper.MoveSeen{}, err
		}
		defer rs.Discard()
		seen, err := shard.ReadMove(rs, mv, base)
		if err != nil {
			panic(fmt.Sprintf("sim: move %s: reading the unit: %v", mv.Unit, err))
		}
		return seen, nil
	}
	s.gks[g].Move(ctx, st, mv, home, read, func(_ vclock.Stamp, err error) {
		switch {
		case err == nil:
		case errors.Is(err, gatekeeper.ErrOverloaded):
			// the next move will do
		case errors.Is(err, store.ErrFailed):
			// outcome unknown: the restart's rebuild decides
		case errors.Is(err, coord.ErrLeaseExpired):
			// refused outside the lease: nothing done
		default:
			w.stats.MoveAborts++
			w.aborted(err)
		}
	})
}
