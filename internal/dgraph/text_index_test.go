package dgraph

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/weft-db/weft/internal/dgraph/index"
	"github.com/weft-db/weft/internal/engine"
)

// TestAlterBuildsTextIndexes checks that adding fulltext and trigram
// indexes to a predicate with data builds them over the existing values
// (tagged ones too), that later writes maintain them, and that dropping
// them removes their entries.
func TestAlterBuildsTextIndexes(t *testing.T) {
	ctx := context.Background()
	g := newGraph(t, "")
	g.cfg.BuildBatchMax = 2 // several transactions per build
	mustMutate(t, g, `
		<a> <title> "The Running Man" .
		<b> <title> "Runners of the North" .
		<c> <title> "Les chanteuses"@fr .
		<d> <title> "Quiet" .
	`, "")
	a, b, c, d := uidOf(t, g, "a"), uidOf(t, g, "b"), uidOf(t, g, "c"), uidOf(t, g, "d")
	if _, err := g.Alter(ctx, "title: string @index(fulltext, trigram) @lang ."); err != nil {
		t.Fatal(err)
	}
	lookup := func(lang, tok, token string) []uint64 {
		t.Helper()
		got, err := g.Lookup(ctx, snapshot(t, g), "title", lang, tok, token)
		if err != nil {
			t.Fatalf("%s %s %q: %v", lang, tok, token, err)
		}
		return got
	}
	if got := lookup("", "fulltext", "run"); !slices.Equal(got, []uint64{a}) {
		t.Errorf("fulltext run: %v, want [%d]", got, a)
	}
	if got := lookup("", "fulltext", "runner"); !slices.Equal(got, []uint64{b}) {
		t.Errorf("fulltext runner: %v, want [%d]", got, b)
	}
	if got := lookup("fr", "fulltext", index.FulltextTerms("chanteuse", "fr")[0]); !slices.Equal(got, []uint64{c}) {
		t.Errorf("fulltext fr: %v, want [%d]", got, c)
	}
	want := []uint64{a, b}
	slices.Sort(want) // uids are leased, not given in order
	if got := lookup("", "trigram", "unn"); !slices.Equal(got, want) {
		t.Errorf("trigram unn: %v, want %v", got, want)
	}
	checkConsistency(t, g)

	// Writes after the build maintain the entries.
	mustMutate(t, g, `<d> <title> "Run, Lola" .`, `<a> <title> "The Running Man" .`)
	if got := lookup("", "fulltext", "run"); !slices.Equal(got, []uint64{d}) {
		t.Errorf("fulltext run after writes: %v, want [%d]", got, d)
	}
	if got := lookup("", "trigram", "Qui"); len(got) != 0 {
		t.Errorf("trigram of a replaced value: %v", got)
	}
	checkConsistency(t, g)

	st, _ := g.schemaAt(ctx, snapshot(t, g))
	gens := []uint64{st.meta.Index["title|fulltext"], st.meta.Index["title|trigram"]}
	if _, err := g.Alter(ctx, "title: string @lang ."); err != nil {
		t.Fatal(err)
	}
	for _, gen := range gens {
		for bk := range Buckets {
			v, err := g.db.GetVertex(ctx, snapshot(t, g), engine.VertexRef{Name: dirVertexIn(g.cfg.Placement, "title", gen, bk)}, engine.ReadOptions{})
			if err != nil || v.Exists {
				t.Fatalf("dropped index directory %s still there (%v)", dirVertexIn(g.cfg.Placement, "title", gen, bk), err)
			}
		}
	}
	for _, tok := range []string{"fulltext", "trigram"} {
		if _, err := g.Lookup(ctx, snapshot(t, g), "title", "", tok, "run"); !errors.Is(err, ErrNoIndex) {
			t.Errorf("%s lookup after drop: %v", tok, err)
		}
	}
	checkConsistency(t, g)
}
