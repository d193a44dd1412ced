package check

import (
	"math/rand/v2"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// frontier's edges reach exactly the real-time order of intervals, with far
// fewer edges than the order has pairs.
func TestFrontierReachesRealtimeOrder(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(1, 40).Draw(rt, "n")
		// Distinct positions: interval i uses a start and maybe an end from
		// a shuffled sequence.
		pos := rapid.Permutation(seq(2*n)).Draw(rt, "pos")
		starts, ends := make([]int, n), make([]int, n)
		for i := range n {
			a, b := pos[2*i], pos[2*i+1]
			starts[i], ends[i] = min(a, b), max(a, b)
			if rapid.IntRange(0, 4).Draw(rt, "open") == 0 {
				ends[i] = -1
			}
		}
		adj := make([][]int, n)
		frontier(starts, ends, func(i, j int) {
			if ends[i] < 0 || ends[i] >= starts[j] {
				rt.Fatalf("edge %d → %d is not real-time order", i, j)
			}
			adj[i] = append(adj[i], j)
		})
		for i := range n {
			reach := reachable(adj, i)
			for j := range n {
				want := ends[i] >= 0 && ends[i] < starts[j]
				if reach[j] != want {
					rt.Fatalf("%d ⇝ %d: %v, real time says %v", i, j, reach[j], want)
				}
			}
		}
	})
}

func TestFrontierEdgeCount(t *testing.T) {
	// 10,000 operations, 8 at a time: far fewer edges than pairs.
	const n, conc = 10_000, 8
	starts, ends := make([]int, n), make([]int, n)
	for i := range n {
		starts[i], ends[i] = 2*i, 2*(i+conc)+1
	}
	edges := 0
	frontier(starts, ends, func(int, int) { edges++ })
	if edges > 2*conc*n {
		t.Fatalf("%d edges for %d intervals", edges, n)
	}
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

func reachable(adj [][]int, from int) []bool {
	reach := make([]bool, len(adj))
	stack := []int{from}
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, w := range adj[v] {
			if !reach[w] {
				reach[w] = true
				stack = append(stack, w)
			}
		}
	}
	return reach
}

// sccs agrees with mutual reachability on random graphs, and every SCC
// yields a valid cycle under the most general spec.
func TestSCCsAndCycles(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	for range 300 {
		n := 1 + rng.IntN(12)
		g := newGraph(n)
		adj := make([][]int, n)
		for range rng.IntN(3 * n) {
			a, b := rng.IntN(n), rng.IntN(n)
			if a == b {
				continue
			}
			l := labelPriority[rng.IntN(len(labelPriority))]
			g.add(rawEdge{from: int32(a), to: int32(b), label: l})
			adj[a] = append(adj[a], b)
		}
		g.build()
		all := make([]int32, n)
		for i := range all {
			all[i] = int32(i)
		}
		comp := make([]int, n)
		for i := range comp {
			comp[i] = -1
		}
		for ci, c := range g.sccs(all, lAll) {
			for _, v := range c {
				comp[v] = ci
			}
			cy := g.searchSCC(c)
			g.checkCycle(cy)
		}
		reach := make([][]bool, n)
		for i := range n {
			reach[i] = reachable(adj, i)
		}
		for i := range n {
			for j := range n {
				if i == j {
					continue
				}
				mutual := reach[i][j] && reach[j][i]
				if mutual != (comp[i] >= 0 && comp[i] == comp[j]) {
					t.Fatalf("nodes %d, %d: mutually reachable %v, components %d %d", i, j, mutual, comp[i], comp[j])
				}
			}
		}
	}
}

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		labels []label
		want   string
	}{
		{[]label{lWW, lWW}, "G0"},
		{[]label{lWW, lWR}, "G1c"},
		{[]label{lWR, lRW}, "G-single"},
		{[]label{lRW, lRW}, "G2-item"},
		{[]label{lRW, lWR, lRW, lWR}, "G-nonadjacent"},
		{[]label{lRW, lRW, lWR}, "G2-item"},
		{[]label{lWW, lProcess}, "G0-process"},
		{[]label{lRW, lRealtime}, "G-single-realtime"},
		{[]label{lRWRT, lWR}, "G-single-realtime"},
		{[]label{lWWRT, lWR, lProcess}, "G1c-realtime"},
		{[]label{lRW, lRW, lProcess}, "G2-item-process"},
	} {
		if got := classify(tc.labels); got != tc.want {
			t.Errorf("classify(%v) = %s, want %s", tc.labels, got, tc.want)
		}
	}
}

// The search prefers the weakest explanation: given both a ww-only cycle and
// one with an rw edge among the same nodes, it names G0.
func TestSearchPrefersWeakerCycles(t *testing.T) {
	g := newGraph(3)
	g.add(rawEdge{from: 0, to: 1, label: lRW})
	g.add(rawEdge{from: 1, to: 0, label: lWR})
	g.add(rawEdge{from: 1, to: 2, label: lWW})
	g.add(rawEdge{from: 2, to: 1, label: lWW})
	g.add(rawEdge{from: 2, to: 0, label: lRealtime})
	g.build()
	c := g.searchSCC([]int32{0, 1, 2})
	if name := classify(c.labels); name != "G0" || !slices.Equal(c.nodes, []int32{1, 2}) {
		t.Fatalf("found %s over %v, want G0 over [1 2]", name, c.nodes)
	}
}
