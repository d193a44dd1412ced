package nodeprog_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/weft-db/weft/internal/nodeprog"
	"github.com/weft-db/weft/internal/nodeprog/progtest"
)

func analyze(t *testing.T, g *progtest.Graph, name string, params any) any {
	t.Helper()
	res, err := progtest.NewCluster(g, reg, progtest.Options{}).Analyze(name, params)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

// randomGraph: n vertices, m random directed edges (self-loops and
// multi-edges included), a few vertices without out-edges.
func randomGraph(n, m int, seed uint64) *progtest.Graph {
	rng := rand.New(rand.NewPCG(seed, 2))
	g := progtest.NewGraph()
	for i := range n {
		g.AddVertex(v(i), nil)
	}
	for i := range m {
		g.AddEdge(fmt.Sprintf("e%d", i), v(rng.IntN(n)), v(rng.IntN(n)), props("w", rng.IntN(5)))
	}
	return g
}

// pagerankModel is Graphalytics' definition, written plainly.
func pagerankModel(g *progtest.Graph, d float64, iters int) map[string]float64 {
	hs := g.Handles()
	n := float64(len(hs))
	rank := map[string]float64{}
	for _, h := range hs {
		rank[h] = 1 / n
	}
	for range iters {
		next := map[string]float64{}
		dangling := 0.0
		for _, h := range hs {
			vx, _ := g.Lookup(h)
			if vx.EdgeCount() == 0 {
				dangling += rank[h]
			}
			vx.Edges(func(e nodeprog.Edge) bool {
				next[e.Dst()] += d * rank[h] / float64(vx.EdgeCount())
				return true
			})
		}
		for _, h := range hs {
			next[h] += (1-d)/n + d*dangling/n
		}
		rank = next
	}
	return rank
}

func TestPageRankModel(t *testing.T) {
	for seed := range uint64(5) {
		g := randomGraph(30, 60, seed)
		want := pagerankModel(g, 0.85, 25)
		res := analyze(t, g, "pagerank", `{"iterations":25}`).(nodeprog.PageRank)
		sum := 0.0
		for h, w := range want {
			if math.Abs(res.Ranks[h]-w) > 1e-12 {
				t.Fatalf("seed %d: rank of %s = %v, model %v", seed, h, res.Ranks[h], w)
			}
			sum += res.Ranks[h]
		}
		if math.Abs(sum-1) > 1e-9 || res.Iterations != 25 {
			t.Fatalf("seed %d: sum %v, iterations %d", seed, sum, res.Iterations)
		}
	}
}

func TestPageRankTolerance(t *testing.T) {
	g := randomGraph(50, 150, 9)
	res := analyze(t, g, "pagerank", `{"iterations":1000,"tolerance":1e-10}`).(nodeprog.PageRank)
	if res.Iterations >= 1000 || res.Delta >= 1e-10 {
		t.Fatalf("did not stop early: %d iterations, delta %v", res.Iterations, res.Delta)
	}
	// a ring: every rank is 1/n
	ring := analyze(t, ringGraph(8), "pagerank", `{"damping":0.5}`).(nodeprog.PageRank)
	for h, r := range ring.Ranks {
		if math.Abs(r-1.0/8) > 1e-15 {
			t.Fatalf("ring rank of %s = %v", h, r)
		}
	}
}

// TestAnalysisOutput: top k (value descending, ties by handle), chosen
// nodes, or everything within ResultsMax.
func TestAnalysisOutput(t *testing.T) {
	g := progtest.NewGraph().AddEdge("1", "a", "hub", nil).AddEdge("2", "b", "hub", nil).AddEdge("3", "c", "hub", nil).AddEdge("4", "hub", "d", nil)
	res := analyze(t, g, "pagerank", `{"top":3}`).(nodeprog.PageRank)
	if res.Ranks != nil || len(res.Top) != 3 || res.Top[0].Node != "d" || res.Top[1].Node != "hub" || res.Top[2].Node != "a" {
		t.Fatalf("top: %+v", res)
	}
	res = analyze(t, g, "pagerank", `{"nodes":["a","zz"]}`).(nodeprog.PageRank)
	if len(res.Ranks) != 1 || res.Top != nil {
		t.Fatalf("nodes: %+v", res)
	}
	_, err := reg.Analyze(g, "pagerank", nil, nodeprog.SnapshotLimits{ResultsMax: 4})
	if !errors.Is(err, nodeprog.ErrTooLarge) {
		t.Fatalf("ResultsMax: %v", err)
	}
	if _, err := reg.Analyze(g, "wcc", nil, nodeprog.SnapshotLimits{VerticesMax: 4}); !errors.Is(err, nodeprog.ErrTooLarge) {
		t.Fatalf("VerticesMax: %v", err)
	}
	if _, err := reg.Analyze(g, "wcc", nil, nodeprog.SnapshotLimits{EdgesMax: 3}); !errors.Is(err, nodeprog.ErrTooLarge) {
		t.Fatalf("EdgesMax: %v", err)
	}
}

type twiceSnapshot struct{ *progtest.Graph }

func (s twiceSnapshot) Vertices(fn func(nodeprog.Vertex) bool) {
	s.Graph.Vertices(fn)
	s.Graph.Vertices(fn)
}

func TestSnapshotEnumeratedTwice(t *testing.T) {
	if _, err := reg.Analyze(twiceSnapshot{lineGraph(3)}, "wcc", nil, nodeprog.SnapshotLimits{}); err == nil {
		t.Fatal("a vertex enumerated twice went unnoticed")
	}
}

func TestWCC(t *testing.T) {
	g := lineGraph(4) // v0..v3
	g.AddEdge("x", "b", "a", nil).AddEdge("y", "c", "b", nil).AddVertex("lonely", nil)
	g.AddEdge("z", "v3", "gone", nil).RemoveVertex("gone") // an edge to nothing joins nothing
	jsonEq(t, analyze(t, g, "wcc", nil), `{"count":3,"largest":4,"labels":{
		"v0":"v0","v1":"v0","v2":"v0","v3":"v0","a":"a","b":"a","c":"a","lonely":"lonely"}}`)
	jsonEq(t, analyze(t, g, "wcc", `{"top":2,"nodes":["c"]}`), `{"count":3,"largest":4,"labels":{"c":"a"},
		"top":[{"label":"v0","size":4},{"label":"a","size":3}]}`)
}

func TestLCCModes(t *testing.T) {
	// c → a, b; a → b; d → c, a (d is an in-neighbour of c only)
	// out:        N(c) = {a, b}: a→b                1 / 2
	// directed:   N(c) = {a, b, d}: a→b, d→a        2 / 6
	// undirected: N(c) = {a, b, d}: {a, b}, {a, d}  2·2 / 6
	g := progtest.NewGraph().AddEdge("1", "c", "a", nil).AddEdge("2", "c", "b", nil).
		AddEdge("3", "a", "b", nil).AddEdge("4", "d", "c", nil).AddEdge("5", "d", "a", nil)
	for mode, want := range map[string]float64{"out": 0.5, "directed": 2.0 / 6, "undirected": 4.0 / 6} {
		res := analyze(t, g, "lcc", fmt.Sprintf(`{"mode":%q,"nodes":["c"]}`, mode)).(nodeprog.LCC)
		if res.Coefficients["c"] != want {
			t.Errorf("%s: %v, want %v", mode, res.Coefficients["c"], want)
		}
	}
	// the clustering program is the out mode
	jsonEq(t, runAll(t, g, "clustering", `{"node":"c"}`), `{"node":"c","coefficient":0.5,"degree":2,"links":1}`)
}

// TestTrianglesAnalysis: brute force over triples of a random graph.
func TestTrianglesAnalysis(t *testing.T) {
	g := randomGraph(18, 60, 4)
	adj := map[[2]string]bool{}
	for _, h := range g.Handles() {
		vx, _ := g.Lookup(h)
		vx.Edges(func(e nodeprog.Edge) bool {
			if e.Dst() != h {
				adj[[2]string{h, e.Dst()}], adj[[2]string{e.Dst(), h}] = true, true
			}
			return true
		})
	}
	hs := g.Handles()
	var want int64
	for i := range hs {
		for j := i + 1; j < len(hs); j++ {
			for k := j + 1; k < len(hs); k++ {
				if adj[[2]string{hs[i], hs[j]}] && adj[[2]string{hs[j], hs[k]}] && adj[[2]string{hs[i], hs[k]}] {
					want++
				}
			}
		}
	}
	res := analyze(t, g, "triangles", nil).(nodeprog.TriangleTotal)
	if res.Triangles != want || want == 0 {
		t.Fatalf("%d triangles, brute force %d", res.Triangles, want)
	}
}
