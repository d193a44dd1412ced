package txn

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/weft-db/weft/internal/vclock"
)

// slotCounts counts the slots per shard of d after plan.
func slotCounts(t *testing.T, d *Directory, plan []SlotMove) []int {
	t.Helper()
	home := map[uint32]uint32{}
	for k := range SlotsPerShard * d.Base() {
		home[k] = d.HomeOf(Unit{Slot: k}).Shard
	}
	for _, m := range plan {
		if m.Unit.Group != "" || home[m.Unit.Slot] != m.From {
			t.Fatalf("move %+v: the slot is on %d", m, home[m.Unit.Slot])
		}
		if slices.Contains(d.HomeOf(m.Unit).Held, m.To) {
			t.Fatalf("move %+v goes to a shard holding a copy", m)
		}
		home[m.Unit.Slot] = m.To
	}
	counts := make([]int, d.Shards())
	for _, s := range home {
		counts[s]++
	}
	return counts
}

// Growing from B to n shards: the plan moves exactly the slots the new
// shards need, only from old shards to new ones, and leaves every shard
// within one slot of the mean.
func TestPlanRebalanceGrow(t *testing.T) {
	for _, c := range []struct{ base, shards uint32 }{{1, 2}, {2, 3}, {2, 4}, {3, 8}, {4, 5}} {
		d, err := NewDirectory(c.base, c.shards)
		if err != nil {
			t.Fatal(err)
		}
		plan := PlanRebalance(d)
		counts := slotCounts(t, d, plan)
		total := int(SlotsPerShard * c.base)
		lo, hi := total/int(c.shards), (total+int(c.shards)-1)/int(c.shards)
		need := 0
		for i, n := range counts {
			if n < lo || n > hi {
				t.Fatalf("%+v: shard %d ends with %d slots, want %d..%d", c, i, n, lo, hi)
			}
			if uint32(i) >= c.base {
				need += n
			}
		}
		if len(plan) != need {
			t.Fatalf("%+v: %d moves for %d slots on the new shards", c, len(plan), need)
		}
		for _, m := range plan {
			if m.From >= c.base || m.To < c.base {
				t.Fatalf("%+v: move %+v is not from an old shard to a new one", c, m)
			}
		}
		if again := PlanRebalance(d); !slices.Equal(again, plan) {
			t.Fatalf("%+v: the plan is not deterministic", c)
		}
	}
}

// A balanced directory needs no move; random moved directories end
// balanced except where held copies forbid it, and never move a slot to a
// shard holding its copy.
func TestPlanRebalanceRespectsHeldCopies(t *testing.T) {
	d, _ := NewDirectory(3, 3)
	if plan := PlanRebalance(d); len(plan) != 0 {
		t.Fatalf("a balanced directory: %d moves", len(plan))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 50 {
		d, _ := NewDirectory(2, 4)
		for i := range 100 {
			k := uint32(rng.IntN(int(SlotsPerShard * 2)))
			u := Unit{Slot: k}
			h := d.HomeOf(u)
			to := uint32(rng.IntN(4))
			if slices.Contains(h.Held, to) {
				continue
			}
			held := slices.Sorted(slices.Values(append(slices.Clone(h.Held), to)))
			var err error
			if d, err = d.With(u, Home{Shard: to, From: h.Shard, Held: held,
				Stamp: vclock.Stamp{Clock: vclock.Clock{Epoch: 1, Counters: []uint64{uint64(i + 1)}}}}); err != nil {
				t.Fatal(err)
			}
		}
		counts := slotCounts(t, d, PlanRebalance(d))
		if slices.Max(counts)-slices.Min(counts) > 8 {
			t.Fatalf("trial %d: slots per shard %v after the plan", trial, counts)
		}
	}
}
