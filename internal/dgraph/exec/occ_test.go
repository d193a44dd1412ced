package exec

import (
	"context"
	"errors"
	"testing"

	"github.com/weft-db/weft/internal/dgraph"
	"github.com/weft-db/weft/internal/engine"
	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/value"
)

// TestRecordedReadsValidate checks what recording is for: a transaction
// that commits with a query's reads fails when something the query read
// (a node, or an index entry its eq used) changed since, and commits when
// nothing did.
// It runs in both placements: in the predicate placement the query reads
// the node vertices and their placed vertices, per predicate.
func TestRecordedReadsValidate(t *testing.T) {
	for _, p := range placements {
		t.Run(p, func(t *testing.T) { recordedReadsValidate(t, p) })
	}
}

func recordedReadsValidate(t *testing.T, placement string) {
	f := newFixtureIn(t, placement, peopleSchema, peopleData)
	ctx := context.Background()
	write := []txn.Op{{Kind: txn.SetVertexProp, Vertex: "0x4", Key: "note", Value: value.Str("x")}}
	query := func() *dgraph.SnapshotReader {
		r := f.reader(t, true)
		if _, err := f.e.Query(ctx, r, `{ q(func: eq(name, "Carol Ann")) { name ~friend { name } } }`, nil); err != nil {
			t.Fatal(err)
		}
		return r
	}

	r := query()
	if _, err := f.db.Commit(ctx, r.Reads(), write); err != nil {
		t.Fatalf("nothing changed, yet the commit failed: %v", err)
	}

	r = query()
	f.mutate(t, `<0x2> <name> "Bob" .
<0x2> <name> "Bobby"@en .`) // 0x2's name was read (0x2 is a ~friend of 0x3)
	if _, err := f.db.Commit(ctx, r.Reads(), write); !errors.Is(err, engine.ErrAborted) {
		t.Fatalf("a node the query read changed, commit: %v", err)
	}

	// The vertex placement reads 0x2 whole; the predicate placement reads
	// only its name, so a change of its age conflicts only in the first.
	r = query()
	f.mutate(t, `<0x2> <age> "26" .`)
	_, err := f.db.Commit(ctx, r.Reads(), write)
	if placement == dgraph.PlacementPredicate && err != nil || placement != dgraph.PlacementPredicate && !errors.Is(err, engine.ErrAborted) {
		t.Fatalf("%s placement: a predicate the query did not read changed, commit: %v", placement, err)
	}

	r = query()
	f.mutate(t, `<0x4> <name> "Carol Ann" .`) // a new eq answer: the index vertex changed
	if _, err := f.db.Commit(ctx, r.Reads(), write); !errors.Is(err, engine.ErrAborted) {
		t.Fatalf("the query's eq answer changed, commit: %v", err)
	}
}
