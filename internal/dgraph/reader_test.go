package dgraph

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/weft-db/weft/internal/engine"
	"github.com/weft-db/weft/internal/txn"
)

// TestReadVerticesFallback: ReadVertices answers the same vertices, in ref
// order, through a batching reader and through one that only has
// GetVertex, at any parallelism; the fallback stops at an error.
func TestReadVerticesFallback(t *testing.T) {
	ctx := context.Background()
	g := newGraph(t, "name: string @index(exact) .")
	mustMutate(t, g, `<a> <name> "Ann" .
<b> <name> "Bo" .
<c> <name> "Cy" .`, "")
	snap := snapshot(t, g)
	refs := []engine.VertexRef{
		{Name: FormatUID(uidOf(t, g, "c"))}, {Name: "no such vertex"},
		{Name: FormatUID(uidOf(t, g, "a"))}, {Name: xidAlias("b"), Alias: true},
	}
	opts := engine.DefaultReadOptions()
	batched, err := ReadVertices(ctx, NewSnapshotReader(g.db, snap, false), refs, opts, 4)
	if err != nil {
		t.Fatal(err)
	}
	handles := func(vs []*engine.Vertex) []string {
		var out []string
		for _, v := range vs {
			out = append(out, v.Handle+"/"+map[bool]string{true: "y", false: "n"}[v.Exists])
		}
		return out
	}
	for _, parallelMax := range []int{1, 2, 16} {
		plain := &countingReader{db: g.db, snap: snap, seen: map[string]int{}}
		got, err := ReadVertices(ctx, plain, refs, opts, parallelMax)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(handles(got), handles(batched)) {
			t.Errorf("parallel %d: %v, batched %v", parallelMax, handles(got), handles(batched))
		}
		if len(plain.seen) != len(refs) {
			t.Errorf("parallel %d: %d vertices read one by one, want %d", parallelMax, len(plain.seen), len(refs))
		}
	}
	boom := errors.New("boom")
	if _, err := ReadVertices(ctx, failingReader{boom}, refs, opts, 1); !errors.Is(err, boom) {
		t.Errorf("failing reader: %v", err)
	}
}

type failingReader struct{ err error }

func (f failingReader) GetVertex(context.Context, engine.VertexRef, engine.ReadOptions) (*engine.Vertex, error) {
	return nil, f.err
}

// TestSnapshotReaderRecords: a recording reader keeps one read per vertex
// and alias it read (single and batched reads alike) and the reads noted
// for it, sorted; a reader that does not record keeps only the noted ones.
func TestSnapshotReaderRecords(t *testing.T) {
	ctx := context.Background()
	g := newGraph(t, "name: string .")
	mustMutate(t, g, `<a> <name> "Ann" .
<b> <name> "Bo" .`, "")
	snap := snapshot(t, g)
	a, b := FormatUID(uidOf(t, g, "a")), FormatUID(uidOf(t, g, "b"))
	noted := txn.Read{Vertex: "_noted", Version: []byte("v")}
	for _, record := range []bool{true, false} {
		r := NewSnapshotReader(g.db, snap, record)
		if _, err := r.GetVertex(ctx, engine.VertexRef{Name: b}, engine.ReadOptions{}); err != nil {
			t.Fatal(err)
		}
		refs := []engine.VertexRef{{Name: a}, {Name: b}, {Name: xidAlias("a"), Alias: true}}
		if _, err := r.GetVertices(ctx, refs, engine.ReadOptions{}); err != nil {
			t.Fatal(err)
		}
		r.Note(noted)
		reads := r.Reads()
		if !slices.IsSortedFunc(reads, func(x, y txn.Read) int { return strings.Compare(x.Vertex, y.Vertex) }) {
			t.Errorf("record %v: reads not sorted: %v", record, reads)
		}
		var got []string
		for _, rd := range reads {
			got = append(got, rd.Vertex+map[bool]string{true: "(alias)", false: ""}[rd.Alias])
		}
		slices.Sort(got)
		want := []string{"_noted"}
		if record {
			want = append(want, a, b, xidAlias("a")+"(alias)")
		}
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("record %v: reads %v, want %v", record, got, want)
		}
		if r.Calls() < 2 {
			t.Errorf("record %v: %d calls, want at least 2", record, r.Calls())
		}
	}
}
