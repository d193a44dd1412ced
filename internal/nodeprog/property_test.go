package nodeprog_test

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/weft-db/weft/internal/nodeprog"
	"github.com/weft-db/weft/internal/nodeprog/progtest"
)

// TestProgramsAgainstOracles: random small multigraphs (self-loops,
// parallel edges, weight ties, unweighted edges), random cluster layouts
// and delivery orders; every traversal program must agree with a brute-force
// oracle over all simple paths.
func TestProgramsAgainstOracles(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		const names = "abcdefg"
		n := rapid.IntRange(1, len(names)).Draw(rt, "n")
		g := progtest.NewGraph()
		for i := range n {
			g.AddVertex(names[i:i+1], props("k", i%3))
		}
		for i := range rapid.IntRange(0, 14).Draw(rt, "m") {
			src, dst := rapid.IntRange(0, n-1).Draw(rt, "src"), rapid.IntRange(0, n-1).Draw(rt, "dst")
			var p progtest.Props
			if rapid.IntRange(0, 9).Draw(rt, "weighted") > 0 {
				p = props("w", rapid.IntRange(0, 4).Draw(rt, "w"))
			}
			g.AddEdge(fmt.Sprintf("e%d", i), names[src:src+1], names[dst:dst+1], p)
		}
		c := progtest.NewCluster(g, reg, progtest.Options{
			Shards: rapid.IntRange(1, 5).Draw(rt, "shards"),
			Seed:   rapid.Uint64().Draw(rt, "seed"),
			Wire:   rapid.Bool().Draw(rt, "wire"),
			Runner: nodeprog.Config{BatchHopsMax: rapid.IntRange(1, 4).Draw(rt, "batch")},
		})
		run := func(prog string, params any) any {
			res, _, err := c.Run(prog, params)
			if err != nil {
				rt.Fatalf("%s %v: %v", prog, params, err)
			}
			return res
		}
		src := rapid.SampledFrom(g.Handles()).Draw(rt, "from")
		dest := rapid.SampledFrom(g.Handles()).Draw(rt, "to")

		checkReach(rt, g, run, src, dest)
		checkWeighted(rt, g, run, src, dest)
		checkDiscover(rt, g, run, src, dest, rapid.IntRange(0, 6).Draw(rt, "path_len"))
		checkTwoHood(rt, g, run, src)
	})
}

type runFn func(prog string, params any) any

func checkReach(rt *rapid.T, g *progtest.Graph, run runFn, src, dest string) {
	found, _, path := bestPath(g, src, dest, "", false, 1<<30)
	got := run("reachability", map[string]any{"src": src, "dest": dest}).(nodeprog.PathResult)
	if got.Reachable != found || !slices.Equal(got.Path, path) && found {
		rt.Fatalf("reachability %s→%s: %+v; oracle %v %v", src, dest, got, found, path)
	}
	if pl := run("pathless_reachability", map[string]any{"src": src, "dest": dest}).(nodeprog.Reachable); pl.Reachable != found {
		rt.Fatalf("pathless_reachability %s→%s: %v; oracle %v", src, dest, pl.Reachable, found)
	}
	maxHops := len(g.Handles()) / 2
	found, _, path = bestPath(g, src, dest, "", false, maxHops)
	got = run("n_hop_reachability", map[string]any{"src": src, "dest": dest, "max_hops": maxHops}).(nodeprog.PathResult)
	if got.Reachable != found || !slices.Equal(got.Path, path) && found {
		rt.Fatalf("n_hop_reachability %s→%s ≤%d: %+v; oracle %v %v", src, dest, maxHops, got, found, path)
	}
	depths := run("bfs", map[string]any{"src": src}).(nodeprog.Depths).Depths
	for _, h := range g.Handles() {
		found, _, path := bestPath(g, src, h, "", false, 1<<30)
		if d, ok := depths[h]; ok != found || (found && d != len(path)-1) {
			rt.Fatalf("bfs from %s: depth of %s = %d (%v); oracle %v", src, h, d, ok, path)
		}
	}
}

func checkWeighted(rt *rapid.T, g *progtest.Graph, run runFn, src, dest string) {
	for _, prog := range []string{"shortest_path", "widest_path"} {
		widest := prog == "widest_path"
		found, cost, path := bestPath(g, src, dest, "w", widest, 1<<30)
		got := run(prog, map[string]any{"src": src, "dest": dest, "weight": "w"}).(nodeprog.WeightedPath)
		if got.Reachable != found || (found && !slices.Equal(got.Path, path)) {
			rt.Fatalf("%s %s→%s: %+v; oracle %v %v (cost %v)", prog, src, dest, got, found, path, cost)
		}
		if found && !math.IsInf(cost, 1) && *got.Cost != cost {
			rt.Fatalf("%s %s→%s: cost %v; oracle %v", prog, src, dest, *got.Cost, cost)
		}
		costs := run(prog, map[string]any{"src": src, "weight": "w"}).(nodeprog.Costs).Costs
		for _, h := range g.Handles() {
			found, cost, _ := bestPath(g, src, h, "w", widest, 1<<30)
			if widest && h == src {
				found = false // the width of the empty path is not reported
			}
			if c, ok := costs[h]; ok != found || (found && c != cost) {
				rt.Fatalf("%s from %s: cost of %s = %v (%v); oracle %v (%v)", prog, src, h, c, ok, cost, found)
			}
		}
	}
}

func checkDiscover(rt *rapid.T, g *progtest.Graph, run runFn, src, dest string, pathLen int) {
	want := map[string][]string{}
	count := 0
	keep := func(v nodeprog.Vertex) bool { k, _ := v.Prop("k"); return k.Int() < 2 }
	simplePaths(g, src, dest, pathLen, nil, func(vs []string, es []nodeprog.Edge) {
		for _, h := range vs {
			if vx, _ := g.Lookup(h); !keep(vx) {
				return
			}
		}
		count++
		for i, h := range vs {
			want[h] = append(want[h], "")
			if i < len(es) {
				want[h] = append(want[h], es[i].Handle())
			}
		}
	})
	got := run("discover_paths", map[string]any{"src": src, "dest": dest, "path_len": pathLen,
		"node_preds": []map[string]any{{"key": "k", "rel": "LESS", "value": 2}}}).(nodeprog.Paths)
	if got.Count != count || len(got.Paths) != len(want) {
		rt.Fatalf("discover_paths %s→%s ≤%d: %d paths over %d vertices; oracle %d over %d", src, dest, pathLen, got.Count, len(got.Paths), count, len(want))
	}
	for h, es := range want {
		es = slices.DeleteFunc(es, func(e string) bool { return e == "" })
		slices.Sort(es)
		var gotEs []string
		for _, e := range got.Paths[h] {
			gotEs = append(gotEs, e.Handle)
		}
		slices.Sort(gotEs)
		if strings.Join(slices.Compact(es), " ") != strings.Join(gotEs, " ") {
			rt.Fatalf("discover_paths %s→%s: edges of %s = %v; oracle %v", src, dest, h, gotEs, es)
		}
	}
}

func checkTwoHood(rt *rapid.T, g *progtest.Graph, run runFn, center string) {
	want := map[string]bool{}
	for _, h := range g.Handles() {
		if found, _, path := bestPath(g, center, h, "", false, 2); found && h != center && len(path) > 1 {
			want[h] = true
		}
	}
	got := run("two_neighborhood", map[string]any{"node": center, "prop_key": "k"}).(nodeprog.Neighborhood)
	var gotNodes []string
	for _, nv := range got.Nodes {
		gotNodes = append(gotNodes, nv.Node)
	}
	if strings.Join(gotNodes, " ") != strings.Join(slices.Sorted(maps.Keys(want)), " ") {
		rt.Fatalf("two_neighborhood of %s: %v; oracle %v", center, gotNodes, slices.Sorted(maps.Keys(want)))
	}
}
