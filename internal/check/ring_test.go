package check

import (
	"math/rand/v2"
	"testing"
)

// ringHistory applies random FoundationDB-cycle swaps (a→b→c→d becomes
// a→c→b→d) to a ring of n vertices and records reads of the whole ring.
func ringHistory(seed uint64, n, ops int) History {
	rng := rand.New(rand.NewPCG(seed, 3))
	succ := make(map[int64]int64, n)
	for v := range int64(n) {
		succ[v] = (v + 1) % int64(n)
	}
	var rec Recorder
	for i := range ops {
		if rng.IntN(3) == 0 {
			rec.Invoke(0, FRead, nil, int64(i))
			snap := make(map[int64]int64, n)
			for v, s := range succ {
				snap[v] = s
			}
			rec.Complete(0, OK, FRead, snap, int64(i))
			continue
		}
		a := int64(rng.IntN(n))
		b := succ[a]
		c := succ[b]
		d := succ[c]
		succ[a], succ[c], succ[b] = c, b, d
		rec.Invoke(1, "swap", int64(a), int64(i))
		rec.Complete(1, OK, "swap", int64(a), int64(i))
	}
	return rec.History()
}

func TestRing(t *testing.T) {
	const n = 8
	h := ringHistory(1, n, 300)
	res, err := CheckRing(h, n)
	wantTypes(t, res, err)
	if res.OK < 50 {
		t.Fatalf("only %d reads checked", res.OK)
	}
	for _, tc := range []struct {
		name string
		m    map[int64]int64
	}{
		{"two-cycles", map[int64]int64{0: 1, 1: 2, 2: 3, 3: 0, 4: 5, 5: 6, 6: 7, 7: 4}},
		{"shared-successor", map[int64]int64{0: 1, 1: 2, 2: 3, 3: 4, 4: 5, 5: 6, 6: 7, 7: 1}},
		{"missing-vertex", map[int64]int64{0: 1, 1: 2, 2: 3, 3: 4, 4: 5, 5: 6, 6: 0}},
		{"outside", map[int64]int64{0: 1, 1: 2, 2: 3, 3: 4, 4: 5, 5: 6, 6: 7, 7: 9}},
		{"self-loop", map[int64]int64{0: 0, 1: 2, 2: 3, 3: 4, 4: 5, 5: 6, 6: 7, 7: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			broken := append(ringHistory(2, n, 30), Op{Process: 5, Type: Invoke, F: FRead},
				Op{Process: 5, Type: OK, F: FRead, Value: tc.m})
			res, err := CheckRing(broken, n)
			wantTypes(t, res, err, "broken-ring")
			if len(res.Anomalies) != 1 {
				t.Fatalf("%d anomalies, want 1:\n%s", len(res.Anomalies), res)
			}
		})
	}
}
