package nodeprog_test

import (
	"encoding/json"
	"fmt"
	"strconv"
	"testing"

	"github.com/weft-db/weft/internal/nodeprog"
	"github.com/weft-db/weft/internal/nodeprog/progtest"
)

var reg = nodeprog.Builtins()

// layouts are the cluster shapes every program must answer identically on:
// one shard; four shards in FIFO order; and shuffled delivery through the
// wire with tiny batches, where reports overtake batches.
var layouts = []progtest.Options{
	{Shards: 1},
	{Shards: 4},
	{Shards: 4, Wire: true, Seed: 1},
	{Shards: 3, Wire: true, Seed: 7, Runner: nodeprog.Config{BatchHopsMax: 2}},
	{Shards: 7, Seed: 99, Runner: nodeprog.Config{BatchHopsMax: 1}},
}

// runAll runs the program on every layout, fails unless every run succeeds
// with the same JSON result, and returns the result of the first.
func runAll(t testing.TB, g *progtest.Graph, name string, params any) any {
	t.Helper()
	var first any
	var want []byte
	for i, o := range layouts {
		res, _, err := progtest.NewCluster(g, reg, o).Run(name, params)
		if err != nil {
			t.Fatalf("%s on layout %d (%+v): %v", name, i, o, err)
		}
		got, err := json.Marshal(res)
		if err != nil {
			t.Fatalf("%s: result does not marshal: %v", name, err)
		}
		if i == 0 {
			first, want = res, got
			continue
		}
		if string(got) != string(want) {
			t.Fatalf("%s: layout %d (%+v) answered\n%s\nbut one shard answered\n%s", name, i, o, got, want)
		}
	}
	// A Local program must answer the same by the short path engines take.
	if res, ok, err := progtest.NewCluster(g, reg, layouts[1]).RunLocal(name, params); ok {
		if err != nil {
			t.Fatalf("%s by RunLocal: %v", name, err)
		}
		got, _ := json.Marshal(res)
		if string(got) != string(want) {
			t.Fatalf("%s: RunLocal answered\n%s\nbut the runners answered\n%s", name, got, want)
		}
		localRuns++
	}
	return first
}

// localRuns counts runAll calls that also checked RunLocal.
var localRuns int

// runErr runs the program on one and on four shards and returns the error
// both must give.
func runErr(t testing.TB, g *progtest.Graph, name string, params any) error {
	t.Helper()
	var errs [2]error
	for i, shards := range []int{1, 4} {
		_, _, errs[i] = progtest.NewCluster(g, reg, progtest.Options{Shards: shards, Wire: true}).Run(name, params)
	}
	if (errs[0] == nil) != (errs[1] == nil) {
		t.Fatalf("%s: one shard says %v, four say %v", name, errs[0], errs[1])
	}
	if _, ok, err := progtest.NewCluster(g, reg, layouts[0]).RunLocal(name, params); ok && (err == nil) != (errs[0] == nil) {
		t.Fatalf("%s: RunLocal says %v, the runners %v", name, err, errs[0])
	}
	return errs[0]
}

// jsonEq fails unless v marshals to the same JSON as want.
func jsonEq(t testing.TB, v any, want string) {
	t.Helper()
	got, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var a, b any
	if err := json.Unmarshal(got, &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(want), &b); err != nil {
		t.Fatalf("bad want JSON %s: %v", want, err)
	}
	ga, _ := json.Marshal(a)
	gb, _ := json.Marshal(b)
	if string(ga) != string(gb) {
		t.Fatalf("got  %s\nwant %s", ga, gb)
	}
}

type P = progtest.Props

var props = progtest.P

// line: v0 → v1 → … → v(n-1); edge l<i> has w = i+1 and color red/blue
// alternating.
func lineGraph(n int) *progtest.Graph {
	g := progtest.NewGraph()
	for i := range n {
		g.AddVertex(v(i), props("i", i))
	}
	for i := range n - 1 {
		color := "red"
		if i%2 == 1 {
			color = "blue"
		}
		g.AddEdge("l"+strconv.Itoa(i), v(i), v(i+1), props("w", i+1, "color", color))
	}
	return g
}

func v(i int) string { return "v" + strconv.Itoa(i) }

// ring: r0 → r1 → … → r(n-1) → r0.
func ringGraph(n int) *progtest.Graph {
	g := progtest.NewGraph()
	for i := range n {
		g.AddEdge(fmt.Sprintf("re%d", i), fmt.Sprintf("r%d", i), fmt.Sprintf("r%d", (i+1)%n), props("w", 1))
	}
	return g
}

// grid: w×h vertices "x,y" with edges right and down; the right edge from
// (x, y) weighs 1+(x+y)%3, the down edge 2.
func gridGraph(w, h int) *progtest.Graph {
	g := progtest.NewGraph()
	at := func(x, y int) string { return fmt.Sprintf("%d,%d", x, y) }
	for y := range h {
		for x := range w {
			g.AddVertex(at(x, y), props("x", x, "y", y))
			if x+1 < w {
				g.AddEdge("r"+at(x, y), at(x, y), at(x+1, y), props("w", 1+(x+y)%3, "dir", "right"))
			}
			if y+1 < h {
				g.AddEdge("d"+at(x, y), at(x, y), at(x, y+1), props("w", 2, "dir", "down"))
			}
		}
	}
	return g
}

// godsGraph is Titan's "graph of the gods".
func godsGraph() *progtest.Graph {
	g := progtest.NewGraph()
	for _, n := range []struct {
		h, typ string
		age    int
	}{
		{"saturn", "titan", 10000}, {"jupiter", "god", 5000}, {"neptune", "god", 4500},
		{"pluto", "god", 4000}, {"hercules", "demigod", 30}, {"alcmene", "human", 45},
		{"nemean", "monster", 0}, {"hydra", "monster", 0}, {"cerberus", "monster", 0},
		{"sky", "location", 0}, {"sea", "location", 0}, {"tartarus", "location", 0},
	} {
		p := props("name", n.h, "type", n.typ)
		if n.age > 0 {
			p["age"] = progtest.V(n.age)
		}
		g.AddVertex(n.h, p)
	}
	for _, e := range []struct {
		h, src, label, dst string
		extra              P
	}{
		{"e1", "jupiter", "father", "saturn", nil},
		{"e2", "jupiter", "lives", "sky", props("reason", "loves fresh breezes")},
		{"e3", "jupiter", "brother", "neptune", nil},
		{"e4", "jupiter", "brother", "pluto", nil},
		{"e5", "neptune", "lives", "sea", props("reason", "loves waves")},
		{"e6", "neptune", "brother", "jupiter", nil},
		{"e7", "neptune", "brother", "pluto", nil},
		{"e8", "hercules", "father", "jupiter", nil},
		{"e9", "hercules", "mother", "alcmene", nil},
		{"e10", "hercules", "battled", "nemean", props("time", 1)},
		{"e11", "hercules", "battled", "hydra", props("time", 2)},
		{"e12", "hercules", "battled", "cerberus", props("time", 12)},
		{"e13", "pluto", "brother", "jupiter", nil},
		{"e14", "pluto", "brother", "neptune", nil},
		{"e15", "pluto", "lives", "tartarus", props("reason", "no fear of death")},
		{"e16", "pluto", "pet", "cerberus", nil},
		{"e17", "cerberus", "lives", "tartarus", nil},
	} {
		p := props("label", e.label)
		for k, x := range e.extra {
			p[k] = x
		}
		g.AddEdge(e.h, e.src, e.dst, p)
	}
	g.AddAlias("jupiter", "zeus").AddAlias("hercules", "heracles")
	return g
}

// parityGraph: n vertices; edges only between vertices of equal parity
// (i → i+2, and i → i+4 every third vertex), as in Weaver's transactions.py.
func parityGraph(n int) *progtest.Graph {
	g := progtest.NewGraph()
	for i := range n {
		g.AddVertex(pv(i), props("parity", i%2))
	}
	for i := range n {
		if i+2 < n {
			g.AddEdge(fmt.Sprintf("p%d-%d", i, i+2), pv(i), pv(i+2), nil)
		}
		if i%3 == 0 && i+4 < n {
			g.AddEdge(fmt.Sprintf("p%d-%d", i, i+4), pv(i), pv(i+4), nil)
		}
	}
	return g
}

func pv(i int) string { return "p" + strconv.Itoa(i) }
