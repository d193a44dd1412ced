package nodeprog_test

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/weft-db/weft/internal/nodeprog"
	"github.com/weft-db/weft/internal/nodeprog/progtest"
)

// checkPath compares a WeightedPath with the brute-force oracle.
func checkPath(t *testing.T, g *progtest.Graph, prog, src, dest string) {
	t.Helper()
	widest := prog == "widest_path"
	res := runAll(t, g, prog, fmt.Sprintf(`{"src":%q,"dest":%q,"weight":"w"}`, src, dest)).(nodeprog.WeightedPath)
	found, cost, path := bestPath(g, src, dest, "w", widest, 1<<30)
	if res.Reachable != found || strings.Join(res.Path, " ") != strings.Join(path, " ") {
		t.Fatalf("%s %s→%s: %+v; oracle found %v, path %v", prog, src, dest, res, found, path)
	}
	if found && !math.IsInf(cost, 1) && (res.Cost == nil || *res.Cost != cost || res.Hops != len(path)-1) {
		t.Fatalf("%s %s→%s: cost %v hops %d; oracle %v, %d", prog, src, dest, res.Cost, res.Hops, cost, len(path)-1)
	}
}

// TestShortestAndWidestOnGrid compares every destination of a 4×4 grid
// (weights make many ties) with the oracle, both programs.
func TestShortestAndWidestOnGrid(t *testing.T) {
	g := gridGraph(4, 4)
	g.AddEdge("back", "3,3", "0,0", props("w", 1))
	for _, prog := range []string{"shortest_path", "widest_path"} {
		for _, dest := range g.Handles() {
			checkPath(t, g, prog, "0,1", dest)
		}
	}
}

// TestWidestPathTies: a narrow early edge can make a worse label tie
// later; the Pareto frontier keeps it so the answer (width, then hops,
// then path) does not depend on arrival order.
func TestWidestPathTies(t *testing.T) {
	g := progtest.NewGraph().
		AddEdge("1", "s", "z", props("w", 9)).AddEdge("2", "z", "m", props("w", 9)).
		AddEdge("3", "s", "a", props("w", 2)).AddEdge("4", "a", "m", props("w", 9)).
		AddEdge("5", "m", "t", props("w", 1))
	checkPath(t, g, "widest_path", "s", "t")
	jsonEq(t, runAll(t, g, "widest_path", `{"src":"s","dest":"t","weight":"w"}`),
		`{"reachable":true,"cost":1,"hops":3,"path":["s","a","m","t"]}`)
	jsonEq(t, runAll(t, g, "widest_path", `{"src":"s","dest":"s","weight":"w"}`),
		`{"reachable":true,"cost":null,"hops":0,"path":["s"]}`)
	jsonEq(t, runAll(t, g, "widest_path", `{"src":"s","weight":"w"}`),
		`{"costs":{"a":2,"m":9,"t":1,"z":9}}`)
}

// TestShortestPathAllCosts: without dest, the costs of every reachable
// vertex (the SSSP the gnutella oracle checks at scale).
func TestShortestPathAllCosts(t *testing.T) {
	g := gridGraph(3, 3)
	res := runAll(t, g, "shortest_path", `{"src":"0,0","weight":"w"}`).(nodeprog.Costs)
	for _, h := range g.Handles() {
		found, cost, _ := bestPath(g, "0,0", h, "w", false, 1<<30)
		if c, ok := res.Costs[h]; ok != found || c != cost {
			t.Fatalf("cost of %s = %v (%v); oracle %v (%v)", h, c, ok, cost, found)
		}
	}
}

// TestPathWeights: edges without a numeric weight are not taken; a
// negative weight fails shortest_path (not widest_path); fractional
// weights work.
func TestPathWeights(t *testing.T) {
	g := progtest.NewGraph().
		AddEdge("1", "a", "b", props("w", "heavy")).
		AddEdge("2", "a", "c", props("w", 0.5)).
		AddEdge("3", "c", "b", props("w", 0.25)).
		AddEdge("4", "b", "d", nil)
	jsonEq(t, runAll(t, g, "shortest_path", `{"src":"a","dest":"b","weight":"w"}`),
		`{"reachable":true,"cost":0.75,"hops":2,"path":["a","c","b"]}`)
	jsonEq(t, runAll(t, g, "shortest_path", `{"src":"a","dest":"d","weight":"w"}`),
		`{"reachable":false,"cost":null,"hops":0,"path":[]}`)
	jsonEq(t, runAll(t, g, "shortest_path", `{"src":"a","dest":"b","weight":"w","edge_props":[{"key":"w","rel":"GREATER","value":0.3}]}`),
		`{"reachable":false,"cost":null,"hops":0,"path":[]}`)
	g.AddEdge("5", "c", "e", props("w", -2))
	err := runErr(t, g, "shortest_path", `{"src":"a","weight":"w"}`)
	if !errors.Is(err, nodeprog.ErrFailed) || !strings.Contains(err.Error(), "negative") {
		t.Fatalf("negative weight: %v", err)
	}
	jsonEq(t, runAll(t, g, "widest_path", `{"src":"a","dest":"e","weight":"w"}`),
		`{"reachable":true,"cost":-2,"hops":2,"path":["a","c","e"]}`)
}
