package nodeprog_test

import (
	"bufio"
	data "github.com/weft-db/weft/internal/gnutella"
	"math"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/weft-db/weft/internal/nodeprog"
	"github.com/weft-db/weft/internal/nodeprog/progtest"
)

// Oracle tests on SNAP p2p-Gnutella31 (62,586 vertices, 147,892 edges) with
// the reference results of another graph engine (shared/data/gnutella). The
// reference's source for BFS and SSSP is vertex 6; "-directed" files follow
// out-edges, the others treat the graph as undirected. Unreachable vertices
// are 9223372036854775807 (BFS) or "infinity" (SSSP).

var gnutella struct {
	once sync.Once
	g    *progtest.Graph // weighted copy: every edge has int property "weight"
	err  error
}

func gnutellaGraph(t testing.TB) *progtest.Graph {
	t.Helper()
	gnutella.once.Do(func() {
		g := progtest.NewGraph()
		for _, name := range []string{"p2p-31.v", "p2p-31.e"} {
			f, err := data.Open(name)
			if err != nil {
				gnutella.err = err
				return
			}
			if name == "p2p-31.v" {
				err = progtest.ReadVertexList(g, f)
			} else {
				err = progtest.ReadEdgeList(g, f, name, "weight")
			}
			f.Close()
			if err != nil {
				gnutella.err = err
				return
			}
		}
		gnutella.g = g
	})
	if gnutella.err != nil {
		t.Fatal(gnutella.err)
	}
	if n, m := gnutella.g.NumVertices(), gnutella.g.NumEdges(); n != 62586 || m != 147892 {
		t.Fatalf("gnutella: %d vertices, %d edges; want 62586, 147892", n, m)
	}
	return gnutella.g
}

// readRef reads "vertex value" lines.
func readRef(t testing.TB, name string) map[string]string {
	t.Helper()
	f, err := data.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), " "); ok {
			out[k] = v
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func refFloat(t testing.TB, s string) float64 {
	t.Helper()
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("reference value %q: %v", s, err)
	}
	return f
}

const unreachableBFS = "9223372036854775807"

func TestGnutellaBFS(t *testing.T) {
	g := gnutellaGraph(t)
	ref := readRef(t, "p2p-31-BFS-directed")
	for _, shards := range []int{1, 4} {
		res, _, err := progtest.NewCluster(g, reg, progtest.Options{Shards: shards}).Run("bfs", `{"src":"6"}`)
		if err != nil {
			t.Fatal(err)
		}
		depths := res.(nodeprog.Depths).Depths
		reached := 0
		for h, want := range ref {
			got, ok := depths[h]
			if want == unreachableBFS {
				if ok {
					t.Fatalf("shards=%d: %s reached at depth %d; reference: unreachable", shards, h, got)
				}
				continue
			}
			reached++
			if !ok || strconv.Itoa(got) != want {
				t.Fatalf("shards=%d: depth of %s = %d (reached %v), reference %s", shards, h, got, ok, want)
			}
		}
		if len(depths) != reached {
			t.Fatalf("shards=%d: %d vertices reached, reference %d", shards, len(depths), reached)
		}
	}
}

func TestGnutellaSSSP(t *testing.T) {
	g := gnutellaGraph(t)
	ref := readRef(t, "p2p-31-SSSP-directed")
	for _, shards := range []int{1, 4} {
		res, _, err := progtest.NewCluster(g, reg, progtest.Options{Shards: shards}).Run("shortest_path", `{"src":"6","weight":"weight"}`)
		if err != nil {
			t.Fatal(err)
		}
		costs := res.(nodeprog.Costs).Costs
		reached := 0
		for h, want := range ref {
			got, ok := costs[h]
			if want == "infinity" {
				if ok {
					t.Fatalf("shards=%d: %s reached at cost %v; reference: unreachable", shards, h, got)
				}
				continue
			}
			reached++
			if !ok || got != refFloat(t, want) {
				t.Fatalf("shards=%d: cost of %s = %v (reached %v), reference %s", shards, h, got, ok, want)
			}
		}
		if len(costs) != reached {
			t.Fatalf("shards=%d: %d vertices reached, reference %d", shards, len(costs), reached)
		}
	}
}

// TestGnutellaShortestPathPoints checks point-to-point shortest_path with
// paths against the reference costs for two destinations, and that each returned path exists and costs what it claims.
func TestGnutellaShortestPathPoints(t *testing.T) {
	g := gnutellaGraph(t)
	ref := readRef(t, "p2p-31-SSSP-directed")
	for i, shards := range []int{1, 4} {
		dest := []string{"7", "62586"}[i]
		res, _, err := progtest.NewCluster(g, reg, progtest.Options{Shards: shards}).Run("shortest_path",
			map[string]any{"src": "6", "dest": dest, "weight": "weight"})
		if err != nil {
			t.Fatal(err)
		}
		wp := res.(nodeprog.WeightedPath)
		if ref[dest] == "infinity" {
			t.Fatalf("pick a reachable destination, not %s", dest)
		}
		if !wp.Reachable || *wp.Cost != refFloat(t, ref[dest]) {
			t.Fatalf("6→%s on %d shards: %+v; reference cost %s", dest, shards, wp, ref[dest])
		}
		if sum := pathCost(t, g, wp.Path, "weight"); sum != *wp.Cost {
			t.Fatalf("6→%s: path %v costs %v, result says %v", dest, wp.Path, sum, *wp.Cost)
		}
	}
}

// pathCost sums the cheapest edge between consecutive path vertices.
func pathCost(t testing.TB, g *progtest.Graph, path []string, key string) float64 {
	t.Helper()
	total := 0.0
	for i := 0; i+1 < len(path); i++ {
		v, ok := g.Lookup(path[i])
		if !ok {
			t.Fatalf("path vertex %s does not exist", path[i])
		}
		best := math.Inf(1)
		v.Edges(func(e nodeprog.Edge) bool {
			if e.Dst() == path[i+1] {
				w, _ := e.Prop(key)
				f, _ := w.Number()
				best = math.Min(best, f)
			}
			return true
		})
		if math.IsInf(best, 1) {
			t.Fatalf("no edge %s → %s on the path", path[i], path[i+1])
		}
		total += best
	}
	return total
}

// TestGnutellaReachability checks reachability and pathless_reachability
// from vertex 6 against the reference BFS depths (hops = depth), for
// reachable and unreachable destinations.
func TestGnutellaReachability(t *testing.T) {
	g := gnutellaGraph(t)
	ref := readRef(t, "p2p-31-BFS-directed")
	for i, shards := range []int{1, 4} {
		c := progtest.NewCluster(g, reg, progtest.Options{Shards: shards})
		for _, dest := range [][]string{{"50000", "3"}, {"9049", "40000"}}[i] {
			params := map[string]any{"src": "6", "dest": dest}
			res, _, err := c.Run("reachability", params)
			if err != nil {
				t.Fatal(err)
			}
			pr := res.(nodeprog.PathResult)
			pl, _, err := c.Run("pathless_reachability", params)
			if err != nil {
				t.Fatal(err)
			}
			want := ref[dest] != unreachableBFS
			if pr.Reachable != want || pl.(nodeprog.Reachable).Reachable != want {
				t.Fatalf("6→%s: reachability %v, pathless %v; reference depth %s", dest, pr.Reachable, pl, ref[dest])
			}
			if want && strconv.Itoa(pr.Hops) != ref[dest] {
				t.Fatalf("6→%s: %d hops; reference depth %s", dest, pr.Hops, ref[dest])
			}
		}
	}
}

// TestGnutellaWCC checks that wcc partitions the vertices exactly as the
// reference does (labels differ: ours are the smallest handle).
func TestGnutellaWCC(t *testing.T) {
	g := gnutellaGraph(t)
	ref := readRef(t, "p2p-31-WCC")
	res, err := progtest.NewCluster(g, reg, progtest.Options{}).Analyze("wcc", `{}`)
	if err != nil {
		t.Fatal(err)
	}
	comp := res.(nodeprog.Components)
	ours2ref, ref2ours := map[string]string{}, map[string]string{}
	for h, r := range ref {
		o, ok := comp.Labels[h]
		if !ok {
			t.Fatalf("no label for %s", h)
		}
		if x, ok := ours2ref[o]; ok && x != r {
			t.Fatalf("our component %s spans reference components %s and %s", o, x, r)
		}
		if x, ok := ref2ours[r]; ok && x != o {
			t.Fatalf("reference component %s spans our components %s and %s", r, x, o)
		}
		ours2ref[o], ref2ours[r] = r, o
	}
	if comp.Count != len(ref2ours) || len(comp.Labels) != len(ref) {
		t.Fatalf("%d components over %d vertices; reference %d over %d", comp.Count, len(comp.Labels), len(ref2ours), len(ref))
	}
}

// TestGnutellaPageRank checks the undirected reference (p2p-31-PR: damping
// 0.85, 10 iterations, dangling rank spread evenly) for every vertex.
//
// The directed reference (p2p-31-PR-directed) is not an oracle: its ranks
// sum to 0.46, and every vertex without out-edges holds exactly the base
// rank whatever its in-edges, i.e. that engine does not let rank flow into
// dangling vertices. Our directed pagerank follows Graphalytics and is
// checked against a brute-force model instead (TestPageRankModel).
func TestGnutellaPageRank(t *testing.T) {
	g := gnutellaGraph(t)
	ref := readRef(t, "p2p-31-PR")
	res, err := progtest.NewCluster(g, reg, progtest.Options{}).Analyze("pagerank", `{"directed":false,"iterations":10,"damping":0.85}`)
	if err != nil {
		t.Fatal(err)
	}
	ranks := res.(nodeprog.PageRank).Ranks
	sum := 0.0
	for h, r := range ref {
		want, got := refFloat(t, r), ranks[h]
		if math.Abs(got-want) > 1e-12*math.Max(1e-6, want) {
			t.Fatalf("rank of %s = %.17g, reference %.17g", h, got, want)
		}
		sum += got
	}
	if math.Abs(sum-1) > 1e-9 {
		t.Fatalf("ranks sum to %v", sum)
	}
}

// TestGnutellaLCC checks lcc in undirected mode (the reference's
// definition) for every vertex, and that the clustering node program
// agrees with lcc in out mode (Weaver's definition) on sampled vertices.
func TestGnutellaLCC(t *testing.T) {
	g := gnutellaGraph(t)
	ref := readRef(t, "p2p-31-LCC")
	c := progtest.NewCluster(g, reg, progtest.Options{Shards: 4})
	res, err := c.Analyze("lcc", `{"mode":"undirected"}`)
	if err != nil {
		t.Fatal(err)
	}
	coeffs := res.(nodeprog.LCC).Coefficients
	for h, r := range ref {
		if want, got := refFloat(t, r), coeffs[h]; math.Abs(got-want) > 1e-12 {
			t.Fatalf("undirected lcc of %s = %v, reference %v", h, got, want)
		}
	}
	res, err = c.Analyze("lcc", `{"mode":"out"}`)
	if err != nil {
		t.Fatal(err)
	}
	out := res.(nodeprog.LCC).Coefficients
	differ := 0
	for i := 1; i <= 62586; i += 97 {
		h := strconv.Itoa(i)
		cres, _, err := c.Run("clustering", map[string]any{"node": h})
		if err != nil {
			t.Fatal(err)
		}
		if got := cres.(nodeprog.Clustering).Coefficient; got != out[h] {
			t.Fatalf("clustering(%s) = %v, lcc out mode %v", h, got, out[h])
		}
		if out[h] != coeffs[h] {
			differ++
		}
	}
	if differ == 0 {
		t.Fatal("out and undirected lcc agree on every sampled vertex: the sample tests nothing")
	}
}
