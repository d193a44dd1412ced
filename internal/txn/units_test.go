package txn

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/weft-db/weft/internal/vclock"
)

func randomName(r *rand.Rand) string {
	switch r.IntN(4) {
	case 0:
		return GroupName(fmt.Sprintf("p%d", r.IntN(20)), fmt.Sprintf("0x%x", r.Uint64()))
	case 1:
		return fmt.Sprintf("_pl|broken%d", r.IntN(9)) // no second '|': an ordinary name
	default:
		return fmt.Sprintf("v%d", r.Uint64())
	}
}

// TestDirectoryWithoutMovesIsShardOf: with nothing moved, the directory
// places every name exactly where ShardOf does, and a slot's base shard is
// its members' ShardOf (so stored data keeps its placement).
func TestDirectoryWithoutMovesIsShardOf(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, base := range []uint32{1, 2, 3, 4, 5, 7, 8} {
		d, err := NewDirectory(base, base+2)
		if err != nil {
			t.Fatal(err)
		}
		for range 2000 {
			name := randomName(r)
			want := ShardOf(name, base)
			if got := d.ShardOf(name); got != want {
				t.Fatalf("base %d: %q on %d, ShardOf says %d", base, name, got, want)
			}
			if got := UnitOf(name, base).BaseShard(base); got != want {
				t.Fatalf("base %d: unit %s of %q has base shard %d, ShardOf says %d", base, UnitOf(name, base), name, got, want)
			}
		}
	}
}

// TestDirectoryMoveMovesExactlyItsUnit: after moving one unit, exactly the
// names of that unit change shard.
func TestDirectoryMoveMovesExactlyItsUnit(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const base = 3
	d0, err := NewDirectory(base, 4)
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, 3000)
	for i := range names {
		names[i] = randomName(r)
	}
	st := vclock.Stamp{Owner: 0, Clock: vclock.Clock{Epoch: 1, Counters: []uint64{5}}}
	for _, u := range []Unit{UnitOf(names[0], base), UnitOf(names[1], base), {Group: "p3"}, {Slot: 7}} {
		d, err := d0.With(u, Home{Shard: 3, Stamp: st})
		if err != nil {
			t.Fatal(err)
		}
		moved := 0
		for _, n := range names {
			in := UnitOf(n, base) == u
			got, was := d.ShardOf(n), d0.ShardOf(n)
			switch {
			case in && got != 3:
				t.Fatalf("unit %s moved to 3 but %q is on %d", u, n, got)
			case !in && got != was:
				t.Fatalf("unit %s moved, and %q (unit %s) went from %d to %d", u, n, UnitOf(n, base), was, got)
			}
			if in {
				moved++
			}
		}
		if d.HomeOf(u).Shard != 3 || d0.HomeOf(u).Shard != u.BaseShard(base) || d0.Moved() != 0 || d.Moved() != 1 {
			t.Fatalf("unit %s: homes %v / %v, moved %d / %d (the original must not change)", u, d.HomeOf(u), d0.HomeOf(u), d.Moved(), d0.Moved())
		}
		t.Logf("unit %s: %d of %d names", u, moved, len(names))
	}
}

func TestDirectoryRefusals(t *testing.T) {
	if _, err := NewDirectory(0, 1); err == nil {
		t.Error("a base of 0 shards accepted")
	}
	if _, err := NewDirectory(3, 2); err == nil {
		t.Error("fewer shards than the base accepted")
	}
	d, _ := NewDirectory(2, 3)
	late := vclock.Stamp{Clock: vclock.Clock{Epoch: 1, Counters: []uint64{9}}}
	early := vclock.Stamp{Clock: vclock.Clock{Epoch: 1, Counters: []uint64{4}}}
	cases := []struct {
		u Unit
		h Home
	}{
		{Unit{Slot: 1}, Home{Shard: 3}},                 // no such shard
		{Unit{Slot: SlotsPerShard * 2}, Home{Shard: 1}}, // no such slot
		{Unit{Group: "a|b"}, Home{Shard: 1}},
	}
	for _, c := range cases {
		if _, err := d.With(c.u, c.h); err == nil {
			t.Errorf("With(%v, %v) accepted", c.u, c.h)
		}
	}
	d2, err := d.With(Unit{Slot: 1}, Home{Shard: 2, Stamp: late})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d2.With(Unit{Slot: 1}, Home{Shard: 0, Stamp: early}); err == nil {
		t.Error("a move stamped before the unit's last move accepted")
	}
}

func TestUnitAndHomeRoundTrip(t *testing.T) {
	for _, u := range []Unit{{Slot: 0}, {Slot: 1023}, {Group: "name"}, {Group: "~starring"}} {
		got, err := ParseUnit(u.String(), 4)
		if err != nil || got != u {
			t.Errorf("ParseUnit(%q) = %v, %v", u.String(), got, err)
		}
	}
	for _, bad := range []string{"", "s:", "s:1024", "s:-1", "g:", "g:a|b", "x:1"} {
		if _, err := ParseUnit(bad, 4); err == nil {
			t.Errorf("ParseUnit(%q) accepted", bad)
		}
	}
	for _, h := range []Home{{Shard: 0, Held: []uint32{0}}, {Shard: 7, From: 2, Held: []uint32{2, 7}, Stamp: vclock.Stamp{Owner: 1, Clock: vclock.Clock{Epoch: 3, Counters: []uint64{32, 10}}}}} {
		got, err := DecodeHome(EncodeHome(h))
		if err != nil || got.Shard != h.Shard || got.From != h.From || !slices.Equal(got.Held, h.Held) || vclock.CompareStamps(got.Stamp, h.Stamp) != vclock.Equal || got.Stamp.Owner != h.Stamp.Owner {
			t.Errorf("home %v round-tripped to %v, %v", h, got, err)
		}
	}
	for _, bad := range [][]byte{nil, []byte("x 1 "), []byte(" 1"), []byte("3"), []byte("3 1"), []byte("3 1 "), []byte("3 1 x ")} {
		if _, err := DecodeHome(bad); err == nil {
			t.Errorf("DecodeHome(%q) accepted", bad)
		}
	}
}

// TestExecRoutesByDirectory: with a directory, every shard operation of a
// moved unit's vertex or alias goes to the unit's new shard, and the others
// to where ShardOf puts them.
func TestExecRoutesByDirectory(t *testing.T) {
	const base = 2
	moved := UnitOf("a", base)
	d0, _ := NewDirectory(base, 3)
	d, err := d0.With(moved, Home{Shard: 2, Stamp: stamp(1)})
	if err != nil {
		t.Fatal(err)
	}
	ops := []Op{{Kind: CreateVertex, Vertex: "a"}, {Kind: CreateVertex, Vertex: "b"},
		{Kind: CreateEdge, Vertex: "a", Dst: "b", Edge: "ab"}, {Kind: CreateEdge, Vertex: "b", Dst: "a", Edge: "ba"},
		{Kind: AddAlias, Vertex: "b", Alias: "a2"}}
	res, err := Exec{Shards: base, Dir: d}.Run(&mapKV{m: map[string][]byte{}}, stamp(2), nil, ops)
	if err != nil {
		t.Fatal(err)
	}
	seenMoved := false
	for _, op := range res.Ops {
		name := op.Vertex
		if op.Kind == OpBindAlias || op.Kind == OpUnbindAlias {
			name = op.Alias
		}
		want := ShardOf(name, base)
		if UnitOf(name, base) == moved {
			want, seenMoved = 2, true
		}
		if op.Shard != want {
			t.Errorf("%v of %q sent to shard %d, want %d", op.Kind, name, op.Shard, want)
		}
	}
	if !seenMoved {
		t.Fatal("no operation touched the moved unit")
	}
}

// TestReadDirectory: the records a move commits (DirKey, EncodeHome) read
// back into the directory that places the unit there.
func TestReadDirectory(t *testing.T) {
	kv := &mapKV{m: map[string][]byte{}}
	u := UnitOf("x", 2)
	h := Home{Shard: 2, From: u.BaseShard(2), Held: []uint32{u.BaseShard(2), 2}, Stamp: stamp(3)}
	kv.Set(DirKey(u), EncodeHome(h))
	kv.Set(DirKey(Unit{Group: "p"}), EncodeHome(Home{Shard: 1, Held: []uint32{1}, Stamp: stamp(4)}))
	kv.Set(MetaKey("epoch"), []byte("7")) // another meta record, not the directory's
	d, err := ReadDirectory(kv, 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	if d.Moved() != 2 || d.ShardOf("x") != 2 || d.ShardOf(GroupName("p", "y")) != 1 || d.HomeOf(u).From != h.From {
		t.Fatalf("directory: moved %d, x on %d, p on %d", d.Moved(), d.ShardOf("x"), d.ShardOf(GroupName("p", "y")))
	}
	if _, err := ReadDirectory(kv, 2, 2); err == nil {
		t.Error("a unit on a shard beyond the count was accepted")
	}
	kv.Set(DirKey(Unit{Slot: 9999}), EncodeHome(h))
	if _, err := ReadDirectory(kv, 2, 3); err == nil {
		t.Error("a slot beyond the base's was accepted")
	}
}
