package dqlexec

import (
	"context"
	"errors"
	"testing"

	"github.com/weft-db/weft/internal/engine"
	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/value"
)

// TestRecordedReadsValidate checks what recording is for: a transaction
// that commits with a query's reads fails when something the query read
// (a node, or an index entry its eq used) changed since, and commits when
// nothing did.
func TestRecordedReadsValidate(t *testing.T) {
	f := newFixture(t, peopleSchema, peopleData)
	ctx := context.Background()
	write := []txn.Op{{Kind: txn.SetVertexProp, Vertex: "0x4", Key: "note", Value: value.Str("x")}}
	query := func() *SnapshotReader {
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
	f.mutate(t, `<0x2> <age> "26" .`) // 0x2 was read (~friend of 0x3)
	if _, err := f.db.Commit(ctx, r.Reads(), write); !errors.Is(err, engine.ErrAborted) {
		t.Fatalf("a node the query read changed, commit: %v", err)
	}

	r = query()
	f.mutate(t, `<0x4> <name> "Carol Ann" .`) // a new eq answer: the index vertex changed
	if _, err := f.db.Commit(ctx, r.Reads(), write); !errors.Is(err, engine.ErrAborted) {
		t.Fatalf("the query's eq answer changed, commit: %v", err)
	}
}
