package twohop

import (
	"strconv"

	"github.com/weft-db/weft/internal/bench"
)

// Graph is a seeded random directed graph: vertices 0..n-1 with handles
// "v0", "v1", …; m edges with uniformly random sources and destinations
// (self-loops and parallel edges allowed, as a random edge list has them).
type Graph struct {
	out [][]int32
	m   int
}

// NewGraph generates the graph of n vertices and m edges from seed.
func NewGraph(n, m int, seed uint64) *Graph {
	r := bench.NewRand(seed, 201)
	g := &Graph{out: make([][]int32, n), m: m}
	for range m {
		s, d := r.IntN(n), r.IntN(n)
		g.out[s] = append(g.out[s], int32(d))
	}
	return g
}

// Vertices and Edges are the graph's size.
func (g *Graph) Vertices() int { return len(g.out) }
func (g *Graph) Edges() int    { return g.m }

// Out is v's out-neighbours, one per edge, in generation order.
func (g *Graph) Out(v int) []int32 { return g.out[v] }

// Handle is vertex v's handle.
func Handle(v int) string { return "v" + strconv.Itoa(v) }

// TwoHop counts the distinct c with v→b→c for some b, computed from the
// edge lists (the answer every interface's must equal). seen is scratch of
// len Vertices() holding no v+1 stamps (reused across calls with distinct
// stamps: pass stamp = a value not used before).
func (g *Graph) TwoHop(v int, seen []int32, stamp int32) int {
	n := 0
	for _, b := range g.out[v] {
		for _, c := range g.out[b] {
			if seen[c] != stamp {
				seen[c] = stamp
				n++
			}
		}
	}
	return n
}

// Answers are the sources of q queries drawn from seed and each one's
// two-hop count.
func (g *Graph) Answers(q int, seed uint64) (srcs []int, want []int) {
	r := bench.NewRand(seed, 202)
	seen := make([]int32, len(g.out))
	for i := range q {
		v := r.IntN(len(g.out))
		srcs = append(srcs, v)
		want = append(want, g.TwoHop(v, seen, int32(i+1)))
	}
	return srcs, want
}
