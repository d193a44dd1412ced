package kvcore

import (
	"fmt"
	"slices"
	"testing"
)

func TestRingReplicasDistinctAndDeterministic(t *testing.T) {
	r1, err := NewRing(5, 64)
	if err != nil {
		t.Fatal(err)
	}
	r2, _ := NewRing(5, 64)
	for i := range 1000 {
		key := fmt.Sprintf("key-%d", i)
		a, b := r1.Replicas(nil, key, 3), r2.Replicas(nil, key, 3)
		if !slices.Equal(a, b) {
			t.Fatalf("%s: %v vs %v", key, a, b)
		}
		if len(a) != 3 {
			t.Fatalf("%s: %d replicas", key, len(a))
		}
		s := slices.Clone(a)
		slices.Sort(s)
		if len(slices.Compact(s)) != 3 {
			t.Fatalf("%s: repeated server in %v", key, a)
		}
	}
	if got := r1.Replicas(nil, "k", 9); len(got) != 5 {
		t.Fatalf("N above the server count: %v", got)
	}
	if _, err := NewRing(0, 1); err == nil {
		t.Fatal("empty ring accepted")
	}
}

// TestRingBalance: with 128 virtual nodes each of 5 servers is primary for
// 20% ± 5% of keys.
func TestRingBalance(t *testing.T) {
	r, _ := NewRing(5, 128)
	const keys = 50000
	count := make([]int, 5)
	for i := range keys {
		count[r.Replicas(nil, fmt.Sprintf("user:%d", i), 1)[0]]++
	}
	for s, c := range count {
		if share := float64(c) / keys; share < 0.15 || share > 0.25 {
			t.Fatalf("server %d is primary for %.1f%% of keys: %v", s, 100*share, count)
		}
	}
	t.Logf("primary shares over %d keys: %v", keys, count)
}

// TestRingAddServerMovesLittle: adding a sixth server changes the primary
// only of keys the new server takes (about 1/6), never between old servers.
func TestRingAddServerMovesLittle(t *testing.T) {
	r5, _ := NewRing(5, 128)
	r6, _ := NewRing(6, 128)
	const keys = 20000
	moved := 0
	for i := range keys {
		k := fmt.Sprintf("k%d", i)
		a, b := r5.Replicas(nil, k, 1)[0], r6.Replicas(nil, k, 1)[0]
		if a != b {
			if b != 5 {
				t.Fatalf("%s moved from %d to old server %d", k, a, b)
			}
			moved++
		}
	}
	if share := float64(moved) / keys; share < 0.10 || share > 0.23 {
		t.Fatalf("%.1f%% of keys moved (want about 1/6)", 100*share)
	}
}
