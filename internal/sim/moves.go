package sim

import (
	"fmt"
	"slices"

	"github.com/weft-db/weft/internal/check"
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
	w.syncThen(s, g, func() { w.moveStamped(s, g, mv) })
}

// moveStamped is the move's transaction at gatekeeper g.
func (w *world) moveStamped(s *server, g int, mv *txn.UnitMove) {
	st, err := s.st.Begin()
	if err != nil {
		panic(err)
	}
	ts, err := s.gks[g].BeginCommit()
	if err != nil {
		st.Discard()
		return // overloaded: the next move will do
	}
	// The unit is read on a snapshot of its own, as the engine does: the
	// move's transaction then conflicts with no concurrent write to the
	// tables it scanned, and the commit section's checks of the access
	// and population records alone keep the move correct.
	rs, err := s.st.Begin()
	if err != nil {
		panic(err)
	}
	seen, err := shard.ReadMove(rs, mv, s.dir.Base())
	rs.Discard()
	if err != nil {
		panic(fmt.Sprintf("sim: move %s: reading the unit: %v", mv.Unit, err))
	}
	ops := []txn.ShardOp{{Shard: mv.From, Kind: txn.OpUnitOut, Move: mv}, {Shard: mv.To, Kind: txn.OpUnitIn, Move: mv}}
	if err := s.gks[g].Declare(ts, []uint32{mv.From, mv.To}); err != nil {
		panic(err)
	}
	w.dispatch(s, g)
	s.movesInFlight++
	critical := func() {
		defer func() { s.movesInFlight-- }() // the directory has it, or it failed
		if w.st != s.st {
			st.Discard()
			return // the process crashed with it
		}
		err := st.Commit(ctx, func(cr store.Critical) error {
			if err := gatekeeper.CheckFence(cr, s.epoch); err != nil {
				return err
			}
			return gatekeeper.OrderMove(ctx, s.oracle, cr, ts, mv, seen, s.dir.Base())
		})
		st.Discard()
		if err != nil {
			w.stats.MoveAborts++
			w.aborted(s, g, ts, err, func(check.Type) {})
			return
		}
		w.stats.Moves++
		held := append(slices.Clone(s.dir.HomeOf(mv.Unit).Held), mv.To)
		slices.Sort(held)
		d, err := s.dir.With(mv.Unit, txn.Home{Shard: mv.To, Stamp: ts, From: mv.From, Held: held})
		if err != nil {
			panic(fmt.Sprintf("sim: move %s: %v", mv.Unit, err))
		}
		s.dir = d
		w.after(int64(w.rng.IntN(3)), func() {
			if w.srv != s {
				return
			}
			if err := s.gks[g].Resolve(ts, ops); err != nil {
				panic(err)
			}
			w.dispatch(s, g)
		})
	}
	if w.cfg.CommitDelayMax == 0 {
		critical()
		return
	}
	w.after(int64(w.rng.IntN(max(w.cfg.DelayMax, w.cfg.CommitDelayMax))), critical)
}

// locate is where shard n sends a read of h at t (shard.Units.Locate).
func (w *world) locate(s *server, n *shardNode, h string, t vclock.Stamp, ord *shard.ReadOrderer) int {
	return int(n.units.Locate(h, t, ord, s.dir))
}
