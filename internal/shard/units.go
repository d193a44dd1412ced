package shard

import (
	"fmt"

	"github.com/weft-db/weft/internal/gatekeeper"
	"github.com/weft-db/weft/internal/graph"
	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/vclock"
)

// Units is one shard's history of the placement units that moved to or
// from it (docs/online-moves.md): the forwarding pointers. A read of a name
// at stamp S is the shard's to answer only if the name's unit was here at S
// in the shard's order of S and the moves (Where); otherwise the answer
// names the shard to ask. A unit's events are kept while the shard keeps
// anything of it. Not safe for concurrent use (the shard's executor owns
// it, like the partition).
type Units struct {
	me, base uint32
	ev       map[txn.Unit][]unitEvent
}

type unitEvent struct {
	at   vclock.Stamp
	in   bool   // arrived (else left)
	peer uint32 // where it came from / went to
}

// NewUnits returns shard me's history, over a base placement of base
// shards, with nothing moved.
func NewUnits(me, base uint32) *Units {
	return &Units{me: me, base: base, ev: map[txn.Unit][]unitEvent{}}
}

// RecoveredUnits returns shard me's history after a rebuild from the store
// at stamp w (Recover placed every handle by dir): each moved unit arrived
// at its home, and left its base shard, at w, which every later read
// follows.
func RecoveredUnits(me uint32, dir *txn.Directory, w vclock.Stamp) *Units {
	u := NewUnits(me, dir.Base())
	for unit, h := range dir.Units() {
		switch base := unit.BaseShard(dir.Base()); {
		case h.Shard == me && base != me:
			u.ev[unit] = []unitEvent{{at: w, in: true, peer: h.From}}
		case base == me && h.Shard != me:
			u.ev[unit] = []unitEvent{{at: w, in: false, peer: h.Shard}}
		}
	}
	return u
}

// Unknown is the answer of Where for a unit this shard never held and has
// no move of yet: the reader asks the shard the unit came from to its
// newest home (txn.Home.From).
const Unknown = ^uint32(0)

// Where reports whether the shard answers reads of name at stamp t (here),
// else the shard to ask (Unknown: see its doc). ord orders t against a
// move with a concurrent clock, as for versions (shard.ReadOrderer).
func (u *Units) Where(name string, t vclock.Stamp, ord graph.Orderer) (here bool, ask uint32) {
	return u.whereUnit(txn.UnitOf(name, u.base), t, ord)
}

func (u *Units) whereUnit(unit txn.Unit, t vclock.Stamp, ord graph.Orderer) (here bool, ask uint32) {
	evs := u.ev[unit]
	if len(evs) == 0 {
		if unit.BaseShard(u.base) == u.me {
			return true, 0
		}
		return false, Unknown
	}
	last := -1
	for i := range evs {
		if !visible(evs[i].at, t, ord) {
			break // events are applied in stamp order: the rest follow too
		}
		last = i
	}
	if last < 0 {
		if evs[0].in {
			return false, evs[0].peer // it arrived after t: it was at the peer
		}
		return true, 0 // it left after t: it was here (the base shard)
	}
	if evs[last].in {
		return true, 0
	}
	return false, evs[last].peer
}

// Locate is the shard that answers reads of name at stamp t, as this shard
// knows it: itself when the unit was here at t, else the shard its pointer
// names, else (Unknown: a unit it never held) dir's home of the unit — or
// the home's source when the home is this shard, whose move here follows t.
func (u *Units) Locate(name string, t vclock.Stamp, ord graph.Orderer, dir *txn.Directory) uint32 {
	unit := txn.UnitOf(name, u.base)
	here, ask := u.whereUnit(unit, t, ord)
	switch {
	case here:
		return u.me
	case ask != Unknown:
		return ask
	}
	if dir.Base() != u.base {
		unit = txn.UnitOf(name, dir.Base())
	}
	shard, from := dir.HomeShard(unit)
	if shard == u.me {
		return from
	}
	return shard
}

// visible reports whether a move at stamp at precedes a read at t.
func visible(at, t vclock.Stamp, ord graph.Orderer) bool {
	switch vclock.CompareStamps(at, t) {
	case vclock.Before, vclock.Equal:
		return true
	case vclock.After:
		return false
	}
	return ord.Before(at, t)
}

// ApplyPartition executes one transaction's operations for a shard at stamp
// w on its partition, moves included: OpUnitIn loads the unit's vertices and
// aliases (graph.Load, AliasIndex.Load: they keep their stored last-write
// stamps) and OpUnitOut deletes them at w (tombstones the ordinary GC
// frees once no read below w can come), each recording the move in units.
// Other operations go to Apply.
func ApplyPartition(p Partition, units *Units, ops []txn.ShardOp, w vclock.Stamp) error {
	start := 0
	flush := func(end int) error {
		if end > start {
			if err := Apply(p.Graph, p.Alias, ops[start:end], w); err != nil {
				return err
			}
		}
		start = end + 1
		return nil
	}
	for i := range ops {
		if ops[i].Kind != txn.OpUnitIn && ops[i].Kind != txn.OpUnitOut {
			continue
		}
		if err := flush(i); err != nil {
			return err
		}
		if err := units.apply(p, &ops[i], w); err != nil {
			return err
		}
	}
	return flush(len(ops))
}

func (u *Units) apply(p Partition, op *txn.ShardOp, w vclock.Stamp) error {
	mv := op.Move
	if mv == nil {
		return fmt.Errorf("shard: %v without its unit", op.Kind)
	}
	if evs := u.ev[mv.Unit]; len(evs) > 0 {
		// The second of two moves of a unit read the first's directory
		// record and was ordered after it (by vector clock or Kronos).
		if last := evs[len(evs)-1].at; vclock.CompareStamps(last, w) == vclock.Equal || vclock.CompareStamps(last, w) == vclock.After {
			return fmt.Errorf("shard: move of unit %s at %s does not follow its move at %s", mv.Unit, w, last)
		}
	}
	if op.Kind == txn.OpUnitIn {
		if mv.To != u.me {
			return fmt.Errorf("shard %d: unit %s moving in to shard %d", u.me, mv.Unit, mv.To)
		}
		for _, rec := range mv.Vertices {
			if err := p.Graph.Load(rec, w); err != nil {
				return fmt.Errorf("unit %s: %w", mv.Unit, err)
			}
		}
		for _, a := range mv.Aliases {
			if err := p.Alias.Load(a.Alias, a.Handle, a.LastWrite, w); err != nil {
				return fmt.Errorf("unit %s: alias %q: %w", mv.Unit, a.Alias, err)
			}
		}
		u.ev[mv.Unit] = append(u.ev[mv.Unit], unitEvent{at: w, in: true, peer: mv.From})
		return nil
	}
	if mv.From != u.me {
		return fmt.Errorf("shard %d: unit %s moving out of shard %d", u.me, mv.Unit, mv.From)
	}
	for _, rec := range mv.Vertices {
		if rec.Deleted {
			continue
		}
		if err := p.Graph.DeleteVertex(rec.Handle, w); err != nil {
			return fmt.Errorf("unit %s: %w", mv.Unit, err)
		}
	}
	for _, a := range mv.Aliases {
		if a.Handle == "" {
			continue
		}
		if err := p.Alias.Unbind(a.Alias, a.Handle, w); err != nil {
			return fmt.Errorf("unit %s: alias %q: %w", mv.Unit, a.Alias, err)
		}
	}
	u.ev[mv.Unit] = append(u.ev[mv.Unit], unitEvent{at: w, in: false, peer: mv.To})
	return nil
}

// MoveReader is the part of a store transaction a move reads through.
type MoveReader interface {
	Scanner
	Get(key []byte) ([]byte, bool, error)
}

// ReadMove fills mv with its unit's state at t's snapshot (ReadUnit) and
// returns what the move's commit section must find unchanged there
// (gatekeeper.OrderMove): the access records of the unit's vertices and
// aliases and its population record. The engine and the simulator share it.
func ReadMove(t MoveReader, mv *txn.UnitMove, base uint32) (gatekeeper.MoveSeen, error) {
	seen := gatekeeper.MoveSeen{Access: map[string][]byte{}}
	var err error
	if mv.Vertices, mv.Aliases, err = ReadUnit(t, mv.Unit, base); err != nil {
		return seen, err
	}
	get := func(k []byte) ([]byte, error) {
		b, ok, err := t.Get(k)
		if !ok {
			b = nil
		}
		return b, err
	}
	for _, v := range mv.Vertices {
		k := txn.AccessKey(v.Handle)
		if seen.Access[string(k)], err = get(k); err != nil {
			return seen, err
		}
	}
	for _, a := range mv.Aliases {
		k := txn.AliasAccessKey(a.Alias)
		if seen.Access[string(k)], err = get(k); err != nil {
			return seen, err
		}
	}
	seen.Pop, err = get(txn.PopKey(mv.Unit))
	return seen, err
}
