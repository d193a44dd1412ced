package shard

import (
	"testing"

	"github.com/weft-db/weft/internal/graph"
	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/value"
	"github.com/weft-db/weft/internal/vclock"
)

func st(c ...uint64) vclock.Stamp { return vclock.Stamp{Clock: vclock.Clock{Epoch: 1, Counters: c}} }

// noOrder fails the test if asked: these stamps are ordered by clock.
type noOrder struct{ t *testing.T }

func (o noOrder) Before(a, b vclock.Stamp) bool {
	o.t.Fatalf("asked to order %s and %s", a, b)
	return false
}

func newPart() Partition {
	c := graph.DefaultConfig()
	return Partition{Graph: graph.New(c), Alias: graph.NewAliasIndex(c)}
}

// TestUnitHandOff moves a unit from shard 0 (its base) to shard 1 at T=5:
// before T shard 0 answers and shard 1 points back; from T on shard 1
// answers with the stored last write, and shard 0 points to it.
func TestUnitHandOff(t *testing.T) {
	const base = 2
	h := "k1"
	u := txn.UnitOf(h, base)
	from, to := u.BaseShard(base), 1-u.BaseShard(base)
	a, b := newPart(), newPart()
	ua, ub := NewUnits(from, base), NewUnits(to, base)
	lw := st(2)
	if err := Apply(a.Graph, a.Alias, []txn.ShardOp{{Kind: txn.OpCreateVertex, Vertex: h}, {Kind: txn.OpSetVertexProp, Vertex: h, Key: "x", Value: value.I64(7)}}, lw); err != nil {
		t.Fatal(err)
	}
	mv := &txn.UnitMove{Unit: u, From: from, To: to, Vertices: []*graph.VertexRecord{{Handle: h, LastWrite: lw, Props: []graph.Prop{{Key: "x", Val: value.I64(7)}}}}}
	T := st(5)
	if err := ApplyPartition(a, ua, []txn.ShardOp{{Shard: from, Kind: txn.OpUnitOut, Move: mv}}, T); err != nil {
		t.Fatal(err)
	}
	if err := ApplyPartition(b, ub, []txn.ShardOp{{Shard: to, Kind: txn.OpUnitIn, Move: mv}}, T); err != nil {
		t.Fatal(err)
	}
	ord := noOrder{t}
	for _, c := range []struct {
		u        *Units
		at       vclock.Stamp
		here     bool
		ask      uint32
		name     string
		readable bool
	}{
		{ua, st(4), true, 0, "source before the move", true},
		{ua, st(5), false, to, "source at the move", false},
		{ua, st(9), false, to, "source after the move", false},
		{ub, st(4), false, from, "target before the move", false},
		{ub, st(5), true, 0, "target at the move", true},
		{ub, st(9), true, 0, "target after the move", true},
	} {
		here, ask := c.u.Where(h, c.at, ord)
		if here != c.here || !here && ask != c.ask {
			t.Errorf("%s: Where = %v, %d; want %v, %d", c.name, here, ask, c.here, c.ask)
		}
		if !here {
			continue
		}
		p := a
		if c.u == ub {
			p = b
		}
		v, ok := p.Graph.View(h, c.at, ord)
		if !ok {
			t.Fatalf("%s: vertex not readable", c.name)
		}
		if x, _ := v.Prop("x"); x.Int() != 7 || p.Graph.LastWrite(h, c.at, ord).String() != lw.String() {
			t.Errorf("%s: x=%v last write %s, want 7 and %s", c.name, x, p.Graph.LastWrite(h, c.at, ord), lw)
		}
	}
	// A shard that never held the unit and has no move of it: Unknown.
	if here, ask := NewUnits(7, base).Where(h, st(9), ord); here || ask != Unknown {
		t.Errorf("stranger: %v, %d", here, ask)
	}
	// Moves arrive in order: one not after the last is refused.
	if err := ApplyPartition(b, ub, []txn.ShardOp{{Shard: to, Kind: txn.OpUnitOut, Move: &txn.UnitMove{Unit: u, From: to, To: from}}}, st(5)); err == nil {
		t.Error("a move at the stamp of the previous one was applied")
	}
	// RecoveredUnits: after a rebuild from a store whose directory has the
	// unit on `to`, the base points there and the home answers.
	dir, _ := txn.NewDirectory(base, base)
	dir, _ = dir.With(u, txn.Home{Shard: to, From: from, Stamp: T, Held: []uint32{0, 1}})
	w := vclock.Stamp{Clock: vclock.Clock{Epoch: 2, Counters: []uint64{0}}}
	if here, ask := RecoveredUnits(from, dir, w).Where(h, vclock.Stamp{Clock: vclock.Clock{Epoch: 2, Counters: []uint64{3}}}, ord); here || ask != to {
		t.Errorf("recovered source: %v, %d", here, ask)
	}
	if here, _ := RecoveredUnits(to, dir, w).Where(h, vclock.Stamp{Clock: vclock.Clock{Epoch: 2, Counters: []uint64{3}}}, ord); !here {
		t.Error("recovered target does not answer")
	}
}
