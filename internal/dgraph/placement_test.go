package dgraph

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/weft-db/weft/internal/engine"
	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/value"
)

// placementFlag runs the package's tests in another placement:
//
//	go test ./internal/dgraph -dgraph.placement=predicate
var placementFlag = flag.String("dgraph.placement", "", "the placement of the graphs tests open (vertex or predicate)")

var placements = []string{PlacementVertex, PlacementPredicate}

// newPlacedGraph is newGraph in the given placement.
func newPlacedGraph(t testing.TB, placement, schemaText string) *Graph {
	t.Helper()
	cfg := testConfig()
	cfg.Placement = placement
	g, err := Open(context.Background(), openEngine(t, ""), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if schemaText != "" {
		if _, err := g.Alter(context.Background(), schemaText); err != nil {
			t.Fatal(err)
		}
	}
	return g
}

const placementSchema = `name: string @index(exact, term) @lang .
age: int @index(int) .
friend: [uid] @reverse @count .
boss: uid @reverse .
tags: [string] @index(exact) .`

// TestPredicatePlacementLayout: in the predicate placement a node's vertex
// holds only its list of placed predicates, each predicate's values,
// edges, reverse edges, counts, index and has-set entries are on vertices
// of its own placement group (so on one shard), and the mapping reads
// them back as the vertex placement stores them.
func TestPredicatePlacementLayout(t *testing.T) {
	ctx := context.Background()
	g := newPlacedGraph(t, PlacementPredicate, placementSchema)
	if g.Placement() != PlacementPredicate {
		t.Fatalf("placement %s", g.Placement())
	}
	res := mustMutate(t, g, `_:a <name> "Ann"@en .
_:a <name> "Anne" (since=2001) .
_:a <age> "30" .
_:a <friend> _:b (close=true) .
_:b <name> "Bo" .
_:b <boss> _:a .
_:b <tags> "x" .`, "")
	a, b := blankUID(t, res, "a"), blankUID(t, res, "b")
	raw := g.Engine()
	snap := snapshot(t, g)
	for u, preds := range map[uint64][]string{a: {"age", "boss", "friend", "name"}, b: {"boss", "friend", "name", "tags"}} {
		nv, err := raw.GetVertex(ctx, snap, engine.VertexRef{Name: FormatUID(u)}, engine.DefaultReadOptions())
		if err != nil {
			t.Fatal(err)
		}
		if got := PlacedPreds(nv); !slices.Equal(got, preds) {
			t.Errorf("%s lists %v, want %v", FormatUID(u), got, preds)
		}
		for k := range nv.Props {
			if !strings.HasPrefix(k, placedListPrefix) {
				t.Errorf("node vertex %s holds %q", FormatUID(u), k)
			}
		}
		if len(nv.Edges) != 0 {
			t.Errorf("node vertex %s has edges %v", FormatUID(u), nv.Edges)
		}
	}
	pv := func(pred string, u uint64) *engine.Vertex {
		v, err := raw.GetVertex(ctx, snap, engine.VertexRef{Name: PlacedVertex(pred, u)}, engine.DefaultReadOptions())
		if err != nil || !v.Exists {
			t.Fatalf("%s: %+v %v", PlacedVertex(pred, u), v, err)
		}
		return v
	}
	if v := pv("name", a); v.Props["name@en"].Str() != "Ann" || v.Props["name|since"].Int() != 2001 {
		t.Errorf("name of a: %v", v.Props)
	}
	if v := pv("friend", a); len(v.Edges) != 1 || v.Edges[0].Handle != EdgeHandle("friend", b) || v.Props[CountKey("friend")].Int() != 1 {
		t.Errorf("friend of a: %+v", v)
	}
	if v := pv("friend", b); len(v.Edges) != 1 || v.Edges[0].Handle != EdgeHandle("~friend", a) || v.Props[CountKey("~friend")].Int() != 1 {
		t.Errorf("~friend of b: %+v", v)
	}
	if v := pv("boss", a); len(v.Edges) != 1 || v.Edges[0].Handle != EdgeHandle("~boss", b) {
		t.Errorf("~boss of a: %+v", v)
	}
	// Internal vertices are in their predicate's group.
	for _, h := range []string{hasVertex("name", bucket(a)), hasVertex("friend", bucket(a))} {
		if g, ok := txn.GroupOf(placedInternal(h)); !ok || !strings.HasSuffix(g, "|"+strings.Split(h, "|")[2]) {
			t.Errorf("%s placed as %s", h, placedInternal(h))
		}
		v, err := raw.GetVertex(ctx, snap, engine.VertexRef{Name: placedInternal(h)}, engine.DefaultReadOptions())
		if err != nil || !v.Exists || len(v.Edges) == 0 {
			t.Errorf("has-set %s: %+v %v", placedInternal(h), v, err)
		}
	}
	st, err := g.schemaAt(ctx, snap)
	if err != nil {
		t.Fatal(err)
	}
	tok := indexVertex(st.meta.Index["name|exact"], "exact", "name@en", bucket(a), "Ann")
	if v, err := raw.GetVertex(ctx, snap, engine.VertexRef{Name: placedInternal(tok)}, engine.ReadOptions{Edges: true}); err != nil || !v.Exists ||
		txn.ShardOf(placedInternal(tok), 7) != txn.ShardOf(PlacedVertex("name", a), 7) {
		t.Errorf("index vertex %s: %+v %v", placedInternal(tok), v, err)
	}
	for b := range Buckets { // the index's directories too
		dir := placedInternal(dirVertexIn(PlacementPredicate, "name", st.meta.Index["name|exact"], b))
		v, err := raw.GetVertex(ctx, snap, engine.VertexRef{Name: dir}, engine.ReadOptions{})
		if g, ok := txn.GroupOf(dir); err != nil || !v.Exists || !ok || g != txn.GroupPrefix+"name" {
			t.Errorf("directory %s: %+v %v", dir, v, err)
		}
	}
	// The mapping's view is the vertex placement's.
	n := readNode(t, g, a)
	if n.Values["name@en"].Str() != "Ann" || n.Values["age"].Int() != 30 || len(n.Edges["friend"]) != 1 ||
		n.Edges["friend"][0].Facets["close"].Bool() != true || len(n.Edges["~boss"]) != 1 || n.Counts["friend"] != 1 {
		t.Errorf("node a: %s", renderNode(n))
	}
	checkConsistency(t, g)
}

// TestPlacementIsChosenAtCreation: a store keeps the placement it was
// created with; opening it with the other fails with ErrPlacement, and
// with none in its own.
func TestPlacementIsChosenAtCreation(t *testing.T) {
	ctx := context.Background()
	for _, created := range placements {
		db := openEngine(t, "")
		cfg := testConfig()
		cfg.Placement = created
		if _, err := Open(ctx, db, cfg); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{"", PlacementVertex, PlacementPredicate} {
			cfg.Placement = p
			g, err := Open(ctx, db, cfg)
			if p == "" || p == created { // "" opens the store in its own placement
				if err != nil || g.Placement() != created {
					t.Errorf("created %s, opened with %q: %v", created, p, err)
				}
			} else if !errors.Is(err, ErrPlacement) || !strings.Contains(err.Error(), created) {
				t.Errorf("created %s, opened with %q: %v, want ErrPlacement naming %s", created, p, err, created)
			}
		}
	}
	cfg := testConfig()
	cfg.Placement = "shard"
	if err := cfg.Validate(); err == nil {
		t.Error("placement \"shard\" validated")
	}
}

// TestPlacementsAnswerAlike is the differential test of the placements:
// the same random mutations (sets, deletions of values, edges, wildcards
// and whole nodes, single and list predicates, facets, languages, reverse
// edges and counts) on a graph of each placement leave the same nodes,
// the same lookups, and every invariant.
func TestPlacementsAnswerAlike(t *testing.T) {
	ctx := context.Background()
	seed := uint64(rand.Uint32())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 7))
	gs := []*Graph{newPlacedGraph(t, PlacementVertex, placementSchema), newPlacedGraph(t, PlacementPredicate, placementSchema)}
	node := func() string { return fmt.Sprintf("<n%d>", rng.IntN(12)) }
	names := []string{"Ann", "Bo", "Cy Lee", "Di Lee", "Ed"}
	stmt := func() string {
		s := node()
		switch rng.IntN(9) {
		case 0:
			return fmt.Sprintf(`%s <name> %q .`, s, names[rng.IntN(len(names))])
		case 1:
			return fmt.Sprintf(`%s <name> %q@en (since=%d) .`, s, names[rng.IntN(len(names))], rng.IntN(3))
		case 2:
			return fmt.Sprintf(`%s <age> "%d" .`, s, rng.IntN(5))
		case 3, 4:
			return fmt.Sprintf(`%s <friend> %s (w=%d) .`, s, node(), rng.IntN(3))
		case 5:
			return fmt.Sprintf(`%s <boss> %s .`, s, node())
		default:
			return fmt.Sprintf(`%s <tags> "t%d" .`, s, rng.IntN(4))
		}
	}
	del := func() string {
		s := node()
		switch rng.IntN(7) {
		case 0:
			return s + ` * * .`
		case 1:
			return s + ` <friend> * .`
		case 2:
			return fmt.Sprintf(`%s <friend> %s .`, s, node())
		case 3:
			return s + ` <name> * .`
		case 4:
			return fmt.Sprintf(`%s <tags> "t%d" .`, s, rng.IntN(4))
		case 5:
			return s + ` <boss> * .`
		}
		return fmt.Sprintf(`%s <age> "%d" .`, s, rng.IntN(5))
	}
	for range 60 {
		var set, dl []string
		for range 1 + rng.IntN(4) {
			set = append(set, stmt())
		}
		if rng.IntN(3) == 0 {
			for range 1 + rng.IntN(2) {
				dl = append(dl, del())
			}
		}
		for _, g := range gs {
			mustMutate(t, g, strings.Join(set, "\n"), strings.Join(dl, "\n"))
		}
	}
	// UIDs of new nodes are handed out in resolution order (concurrent):
	// compare the graphs with every UID named by its node's XID.
	if a, b := byXID(dump(t, gs[0])), byXID(dump(t, gs[1])); a != b || strings.Count(a, "\n") < 5 {
		t.Fatalf("the placements differ:\nvertex:\n%s\npredicate:\n%s", a, b)
	}
	type lookup func(g *Graph, snap engine.Snapshot) ([]uint64, error)
	for what, f := range map[string]lookup{
		"eq": func(g *Graph, s engine.Snapshot) ([]uint64, error) { return g.Eq(ctx, s, "name", "", value.Str("Ann")) },
		"term": func(g *Graph, s engine.Snapshot) ([]uint64, error) {
			return g.Lookup(ctx, s, "name", "en", "term", "lee")
		},
		"range": func(g *Graph, s engine.Snapshot) ([]uint64, error) {
			return g.Range(ctx, s, "age", "", &Bound{Value: value.I64(2)}, nil)
		},
		"has":  func(g *Graph, s engine.Snapshot) ([]uint64, error) { return g.Has(ctx, s, "friend") },
		"tags": func(g *Graph, s engine.Snapshot) ([]uint64, error) { return g.Eq(ctx, s, "tags", "", value.Str("t1")) },
	} {
		var got [2][]string
		for i, g := range gs {
			us, err := f(g, snapshot(t, g))
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			for _, u := range us {
				got[i] = append(got[i], readNode(t, g, u).Values[XIDPred].Str())
			}
			slices.Sort(got[i])
		}
		if !slices.Equal(got[0], got[1]) || len(got[0]) == 0 && what == "has" {
			t.Errorf("%s: vertex %v, predicate %v", what, got[0], got[1])
		}
	}
	for _, g := range gs {
		checkConsistency(t, g)
	}
}

// TestPlacedTranslateIsIdempotent: a prepared transaction's operations
// (already placed) translate to themselves at commit.
func TestPlacedTranslateIsIdempotent(t *testing.T) {
	ctx := context.Background()
	g := newPlacedGraph(t, PlacementPredicate, placementSchema)
	mustMutate(t, g, `<x> <name> "X" .`, "")
	snap := snapshot(t, g)
	p, err := g.Prepare(ctx, snap, []Mutation{{Set: quads(t, `<x> <age> "3" .
<x> <friend> <y> .`)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range p.Reads {
		if strings.HasPrefix(r.Vertex, virtualReadPrefix) {
			t.Errorf("prepared read %q is not an engine read", r.Vertex)
		}
	}
	pl := g.db.(*placedAPI)
	reads, ops, created, err := pl.translate(ctx, snap, p.Reads, p.Ops)
	if err != nil || !reflect.DeepEqual(ops, p.Ops) || len(created) != 0 || len(reads) != len(p.Reads) {
		t.Fatalf("translating again: %v ops (was %v), created %v, %v", ops, p.Ops, created, err)
	}
	if _, err := g.Commit(ctx, p, nil); err != nil {
		t.Fatal(err)
	}
	if n := readNode(t, g, uidOf(t, g, "x")); n.Values["age"].Int() != 3 || len(n.Edges["friend"]) != 1 {
		t.Fatalf("x: %s", renderNode(n))
	}
}

var uidRE = regexp.MustCompile(`0x[0-9a-f]+`)

// byXID renders a dump with each UID replaced by its node's XID, sorted.
func byXID(d string) string {
	lines := strings.Split(strings.TrimSpace(d), "\n")
	xids := map[string]string{}
	for _, l := range lines {
		uid, rest, _ := strings.Cut(l, " ")
		for _, f := range strings.Fields(rest) {
			if x, ok := strings.CutPrefix(f, "xid="); ok {
				xids[uid] = x
			}
		}
	}
	for i, l := range lines {
		lines[i] = uidRE.ReplaceAllStringFunc(l, func(u string) string {
			if x, ok := xids[u]; ok {
				return x
			}
			return u
		})
		f := strings.Fields(lines[i])
		slices.Sort(f[1:])
		lines[i] = strings.Join(f, " ")
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n") + "\n"
}
