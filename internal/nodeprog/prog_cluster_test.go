package nodeprog_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/weft-db/weft/internal/nodeprog"
	"github.com/weft-db/weft/internal/nodeprog/progtest"
)

func TestClustering(t *testing.T) {
	// c → a, b, d; links inside {a, b, d}: a→b, b→a, d→b (3 of 6 ordered pairs);
	// a self-loop and a duplicate edge of c change nothing
	g := progtest.NewGraph().
		AddEdge("1", "c", "a", nil).AddEdge("2", "c", "b", nil).AddEdge("3", "c", "d", nil).
		AddEdge("4", "c", "c", nil).AddEdge("5", "c", "a", nil).
		AddEdge("6", "a", "b", nil).AddEdge("7", "b", "a", nil).AddEdge("8", "d", "b", nil).
		AddEdge("9", "d", "x", nil).AddEdge("10", "d", "d", nil)
	jsonEq(t, runAll(t, g, "clustering", `{"node":"c"}`), `{"node":"c","coefficient":0.5,"degree":3,"links":3}`)
	jsonEq(t, runAll(t, g, "clustering", `{"node":"a","mode":"out"}`), `{"node":"a","coefficient":0,"degree":1,"links":0}`)
	if res := runAll(t, g, "clustering", `{"node":"nobody"}`); res != nil {
		t.Fatalf("missing vertex: %v", res)
	}
	// a neighbour that is not visible sends no links (b→a is gone), but
	// visible edges to it still count (a→b, d→b)
	g.RemoveVertex("b")
	jsonEq(t, runAll(t, g, "clustering", `{"node":"c"}`), `{"node":"c","coefficient":0.3333333333333333,"degree":3,"links":2}`)
}

// TestClusteringLargeNeighbourhood: above nbrsInlineMax neighbours the
// neighbours send their whole lists and the coordinator intersects.
func TestClusteringLargeNeighbourhood(t *testing.T) {
	g := progtest.NewGraph()
	const k = 300
	for i := range k {
		g.AddEdge(fmt.Sprintf("h%d", i), "hub", v(i), nil)
		g.AddEdge(fmt.Sprintf("n%d", i), v(i), v((i+1)%k), nil) // inside
		g.AddEdge(fmt.Sprintf("o%d", i), v(i), "outside", nil)
	}
	res := runAll(t, g, "clustering", `{"node":"hub"}`).(nodeprog.Clustering)
	if res.Degree != k || res.Links != k || res.Coefficient != float64(k)/float64(k*(k-1)) {
		t.Fatalf("%+v", res)
	}
}

// symmetricRandom is a random undirected graph stored as edges both ways.
func symmetricRandom(n, m int, seed uint64) *progtest.Graph {
	rng := rand.New(rand.NewPCG(seed, 1))
	g := progtest.NewGraph()
	for i := range n {
		g.AddVertex(v(i), nil)
	}
	for i := range m {
		a, b := rng.IntN(n), rng.IntN(n)
		g.AddEdge(fmt.Sprintf("f%d", i), v(a), v(b), nil)
		g.AddEdge(fmt.Sprintf("b%d", i), v(b), v(a), nil)
	}
	return g
}

// TestTriangleCount: on a graph stored both ways, the node program counts
// the triangles through each vertex, the same as the triangles analysis,
// whose total is a third of the sum.
func TestTriangleCount(t *testing.T) {
	g := symmetricRandom(25, 70, 3)
	nodes := g.Handles()
	res := runAll(t, g, "triangle_count", map[string]any{"nodes": nodes}).(nodeprog.Triangles)
	an, err := progtest.NewCluster(g, reg, progtest.Options{}).Analyze("triangles", map[string]any{"nodes": nodes})
	if err != nil {
		t.Fatal(err)
	}
	tt := an.(nodeprog.TriangleTotal)
	for _, h := range nodes {
		if float64(res.PerNode[h]) != tt.PerNode[h] {
			t.Fatalf("triangles through %s: program %d, analysis %v", h, res.PerNode[h], tt.PerNode[h])
		}
	}
	if tt.Triangles == 0 || int64(res.Total) != 3*tt.Triangles {
		t.Fatalf("program total %d, analysis %d triangles", res.Total, tt.Triangles)
	}
	// K4 stored both ways: 3 triangles through each vertex, 4 in all
	k4 := progtest.NewGraph()
	for i := range 4 {
		for j := range 4 {
			if i != j {
				k4.AddEdge(fmt.Sprintf("%d%d", i, j), v(i), v(j), nil)
			}
		}
	}
	jsonEq(t, runAll(t, k4, "triangle_count", `{"nodes":["v0","v3","v9"]}`), `{"total":6,"per_node":{"v0":3,"v3":3}}`)
}

func TestTwoNeighborhood(t *testing.T) {
	g := godsGraph()
	jsonEq(t, runAll(t, g, "two_neighborhood", `{"node":"hercules","prop_key":"type"}`), `{"nodes":[
		{"node":"alcmene","value":"human"},{"node":"cerberus","value":"monster"},{"node":"hydra","value":"monster"},
		{"node":"jupiter","value":"god"},{"node":"nemean","value":"monster"},{"node":"neptune","value":"god"},
		{"node":"pluto","value":"god"},{"node":"saturn","value":"titan"},{"node":"sky","value":"location"},
		{"node":"tartarus","value":"location"}]}`)
	// the center is left out even when a cycle leads back to it
	jsonEq(t, runAll(t, g, "two_neighborhood", `{"node":"jupiter","prop_key":"type","prop_value":"god"}`),
		`{"nodes":[{"node":"neptune","value":"god"},{"node":"pluto","value":"god"}]}`)
	jsonEq(t, runAll(t, g, "two_neighborhood", `{"node":"hercules","prop_key":"age","edge_props":{"label":"father"}}`),
		`{"nodes":[{"node":"jupiter","value":5000},{"node":"saturn","value":10000}]}`)
}
