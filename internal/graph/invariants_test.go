package graph

import (
	"testing"
)

// CheckInvariants must be able to fail: each corruption below breaks one
// rule it checks.
func TestCheckInvariantsCatchesCorruption(t *testing.T) {
	for _, tc := range []struct {
		name    string
		corrupt func(g *Graph)
	}{
		{"stamp_refs", func(g *Graph) { g.stamps.ents[1].refs++ }},
		{"stamp_live_counter", func(g *Graph) { g.stamps.live++ }},
		{"handle_refs", func(g *Graph) { g.handles.ents[2].refs++ }},
		{"key_refs", func(g *Graph) { g.keys.ents[1].refs-- }},
		{"edge_live_twice", func(g *Graph) {
			v := vertexOf(g, "a")
			v.edges = append(v.edges, v.edges[1])
			g.handles.ents[v.edges[1].dst].refs++
			g.stamps.ref(v.edges[1].created)
		}},
		{"dead_count", func(g *Graph) { vertexOf(g, "a").dead++ }},
		{"live_edge_on_deleted_vertex", func(g *Graph) {
			v := vertexOf(g, "d")
			v.edges = []edge{{off: 0, n: 1, dst: 1}}
			v.names = []byte("z")
			g.handles.ents[1].refs++
		}},
		{"prop_live_twice", func(g *Graph) {
			v := vertexOf(g, "a")
			v.props = append(v.props, v.props[0])
			g.keys.ents[v.props[0].key].refs++
			g.stamps.ref(v.props[0].created)
		}},
		{"counts", func(g *Graph) { g.n.edges++ }},
		{"cursor", func(g *Graph) { vertexOf(g, "a").flat = 1 }},
		{"dirty_flag", func(g *Graph) { vertexOf(g, "a").dirty = false }},
		{"write_log_repeat", func(g *Graph) {
			v := vertexOf(g, "a")
			v.writes = append(v.writes, v.writes[0])
			g.stamps.ref(v.writes[0])
		}},
		{"edge_name_range", func(g *Graph) { vertexOf(g, "a").edges[0].n = 99 }},
		{"handle_index", func(g *Graph) {
			id, _ := g.handles.lookup("a")
			g.handles.ids.del("a", id)
			g.handles.ids.put("a", id+1)
		}},
		{"free_slot_in_use", func(g *Graph) { g.free = append(g.free, 0) }},
		{"alias_live_twice", func(g *Graph) {
			x := vertexOf(g, "a").x
			x.aliases = append(x.aliases, x.aliases[0])
			g.stamps.ref(x.aliases[0].created)
			g.n.versions++
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := base(t)
			if err := g.CheckInvariants(); err != nil {
				t.Fatalf("before corruption: %v", err)
			}
			tc.corrupt(g)
			if err := g.CheckInvariants(); err == nil {
				t.Fatal("corruption not detected")
			} else {
				t.Log(err)
			}
		})
	}
}

func TestCheckInvariantsCatchesIndexCorruption(t *testing.T) {
	cfg := DefaultConfig()
	cfg.EdgeIndexMin = 2
	g := New(cfg)
	mustOK(t, g.CreateVertex("a", at(1)))
	for _, e := range []string{"e1", "e2", "e3"} {
		mustOK(t, g.CreateEdge("a", e, "b", at(1)))
	}
	idx := vertexOf(g, "a").x.index
	for i := range idx {
		if idx[i] != 0 {
			idx[i] = 0 // an edge no longer findable by handle
			break
		}
	}
	if err := g.CheckInvariants(); err == nil {
		t.Fatal("index corruption not detected")
	}
}

func TestAliasIndexCheckInvariantsCatchesCorruption(t *testing.T) {
	a := NewAliasIndex(DefaultConfig())
	mustOK(t, a.Bind("x", "v", at(1)))
	a.live++
	if err := a.CheckInvariants(); err == nil {
		t.Fatal("live counter corruption not detected")
	}
	a.live--
	a.recs["x"].binds = append(a.recs["x"].binds, binding{handle: "w"})
	if err := a.CheckInvariants(); err == nil {
		t.Fatal("two live bindings not detected")
	}
}

func vertexOf(g *Graph, h string) *vertex {
	_, v, ok := g.record(h)
	if !ok {
		panic("no vertex " + h)
	}
	return v
}
