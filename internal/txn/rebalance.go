package txn

import "slices"

// SlotMove is one move of a rebalance plan: slot unit Unit from shard From
// to shard To.
type SlotMove struct {
	Unit     Unit
	From, To uint32
}

// PlanRebalance returns the moves of slot units that even out the slots of
// d's shards (each ends with the mean, rounded, where the copies the
// shards still hold allow it), moving as few slots as it can: only from
// shards above their share to shards below it, each donor giving in turn
// to the shard furthest below. A slot never goes to a shard that still
// holds a copy of it (Home.Held). Placement groups are not moved: they
// are placed by hand (DB.MoveUnit). Pure and deterministic.
func PlanRebalance(d *Directory) []SlotMove {
	n := int(d.Shards())
	slots := make([][]uint32, n) // per shard, ascending
	total := int(SlotsPerShard * d.Base())
	for k := range total {
		h := d.HomeOf(Unit{Slot: uint32(k)})
		slots[h.Shard] = append(slots[h.Shard], uint32(k))
	}
	// Shares: the mean, and one more for the remainder's shards, given to
	// those holding the most already (fewest moves), ties to lower ids.
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return len(slots[b]) - len(slots[a]) })
	want := make([]int, n)
	for r, i := range order {
		want[i] = total / n
		if r < total%n {
			want[i]++
		}
	}
	var plan []SlotMove
	for {
		// The donor furthest above its share and the receiver furthest
		// below, ties to lower ids; stop when either is missing.
		donor, recv := -1, -1
		for i := range n {
			if s := len(slots[i]) - want[i]; s > 0 && (donor < 0 || s > len(slots[donor])-want[donor]) {
				donor = i
			}
			if s := want[i] - len(slots[i]); s > 0 && (recv < 0 || s > want[recv]-len(slots[recv])) {
				recv = i
			}
		}
		if donor < 0 || recv < 0 {
			return plan
		}
		// The donor's highest slot the receiver holds no copy of.
		pick := -1
		for j := len(slots[donor]) - 1; j >= 0; j-- {
			if !slices.Contains(d.HomeOf(Unit{Slot: slots[donor][j]}).Held, uint32(recv)) {
				pick = j
				break
			}
		}
		if pick < 0 {
			// Every slot the donor could give is held at the receiver:
			// lower the receiver's share so the others proceed.
			want[recv] = len(slots[recv])
			continue
		}
		k := slots[donor][pick]
		slots[donor] = slices.Delete(slots[donor], pick, pick+1)
		i, _ := slices.BinarySearch(slots[recv], k)
		slots[recv] = slices.Insert(slots[recv], i, k)
		plan = append(plan, SlotMove{Unit: Unit{Slot: k}, From: uint32(donor), To: uint32(recv)})
	}
}
