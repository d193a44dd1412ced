package kronos

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
)

// Edge is a directed edge From → To between vertices numbered from 0.
type Edge struct{ From, To uint32 }

// ErdosRenyi returns the edges of a G(n, p) random graph: each of the
// n(n−1)/2 unordered vertex pairs is present independently with probability
// p. Each edge is returned once, as (larger, smaller); orient it with
// OrientByRank. It skips absent pairs geometrically (Batagelj & Brandes,
// 2005), so the time is linear in n plus the edges returned.
func ErdosRenyi(n int, p float64, rng *rand.Rand) []Edge {
	if n < 2 || p <= 0 {
		return nil
	}
	expect := p * float64(n) * float64(n-1) / 2
	edges := make([]Edge, 0, int(expect+6*math.Sqrt(expect)+16))
	if p >= 1 {
		for v := 1; v < n; v++ {
			for w := range v {
				edges = append(edges, Edge{From: uint32(v), To: uint32(w)})
			}
		}
		return edges
	}
	lq := math.Log1p(-p)
	v, w := 1, -1
	for v < n {
		// 1−Float64() is in (0, 1], so the logarithm is finite.
		w += 1 + int(math.Floor(math.Log(1-rng.Float64())/lq))
		for w >= v && v < n {
			w -= v
			v++
		}
		if v < n {
			edges = append(edges, Edge{From: uint32(v), To: uint32(w)})
		}
	}
	return edges
}

// RandomRanks returns a uniformly random permutation of 0..n−1: rank[v] is
// vertex v's position in a random total order.
func RandomRanks(n int, rng *rand.Rand) []uint32 {
	rank := make([]uint32, n)
	for i := range rank {
		rank[i] = uint32(i)
	}
	rng.Shuffle(n, func(i, j int) { rank[i], rank[j] = rank[j], rank[i] })
	return rank
}

// OrientByRank points every edge from its lower-ranked to its higher-ranked
// vertex, so the graph is acyclic and each edge's direction is uniformly
// random, and sorts the edges by the rank of their source (then of their
// target). Inserted in that order, an edge's source has no descendants but
// its own targets yet, so checking it for a cycle costs the source's degree
// rather than a search of the graph.
func OrientByRank(edges []Edge, rank []uint32) {
	for i, e := range edges {
		if rank[e.From] > rank[e.To] {
			edges[i] = Edge{From: e.To, To: e.From}
		}
	}
	slices.SortFunc(edges, func(a, b Edge) int {
		if c := cmp.Compare(rank[a.From], rank[b.From]); c != 0 {
			return c
		}
		return cmp.Compare(rank[a.To], rank[b.To])
	})
}
