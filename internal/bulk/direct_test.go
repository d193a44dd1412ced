package bulk_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/weft-db/weft/internal/bulk"
	"github.com/weft-db/weft/internal/dgraph"
	"github.com/weft-db/weft/internal/engine"
	"github.com/weft-db/weft/internal/txn"
)

// loadDirect loads data into a new bulk store in dir with a direct load
// (dgraph.LoadRDFDirect), as weft load --bulk does for RDF. memMax bounds
// the load's memory (0: the bulk default).
func loadDirect(dir, sch string, data []byte, memMax int, cfg dgraph.LoadConfig) (dgraph.LoadStats, error) {
	return loadDirectStats(dir, sch, data, memMax, cfg, nil)
}

// loadDirectStats is loadDirect, setting *bst (when not nil) to the bulk
// store's counters after the load.
func loadDirectStats(dir, sch string, data []byte, memMax int, cfg dgraph.LoadConfig, bst *bulk.Stats) (dgraph.LoadStats, error) {
	ctx := context.Background()
	bcfg := bulk.DefaultConfig(dir)
	if memMax == 0 {
		memMax = bcfg.MemBytesMax
	}
	db, err := bulk.Create(bcfg)
	if err != nil {
		return dgraph.LoadStats{}, err
	}
	g, err := dgraph.Open(ctx, dgraph.NamespaceView(db, 0), dgraph.BulkGraphConfig())
	if err == nil && sch != "" {
		_, err = g.Alter(ctx, sch)
	}
	var st dgraph.LoadStats
	if err == nil {
		st, err = g.LoadRDFDirect(ctx, bytes.NewReader(data), "data", cfg, db, memMax)
	}
	if err != nil {
		return st, errors.Join(err, db.Abort())
	}
	err = db.Finish()
	if bst != nil {
		*bst = db.Stats()
	}
	return st, err
}

// TestFilmDirectEqualsOnline: the first 20,000 film lines (2,000 under the
// race detector and the invariants build) loaded directly give the same store as loaded online
// (stamps, UIDs and buckets normalised; token vertices the online load
// emptied left out), and the same query answers.
func TestFilmDirectEqualsOnline(t *testing.T) {
	lines, quadsMin := 20000, int64(19000)
	if slowBuild {
		lines, quadsMin = 2000, 1900
	}
	data, sch := filmLines(t, lines)
	tmp := t.TempDir()
	onlineDir, directDir := filepath.Join(tmp, "online"), filepath.Join(tmp, "direct")
	ost := loadOnline(t, onlineDir, dgraph.PlacementVertex, sch, data)
	dst, err := loadDirect(directDir, sch, data, 0, loadConfig())
	if err != nil {
		t.Fatal(err)
	}
	if ost.Quads != dst.Quads || ost.Nodes != dst.Nodes || ost.Edges != dst.Edges || ost.Values != dst.Values ||
		ost.Skipped != dst.Skipped || dst.Quads < quadsMin {
		t.Fatalf("online %+v, direct %+v", ost, dst)
	}
	on, dn := compareDirect(t, onlineDir, directDir)
	compareQueries(t, onlineDir, directDir, on, dn, filmQueries())
}

// TestRandomDirectEqualsOnline: small random RDF files (XIDs, languages,
// facets, @reverse, @count, list and single predicates set several times,
// term, exact, int and hash indexes) loaded directly and online.
func TestRandomDirectEqualsOnline(t *testing.T) {
	for seed := uint64(1); seed <= 8; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 11))
			data := randomRDF(r, 40+r.IntN(200))
			// Explicit UIDs: one handed out for an XID, one leased but
			// not handed out (a node of its own).
			data = append(data, "<0x1> <age> \"77\"^^<xs:int> .\n<0x3fff> <tag> \"z\" .\n<0x3fff> <friend> <x1> .\n"...)
			tmp := t.TempDir()
			onlineDir, directDir := filepath.Join(tmp, "online"), filepath.Join(tmp, "direct")
			ost := loadOnline(t, onlineDir, dgraph.PlacementVertex, randomSchema, data)
			cfg := loadConfig()
			cfg.BatchQuads = []int{1000, 7}[seed%2] // batches matter to the xid values' order only
			// Every other pair with 8 KiB: the facts go to a run on disk
			// (facets, languages, lists and all) and are merged back
			// with the xid facts still in memory.
			mem := []int{0, 8 << 10}[seed/2%2]
			dst, err := loadDirect(directDir, randomSchema, data, mem, cfg)
			if err != nil {
				t.Fatalf("seed %d: %v\n%s", seed, err, data)
			}
			if ost.Quads != dst.Quads || ost.Nodes != dst.Nodes || ost.Edges != dst.Edges || ost.Values != dst.Values ||
				(mem > 0) != (dst.Runs > 0) {
				t.Fatalf("online %+v, direct %+v", ost, dst)
			}
			on, dn := compareDirect(t, onlineDir, directDir)
			compareQueries(t, onlineDir, directDir, on, dn, randomQueries)
		})
	}
}

// collapseInternal leaves out the UID lease record and keeps one of each normalised record of the index,
// has-set and directory vertices themselves (vertex records, access keys,
// directory edges and their in-edge entries): how many buckets a token's
// or a predicate's members are spread over follows from the UIDs a load
// handed out (a transactional load that splits a batch too large for one
// transaction hands out new UIDs for the retry), while every member's entry
// is still compared one for one.
func collapseInternal(lines []string) []string {
	seen := map[string]bool{}
	out := lines[:0]
	for _, l := range lines {
		internal := strings.HasPrefix(l, `V"_dg|`) || strings.HasPrefix(l, `L"_dg|`) ||
			strings.HasPrefix(l, `E"_dg|d|`) || (strings.HasPrefix(l, `I"_dg|i|`) && strings.Contains(l, `\x00_dg|d|`))
		if strings.HasPrefix(l, `P"_dg|uids\x00next"`) {
			continue // the split batches' retries lease more: TestServedAfterDirect checks the lease
		}
		if internal {
			if seen[l] {
				continue
			}
			seen[l] = true
		}
		out = append(out, l)
	}
	return out
}

// badLines are quads the schema (randomSchema) or the loader refuses, one
// per reason, and a line that does not parse.
const badLines = `<x1> <best> "a literal for a uid" .
<x2> <age> "12"@en .
<x3> <tag> "red" (since=2000) .
<0x999999> <age> "1"^^<xs:int> .
<x4> <name> "unterminated .
<x5> <friend> "not a node" .
`

// TestDirectSkipsAsOnline: with SkipInvalid, a direct load skips the same
// lines as the online load and builds the same store from the rest.
func TestDirectSkipsAsOnline(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	data := append(randomRDF(r, 80), badLines...)
	data = append(data, randomRDF(r, 80)...)
	tmp := t.TempDir()
	onlineDir, directDir := filepath.Join(tmp, "online"), filepath.Join(tmp, "direct")
	cfg := loadConfig()
	cfg.SkipInvalid = true
	ctx := context.Background()
	db, err := engine.Open(engineConfig(onlineDir))
	if err != nil {
		t.Fatal(err)
	}
	g, err := dgraph.Open(ctx, dgraph.NamespaceView(db, 0), dgraph.DefaultConfig())
	if err == nil {
		_, err = g.Alter(ctx, randomSchema)
	}
	var ost dgraph.LoadStats
	if err == nil {
		ost, err = g.LoadRDF(ctx, bytes.NewReader(data), "data", cfg)
	}
	if err := errors.Join(err, db.Close()); err != nil {
		t.Fatal(err)
	}
	dst, err := loadDirect(directDir, randomSchema, data, 0, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if ost.Quads != dst.Quads || ost.Nodes != dst.Nodes || ost.Skipped != dst.Skipped || dst.Skipped != 6 {
		t.Fatalf("online %+v, direct %+v", ost, dst)
	}
	// The transactional load reports bad lines when their batch fails,
	// after the lines that do not parse: the same lines, in another order.
	where := func(ss []dgraph.Skipped) []string {
		var out []string
		for _, s := range ss {
			out = append(out, s.Where)
		}
		slices.Sort(out)
		return out
	}
	if o, d := where(ost.SkippedLines), where(dst.SkippedLines); !slices.Equal(o, d) {
		t.Errorf("skipped: online %v, direct %v", o, d)
	}
	compareDirect(t, onlineDir, directDir)
}

// compareDirect compares the stores of an online and a direct load of the
// same data: key by key, normalised (storeDumpWith, collapseInternal),
// except for the units' population records, which follow from the UIDs
// handed out (an online load's retries of a failed or split batch hand out
// new ones): checkPopulation checks those of each store. It returns the
// stores' UID names.
func compareDirect(t *testing.T, onlineDir, directDir string) (online, direct map[string]string) {
	t.Helper()
	noPop := func(ls []string) []string {
		return slices.DeleteFunc(ls, func(l string) bool { return strings.HasPrefix(l, `M"pop\x00`) })
	}
	od, on := storeDumpWith(t, onlineDir, shards, true)
	dd, dn := storeDumpWith(t, directDir, shards, true)
	diffDumps(t, collapseInternal(noPop(od)), collapseInternal(noPop(dd)))
	checkPopulation(t, onlineDir)
	checkPopulation(t, directDir)
	return on, dn
}

// checkPopulation checks that the store in dir has a population record for
// the unit of every vertex and for no other unit (nothing was deleted).
func checkPopulation(t *testing.T, dir string) {
	t.Helper()
	it, done := storeIter(t, dir)
	defer done()
	want, got := map[string]bool{}, map[string]bool{}
	for ok := it.First(); ok; ok = it.Next() {
		switch k := it.Key(); {
		case k[0] == 'V':
			want[string(txn.PopKey(txn.UnitOf(string(k[1:]), uint32(shards))))] = true
		case bytes.HasPrefix(k, txn.MetaKey("pop\x00")):
			got[string(k)] = true
		}
	}
	if !maps.Equal(want, got) {
		t.Errorf("%s: population records %d, want one per unit with vertices (%d)", dir, len(got), len(want))
	}
}

// TestDirectFailsLeavesNothing: a bad line fails a direct load with its
// line number, and the target directory is left as it was (absent).
func TestDirectFailsLeavesNothing(t *testing.T) {
	good := "<a> <age> \"1\"^^<xs:int> .\n<a> <friend> <b> .\n"
	for name, tc := range map[string]struct{ data, want string }{
		"syntax": {good + "<a> <name> \"unterminated .\n", "data:3"},
		"schema": {good + good + "<a> <age> <b> .\n", "data:5"},
		"uid":    {good + "<0x999999> <age> \"1\"^^<xs:int> .\n", "data:3"},
	} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "db")
			_, err := loadDirect(dir, randomSchema, []byte(tc.data), 0, loadConfig())
			if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, dgraph.ErrInvalid) {
				t.Fatalf("got %v, want an invalid-input error at %s", err, tc.want)
			}
			if left, _ := filepath.Glob(dir + "*"); len(left) != 0 {
				t.Fatalf("left behind: %v", left)
			}
		})
	}
}

// TestDirectMemoryBound: a direct load whose facts outgrow half its memory
// writes them to runs on disk and merges them back, and one whose tables
// outgrow the rest writes them early (overlapping tables, compacted by
// Pebble); either way it builds the same store as the online load.
func TestDirectMemoryBound(t *testing.T) {
	data, sch := filmLines(t, 3000)
	tmp := t.TempDir()
	onlineDir := filepath.Join(tmp, "online")
	loadOnline(t, onlineDir, dgraph.PlacementVertex, sch, data)
	for _, tc := range []struct {
		mem      int
		runs     bool // facts written to disk
		earlyMin int64
	}{{4 << 20, false, 2}, {64 << 10, true, 2}} {
		t.Run(fmt.Sprint(tc.mem), func(t *testing.T) {
			directDir := filepath.Join(t.TempDir(), "direct")
			var bst bulk.Stats
			st, err := loadDirectStats(directDir, sch, data, tc.mem, loadConfig(), &bst)
			if err != nil {
				t.Fatal(err)
			}
			if (st.Runs > 0) != tc.runs || bst.Overlapping < tc.earlyMin {
				t.Fatalf("%d fact runs and %d tables written early with %d KiB of memory", st.Runs, bst.Overlapping, tc.mem>>10)
			}
			compareDirect(t, onlineDir, directDir)
			if left, _ := filepath.Glob(filepath.Join(directDir, "direct-facts-*")); len(left) != 0 {
				t.Fatalf("fact runs left in the store: %v", left)
			}
		})
	}
}

// TestDirectRefuses: a direct load needs the vertex placement and a store
// without nodes.
func TestDirectRefuses(t *testing.T) {
	ctx := context.Background()
	db, err := bulk.Create(bulk.DefaultConfig(filepath.Join(t.TempDir(), "db")))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Abort()
	gcfg := dgraph.BulkGraphConfig()
	gcfg.Placement = dgraph.PlacementPredicate
	g, err := dgraph.Open(ctx, dgraph.NamespaceView(db, 0), gcfg)
	if err != nil {
		t.Fatal(err)
	}
	data := []byte("<a> <name> \"x\" .\n")
	if _, err := g.LoadRDFDirect(ctx, bytes.NewReader(data), "data", loadConfig(), db, 1<<30); !errors.Is(err, dgraph.ErrUnsupported) {
		t.Fatalf("predicate placement: got %v, want ErrUnsupported", err)
	}

	db2, err := bulk.Create(bulk.DefaultConfig(filepath.Join(t.TempDir(), "db")))
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Abort()
	g2, err := dgraph.Open(ctx, dgraph.NamespaceView(db2, 0), dgraph.BulkGraphConfig())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g2.LoadRDFDirect(ctx, bytes.NewReader(data), "data", loadConfig(), db2, 1<<30); err != nil {
		t.Fatal(err)
	}
	if _, err := g2.LoadRDFDirect(ctx, bytes.NewReader(data), "data", loadConfig(), db2, 1<<30); !errors.Is(err, dgraph.ErrUnsupported) {
		t.Fatalf("second direct load: got %v, want ErrUnsupported", err)
	}
}
