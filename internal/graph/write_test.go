package graph

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/weft-db/weft/internal/value"
	"github.com/weft-db/weft/internal/vclock"
)

// base builds the graph every table case starts from, with tight limits:
//
//	t1: vertices a, b; edges a-e0→x, a-e1→b {w=2}; a {k=1}; alias al on a
//	t2: vertex d created and deleted
//	t3: vertex c created
func base(t *testing.T) *Graph {
	t.Helper()
	cfg := DefaultConfig()
	cfg.PropsPerElementMax, cfg.AliasesPerVertexMax, cfg.EdgesPerVertexMax, cfg.HandleLenMax, cfg.KeyLenMax = 1, 1, 2, 8, 8
	g := New(cfg)
	for _, err := range []error{
		g.CreateVertex("a", at(1)), g.CreateVertex("b", at(1)), g.CreateEdge("a", "e0", "x", at(1)), g.CreateEdge("a", "e1", "b", at(1)),
		g.SetVertexProp("a", "k", value.I64(1), at(1)), g.SetEdgeProp("a", "e1", "w", value.I64(2), at(1)),
		g.AddAlias("a", "al", at(1)),
		g.CreateVertex("d", at(2)), g.DeleteVertex("d", at(2)),
		g.CreateVertex("c", at(3)),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return g
}

// Dissertation §3.5.2: every write marks versions with its stamp; bad input
// gets a clear error and changes nothing (DESIGN invariant 6).
func TestWritesTable(t *testing.T) {
	const w = 5
	null := value.Value{}
	long := strings.Repeat("x", 9)
	for _, tc := range []struct {
		name  string
		op    func(g *Graph) error
		want  error
		check func(t *testing.T, g *Graph) // after a successful op
	}{
		{"create_vertex", func(g *Graph) error { return g.CreateVertex("n", at(w)) }, nil, func(t *testing.T, g *Graph) {
			wantVisible(t, g, "n", w-1, false)
			wantVisible(t, g, "n", w, true)
		}},
		{"create_vertex/recreate_deleted", func(g *Graph) error { return g.CreateVertex("d", at(w)) }, nil, func(t *testing.T, g *Graph) {
			wantVisible(t, g, "d", 1, false)
			wantVisible(t, g, "d", 2, false)
			wantVisible(t, g, "d", w, true)
		}},
		{"create_vertex/exists", func(g *Graph) error { return g.CreateVertex("a", at(w)) }, ErrVertexExists, nil},
		{"create_vertex/empty", func(g *Graph) error { return g.CreateVertex("", at(w)) }, ErrInvalid, nil},
		{"create_vertex/too_long", func(g *Graph) error { return g.CreateVertex(long, at(w)) }, ErrInvalid, nil},
		{"create_vertex/zero_stamp", func(g *Graph) error { return g.CreateVertex("n", vclock.Stamp{}) }, ErrInvalid, nil},
		{"create_vertex/recreate_stale", func(g *Graph) error { return g.CreateVertex("d", at(1)) }, ErrStampOrder, nil},

		{"delete_vertex", func(g *Graph) error { return g.DeleteVertex("a", at(w)) }, nil, func(t *testing.T, g *Graph) {
			wantVisible(t, g, "a", w, false)
			vv, _ := g.View("a", at(w-1), nil)
			if got := edgeList(vv); !slices.Equal(got, []string{"e0→x{}", "e1→b{w=2}"}) {
				t.Errorf("edges before the delete: %v", got)
			}
			_, v, _ := g.record("a")
			if v.liveEdges() != 0 || liveProps(v.props) != 0 || liveAlias(v.aliases(), "al") >= 0 {
				t.Error("delete_vertex left live children")
			}
		}},
		{"delete_vertex/missing", func(g *Graph) error { return g.DeleteVertex("zz", at(w)) }, ErrVertexMissing, nil},
		{"delete_vertex/deleted", func(g *Graph) error { return g.DeleteVertex("d", at(w)) }, ErrVertexDeleted, nil},
		{"delete_vertex/stale", func(g *Graph) error { return g.DeleteVertex("c", at(2)) }, ErrStampOrder, nil},

		{"create_edge", func(g *Graph) error { return g.CreateEdge("b", "e2", "remote", at(w)) }, nil, func(t *testing.T, g *Graph) {
			vv, _ := g.View("b", at(w), nil)
			if got := edgeList(vv); !slices.Equal(got, []string{"e2→remote{}"}) || vv.EdgeCount() != 1 {
				t.Errorf("edges %v, count %d", got, vv.EdgeCount())
			}
			if vv, _ := g.View("b", at(w-1), nil); vv.EdgeCount() != 0 {
				t.Error("edge visible before its creation")
			}
		}},
		{"create_edge/recreate_deleted_handle", func(g *Graph) error {
			if err := g.DeleteEdge("a", "e1", at(w)); err != nil {
				return err
			}
			return g.CreateEdge("a", "e1", "c", at(w+1))
		}, nil, func(t *testing.T, g *Graph) {
			for r, want := range map[uint64]string{1: "b", w: "", w + 1: "c"} {
				vv, _ := g.View("a", at(r), nil)
				e, ok := vv.Edge("e1")
				if ok != (want != "") || ok && e.Dst() != want {
					t.Errorf("at %d: edge e1 %v → %q, want %q", r, ok, e.Dst(), want)
				}
			}
		}},
		{"create_edge/duplicate", func(g *Graph) error { return g.CreateEdge("a", "e1", "c", at(w)) }, ErrEdgeExists, nil},
		{"create_edge/src_missing", func(g *Graph) error { return g.CreateEdge("zz", "e2", "a", at(w)) }, ErrVertexMissing, nil},
		{"create_edge/src_deleted", func(g *Graph) error { return g.CreateEdge("d", "e2", "a", at(w)) }, ErrVertexDeleted, nil},
		{"create_edge/empty_handle", func(g *Graph) error { return g.CreateEdge("b", "", "a", at(w)) }, ErrInvalid, nil},
		{"create_edge/empty_dst", func(g *Graph) error { return g.CreateEdge("b", "e2", "", at(w)) }, ErrInvalid, nil},
		{"create_edge/long_dst", func(g *Graph) error { return g.CreateEdge("b", "e2", long, at(w)) }, ErrInvalid, nil},
		{"create_edge/limit", func(g *Graph) error { return g.CreateEdge("a", "e2", "b", at(w)) }, ErrLimit, nil},
		{"create_edge/stale", func(g *Graph) error { return g.CreateEdge("c", "e2", "b", at(2)) }, ErrStampOrder, nil},

		{"delete_edge", func(g *Graph) error { return g.DeleteEdge("a", "e1", at(w)) }, nil, func(t *testing.T, g *Graph) {
			if vv, _ := g.View("a", at(w), nil); vv.EdgeCount() != 1 {
				t.Error("deleted edge still visible")
			}
			if vv, _ := g.View("a", at(w-1), nil); vv.EdgeCount() != 2 {
				t.Error("deleted edge gone before its deletion")
			}
		}},
		{"delete_edge/missing", func(g *Graph) error { return g.DeleteEdge("a", "e9", at(w)) }, ErrEdgeMissing, nil},
		{"delete_edge/twice", func(g *Graph) error { return g.DeleteEdge("a", "e0", at(w)) }, ErrEdgeMissing, nil},
		{"delete_edge/src_deleted", func(g *Graph) error { return g.DeleteEdge("d", "e1", at(w)) }, ErrVertexDeleted, nil},

		{"set_vertex_prop/supersede", func(g *Graph) error { return g.SetVertexProp("a", "k", value.Str("new"), at(w)) }, nil, func(t *testing.T, g *Graph) {
			wantProp(t, g, "a", "k", 1, "1")
			wantProp(t, g, "a", "k", w, "new")
		}},
		{"set_vertex_prop/limit", func(g *Graph) error { return g.SetVertexProp("a", "k2", value.I64(1), at(w)) }, ErrLimit, nil},
		{"set_vertex_prop/null", func(g *Graph) error { return g.SetVertexProp("a", "k", null, at(w)) }, ErrInvalid, nil},
		{"set_vertex_prop/empty_key", func(g *Graph) error { return g.SetVertexProp("a", "", value.I64(1), at(w)) }, ErrInvalid, nil},
		{"set_vertex_prop/long_key", func(g *Graph) error { return g.SetVertexProp("b", long, value.I64(1), at(w)) }, ErrInvalid, nil},
		{"set_vertex_prop/deleted", func(g *Graph) error { return g.SetVertexProp("d", "k", value.I64(1), at(w)) }, ErrVertexDeleted, nil},
		{"set_vertex_prop/missing", func(g *Graph) error { return g.SetVertexProp("zz", "k", value.I64(1), at(w)) }, ErrVertexMissing, nil},

		{"delete_vertex_prop", func(g *Graph) error { return g.DeleteVertexProp("a", "k", at(w)) }, nil, func(t *testing.T, g *Graph) {
			wantProp(t, g, "a", "k", w-1, "1")
			wantProp(t, g, "a", "k", w, "")
		}},
		{"delete_vertex_prop/missing", func(g *Graph) error { return g.DeleteVertexProp("a", "nope", at(w)) }, ErrPropMissing, nil},
		{"delete_vertex_prop/other_vertex", func(g *Graph) error { return g.DeleteVertexProp("b", "k", at(w)) }, ErrPropMissing, nil},

		{"set_edge_prop", func(g *Graph) error { return g.SetEdgeProp("a", "e1", "w", value.I64(3), at(w)) }, nil, func(t *testing.T, g *Graph) {
			for r, want := range map[uint64]string{1: "{w=2}", w: "{w=3}"} {
				vv, _ := g.View("a", at(r), nil)
				e, _ := vv.Edge("e1")
				if got := propString(e.Props()); got != want {
					t.Errorf("at %d: %s, want %s", r, got, want)
				}
			}
		}},
		{"set_edge_prop/edge_missing", func(g *Graph) error { return g.SetEdgeProp("a", "e9", "w", value.I64(3), at(w)) }, ErrEdgeMissing, nil},
		{"set_edge_prop/limit", func(g *Graph) error { return g.SetEdgeProp("a", "e1", "w2", value.I64(3), at(w)) }, ErrLimit, nil},
		{"set_edge_prop/null", func(g *Graph) error { return g.SetEdgeProp("a", "e1", "w", null, at(w)) }, ErrInvalid, nil},
		{"delete_edge_prop", func(g *Graph) error { return g.DeleteEdgeProp("a", "e1", "w", at(w)) }, nil, func(t *testing.T, g *Graph) {
			vv, _ := g.View("a", at(w), nil)
			if e, _ := vv.Edge("e1"); propString(e.Props()) != "{}" {
				t.Error("edge property still visible")
			}
		}},
		{"delete_edge_prop/missing", func(g *Graph) error { return g.DeleteEdgeProp("a", "e1", "k", at(w)) }, ErrPropMissing, nil},

		{"add_alias", func(g *Graph) error { return g.AddAlias("b", "bb", at(w)) }, nil, func(t *testing.T, g *Graph) {
			vv, _ := g.View("b", at(w), nil)
			if got := slices.Collect(vv.Aliases()); !slices.Equal(got, []string{"bb"}) {
				t.Errorf("aliases %v", got)
			}
		}},
		{"add_alias/duplicate", func(g *Graph) error { return g.AddAlias("a", "al", at(w)) }, ErrAliasExists, nil},
		{"add_alias/limit", func(g *Graph) error { return g.AddAlias("a", "al2", at(w)) }, ErrLimit, nil},
		{"add_alias/empty", func(g *Graph) error { return g.AddAlias("a", "", at(w)) }, ErrInvalid, nil},
		{"remove_alias", func(g *Graph) error { return g.RemoveAlias("a", "al", at(w)) }, nil, func(t *testing.T, g *Graph) {
			vv, _ := g.View("a", at(w), nil)
			if got := slices.Collect(vv.Aliases()); len(got) != 0 {
				t.Errorf("aliases %v", got)
			}
		}},
		{"remove_alias/missing", func(g *Graph) error { return g.RemoveAlias("b", "al", at(w)) }, ErrAliasMissing, nil},

		{"load", func(g *Graph) error {
			return g.Load(&VertexRecord{Handle: "L", Props: []Prop{{"p", value.I64(7)}}, Aliases: []string{"la"},
				Edges:     []EdgeRecord{{Handle: "x1", Dst: "a", Props: []Prop{{"w", value.I64(1)}}}, {Handle: "x2", Dst: "zz"}},
				LastWrite: at(4)}, at(w))
		}, nil, func(t *testing.T, g *Graph) {
			vv, ok := g.View("L", at(w), nil)
			if !ok || !slices.Equal(edgeList(vv), []string{"x1→a{w=1}", "x2→zz{}"}) || propString(vv.Props()) != "{p=7}" {
				t.Errorf("loaded vertex: %v %v %s", ok, edgeList(vv), propString(vv.Props()))
			}
			if lw := g.LastWrite("L", at(w), nil); !sameStamp(lw, at(4)) {
				t.Errorf("LastWrite %s, want the record's", lw)
			}
		}},
		{"load/tombstone", func(g *Graph) error {
			return g.Load(&VertexRecord{Handle: "T", Deleted: true, LastWrite: at(4)}, at(w))
		}, nil, func(t *testing.T, g *Graph) {
			wantVisible(t, g, "T", w, false)
			if lw := g.LastWrite("T", at(w), nil); !sameStamp(lw, at(4)) {
				t.Errorf("tombstone LastWrite %s", lw)
			}
			if err := g.CreateVertex("T", at(w+1)); err != nil {
				t.Fatal(err)
			}
			if lw := g.LastWrite("T", at(w), nil); !sameStamp(lw, at(4)) {
				t.Errorf("re-created tombstone: LastWrite at %d is %s", w, lw)
			}
		}},
		{"load/exists", func(g *Graph) error { return g.Load(&VertexRecord{Handle: "d"}, at(w)) }, ErrVertexExists, nil},
		{"load/duplicate_edge", func(g *Graph) error {
			return g.Load(&VertexRecord{Handle: "L", Edges: []EdgeRecord{{Handle: "x", Dst: "a"}, {Handle: "x", Dst: "b"}}}, at(w))
		}, ErrEdgeExists, nil},
		{"load/edge_limit", func(g *Graph) error {
			return g.Load(&VertexRecord{Handle: "L", Edges: []EdgeRecord{{Handle: "x", Dst: "a"}, {Handle: "y", Dst: "b"}, {Handle: "z", Dst: "b"}}}, at(w))
		}, ErrLimit, nil},
		{"load/null_prop", func(g *Graph) error {
			return g.Load(&VertexRecord{Handle: "L", Props: []Prop{{Key: "p"}}}, at(w))
		}, ErrInvalid, nil},
		{"load/tombstone_with_edges", func(g *Graph) error {
			return g.Load(&VertexRecord{Handle: "L", Deleted: true, Edges: []EdgeRecord{{Handle: "x", Dst: "a"}}}, at(w))
		}, ErrInvalid, nil},
		{"load/last_write_after", func(g *Graph) error {
			return g.Load(&VertexRecord{Handle: "L", LastWrite: at(w + 1)}, at(w))
		}, ErrInvalid, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := base(t)
			if strings.HasSuffix(tc.name, "/twice") {
				if err := g.DeleteEdge("a", "e0", at(w)); err != nil {
					t.Fatal(err)
				}
			}
			before := dump(g)
			err := tc.op(g)
			if !errors.Is(err, tc.want) || (err == nil) != (tc.want == nil) {
				t.Fatalf("error %v, want %v", err, tc.want)
			}
			if err != nil && !strings.HasPrefix(err.Error(), "graph: ") && !strings.Contains(err.Error(), ": graph: ") {
				t.Errorf("error %q lacks the package prefix", err)
			}
			if err != nil {
				if after := dump(g); after != before {
					t.Fatalf("failed write changed the graph:\nbefore %s\nafter  %s", before, after)
				}
			} else if tc.check != nil {
				tc.check(t, g)
			}
			if err := g.CheckInvariants(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func wantVisible(t *testing.T, g *Graph, h string, r uint64, want bool) {
	t.Helper()
	if _, ok := g.View(h, at(r), nil); ok != want {
		t.Errorf("%q visible at %d = %v, want %v", h, r, ok, want)
	}
}

// wantProp checks property key of h at r ("" = absent).
func wantProp(t *testing.T, g *Graph, h, key string, r uint64, want string) {
	t.Helper()
	vv, ok := g.View(h, at(r), nil)
	if !ok {
		t.Fatalf("%q not visible at %d", h, r)
	}
	v, ok := vv.Prop(key)
	if got := map[bool]string{true: v.String()}[ok]; got != want {
		t.Errorf("%q.%s at %d = %q, want %q", h, key, r, got, want)
	}
}

func TestConfigValidate(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatal(err)
	}
	for _, mut := range []func(*Config){
		func(c *Config) { c.HandleLenMax = 0 },
		func(c *Config) { c.KeyLenMax = 1 << 17 },
		func(c *Config) { c.PropsPerElementMax = -1 },
		func(c *Config) { c.AliasesPerVertexMax = 0 },
		func(c *Config) { c.EdgesPerVertexMax = 1<<30 + 1 },
		func(c *Config) { c.EdgeIndexMin = 0 },
	} {
		c := DefaultConfig()
		mut(&c)
		if err := c.Validate(); !errors.Is(err, ErrInvalid) {
			t.Errorf("%+v: Validate = %v", c, err)
		}
	}
}

// LastWrite is the newest write ≤ R touching the vertex: creation, props,
// edges, aliases, deletion; zero before the first.
func TestLastWrite(t *testing.T) {
	g := New(DefaultConfig())
	steps := []func(w vclock.Stamp) error{
		func(w vclock.Stamp) error { return g.CreateVertex("a", w) },
		func(w vclock.Stamp) error { return g.SetVertexProp("a", "k", value.I64(1), w) },
		func(w vclock.Stamp) error { return g.CreateEdge("a", "e", "b", w) },
		func(w vclock.Stamp) error { return g.SetEdgeProp("a", "e", "k", value.I64(1), w) },
		func(w vclock.Stamp) error { return g.AddAlias("a", "x", w) },
		func(w vclock.Stamp) error { return g.DeleteVertex("a", w) },
	}
	for i, step := range steps {
		if err := step(at(uint64(2 * (i + 1)))); err != nil {
			t.Fatal(err)
		}
	}
	for r := uint64(0); r <= 14; r++ {
		want := min(r/2*2, 12)
		got := g.LastWrite("a", at(r), nil)
		if want == 0 && !got.IsZero() || want != 0 && !sameStamp(got, at(want)) {
			t.Errorf("LastWrite at %d = %s, want t%d", r, got, want)
		}
	}
	if !g.LastWrite("b", at(20), nil).IsZero() {
		t.Error("an edge destination has no writes here")
	}
	// Collected: a tombstone keeps the answer for reads after the watermark.
	g.Collect(at(13))
	if st := g.Stats(); st.Tombstones != 1 || st.Versions != 0 || st.Stamps != 1 {
		t.Errorf("after collect: %+v", st)
	}
	if got := g.LastWrite("a", at(13), nil); !sameStamp(got, at(12)) {
		t.Errorf("tombstone LastWrite = %s", got)
	}
}
