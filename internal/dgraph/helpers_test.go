package dgraph

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/weft-db/weft/internal/dgraph/index"
	"github.com/weft-db/weft/internal/engine"
	"github.com/weft-db/weft/internal/rdf"
	"github.com/weft-db/weft/internal/value"
)

// openEngine starts an engine: in memory when dir is "", else on disk.
func openEngine(t testing.TB, dir string) *engine.DB {
	t.Helper()
	cfg := engine.DefaultConfig()
	cfg.Sync = false
	cfg.DataDir = dir
	db, err := engine.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func testConfig() Config {
	c := DefaultConfig()
	c.LeaseSize = 64
	c.Placement = *placementFlag
	return c
}

func openGraph(t testing.TB, db engine.API) *Graph {
	t.Helper()
	g, err := Open(context.Background(), db, testConfig())
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func newGraph(t testing.TB, schemaText string) *Graph {
	t.Helper()
	g := openGraph(t, openEngine(t, ""))
	if schemaText != "" {
		if _, err := g.Alter(context.Background(), schemaText); err != nil {
			t.Fatal(err)
		}
	}
	return g
}

func quads(t testing.TB, text string) []rdf.NQuad {
	t.Helper()
	qs, err := rdf.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	return qs
}

func mustMutate(t testing.TB, g *Graph, set, del string) *Result {
	t.Helper()
	res, err := g.Mutate(context.Background(), Mutation{Set: quads(t, set), Del: quads(t, del)})
	if err != nil {
		t.Fatalf("mutate:\nset %s\ndel %s\n: %v", set, del, err)
	}
	return res
}

func snapshot(t testing.TB, g *Graph) engine.Snapshot {
	t.Helper()
	s, err := g.db.Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func readNode(t testing.TB, g *Graph, uid uint64) *Node {
	t.Helper()
	n, err := g.ReadNode(context.Background(), snapshot(t, g), uid, 0)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// uidOf resolves an XID through its alias.
func uidOf(t testing.TB, g *Graph, xid string) uint64 {
	t.Helper()
	v, err := g.db.GetVertex(context.Background(), snapshot(t, g), engine.VertexRef{Name: xidAlias(xid), Alias: true}, engine.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	u, ok := UIDOfHandle(v.Handle)
	if !ok {
		t.Fatalf("xid %q: handle %q", xid, v.Handle)
	}
	return u
}

func blankUID(t testing.TB, res *Result, name string) uint64 {
	t.Helper()
	u, err := ParseUID(res.UIDs[name])
	if err != nil {
		t.Fatalf("uids %v: %s: %v", res.UIDs, name, err)
	}
	return u
}

// dump renders every Dgraph node with a UID below the leased bound, sorted:
// the whole Dgraph-visible state, for "nothing changed" checks.
func dump(t testing.TB, g *Graph) string {
	t.Helper()
	ctx := context.Background()
	snap := snapshot(t, g)
	var b strings.Builder
	for _, u := range candidates(t, g, snap) {
		n, err := g.ReadNode(ctx, snap, u, 0)
		if err != nil {
			t.Fatal(err)
		}
		if n.Exists {
			fmt.Fprintf(&b, "%s\n", renderNode(n))
		}
	}
	return b.String()
}

func renderNode(n *Node) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(n.Values)) {
		parts = append(parts, fmt.Sprintf("%s=%s", k, n.Values[k]))
		for _, f := range slices.Sorted(maps.Keys(n.Facets[k])) {
			parts = append(parts, fmt.Sprintf("%s|%s=%s", k, f, n.Facets[k][f]))
		}
	}
	for _, p := range slices.Sorted(maps.Keys(n.Edges)) {
		for _, e := range n.Edges[p] {
			s := fmt.Sprintf("%s->%s", p, FormatUID(e.UID))
			for _, f := range slices.Sorted(maps.Keys(e.Facets)) {
				s += fmt.Sprintf("(%s=%s)", f, e.Facets[f])
			}
			parts = append(parts, s)
		}
	}
	for _, p := range slices.Sorted(maps.Keys(n.Counts)) {
		parts = append(parts, fmt.Sprintf("count(%s)=%d", p, n.Counts[p]))
	}
	return FormatUID(n.UID) + " " + strings.Join(parts, " ")
}

// candidates lists the UIDs that may name nodes: every leased UID when
// there are few, else the members of the has-sets and their edges' ends.
func candidates(t testing.TB, g *Graph, snap engine.Snapshot) []uint64 {
	t.Helper()
	ctx := context.Background()
	lv, err := g.db.GetVertex(ctx, snap, engine.VertexRef{Name: LeaseVertex}, engine.ReadOptions{Props: true})
	if err != nil {
		t.Fatal(err)
	}
	var out []uint64
	if next := uint64(lv.Props[leaseNextKey].Int()); next < 4096 {
		for u := uint64(1); u < next; u++ {
			out = append(out, u)
		}
		return out
	}
	st, err := g.schemaAt(ctx, snap)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[uint64]bool{}
	for _, P := range st.sch.Predicates() {
		us, err := g.Has(ctx, snap, P.Name)
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range us {
			seen[u] = true
			n, err := g.ReadNode(ctx, snap, u, 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			for _, es := range n.Edges {
				for _, e := range es {
					seen[e.UID] = true
				}
			}
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// checkConsistency checks the mapping's invariants over every node: the
// has-sets, index entries, reverse edges and counts are exactly what the
// nodes' values and edges imply.
func checkConsistency(t testing.TB, g *Graph) {
	t.Helper()
	ctx := context.Background()
	snap := snapshot(t, g)
	st, err := g.schemaAt(ctx, snap)
	if err != nil {
		t.Fatal(err)
	}
	nodes := map[uint64]*Node{}
	for _, u := range candidates(t, g, snap) {
		n, err := g.ReadNode(ctx, snap, u, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		if n.Exists {
			nodes[u] = n
		}
	}
	// Every entry of a node for a predicate is in its bucket.
	props := map[uint64]map[string]value.Value{}
	for u := range nodes {
		v, err := g.db.GetVertex(ctx, snap, engine.VertexRef{Name: FormatUID(u)}, engine.ReadOptions{Props: true})
		if err != nil {
			t.Fatal(err)
		}
		props[u] = v.Props
	}
	has := map[string][]uint64{}
	revs := map[string]int{}
	for u, n := range nodes {
		preds := map[string]bool{}
		for k := range n.Values {
			_, p, _, _ := classifyProp(k)
			preds[p] = true
		}
		for p, es := range n.Edges {
			if p[0] == '~' {
				if int64(len(es)) != n.Counts[p] {
					if P, _ := st.sch.Predicate(p[1:]); P.Count {
						t.Errorf("%s: count(%s) = %d, %d edges", FormatUID(u), p, n.Counts[p], len(es))
					}
				}
				for _, e := range es {
					revs[fmt.Sprintf("%s|%d|%d", p[1:], e.UID, u)]++
				}
				continue
			}
			preds[p] = true
			if int64(len(es)) != n.Counts[p] {
				t.Errorf("%s: count(%s) = %d, %d edges", FormatUID(u), p, n.Counts[p], len(es))
			}
			if P, _ := st.sch.Predicate(p); P.Reverse {
				for _, e := range es {
					revs[fmt.Sprintf("%s|%d|%d", p, u, e.UID)]--
				}
			}
		}
		for p := range preds {
			has[p] = append(has[p], u)
		}
	}
	for k, c := range revs {
		if c != 0 {
			t.Errorf("reverse edge mismatch %s: %d", k, c)
		}
	}
	for _, P := range st.sch.Predicates() {
		got, err := g.Has(ctx, snap, P.Name)
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range got {
			b := storedBucket(props[u], u, P.Name)
			v, err := g.db.GetEdge(ctx, snap, engine.VertexRef{Name: hasVertex(P.Name, b)}, FormatUID(u))
			if err != nil || !v.Exists {
				t.Errorf("has(%s): %s not in its bucket %d", P.Name, FormatUID(u), b)
			}
		}
		want := has[P.Name]
		sort.Slice(want, func(i, j int) bool { return want[i] < want[j] })
		if !slices.Equal(got, want) {
			t.Errorf("has(%s) = %v, want %v", P.Name, got, want)
		}
		for _, tok := range P.Index {
			tk := index.Get(tok.Name)
			if tk == nil {
				continue
			}
			gen := st.meta.Index[P.Name+"|"+tok.Name]
			want := map[string][]uint64{} // token vertex → uids
			for _, u := range has[P.Name] {
				for k, v := range nodes[u].Values {
					if _, p, _, _ := classifyProp(k); p == P.Name {
						for _, x := range tk.Tokens(v) {
							h := indexVertex(gen, tok.Name, k, storedBucket(props[u], u, P.Name), x)
							want[h] = append(want[h], u)
						}
					}
				}
			}
			// Every token vertex listed in the directories holds exactly
			// the nodes whose values have its token.
			seen := map[string]bool{}
			for b := range Buckets {
				dv, err := g.db.GetVertex(ctx, snap, engine.VertexRef{Name: dirVertexIn(g.cfg.Placement, P.Name, gen, b)}, engine.ReadOptions{Edges: true, EdgesMax: 1 << 20})
				if err != nil || !dv.Exists {
					t.Fatalf("directory %s: %v %v", dirVertexIn(g.cfg.Placement, P.Name, gen, b), err, dv.Exists)
				}
				for _, e := range dv.Edges {
					seen[e.Dst] = true
					got, err := g.edgeUIDs(ctx, snap, []string{e.Dst})
					if err != nil {
						t.Fatal(err)
					}
					w := want[e.Dst]
					slices.Sort(w)
					if !slices.Equal(got, w) {
						t.Errorf("index %s: %v, want %v", e.Dst, got, w)
					}
				}
			}
			for h := range want {
				if !seen[h] {
					t.Errorf("index vertex %s missing from its directory", h)
				}
			}
		}
	}
}
