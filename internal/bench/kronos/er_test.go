package kronos

import (
	"math"
	"slices"
	"testing"

	"github.com/weft-db/weft/internal/bench"
)

// TestErdosRenyiEdgeCount checks the edge count against its binomial
// distribution, and that every edge is a distinct pair of distinct vertices.
func TestErdosRenyiEdgeCount(t *testing.T) {
	for _, tc := range []struct {
		n int
		p float64
	}{{2000, 1e-4}, {2000, 1e-3}, {2000, 1e-2}, {500, 0.3}} {
		for seed := range uint64(5) {
			edges := ErdosRenyi(tc.n, tc.p, bench.NewRand(seed, 9))
			pairs := float64(tc.n) * float64(tc.n-1) / 2
			mean, sd := pairs*tc.p, math.Sqrt(pairs*tc.p*(1-tc.p))
			if d := math.Abs(float64(len(edges)) - mean); d > 5*sd {
				t.Errorf("G(%d, %g) seed %d: %d edges, expected %.0f ± %.0f", tc.n, tc.p, seed, len(edges), mean, sd)
			}
			seen := make(map[Edge]bool, len(edges))
			for _, e := range edges {
				if e.From <= e.To || int(e.From) >= tc.n {
					t.Fatalf("edge %v is not (larger, smaller) within %d vertices", e, tc.n)
				}
				if seen[e] {
					t.Fatalf("edge %v twice", e)
				}
				seen[e] = true
			}
		}
	}
}

// TestErdosRenyiUniform checks that edges are spread over the pairs: each
// vertex's degree is binomial, so the mean degree of the low and high halves
// of the vertices must agree (the skipping must not favour either end).
func TestErdosRenyiUniform(t *testing.T) {
	const n, p = 4000, 2e-3
	edges := ErdosRenyi(n, p, bench.NewRand(7, 9))
	var low, high float64
	for _, e := range edges {
		for _, v := range [2]uint32{e.From, e.To} {
			if v < n/2 {
				low++
			} else {
				high++
			}
		}
	}
	// Each half's degree sum is ≈ (n/2)(n−1)p ≈ 4000 with sd ≈ 90.
	if math.Abs(low-high) > 6*math.Sqrt(low+high) {
		t.Errorf("degree sums: low half %.0f, high half %.0f", low, high)
	}
}

func TestErdosRenyiExtremes(t *testing.T) {
	if e := ErdosRenyi(100, 0, bench.NewRand(1, 1)); len(e) != 0 {
		t.Errorf("p=0 gave %d edges", len(e))
	}
	if e := ErdosRenyi(30, 1, bench.NewRand(1, 1)); len(e) != 30*29/2 {
		t.Errorf("p=1 gave %d edges, want %d", len(e), 30*29/2)
	}
	a, b := ErdosRenyi(1000, 0.01, bench.NewRand(3, 1)), ErdosRenyi(1000, 0.01, bench.NewRand(3, 1))
	if !slices.Equal(a, b) {
		t.Error("the same seed gave different graphs")
	}
}

// TestOrientByRank checks that orientation follows the ranking (so the graph
// is acyclic), that about half of the edges are flipped (the direction is
// random), and the insertion order.
func TestOrientByRank(t *testing.T) {
	const n = 3000
	rng := bench.NewRand(5, 1)
	edges := ErdosRenyi(n, 5e-3, rng)
	rank := RandomRanks(n, rng)
	flipped := 0
	orig := slices.Clone(edges)
	OrientByRank(edges, rank)
	set := map[Edge]bool{}
	for _, e := range edges {
		set[e] = true
	}
	for _, e := range orig {
		if !set[e] {
			flipped++
			if !set[Edge{From: e.To, To: e.From}] {
				t.Fatalf("edge %v lost", e)
			}
		}
	}
	for i, e := range edges {
		if rank[e.From] >= rank[e.To] {
			t.Fatalf("edge %v goes against the ranking", e)
		}
		if i > 0 && rank[edges[i-1].From] > rank[e.From] {
			t.Fatalf("edges not sorted by source rank at %d", i)
		}
	}
	m := float64(len(edges))
	if math.Abs(float64(flipped)-m/2) > 5*math.Sqrt(m/4) {
		t.Errorf("%d of %.0f edges flipped, expected about half", flipped, m)
	}
}
