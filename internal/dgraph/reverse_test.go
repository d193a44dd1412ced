package dgraph

import (
	"testing"
)

// TestReverseAndCount: @reverse edges and @count counts follow every
// change of the forward edges in the same transaction, deletes included
// (issue §1).
func TestReverseAndCount(t *testing.T) {
	g := newGraph(t, `
		friend: [uid] @reverse @count .
		boss: uid @reverse .
		name: string .
	`)
	mustMutate(t, g, `
		<a> <friend> <b> .
		<a> <friend> <c> .
		<d> <friend> <b> (since=2001) .
		<a> <boss> <b> .
		<b> <name> "B" .
	`, "")
	a, b, c, d := uidOf(t, g, "a"), uidOf(t, g, "b"), uidOf(t, g, "c"), uidOf(t, g, "d")
	rev := func(n *Node, pred string) []uint64 {
		var out []uint64
		for _, e := range n.Edges[pred] {
			out = append(out, e.UID)
		}
		return out
	}
	expect := func(uid uint64, pred string, want []uint64, count int64) {
		t.Helper()
		n := readNode(t, g, uid)
		got := rev(n, pred)
		if len(got) != len(want) || n.Counts[pred] != count {
			t.Fatalf("%s %s: %v (count %d), want %v (count %d)", FormatUID(uid), pred, got, n.Counts[pred], want, count)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%s %s: %v, want %v", FormatUID(uid), pred, got, want)
			}
		}
	}
	sorted2 := func(x, y uint64) []uint64 {
		if x > y {
			x, y = y, x
		}
		return []uint64{x, y}
	}
	expect(b, "~friend", sorted2(a, d), 2)
	expect(c, "~friend", []uint64{a}, 1)
	expect(a, "friend", sorted2(b, c), 2)
	expect(b, "~boss", []uint64{a}, 0) // @reverse without @count: no reverse count
	checkConsistency(t, g)

	mustMutate(t, g, "", "<a> <friend> <b> .")
	expect(b, "~friend", []uint64{d}, 1)
	expect(a, "friend", []uint64{c}, 1)
	// A single uid predicate moves its reverse edge.
	mustMutate(t, g, "<a> <boss> <c> .", "")
	expect(b, "~boss", nil, 0)
	expect(c, "~boss", []uint64{a}, 0)
	checkConsistency(t, g)

	mustMutate(t, g, "", "<d> * * .")
	expect(b, "~friend", nil, 0)
	mustMutate(t, g, "", "<a> <friend> * .")
	expect(c, "~friend", nil, 0)
	if n := readNode(t, g, b); n.Values["name"].Str() != "B" {
		t.Fatalf("b lost its name: %s", renderNode(n))
	}
	// Re-adding in one mutation with a delete of the same edge nets out.
	mustMutate(t, g, "<a> <friend> <c> .", "<a> <friend> <c> .")
	expect(c, "~friend", []uint64{a}, 1)
	checkConsistency(t, g)
}
