package dgraph

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/weft-db/weft/internal/dgraph/schema"
	"github.com/weft-db/weft/internal/engine"
	"github.com/weft-db/weft/internal/value"
)

// TestSchemaPersistsAcrossRestart: the schema, its indexes and the UID
// lease live in the store and survive a restart of the engine (issue §3).
func TestSchemaPersistsAcrossRestart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := openEngine(t, dir)
	g := openGraph(t, db)
	text := "name: string @index(exact) @lang .\nage: [int] @index(int) .\ntype Person {\n\tname\n\tage\n}\n"
	if _, err := g.Alter(ctx, text); err != nil {
		t.Fatal(err)
	}
	res := mustMutate(t, g, `_:p <name> "Pat" .`+"\n"+`_:p <age> "30" .`, "")
	before, err := g.Schema(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	g2 := openGraph(t, openEngine(t, dir))
	after, err := g2.Schema(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !after.Equal(before) {
		t.Fatalf("schema after restart:\n%s\nbefore:\n%s", after, before)
	}
	if _, ok := after.Type("Person"); !ok {
		t.Fatal("type Person lost")
	}
	got, err := g2.Eq(ctx, snapshot(t, g2), "name", "", value.Str("Pat"))
	if err != nil || !slices.Equal(got, []uint64{blankUID(t, res, "p")}) {
		t.Fatalf("eq after restart: %v %v", got, err)
	}
	res2 := mustMutate(t, g2, `_:q <name> "Quinn" .`, "")
	if blankUID(t, res2, "q") <= blankUID(t, res, "p") {
		t.Fatalf("uid %s reused after restart (before: %s)", res2.UIDs["q"], res.UIDs["p"])
	}
	checkConsistency(t, g2)
}

// TestAlterBuildsAndDrops: an alter over existing data builds indexes,
// reverse edges and counts, and drops them, leaving the invariants intact.
func TestAlterBuildsAndDrops(t *testing.T) {
	ctx := context.Background()
	g := newGraph(t, "")
	g.cfg.BuildBatchMax = 2 // several transactions per build
	mustMutate(t, g, `
		<a> <name> "Ada Lovelace" .
		<b> <name> "Alan Turing" .
		<a> <age> "36"^^<xs:int> .
		<b> <age> "41"^^<xs:int> .
		<a> <knows> <b> .
		<c> <knows> <b> .
		<c> <knows> <a> .
	`, "")
	a, b := uidOf(t, g, "a"), uidOf(t, g, "b")
	if _, err := g.Eq(ctx, snapshot(t, g), "age", "", value.I64(41)); !errors.Is(err, ErrNoIndex) {
		t.Fatalf("eq before the index: %v", err)
	}
	diff, err := g.Alter(ctx, `
		name: string @index(exact, term) .
		age: int @index(int) .
		knows: [uid] @reverse @count .
	`)
	if err != nil {
		t.Fatal(err)
	}
	if len(diff.Predicates) != 3 {
		t.Fatalf("diff %s", diff)
	}
	got, err := g.Eq(ctx, snapshot(t, g), "age", "", value.I64(41))
	if err != nil || !slices.Equal(got, []uint64{b}) {
		t.Fatalf("eq after build: %v %v", got, err)
	}
	got, err = g.Lookup(ctx, snapshot(t, g), "name", "", "term", "ada")
	if err != nil || !slices.Equal(got, []uint64{a}) {
		t.Fatalf("term after build: %v %v", got, err)
	}
	if n := readNode(t, g, b); len(n.Edges["~knows"]) != 2 || n.Counts["~knows"] != 2 {
		t.Fatalf("reverse after build: %s", renderNode(n))
	}
	checkConsistency(t, g)

	// Drop the term index and the reverse edges; keep the rest.
	snap := snapshot(t, g)
	st, _ := g.schemaAt(ctx, snap)
	termGen := st.meta.Index["name|term"]
	if _, err := g.Alter(ctx, "name: string @index(exact) .\nknows: [uid] .\n"); err != nil {
		t.Fatal(err)
	}
	if n := readNode(t, g, b); len(n.Edges["~knows"]) != 0 || n.Counts["~knows"] != 0 {
		t.Fatalf("reverse after drop: %s", renderNode(n))
	}
	for bk := range Buckets {
		v, err := g.db.GetVertex(ctx, snapshot(t, g), engine.VertexRef{Name: dirVertexIn(g.cfg.Placement, "name", termGen, bk)}, engine.ReadOptions{})
		if err != nil || v.Exists {
			t.Fatalf("dropped index directory %s still there (%v)", dirVertexIn(g.cfg.Placement, "name", termGen, bk), err)
		}
	}
	if _, err := g.Lookup(ctx, snapshot(t, g), "name", "", "term", "ada"); !errors.Is(err, ErrNoIndex) {
		t.Fatalf("term lookup after drop: %v", err)
	}
	checkConsistency(t, g)

	// Type changes that need an empty predicate, or value conversion, are refused.
	if _, err := g.Alter(ctx, "knows: string ."); !errors.Is(err, ErrInvalid) {
		t.Errorf("uid to string with data: %v", err)
	}
	// A type change converts the values and rebuilds the indexes, or
	// changes nothing when a value does not convert.
	if _, err := g.Alter(ctx, "age: float @index(float) ."); err != nil {
		t.Fatalf("int to float with data: %v", err)
	}
	if n := readNode(t, g, a); !sameValue(n.Values["age"], value.F64(36)) {
		t.Errorf("age after conversion: %s", renderNode(n))
	}
	if got, err := g.Eq(ctx, snapshot(t, g), "age", "", value.F64(36)); err != nil || !slices.Equal(got, []uint64{a}) {
		t.Errorf("eq after conversion: %v %v", got, err)
	}
	before := dump(t, g)
	if _, err := g.Alter(ctx, "name: int ."); !errors.Is(err, ErrInvalid) {
		t.Errorf("string to int: %v", err)
	}
	if after := dump(t, g); after != before {
		t.Errorf("a refused alter changed the data:\n%s\n%s", before, after)
	}
	checkConsistency(t, g)
	if _, err := g.Alter(ctx, "empty: int .\n"); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Alter(ctx, "empty: float @index(float) ."); err != nil {
		t.Errorf("changing an empty predicate: %v", err)
	}
	if _, err := g.Alter(ctx, "name: int @index(exact) ."); !errors.Is(err, ErrInvalid) {
		t.Errorf("bad schema: %v", err)
	}

	// Dropping a predicate deletes its values, edges, reverse edges and
	// indexes, and its definition.
	if _, err := g.Alter(ctx, "knows: [uid] @reverse @count ."); err != nil {
		t.Fatal(err)
	}
	if err := g.DropPredicate(ctx, "knows"); err != nil {
		t.Fatal(err)
	}
	if err := g.DropPredicate(ctx, "name"); err != nil {
		t.Fatal(err)
	}
	sch, _ := g.Schema(ctx)
	if _, ok := sch.Predicate("knows"); ok {
		t.Error("knows still in the schema")
	}
	if n := readNode(t, g, b); len(n.Edges) != 0 || len(n.Counts) != 0 || n.Values["name"].Kind() != value.Null || n.Values["age"].Kind() == value.Null {
		t.Errorf("b after drops: %s", renderNode(n))
	}
	if has, err := g.Has(ctx, snapshot(t, g), "knows"); err != nil || len(has) != 0 {
		t.Errorf("has(knows) after drop: %v %v", has, err)
	}
	mustMutate(t, g, `<a> <knows> <b> .`, "")
	checkConsistency(t, g)
}

// TestAlterResumesAfterCrash: work recorded by an alter whose process died
// blocks mutations of the predicate (ErrBusy) until the next Open finishes it.
func TestAlterResumesAfterCrash(t *testing.T) {
	ctx := context.Background()
	db := openEngine(t, "")
	g := openGraph(t, db)
	mustMutate(t, g, "<a> <age> \"7\"^^<xs:int> .\n<b> <age> \"8\"^^<xs:int> .", "")
	u, err := schema.Parse("age: int @index(int) .")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.alterOnce(ctx, u); err != nil { // the schema commit, without the work
		t.Fatal(err)
	}
	if _, err := g.Mutate(ctx, Mutation{Set: quads(t, `<a> <age> "9" .`)}); !errors.Is(err, ErrBusy) {
		t.Fatalf("mutation during the build: %v", err)
	}
	if _, err := g.Eq(ctx, snapshot(t, g), "age", "", value.I64(7)); !errors.Is(err, ErrBusy) {
		t.Fatalf("lookup during the build: %v", err)
	}
	g2 := openGraph(t, db) // "restart": Open finishes the work
	got, err := g2.Eq(ctx, snapshot(t, g2), "age", "", value.I64(8))
	if err != nil || !slices.Equal(got, []uint64{uidOf(t, g2, "b")}) {
		t.Fatalf("eq after resume: %v %v", got, err)
	}
	mustMutate(t, g2, `<a> <age> "9" .`, "")
	checkConsistency(t, g2)
}
