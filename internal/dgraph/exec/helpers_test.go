package exec

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"testing"

	"github.com/weft-db/weft/internal/dgraph"
	"github.com/weft-db/weft/internal/dgraph/dql"
	"github.com/weft-db/weft/internal/engine"
	"github.com/weft-db/weft/internal/rdf"
)

// openEngine starts an in-memory engine.
func openEngine(t testing.TB) *engine.DB {
	t.Helper()
	cfg := engine.DefaultConfig()
	cfg.Sync = false
	db, err := engine.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// fixture is a graph with a schema and data, and an executor over it.
type fixture struct {
	db *engine.DB
	g  *dgraph.Graph
	e  *Executor
}

// placementFlag runs the package's tests in another placement:
//
//	go test ./internal/dgraph/exec -exec.placement=predicate
var placementFlag = flag.String("exec.placement", "", "the placement of the graphs tests open (vertex or predicate)")

// placements are the placements the film and OCC tests run in.
var placements = []string{dgraph.PlacementVertex, dgraph.PlacementPredicate}

func newFixture(t testing.TB, schemaText, data string) *fixture {
	t.Helper()
	return newFixtureIn(t, *placementFlag, schemaText, data)
}

// newFixtureIn is newFixture in the given placement.
func newFixtureIn(t testing.TB, placement, schemaText, data string) *fixture {
	t.Helper()
	db := openEngine(t)
	cfg := dgraph.DefaultConfig()
	cfg.LeaseSize = 64
	cfg.Placement = placement
	g, err := dgraph.Open(context.Background(), db, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if schemaText != "" {
		if _, err := g.Alter(context.Background(), schemaText); err != nil {
			t.Fatal(err)
		}
	}
	// Lease the low uids so that hand-written data may name <0x1>...
	if _, _, err := g.Lease(context.Background(), 64); err != nil {
		t.Fatal(err)
	}
	if data != "" {
		qs, err := rdf.Parse(data)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := g.Mutate(context.Background(), dgraph.Mutation{Set: qs}); err != nil {
			t.Fatal(err)
		}
	}
	return &fixture{db: db, g: g, e: New(g)}
}

func (f *fixture) reader(t testing.TB, record bool) *dgraph.SnapshotReader {
	t.Helper()
	snap, err := f.db.Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return dgraph.NewSnapshotReader(f.db, snap, record)
}

// query runs q and returns its data, failing the test on an error.
func (f *fixture) query(t testing.TB, q string, vars map[string]string) *Result {
	t.Helper()
	res, err := f.e.Query(context.Background(), f.reader(t, false), q, vars)
	if err != nil {
		t.Fatalf("query %s: %v", q, err)
	}
	return res
}

// canon re-renders JSON with sorted keys, for comparison.
func canon(t testing.TB, s []byte) string {
	t.Helper()
	var v any
	d := json.NewDecoder(bytes.NewReader(s))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		t.Fatalf("bad JSON %s: %v", s, err)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// expect checks a query's data against want (key order ignored, list
// order kept).
func (f *fixture) expect(t testing.TB, q string, vars map[string]string, want string) {
	t.Helper()
	got := f.query(t, q, vars)
	if canon(t, got.Data) != canon(t, []byte(want)) {
		t.Errorf("query %s\ngot  %s\nwant %s", q, got.Data, want)
	}
}

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }

// quads parses N-Quads, uid(v) and val(v) included.
func quads(t testing.TB, text string) []rdf.NQuad {
	t.Helper()
	u, err := dql.ParseUpsert("upsert { query { v as var(func: uid(0x1)) a as var(func: uid(0x1)) x(func: uid(v, a)) { uid } } mutation { set {\n" + text + "\n} } }")
	if err != nil {
		t.Fatal(err)
	}
	return u.Mutations[0].Set
}

// mutate applies N-Quads through the graph.
func (f *fixture) mutate(t testing.TB, set string) {
	t.Helper()
	qs, err := rdf.Parse(set)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.g.Mutate(context.Background(), dgraph.Mutation{Set: qs}); err != nil {
		t.Fatal(err)
	}
}
