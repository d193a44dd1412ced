package dgraph

import (
	"context"
	"testing"

	"github.com/weft-db/weft/internal/engine"
	"github.com/weft-db/weft/internal/rdf"
	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/value"
)

// Prepare evaluates without committing; Commit applies; the batch's
// mutations apply in order, sharing blank nodes; maintained structures
// (reverse edges, counts, indexes) come out as Mutate's would.
func TestPrepareThenCommit(t *testing.T) {
	g := newGraph(t, "name: string @index(exact) .\nfriend: [uid] @reverse @count .")
	ctx := context.Background()
	snap := snapshot(t, g)
	muts := []Mutation{
		{Set: quads(t, "_:a <name> \"first\" .\n_:a <friend> _:b .\n_:b <name> \"B\" .")},
		{Set: quads(t, `_:a <name> "second" .`)}, // applies after the first: its value wins
	}
	p, err := g.Prepare(ctx, snap, muts, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Ops) == 0 || len(p.Reads) == 0 || p.UIDs["a"] == "" || p.UIDs["b"] == "" {
		t.Fatalf("prepared %d ops, %d reads, uids %v", len(p.Ops), len(p.Reads), p.UIDs)
	}
	if want := []string{"friend", "name"}; len(p.Preds) != 2 || p.Preds[0] != want[0] || p.Preds[1] != want[1] {
		t.Fatalf("preds %v, want %v", p.Preds, want)
	}
	a, _ := ParseUID(p.UIDs["a"])
	b, _ := ParseUID(p.UIDs["b"])
	if n := readNode(t, g, a); n.Exists {
		t.Fatal("Prepare committed")
	}
	if _, err := g.Commit(ctx, p, nil); err != nil {
		t.Fatal(err)
	}
	na := readNode(t, g, a)
	if got := na.Values["name"].Str(); got != "second" || len(na.Edges["friend"]) != 1 || na.Edges["friend"][0].UID != b {
		t.Fatalf("node a: %+v", na)
	}
	if nb := readNode(t, g, b); len(nb.Edges["~friend"]) != 1 || nb.Counts["~friend"] != 1 {
		t.Fatalf("node b: reverse edge or count missing: %+v", nb)
	}
	if got, err := g.Eq(ctx, snapshot(t, g), "name", "", na.Values["name"]); err != nil || len(got) != 1 || got[0] != a {
		t.Fatalf("index of name: %v %v, want [%d]", got, err, a)
	}
	if got, err := g.Eq(ctx, snapshot(t, g), "name", "", value.Str("first")); err != nil || len(got) != 0 {
		t.Fatalf("index still has the replaced value: %v %v", got, err)
	}
	checkConsistency(t, g)
}

// A Memo gives a blank node the same UID when a batch is prepared again.
func TestPrepareMemoKeepsUIDs(t *testing.T) {
	g := newGraph(t, "name: string .")
	ctx := context.Background()
	muts := []Mutation{{Set: quads(t, `_:x <name> "x" .`)}}
	m := NewMemo()
	p1, err := g.Prepare(ctx, snapshot(t, g), muts, m)
	if err != nil {
		t.Fatal(err)
	}
	p2, err := g.Prepare(ctx, snapshot(t, g), muts, m)
	if err != nil {
		t.Fatal(err)
	}
	p3, err := g.Prepare(ctx, snapshot(t, g), muts, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p1.UIDs["x"] != p2.UIDs["x"] || p3.UIDs["x"] == p1.UIDs["x"] {
		t.Fatalf("uids %s, %s (same memo), %s (new memo)", p1.UIDs["x"], p2.UIDs["x"], p3.UIDs["x"])
	}
}

// Commit validates the extra reads too: one that changed makes the commit
// fail with a retryable error, and nothing is written.
func TestCommitValidatesExtraReads(t *testing.T) {
	g := newGraph(t, "name: string @index(exact) .\nbalance: int .")
	ctx := context.Background()
	acct := blankUID(t, mustMutate(t, g, `_:a <balance> "10" .`, ""), "a")
	snap := snapshot(t, g)
	v, err := g.db.GetVertex(ctx, snap, engine.VertexRef{Name: FormatUID(acct)}, engine.ReadOptions{Props: true})
	if err != nil {
		t.Fatal(err)
	}
	p, err := g.Prepare(ctx, snap, []Mutation{{Set: quads(t, `_:n <name> "depends on the balance" .`)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	mustMutate(t, g, "<"+FormatUID(acct)+"> <balance> \"5\" .", "")
	_, err = g.Commit(ctx, p, []txn.Read{v.Read})
	if err == nil || !Retryable(err) {
		t.Fatalf("commit after a read changed: %v, want a retryable conflict", err)
	}
	u, _ := ParseUID(p.UIDs["n"])
	if readNode(t, g, u).Exists {
		t.Fatal("a failed commit wrote")
	}
}

func TestSubstituteBlanks(t *testing.T) {
	muts := []Mutation{{Set: quads(t, "_:a <friend> _:b .\n<0x5> <name> \"x\" ."), Del: quads(t, `_:a <name> "y" .`)}}
	out, err := SubstituteBlanks(muts, map[string]string{"a": "0x10", "b": "0x11"})
	if err != nil {
		t.Fatal(err)
	}
	s := out[0].Set
	if s[0].Subject.Kind != rdf.UID || s[0].Subject.UID != 0x10 || s[0].Object.UID != 0x11 || s[1].Subject.UID != 5 ||
		out[0].Del[0].Subject.UID != 0x10 {
		t.Fatalf("substituted: %v", out)
	}
	if muts[0].Set[0].Subject.Kind != rdf.Blank {
		t.Fatal("SubstituteBlanks changed its input")
	}
	if _, err := SubstituteBlanks(muts, map[string]string{"a": "0x10"}); err == nil {
		t.Fatal("a blank node without a UID must fail")
	}
}
