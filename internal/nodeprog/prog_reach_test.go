package nodeprog_test

import (
	"fmt"
	"testing"

	"github.com/weft-db/weft/internal/nodeprog"
	"github.com/weft-db/weft/internal/nodeprog/progtest"
)

func reach(t *testing.T, g *progtest.Graph, prog, params string) nodeprog.PathResult {
	t.Helper()
	return runAll(t, g, prog, params).(nodeprog.PathResult)
}

// TestLineReachability is Weaver's line_reachability.py: on a 200-vertex
// line, the end is reachable from everywhere and nothing is reachable
// backwards.
func TestLineReachability(t *testing.T) {
	g := lineGraph(200)
	for i := 0; i < 199; i += 33 {
		r := reach(t, g, "reachability", fmt.Sprintf(`{"src":%q,"dest":"v199"}`, v(i)))
		if !r.Reachable || r.Hops != 199-i || len(r.Path) != 200-i || r.Path[0] != v(i) {
			t.Fatalf("%s → v199: %+v", v(i), r)
		}
		back := reach(t, g, "reachability", fmt.Sprintf(`{"src":%q,"dest":%q}`, v(i+1), v(i)))
		jsonEq(t, back, `{"reachable":false,"hops":0,"path":[]}`)
	}
}

// TestLineProperties is Weaver's line_properties.py: edge_props filters
// cut the line where an edge lacks the property.
func TestLineProperties(t *testing.T) {
	g := lineGraph(40)
	count := func(filter string) int {
		n := 0
		for i := 1; i < 40; i++ {
			r := runAll(t, g, "pathless_reachability", fmt.Sprintf(`{"src":"v0","dest":%q,"edge_props":%s}`, v(i), filter)).(nodeprog.Reachable)
			if r.Reachable {
				n++
			}
		}
		return n
	}
	for filter, want := range map[string]int{
		`{}`:              39,
		`{"color":"red"}`: 1, // l0 is red, l1 blue
		`[{"key":"w","rel":"LESS_EQUAL","value":10}]`:                                           10,
		`[{"key":"w","rel":"GREATER","value":0},{"key":"color","rel":"ENDS_WITH","value":"e"}]`: 0,
	} {
		if got := count(filter); got != want {
			t.Errorf("filter %s: %d reachable, want %d", filter, got, want)
		}
	}
}

// TestParityReachability is the reachability half of Weaver's
// transactions.py: edges join vertices of equal parity only, so
// cross-parity reachability never holds.
func TestParityReachability(t *testing.T) {
	g := parityGraph(60)
	for _, pair := range [][2]int{{0, 58}, {1, 59}, {3, 31}, {0, 1}, {1, 58}, {10, 11}, {58, 0}} {
		r := reach(t, g, "reachability", fmt.Sprintf(`{"src":%q,"dest":%q}`, pv(pair[0]), pv(pair[1])))
		want := pair[0]%2 == pair[1]%2 && pair[0] <= pair[1]
		pl := runAll(t, g, "pathless_reachability", fmt.Sprintf(`{"src":%q,"dest":%q}`, pv(pair[0]), pv(pair[1]))).(nodeprog.Reachable)
		if r.Reachable != want || pl.Reachable != want {
			t.Fatalf("%v: reachability %+v, pathless %v; want %v", pair, r, pl, want)
		}
	}
	// the i → i+4 shortcuts (from multiples of 3) make the shortest path
	r := reach(t, g, "reachability", `{"src":"p0","dest":"p12"}`)
	jsonEq(t, r, `{"reachable":true,"hops":4,"path":["p0","p4","p6","p10","p12"]}`)
}

// TestReachabilityTieBreak: of equally short paths the lexicographically
// smallest is returned, whatever the edge order.
func TestReachabilityTieBreak(t *testing.T) {
	g := progtest.NewGraph().
		AddEdge("1", "a", "c", nil).AddEdge("2", "a", "b", nil).
		AddEdge("3", "c", "d", nil).AddEdge("4", "b", "d", nil).
		AddEdge("5", "d", "a", nil)
	jsonEq(t, reach(t, g, "reachability", `{"src":"a","dest":"d"}`), `{"reachable":true,"hops":2,"path":["a","b","d"]}`)
	jsonEq(t, reach(t, g, "reachability", `{"src":"a","dest":"a"}`), `{"reachable":true,"hops":0,"path":["a"]}`)
	jsonEq(t, reach(t, g, "reachability", `{"src":"x","dest":"a"}`), `{"reachable":false,"hops":0,"path":[]}`)
}

func TestNHopReachability(t *testing.T) {
	g := ringGraph(12)
	for maxHops, want := range map[int]bool{0: false, 4: false, 5: true, 11: true} {
		r := reach(t, g, "n_hop_reachability", fmt.Sprintf(`{"src":"r0","dest":"r5","max_hops":%d}`, maxHops))
		if r.Reachable != want || (want && r.Hops != 5) {
			t.Errorf("max_hops %d: %+v", maxHops, r)
		}
	}
	// a detour found first must not hide the short way: r0 → r3 directly
	// or around a long cycle
	g.AddEdge("short", "r0", "r2", nil)
	r := reach(t, g, "n_hop_reachability", `{"src":"r0","dest":"r3","max_hops":2}`)
	jsonEq(t, r, `{"reachable":true,"hops":2,"path":["r0","r2","r3"]}`)
}

func TestBFS(t *testing.T) {
	g := gridGraph(5, 4)
	d := runAll(t, g, "bfs", `{"src":"0,0"}`).(nodeprog.Depths).Depths
	if len(d) != 20 {
		t.Fatalf("%d vertices reached, want 20", len(d))
	}
	for h, depth := range d {
		var x, y int
		fmt.Sscanf(h, "%d,%d", &x, &y)
		if depth != x+y {
			t.Fatalf("depth of %s = %d, want %d", h, depth, x+y)
		}
	}
	jsonEq(t, runAll(t, g, "bfs", `{"src":"1,1","max_depth":1}`), `{"depths":{"1,1":0,"2,1":1,"1,2":1}}`)
	jsonEq(t, runAll(t, g, "bfs", `{"src":"0,2","edge_props":{"dir":"right"}}`), `{"depths":{"0,2":0,"1,2":1,"2,2":2,"3,2":3,"4,2":4}}`)
	jsonEq(t, runAll(t, g, "bfs", `{"src":"nowhere"}`), `{"depths":{}}`)
}
