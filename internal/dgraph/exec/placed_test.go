package exec

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/weft-db/weft/internal/dgraph"
	"github.com/weft-db/weft/internal/engine"
	"github.com/weft-db/weft/internal/rdf"
	"github.com/weft-db/weft/internal/txn"
)

// batchLog is a BatchReader over a SnapshotReader that logs every read.
type batchLog struct {
	*dgraph.SnapshotReader
	mu      sync.Mutex
	single  []string   // GetVertex names
	batches [][]string // GetVertices names, per call
}

func (b *batchLog) GetVertex(ctx context.Context, v engine.VertexRef, opts engine.ReadOptions) (*engine.Vertex, error) {
	b.mu.Lock()
	b.single = append(b.single, v.Name)
	b.mu.Unlock()
	return b.SnapshotReader.GetVertex(ctx, v, opts)
}

func (b *batchLog) GetVertices(ctx context.Context, refs []engine.VertexRef, opts engine.ReadOptions) ([]*engine.Vertex, error) {
	var names []string
	for _, r := range refs {
		names = append(names, r.Name)
	}
	b.mu.Lock()
	b.batches = append(b.batches, names)
	b.mu.Unlock()
	return b.SnapshotReader.GetVertices(ctx, refs, opts)
}

// TestPredicatePlacementBatchesPerPredicate: in the predicate placement a
// query reads, per level, each predicate its fields name as one batch of
// that predicate's group (one engine request per (predicate, shard)),
// never a node by itself, and answers what the vertex placement answers.
func TestPredicatePlacementBatchesPerPredicate(t *testing.T) {
	ctx := context.Background()
	var data strings.Builder
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&data, "<0x%x> <name> \"n%d\" .\n<0x%x> <age> \"%d\" .\n<0x%x> <friend> <0x%x> .\n<0x%x> <friend> <0x%x> .\n",
			i, i, i, i%7, i, i%40+1, i, (i*7)%40+1)
	}
	q := `{ q(func: uid(0x1, 0x2, 0x3, 0x4, 0x5, 0x6, 0x7, 0x8, 0x9, 0xa)) { name friend { name age friend { uid } } } }`
	var answers []string
	for _, placement := range placements {
		f := newFixtureIn(t, placement, peopleSchema, data.String())
		r := &batchLog{SnapshotReader: f.reader(t, false)}
		res, err := f.e.Query(ctx, r, q, nil)
		if err != nil {
			t.Fatal(err)
		}
		answers = append(answers, canon(t, res.Data))
		if placement != dgraph.PlacementPredicate {
			continue
		}
		for _, n := range r.single {
			if _, ok := dgraph.ParseUID(n); ok == nil || strings.HasPrefix(n, txn.GroupPrefix) {
				t.Errorf("node data %s read by itself", n)
			}
		}
		nodeBatches, predBatches := 0, map[string]int{}
		for _, b := range r.batches {
			g0, placed := txn.GroupOf(b[0])
			for _, n := range b {
				if g, ok := txn.GroupOf(n); ok != placed || g != g0 {
					t.Fatalf("batch %v mixes groups", b)
				}
			}
			if placed {
				predBatches[g0]++
			} else {
				nodeBatches++
			}
		}
		// Two levels read nodes (the root: name and friend; friend: name,
		// age and friend; friend's friend only needs uids). Each reads
		// just the predicates its fields name, one batch per predicate,
		// and no node vertex (the fields say which predicates to read).
		if nodeBatches != 0 || res.Stats.Batches != 2 {
			t.Errorf("%d node batches, %d levels; want 0 and 2", nodeBatches, res.Stats.Batches)
		}
		want := map[string]int{txn.GroupPrefix + "name": 2, txn.GroupPrefix + "friend": 2, txn.GroupPrefix + "age": 1}
		if !maps.Equal(predBatches, want) {
			t.Errorf("batches per predicate %v, want %v", predBatches, want)
		}
	}
	if answers[0] != answers[1] || !strings.Contains(answers[0], `"n10"`) {
		t.Fatalf("vertex placement %s\npredicate placement %s", answers[0], answers[1])
	}
}

// TestSnapshotReaderCountsRequests: a batched read counts one call per
// shard the engine asked, and records every vertex's read.
func TestSnapshotReaderCountsRequests(t *testing.T) {
	ctx := context.Background()
	f := newFixtureIn(t, dgraph.PlacementPredicate, peopleSchema, peopleData)
	r := f.reader(t, true)
	var refs []engine.VertexRef
	shards := map[uint32]bool{}
	for i := 1; i <= 4; i++ {
		refs = append(refs, engine.VertexRef{Name: dgraph.FormatUID(uint64(i))},
			engine.VertexRef{Name: dgraph.PlacedVertex("name", uint64(i))})
		shards[txn.ShardOf(dgraph.FormatUID(uint64(i)), 4)] = true
	}
	shards[txn.ShardOf(dgraph.PlacedVertex("name", 1), 4)] = true
	vs, err := r.GetVertices(ctx, refs, engine.ReadOptions{Props: true})
	if err != nil {
		t.Fatal(err)
	}
	if r.Calls() != int64(len(shards)) {
		t.Errorf("%d calls for %d shards", r.Calls(), len(shards))
	}
	if !vs[1].Exists || vs[1].Props["name"].Str() != "Alice" {
		t.Errorf("placed name of 0x1: %+v", vs[1])
	}
	var got []string
	for _, rd := range r.Reads() {
		got = append(got, rd.Vertex)
	}
	var want []string
	for _, ref := range refs {
		want = append(want, ref.Name)
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("recorded %v, want %v", got, want)
	}
}

// TestPlacementsQueryAlike is the executor's differential test of the
// placements: the same random mutations (sets and deletions of values,
// language values, facets, list values, edges, reverse edges, whole nodes)
// on a graph of each placement, then the same queries — expand(_all_),
// reverse edges, counts, filters, ordering and pagination, facets, var
// blocks, has, recurse — answer the same JSON.
func TestPlacementsQueryAlike(t *testing.T) {
	ctx := context.Background()
	seed := uint64(rand.Uint32())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 11))
	schema := peopleSchema + "boss: uid @reverse .\ntags: [string] @index(exact) .\n"
	fs := []*fixture{newFixtureIn(t, dgraph.PlacementVertex, schema, ""), newFixtureIn(t, dgraph.PlacementPredicate, schema, "")}
	node := func() string { return fmt.Sprintf("<0x%x>", 1+rng.IntN(14)) }
	names := []string{"Ann", "Bo", "Cy Lee", "Di Lee", "Ed"}
	set := func() string {
		s := node()
		switch rng.IntN(9) {
		case 0:
			return fmt.Sprintf(`%s <name> %q .`, s, names[rng.IntN(len(names))])
		case 1:
			return fmt.Sprintf(`%s <name> %q@es (since=%d) .`, s, names[rng.IntN(len(names))], rng.IntN(3))
		case 2:
			return fmt.Sprintf(`%s <age> "%d" .`, s, rng.IntN(6))
		case 3, 4:
			return fmt.Sprintf(`%s <friend> %s (w=%d) .`, s, node(), rng.IntN(3))
		case 5:
			return fmt.Sprintf(`%s <boss> %s .`, s, node())
		case 6:
			return fmt.Sprintf(`%s <dgraph.type> "Person" .`, s)
		}
		return fmt.Sprintf(`%s <tags> "t%d" .`, s, rng.IntN(4))
	}
	del := func() string {
		s := node()
		switch rng.IntN(6) {
		case 0:
			return s + ` * * .`
		case 1:
			return s + ` <friend> * .`
		case 2:
			return fmt.Sprintf(`%s <friend> %s .`, s, node())
		case 3:
			return s + ` <name> * .`
		case 4:
			return s + ` <boss> * .`
		}
		return fmt.Sprintf(`%s <tags> "t%d" .`, s, rng.IntN(4))
	}
	queries := []string{
		`{ q(func: has(name), orderasc: name, first: 20) { uid name name@es age tags friend @facets(w) { uid name } ~friend { uid } count(friend) count(~friend) boss { uid } ~boss { uid } } }`,
		`{ q(func: uid(0x1, 0x2, 0x3, 0x4, 0x5, 0x6, 0x7)) { uid expand(_all_) { uid } } }`,
		`{ q(func: type(Person)) @filter(ge(age, 2) OR eq(tags, "t1")) { uid age friend(orderdesc: age, first: 2) { uid age name } } }`,
		`{ var(func: has(friend)) { c as count(friend) } q(func: uid(c), orderdesc: val(c)) { uid n: val(c) } }`,
		`{ q(func: anyofterms(name, "lee ann")) { uid name friend { name@. friend { uid age } } } }`,
		`{ q(func: uid(0x1)) @recurse(depth: 3) { uid friend name } }`,
		`{ q(func: has(boss)) @cascade { uid boss { name } } }`,
	}
	for round := range 8 {
		for range 10 {
			var s, d []string
			for range 1 + rng.IntN(3) {
				s = append(s, set())
			}
			if rng.IntN(3) == 0 {
				d = append(d, del())
			}
			for _, f := range fs {
				qs, err := rdf.Parse(strings.Join(s, "\n"))
				if err != nil {
					t.Fatal(err)
				}
				ds, err := rdf.Parse(strings.Join(d, "\n"))
				if err != nil {
					t.Fatal(err)
				}
				if _, err := f.g.Mutate(ctx, dgraph.Mutation{Set: qs, Del: ds}); err != nil {
					t.Fatalf("round %d: %v\nset %s\ndel %s", round, err, s, d)
				}
			}
		}
		for _, q := range queries {
			var got [2]string
			for i, f := range fs {
				got[i] = canon(t, f.query(t, q, nil).Data)
			}
			if got[0] != got[1] {
				t.Errorf("round %d: %s\nvertex    %s\npredicate %s", round, q, got[0], got[1])
			}
		}
	}
	if n := strings.Count(canon(t, fs[1].query(t, queries[0], nil).Data), `"uid"`); n < 5 {
		t.Errorf("the graphs ended nearly empty (%d uids): the test checks too little", n)
	}
}
