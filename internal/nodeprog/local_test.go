package nodeprog_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/weft-db/weft/internal/nodeprog"
)

// TestLocalProgramsTakeTheShortPath: the one-vertex programs are Local, and
// runAll compared their short-path answers with the runners' (missing
// vertices and filters included).
func TestLocalProgramsTakeTheShortPath(t *testing.T) {
	g := godsGraph()
	before := localRuns
	for _, c := range []struct{ name, params string }{
		{"get_node", `{"node":"jupiter"}`},
		{"get_node", `{"node":"nobody"}`},
		{"read_node_props", `{"node":"hercules","keys":["age"]}`},
		{"get_edges", `{"node":"jupiter","limit":2}`},
		{"get_edges", `{"node":"jupiter","nbrs":["pluto"]}`},
		{"count_edges", `{"node":"jupiter"}`},
		{"count_edges", `{"node":"nobody"}`},
	} {
		runAll(t, g, c.name, c.params)
	}
	if got := localRuns - before; got != 7 {
		t.Fatalf("%d of 7 runs took the Local comparison", got)
	}
	for _, name := range []string{"reachability", "bfs", "shortest_path", "clustering"} {
		p, _ := reg.Program(name)
		comp, err := p.Compile(json.RawMessage(`{"src":"jupiter","dst":"pluto","node":"jupiter"}`))
		if err == nil && nodeprog.IsLocal(comp) {
			t.Errorf("%s hops, so it cannot be Local", name)
		}
	}
}

// A program that says Local but hops, or keeps state, fails with ErrFailed
// instead of answering wrongly.
func TestRunLocalRefusesHopsAndState(t *testing.T) {
	type none struct{}
	mk := func(step func(c *nodeprog.Ctx) error) nodeprog.Compiled {
		d := &nodeprog.Def[none, none, int]{
			ProgName: "bad", Local: true,
			Parse:  func(json.RawMessage) (*none, error) { return &none{}, nil },
			Start:  func(*none) []nodeprog.Hop { return []nodeprog.Hop{{To: "jupiter"}} },
			Step:   func(c *nodeprog.Ctx, _ *none, _ nodeprog.Vertex, _ none) error { return step(c) },
			Gather: func(*none) nodeprog.GatherOf[int] { return &firstInt{} },
		}
		comp, err := d.Compile(nil)
		if err != nil {
			t.Fatal(err)
		}
		return comp
	}
	g := godsGraph()
	lookup := func(h string) (nodeprog.Vertex, bool) { return g.Lookup(h) }
	for name, step := range map[string]func(c *nodeprog.Ctx) error{
		"hop":   func(c *nodeprog.Ctx) error { c.Hop("saturn", nil); return nil },
		"state": func(c *nodeprog.Ctx) error { return c.SetState(1) },
		"panic": func(c *nodeprog.Ctx) error { panic("boom") },
	} {
		comp := mk(step)
		h, err := nodeprog.LocalStart(comp)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := nodeprog.RunLocal(comp, "bad", h, lookup); !errors.Is(err, nodeprog.ErrFailed) {
			t.Errorf("%s: got %v, want ErrFailed", name, err)
		}
	}
	ok := mk(func(c *nodeprog.Ctx) error { c.Emit(7); return nil })
	h, _ := nodeprog.LocalStart(ok)
	if res, err := nodeprog.RunLocal(ok, "bad", h, lookup); err != nil || res != 7 {
		t.Fatalf("RunLocal = %v, %v; want 7", res, err)
	}
}

type firstInt struct{ v *int }

func (f *firstInt) Add(e int) (bool, error) { f.v = &e; return true, nil }
func (f *firstInt) Result() (any, error) {
	if f.v == nil {
		return nil, nil
	}
	return *f.v, nil
}
