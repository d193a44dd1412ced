package progtest_test

import (
	"testing"

	"github.com/weft-db/weft/internal/nodeprog"
	"github.com/weft-db/weft/internal/nodeprog/progtest"
	"github.com/weft-db/weft/internal/value"
)

func TestGraphViews(t *testing.T) {
	g := progtest.NewGraph().
		AddVertex("a", progtest.P("z", 1, "b", "x")).
		AddEdge("e1", "a", "b", progtest.P("w", 2.5)).
		AddEdge("e2", "a", "c", nil).
		AddAlias("a", "alpha")
	va, ok := g.Lookup("a")
	if !ok || va.EdgeCount() != 2 || va.Aliases()[0] != "alpha" {
		t.Fatalf("a: %v %v", va, ok)
	}
	var keys string
	va.Props(func(k string, _ value.Value) bool { keys += k; return true })
	if keys != "bz" {
		t.Fatalf("props in order %q, want sorted", keys)
	}
	var dsts string
	va.Edges(func(e nodeprog.Edge) bool { dsts += e.Dst(); return true })
	if dsts != "bc" {
		t.Fatalf("edges in order %q, want insertion order", dsts)
	}
	g.RemoveVertex("b")
	if _, ok := g.Lookup("b"); ok || g.NumVertices() != 2 || g.NumEdges() != 2 {
		t.Fatalf("after removing b: %d vertices, %d edges", g.NumVertices(), g.NumEdges())
	}
	var seen []string
	g.Vertices(func(v nodeprog.Vertex) bool { seen = append(seen, v.Handle()); return true })
	if len(seen) != 2 || seen[0] != "a" || seen[1] != "c" {
		t.Fatalf("snapshot: %v", seen)
	}
}

func TestShardOfSpreads(t *testing.T) {
	c := progtest.NewCluster(progtest.NewGraph(), nodeprog.Builtins(), progtest.Options{Shards: 4})
	counts := make([]int, 4)
	for i := range 1000 {
		counts[c.ShardOf(string(rune('a'+i%26))+string(rune('0'+i/26%10))+string(rune('A'+i/260)))]++
	}
	for s, n := range counts {
		if n < 150 {
			t.Fatalf("shard %d got %d of 1000 handles: %v", s, n, counts)
		}
	}
}
