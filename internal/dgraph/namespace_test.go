package dgraph

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/weft-db/weft/internal/engine"
	"github.com/weft-db/weft/internal/value"
)

// openSpaces opens namespaces 0, 1 and 2 of one engine, each with schema
// (namespace 0 through its view too, which hides the others' node keys).
func openSpaces(t *testing.T, schemaText string) (*engine.DB, []*Graph) {
	t.Helper()
	ctx := context.Background()
	db := openEngine(t, "")
	g0 := openGraph(t, db)
	var gs []*Graph
	for ns := uint64(0); ns <= 2; ns++ {
		g, err := g0.Namespace(ctx, ns)
		if err != nil {
			t.Fatal(err)
		}
		gs = append(gs, g)
	}
	for _, g := range gs {
		if _, err := g.Alter(ctx, schemaText); err != nil {
			t.Fatal(err)
		}
	}
	return db, gs
}

// TestNamespacesIsolateData: the same predicates and XIDs in three
// namespaces hold different data; indexes, has-sets, counts, reverse edges,
// facets and language tags of one are invisible to the others.
func TestNamespacesIsolateData(t *testing.T) {
	db, gs := openSpaces(t, namespaceSchema)
	testNamespacesIsolate(t, gs)
	a1 := uidOf(t, gs[1], "alice")
	snap, _ := db.Begin(context.Background())
	raw, err := db.GetVertex(context.Background(), snap, engine.VertexRef{Name: FormatUID(a1)}, engine.ReadOptions{Props: true})
	if err != nil {
		t.Fatal(err)
	}
	if raw.Props[NamespaceKey(1, "name")].Str() != "one" {
		t.Fatalf("engine keys of ns 1's alice: %v", raw.Props)
	}
}

// TestNamespacesIsolateDataPlaced is TestNamespacesIsolateData in the
// predicate placement: namespace n's placed vertices form their own
// placement groups "_pl|@<n>@<pred>".
func TestNamespacesIsolateDataPlaced(t *testing.T) {
	ctx := context.Background()
	db := openEngine(t, "")
	cfg := testConfig()
	cfg.Placement = PlacementPredicate
	g0, err := Open(ctx, db, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var gs []*Graph
	for ns := uint64(0); ns <= 2; ns++ {
		g, err := g0.Namespace(ctx, ns)
		if err != nil {
			t.Fatal(err)
		}
		if g.Placement() != PlacementPredicate {
			t.Fatalf("namespace %d has placement %s", ns, g.Placement())
		}
		if _, err := g.Alter(ctx, namespaceSchema); err != nil {
			t.Fatal(err)
		}
		gs = append(gs, g)
	}
	testNamespacesIsolate(t, gs)
	a1 := uidOf(t, gs[1], "alice")
	snap, _ := db.Begin(ctx)
	raw, err := db.GetVertex(ctx, snap, engine.VertexRef{Name: "_pl|@1@name|" + FormatUID(a1)}, engine.ReadOptions{Props: true})
	if err != nil {
		t.Fatal(err)
	}
	if !raw.Exists || raw.Props["name"].Str() != "one" {
		t.Fatalf("ns 1's placed vertex of alice's name: %+v", raw)
	}
}

const namespaceSchema = `name: string @index(exact, term) @lang .
friend: [uid] @reverse @count .
age: int @index(int) .`

func testNamespacesIsolate(t *testing.T, gs []*Graph) {
	t.Helper()
	ctx := context.Background()
	for i, g := range gs {
		who := []string{"zero", "one", "two"}[i]
		mustMutate(t, g, `<alice> <name> "`+who+`" (since=2020) .
<alice> <name> "`+who+`-fr"@fr .
<alice> <age> "`+string(rune('0'+i))+`" .
<alice> <friend> <bob> .
<bob> <name> "bob-`+who+`" .`, "")
	}
	uids := map[uint64]bool{}
	for i, g := range gs {
		who := []string{"zero", "one", "two"}[i]
		alice := uidOf(t, g, "alice")
		uids[alice] = true
		snap := snapshot(t, g)
		got, err := g.Eq(ctx, snap, "name", "", value.Str(who))
		if err != nil || !slices.Equal(got, []uint64{alice}) {
			t.Fatalf("ns %d: eq(name, %q) = %v, %v; want [%d]", i, who, got, err, alice)
		}
		for j, other := range []string{"zero", "one", "two"} {
			if j == i {
				continue
			}
			if got, err := g.Eq(ctx, snap, "name", "", value.Str(other)); err != nil || len(got) != 0 {
				t.Fatalf("ns %d sees ns %d's name: %v, %v", i, j, got, err)
			}
		}
		has, err := g.Has(ctx, snap, "friend")
		if err != nil || !slices.Equal(has, []uint64{alice}) {
			t.Fatalf("ns %d: has(friend) = %v, %v", i, has, err)
		}
		n := readNode(t, g, alice)
		if n.Values["name"].Str() != who || n.Values["name@fr"].Str() != who+"-fr" || n.Counts["friend"] != 1 ||
			len(n.Edges["friend"]) != 1 || n.Facets["name"]["since"].Int() != 2020 {
			t.Fatalf("ns %d: alice = %s", i, renderNode(n))
		}
		bob := n.Edges["friend"][0].UID
		if b := readNode(t, g, bob); len(b.Edges["~friend"]) != 1 || b.Edges["~friend"][0].UID != alice {
			t.Fatalf("ns %d: bob's reverse edges %v", i, b.Edges)
		}
		checkConsistency(t, g)
	}
	if len(uids) != 3 {
		t.Fatalf("the XID alice has %d UIDs over 3 namespaces, want 3", len(uids))
	}
	// Namespace 0's node shows nothing of namespace 1, even on a shared UID.
	a1 := uidOf(t, gs[1], "alice")
	if n := readNode(t, gs[0], a1); len(n.Values) != 0 || len(n.Edges) != 0 {
		t.Fatalf("ns 0 reads ns 1's alice as %s", renderNode(n))
	}
}

// TestNamespaceSharedNode: two namespaces writing one UID keep separate
// values, and a wildcard delete in one leaves the other's.
func TestNamespaceSharedNode(t *testing.T) {
	_, gs := openSpaces(t, `name: string @index(exact) .`)
	res := mustMutate(t, gs[0], `_:x <name> "zero" .`, "")
	x := blankUID(t, res, "x")
	ux := "<" + FormatUID(x) + ">"
	mustMutate(t, gs[1], ux+` <name> "one" .`, "")
	mustMutate(t, gs[0], "", ux+` * * .`)
	if n := readNode(t, gs[0], x); len(n.Values) != 0 {
		t.Fatalf("ns 0 after delete: %s", renderNode(n))
	}
	if n := readNode(t, gs[1], x); n.Values["name"].Str() != "one" {
		t.Fatalf("ns 1 lost its value to ns 0's delete: %s", renderNode(n))
	}
	checkConsistency(t, gs[0])
	checkConsistency(t, gs[1])
}

// TestNamespaceSchemaAndDrop: schemas are per namespace, and dropping a
// predicate in one keeps the other's data.
func TestNamespaceSchemaAndDrop(t *testing.T) {
	ctx := context.Background()
	_, gs := openSpaces(t, `name: string @index(exact) .`)
	if _, err := gs[1].Alter(ctx, `only1: int .`); err != nil {
		t.Fatal(err)
	}
	for i, g := range gs {
		sch, err := g.Schema(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := sch.Predicate("only1"); ok != (i == 1) {
			t.Fatalf("ns %d: only1 in schema = %v", i, ok)
		}
		mustMutate(t, g, `<a> <name> "n" .`, "")
	}
	if err := gs[1].DropPredicate(ctx, "name"); err != nil {
		t.Fatal(err)
	}
	for i, g := range gs {
		got, err := g.Eq(ctx, snapshot(t, g), "name", "", value.Str("n"))
		switch {
		case i == 1 && err == nil:
			t.Fatalf("ns 1: name survives its drop: %v", got)
		case i != 1 && (err != nil || len(got) != 1):
			t.Fatalf("ns %d: eq(name) after ns 1's drop = %v, %v", i, got, err)
		}
	}
}

// TestSharedVertexIsUIDOfHandle: the allocation-free check agrees with
// UIDOfHandle.
func TestSharedVertexIsUIDOfHandle(t *testing.T) {
	for _, h := range []string{"0x1", "0x1f", "0xffffffffffffffff", "0x10000000000000000", "0x01", "0x", "0X1",
		"0x1F", "1", "0xg", "_dg|schema", "_pl|p|0x1", "0x1|", ""} {
		_, want := UIDOfHandle(h)
		if got := sharedVertex(h); got != want {
			t.Errorf("sharedVertex(%q) = %v, UIDOfHandle says %v", h, got, want)
		}
	}
}

// TestNamespaceViewNames: the renaming rules of doc.go's namespace table.
func TestNamespaceViewNames(t *testing.T) {
	v := NamespaceView(nil, 7).(*nsView)
	for _, c := range []struct{ in, out string }{
		{"0x1f", "0x1f"}, {LeaseVertex, LeaseVertex}, {SchemaVertex, "_ns|7|" + SchemaVertex},
		{"_pl|name|0x1", "_pl|@7@name|0x1"}, {"_pl|", "_ns|7|_pl|"},
	} {
		if got := v.vertexOut(c.in); got != c.out {
			t.Errorf("vertexOut(%q) = %q, want %q", c.in, got, c.out)
		}
		if back := v.vertexIn(c.out); back != c.in {
			t.Errorf("vertexIn(%q) = %q, want %q", c.out, back, c.in)
		}
	}
	long := "xid|" + strings.Repeat("x", 505)
	if got := v.aliasOut(long); len(got) > 512 || !strings.HasPrefix(got, "_ns|7|#") {
		t.Errorf("long alias -> %q", got)
	}
	if _, ok := NamespaceView(nil, 0).(*nsView).keyIn("@7|name"); ok {
		t.Error("namespace 0 shows a key of namespace 7")
	}
	if k, ok := v.keyIn("@7|name"); !ok || k != "name" {
		t.Errorf("keyIn(@7|name) = %q, %v", k, ok)
	}
	if _, ok := v.keyIn("@71|name"); ok {
		t.Error("namespace 7 shows a key of namespace 71")
	}
}

// BenchmarkNamespaceRead reads one node (6 values, 8 edges) through the
// engine, namespace 0's view (which checks for other namespaces' keys) and
// namespace 1's view (which renames every key).
func BenchmarkNamespaceRead(b *testing.B) {
	ctx := context.Background()
	db := openEngine(b, "")
	g0 := openGraph(b, db)
	for _, c := range []struct {
		name string
		ns   uint64
		raw  bool
	}{{"engine", 0, true}, {"ns0", 0, false}, {"ns1", 1, false}} {
		g, err := g0.Namespace(ctx, c.ns)
		if err != nil {
			b.Fatal(err)
		}
		text := `_:a <name> "a" .` + "\n"
		for i := range 5 {
			text += fmt.Sprintf("_:a <x%d> \"%d\" .\n", i, i)
		}
		for i := range 8 {
			text += fmt.Sprintf("_:a <f> _:b%d .\n", i)
		}
		res := mustMutate(b, g, text, "")
		ref := engine.VertexRef{Name: res.UIDs["a"]}
		api := g.Engine()
		if c.raw {
			api = db
		}
		snap, _ := db.Begin(ctx)
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				v, err := api.GetVertex(ctx, snap, ref, engine.ReadOptions{Props: true, Edges: true})
				if err != nil || len(v.Edges) != 8 {
					b.Fatal(err, len(v.Edges))
				}
			}
		})
	}
}
