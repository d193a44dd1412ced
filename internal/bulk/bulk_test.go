package bulk_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"

	"github.com/weft-db/weft/internal/bulk"
	"github.com/weft-db/weft/internal/dgraph"
	"github.com/weft-db/weft/internal/dgraph/exec"
	"github.com/weft-db/weft/internal/engine"
	"github.com/weft-db/weft/internal/rdf"
	"github.com/weft-db/weft/internal/txn"
)

const filmDir = "../../testdata/film" // a copy of the film data in the checkout

var shards = engine.DefaultConfig().Shards

// filmLines returns the first n lines of the film data and its schema.
func filmLines(tb testing.TB, n int) ([]byte, string) {
	tb.Helper()
	f, err := rdf.Open(filepath.Join(filmDir, "goldendata_first_200k.rdf.gz"))
	if errors.Is(err, os.ErrNotExist) {
		tb.Fatalf("film data not present in %s (testdata/film is part of the checkout)", filmDir)
	}
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var buf bytes.Buffer
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for i := 0; sc.Scan() && (n <= 0 || i < n); i++ {
		buf.Write(sc.Bytes())
		buf.WriteByte('\n')
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	sch, err := os.ReadFile(filepath.Join(filmDir, "goldendata.schema"))
	if err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes(), string(sch)
}

func engineConfig(dir string) engine.Config {
	cfg := engine.DefaultConfig()
	cfg.Sync = false
	cfg.DataDir = dir
	return cfg
}

func loadConfig() dgraph.LoadConfig {
	c := dgraph.DefaultLoadConfig()
	c.Loaders = 1 // file order: both loads assign the same UIDs
	return c
}

// loadOnline loads data through a running engine in dir (closed after).
func loadOnline(t *testing.T, dir, placement, sch string, data []byte) dgraph.LoadStats {
	t.Helper()
	ctx := context.Background()
	db, err := engine.Open(engineConfig(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	gcfg := dgraph.DefaultConfig()
	gcfg.Placement = placement
	// One read at a time: a batch's new nodes then get their UIDs in the
	// order their terms come (in parallel, in any order), as in the bulk
	// loads, so that a file naming a UID explicitly names the same node.
	gcfg.ReadsParallelMax = 1
	g, err := dgraph.Open(ctx, dgraph.NamespaceView(db, 0), gcfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Alter(ctx, sch); err != nil {
		t.Fatal(err)
	}
	st, err := g.LoadRDF(ctx, bytes.NewReader(data), "data", loadConfig())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// loadBulk loads data offline into dir, as weft load --bulk does.
// memMax > 0 sets MemBytesMax (small: the store spills to Pebble often).
func loadBulk(dir, placement, sch string, data []byte, memMax int) (dgraph.LoadStats, error) {
	ctx := context.Background()
	cfg := bulk.DefaultConfig(dir)
	if memMax > 0 {
		cfg.MemBytesMax = memMax
	}
	db, err := bulk.Create(cfg)
	if err != nil {
		return dgraph.LoadStats{}, err
	}
	gcfg := dgraph.BulkGraphConfig()
	gcfg.Placement = placement
	g, err := dgraph.Open(ctx, dgraph.NamespaceView(db, 0), gcfg)
	if err == nil && sch != "" {
		_, err = g.Alter(ctx, sch)
	}
	var st dgraph.LoadStats
	if err == nil {
		st, err = g.LoadRDF(ctx, bytes.NewReader(data), "data", loadConfig())
	}
	if err != nil {
		return st, errors.Join(err, db.Abort())
	}
	if memMax > 0 && db.Stats().Spills == 0 {
		return st, errors.Join(errors.New("no spill with a small MemBytesMax"), db.Abort())
	}
	return st, db.Finish()
}

// storeDump lists every key and value of the store in dir, with the parts
// that legitimately differ between a bulk and an online load normalised:
// the stamps in vertex and alias records, access keys and population
// records, the epoch, and
// the UIDs, which each load hands out in its own order within a batch:
// every UID an alias (an XID) names is replaced by that alias, and the
// listing is sorted after. (Nodes without XIDs are not renamed: the tests
// that compare stores load XIDs only.) A vertex record's shard must be its
// handle's.
func storeDump(t *testing.T, dir string, shards int) ([]string, map[string]string) {
	return storeDumpWith(t, dir, shards, false)
}

// storeDumpWith is storeDump; with liveTokens it leaves out index token
// vertices without members (their records, access keys and directory
// entries), which a transactional load leaves behind when a later quad
// replaces a value and a direct load never writes.
func storeDumpWith(t *testing.T, dir string, shards int, liveTokens bool) ([]string, map[string]string) {
	t.Helper()
	it, done := storeIter(t, dir)
	defer done()
	names := map[string]string{}
	type entry struct {
		k   []byte
		val func(rename func(string) string) string
	}
	var raw []entry
	for ok := it.First(); ok; ok = it.Next() {
		k, v := bytes.Clone(it.Key()), bytes.Clone(it.Value())
		val := func(func(string) string) string { return fmt.Sprintf("%q", v) }
		switch k[0] {
		case 'V':
			rec, err := txn.DecodeVertexRec(v)
			if err != nil {
				t.Fatal(err)
			}
			if h := string(k[1:]); rec.Shard != txn.ShardOf(h, uint32(shards)) {
				t.Errorf("vertex %q recorded on shard %d, not its own %d", h, rec.Shard, txn.ShardOf(h, uint32(shards)))
			}
			val = func(func(string) string) string {
				return fmt.Sprintf("exists=%v written=%v", rec.Exists, !rec.LastWrite.IsZero())
			}
		case 'A':
			rec, err := txn.DecodeAliasRec(v)
			if err != nil {
				t.Fatal(err)
			}
			if isUID(rec.Handle) {
				names[rec.Handle] = "<" + string(k[1:]) + ">"
			}
			val = func(rn func(string) string) string {
				return fmt.Sprintf("handle=%q written=%v", rn(rec.Handle), !rec.LastWrite.IsZero())
			}
		case 'E':
			rec, err := txn.DecodeEdgeRec(v)
			if err != nil {
				t.Fatal(err)
			}
			val = func(rn func(string) string) string { return fmt.Sprintf("dst=%q props=%v", rn(rec.Dst), rec.Props) }
		case 'L':
			val = func(func(string) string) string { return "stamp" }
		case 'M':
			if string(k) == string(txn.MetaKey("epoch")) {
				val = func(func(string) string) string { return "epoch" }
			}
			if bytes.HasPrefix(k, txn.MetaKey("pop\x00")) { // a unit's population stamp
				val = func(func(string) string) string { return "stamp" }
			}
		}
		raw = append(raw, entry{k, val})
	}
	if liveTokens {
		raw = dropEmptyTokens(t, raw, func(e entry) []byte { return e.k }, func(e entry) string { return e.val(func(s string) string { return s }) })
	}
	rename := func(s string) string { return renameUIDs(s, names) }
	out := make([]string, 0, len(raw))
	for _, e := range raw {
		if bytes.Contains(e.k, []byte("\x00|bucket|")) {
			continue // which bucket a node's entries are in follows from its UID
		}
		k := debucket(rename(string(e.k[1:])))
		out = append(out, fmt.Sprintf("%c%q = %s", e.k[0], k, debucket(e.val(rename))))
	}
	slices.Sort(out)
	return out, names
}

// dropEmptyTokens leaves out the entries of index token vertices
// ("_dg|i|...") that have no member edge: the vertex and access records,
// the directory edge to it and that edge's in-edge entry. val renders an
// entry's value (an E entry's as "dst=%q ...").
func dropEmptyTokens[E any](t *testing.T, es []E, key func(E) []byte, val func(E) string) []E {
	t.Helper()
	live := map[string]bool{}
	for _, e := range es {
		if k := key(e); k[0] == 'E' {
			if parts := txn.KeyParts(k); strings.HasPrefix(parts[0], "_dg|i|") {
				live[parts[0]] = true
			}
		}
	}
	empty := func(h string) bool { return strings.HasPrefix(h, "_dg|i|") && !live[h] }
	out := es[:0]
	for _, e := range es {
		k := key(e)
		parts := txn.KeyParts(k)
		switch k[0] {
		case 'V', 'L':
			if empty(parts[0]) {
				continue
			}
		case 'I':
			if empty(parts[0]) {
				continue
			}
		case 'E':
			if strings.HasPrefix(parts[0], "_dg|d|") {
				var dst string
				if _, err := fmt.Sscanf(val(e), "dst=%q", &dst); err != nil {
					t.Fatal(err)
				}
				if empty(dst) {
					continue
				}
			}
		}
		out = append(out, e)
	}
	return out
}

// storeIter opens the store in dir read-only and returns an iterator over
// all of it, and the function that closes both.
func storeIter(t *testing.T, dir string) (*pebble.Iterator, func()) {
	t.Helper()
	pdb, err := pebble.Open(dir, &pebble.Options{ReadOnly: true, Logger: quiet{}})
	if err != nil {
		t.Fatal(err)
	}
	it, err := pdb.NewIter(nil)
	if err != nil {
		_ = pdb.Close()
		t.Fatal(err)
	}
	return it, func() { _ = it.Close(); _ = pdb.Close() }
}

// renameUIDs replaces every UID in s that is a whole part (after a
// separator or the start, before another or the end: not inside an XID
// such as m.0x13f) and that names has, by its name.
func renameUIDs(s string, names map[string]string) string {
	var b strings.Builder
	last := 0
	for _, m := range uidOnlyRE.FindAllStringIndex(s, -1) {
		i, j := m[0], m[1]
		before := i == 0 || strings.IndexByte("|\x00\"<>", s[i-1]) >= 0
		after := j == len(s) || !isNameByte(s[j])
		if n, ok := names[s[i:j]]; ok && before && after {
			b.WriteString(s[last:i])
			b.WriteString(n)
			last = j
		}
	}
	b.WriteString(s[last:])
	return b.String()
}

func isNameByte(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '.' || c == '_'
}

// uidOnlyRE matches what may be a UID; renameUIDs checks its bounds.
var uidOnlyRE = regexp.MustCompile(`0x[0-9a-f]+`)

// uidRE matches a UID as a whole part of a key or value (not inside an
// XID such as m.0x13f): after a separator or the start, before another or
// the end. Group 2 is the UID.
var uidRE = regexp.MustCompile(`(^|[|\x00"<>])(0x[0-9a-f]+)([^0-9a-zA-Z._]|$)`)

// bucketRE matches the bucket number in the names of has-set, index and
// directory vertices (dgraph names.go): a function of the members' UIDs.
var bucketRE = regexp.MustCompile(`(_dg\|h\|[^|\x00]+\||_dg\|i\|[0-9]+\|[^|\x00]+\|[^|\x00]+\||_dg\|d\|[0-9]+\|)[0-9a-f]+`)

func debucket(s string) string { return bucketRE.ReplaceAllString(s, "${1}*") }

func isUID(s string) bool {
	m := uidRE.FindStringSubmatch(s)
	return m != nil && m[2] == s
}

func diffDumps(t *testing.T, online, bulk []string) {
	t.Helper()
	if len(online) == 0 {
		t.Fatal("empty online store")
	}
	count := map[string]int{}
	for _, e := range online {
		count[e]++
	}
	for _, e := range bulk {
		count[e]--
	}
	n := 0
	for _, e := range slices.Sorted(maps.Keys(count)) {
		if c := count[e]; c != 0 && n < 20 {
			n++
			where := "online only"
			if c < 0 {
				where = "bulk only"
			}
			t.Errorf("%s (%d): %s", where, c, e)
		}
	}
	if len(online) != len(bulk) {
		t.Errorf("online store %d entries, bulk %d", len(online), len(bulk))
	}
}

// queryAll runs queries against the store in dir, served by a fresh engine.
func queryAll(t *testing.T, dir string, queries []string) []string {
	t.Helper()
	ctx := context.Background()
	db, err := engine.Open(engineConfig(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	g, err := dgraph.Open(ctx, dgraph.NamespaceView(db, 0), dgraph.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	e := exec.New(g)
	var out []string
	for _, q := range queries {
		snap, err := db.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		res, err := e.Query(ctx, dgraph.NewSnapshotReader(g.Engine(), snap, false), q, nil)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		out = append(out, string(res.Data))
	}
	return out
}

// canonJSON renders a query answer with every UID a name gives replaced by
// it (an XID) and every list sorted, so that answers from stores whose
// UIDs differ compare equal when they say the same thing.
func canonJSON(t *testing.T, data string, names map[string]string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(data), &v); err != nil {
		t.Fatal(err)
	}
	var canon func(v any) any
	canon = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				x[k] = canon(e)
			}
		case []any:
			keys := make([]string, len(x))
			for i, e := range x {
				x[i] = canon(e)
				b, _ := json.Marshal(x[i])
				keys[i] = string(b)
			}
			slices.Sort(keys)
			return keys
		case string:
			if n, ok := names[x]; ok {
				return n
			}
		}
		return v
	}
	b, err := json.Marshal(canon(v))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func compareQueries(t *testing.T, onlineDir, bulkDir string, onlineNames, bulkNames map[string]string, queries []string) {
	t.Helper()
	a, b := queryAll(t, onlineDir, queries), queryAll(t, bulkDir, queries)
	nonEmpty := 0
	for i := range queries {
		if canonJSON(t, a[i], onlineNames) != canonJSON(t, b[i], bulkNames) {
			t.Errorf("query %s:\nonline %s\nbulk   %s", queries[i], a[i], b[i])
		}
		if !strings.Contains(a[i], "[]") {
			nonEmpty++
		}
	}
	if nonEmpty == 0 {
		t.Error("every query answered nothing: the comparison proves nothing")
	}
}

// filmQueries are the film tests' two-hop queries (dgraph/exec film_test.go)
// for a few terms, and the counts and order queries.
func filmQueries() []string {
	var qs []string
	for _, term := range []string{"love", "the", "man", "war", "night", "breakers", "story", "house"} {
		qs = append(qs,
			fmt.Sprintf(`{ q(func: allofterms(name@en, %q)) @filter(has(director.film)) { uid xid name@en director.film { uid xid name@en } } }`, term),
			fmt.Sprintf(`{ q(func: allofterms(name@en, %q)) @filter(has(directed_by)) { uid xid name@en directed_by { xid name@en count(director.film) director.film { xid initial_release_date } } } }`, term))
	}
	return append(qs,
		`{ var(func: has(director.film)) { c as count(director.film) } q(func: uid(c), orderdesc: val(c), first: 5) { xid n: val(c) } }`,
		`{ var(func: has(director.film)) { c as count(director.film) } s() { total: sum(val(c)) } }`,
		`{ q(func: ge(initial_release_date, "2005-01-01")) { uid xid initial_release_date ~director.film { xid } } }`,
		`{ q(func: has(directed_by)) { uid xid count(directed_by) name@en } }`)
}

// TestFilmBulkEqualsOnline: the first 20,000 film lines (2,000 under the
// race detector and the invariants build) bulk-loaded give
// the same store (modulo stamps) and the same query answers as loaded
// online, in both placements.
func TestFilmBulkEqualsOnline(t *testing.T) {
	lines, quadsMin := 20000, int64(19000)
	if slowBuild {
		lines, quadsMin = 2000, 1900
	}
	data, sch := filmLines(t, lines)
	for _, placement := range []string{dgraph.PlacementVertex, dgraph.PlacementPredicate} {
		t.Run(placement, func(t *testing.T) {
			tmp := t.TempDir()
			onlineDir, bulkDir := filepath.Join(tmp, "online"), filepath.Join(tmp, "bulk")
			ost := loadOnline(t, onlineDir, placement, sch, data)
			memMax := 0
			if placement == dgraph.PlacementPredicate {
				memMax = 4 << 20 // spills to Pebble several times
			}
			bst, err := loadBulk(bulkDir, placement, sch, data, memMax)
			if err != nil {
				t.Fatal(err)
			}
			if ost.Quads != bst.Quads || ost.Nodes != bst.Nodes || ost.Skipped != bst.Skipped || bst.Quads < quadsMin {
				t.Fatalf("online %+v, bulk %+v", ost, bst)
			}
			od, on := storeDump(t, onlineDir, shards)
			bd, bn := storeDump(t, bulkDir, shards)
			diffDumps(t, od, bd)
			compareQueries(t, onlineDir, bulkDir, on, bn, filmQueries())
		})
	}
}

const randomSchema = `
name: string @index(exact, term) @lang .
age: int @index(int) .
friend: [uid] @reverse @count .
best: uid @reverse .
tag: [string] @index(hash) .
`

// randomRDF writes n random N-Quads over a few XIDs and blank nodes.
func randomRDF(r *rand.Rand, n int) []byte {
	node := func() string {
		return fmt.Sprintf("<x%d>", r.IntN(20))
	}
	words := []string{"red", "blue", "green", "fox", "dog", "quick", "lazy"}
	var b bytes.Buffer
	for range n {
		s := node()
		switch r.IntN(6) {
		case 0:
			lang := []string{"", "@en", "@fr"}[r.IntN(3)]
			fmt.Fprintf(&b, "%s <name> %q%s .\n", s, words[r.IntN(len(words))]+" "+words[r.IntN(len(words))], lang)
		case 1:
			fmt.Fprintf(&b, "%s <age> \"%d\"^^<xs:int> .\n", s, r.IntN(100))
		case 2, 3:
			if r.IntN(3) == 0 {
				fmt.Fprintf(&b, "%s <friend> %s (since=%d) .\n", s, node(), 2000+r.IntN(20))
			} else {
				fmt.Fprintf(&b, "%s <friend> %s .\n", s, node())
			}
		case 4:
			fmt.Fprintf(&b, "%s <best> %s .\n", s, node())
		case 5:
			fmt.Fprintf(&b, "%s <tag> %q .\n", s, words[r.IntN(len(words))])
		}
	}
	return b.Bytes()
}

var randomQueries = []string{
	`{ q(func: has(xid)) { uid xid name name@en name@fr age tag best { uid } count(friend) friend @facets(since) { uid } ~friend { uid } ~best { uid } } }`,
	`{ q(func: has(friend)) { uid count(friend) count(~friend) } }`,
	`{ q(func: anyofterms(name@en, "fox dog")) { uid } r(func: ge(age, 50)) { uid age } t(func: eq(tag, "red")) { uid } }`,
	`{ q(func: has(name)) { uid name } b(func: has(best)) { uid best { uid } } }`,
}

// TestRandomBulkEqualsOnline loads small random RDF files both ways and
// compares the stores (modulo stamps) and query answers.
func TestRandomBulkEqualsOnline(t *testing.T) {
	for seed := uint64(1); seed <= 6; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 7))
			data := randomRDF(r, 40+r.IntN(120))
			placement := []string{dgraph.PlacementVertex, dgraph.PlacementPredicate}[seed%2]
			tmp := t.TempDir()
			onlineDir, bulkDir := filepath.Join(tmp, "online"), filepath.Join(tmp, "bulk")
			ost := loadOnline(t, onlineDir, placement, randomSchema, data)
			memMax := []int{0, 8 << 10}[seed/2%2] // every other pair spills often
			bst, err := loadBulk(bulkDir, placement, randomSchema, data, memMax)
			if err != nil {
				t.Fatalf("seed %d: %v\n%s", seed, err, data)
			}
			if ost.Quads != bst.Quads || ost.Nodes != bst.Nodes {
				t.Fatalf("online %+v, bulk %+v", ost, bst)
			}
			od, on := storeDump(t, onlineDir, shards)
			bd, bn := storeDump(t, bulkDir, shards)
			diffDumps(t, od, bd)
			compareQueries(t, onlineDir, bulkDir, on, bn, randomQueries)
		})
	}
}

type quiet struct{}

func (quiet) Infof(string, ...any)           {}
func (quiet) Errorf(string, ...any)          {}
func (quiet) Fatalf(format string, a ...any) { panic(fmt.Sprintf(format, a...)) }

// TestRefusesNonEmptyDir: a bulk load never writes into existing data.
func TestRefusesNonEmptyDir(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := loadBulk(dir, "", randomSchema, []byte("<a> <age> \"1\" .\n"), 0)
	if !errors.Is(err, bulk.ErrNotEmpty) || !strings.Contains(err.Error(), dir) {
		t.Fatalf("got %v, want ErrNotEmpty naming %s", err, dir)
	}
	// An empty directory is taken (and replaced by the store).
	empty := filepath.Join(t.TempDir(), "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := loadBulk(empty, "", randomSchema, []byte("<a> <age> \"1\" .\n"), 0); err != nil {
		t.Fatal(err)
	}
	if m, _ := filepath.Glob(filepath.Join(empty, "MANIFEST-*")); len(m) == 0 {
		t.Fatalf("no store in %s", empty)
	}
}

// TestFailedLoadLeavesNothing: a bad line (its line number in the error)
// or a schema violation fails the load, and neither the data directory
// nor the temporary one is left behind.
func TestFailedLoadLeavesNothing(t *testing.T) {
	good := "<a> <age> \"1\"^^<xs:int> .\n<a> <friend> <b> .\n"
	for name, tc := range map[string]struct{ data, want string }{
		"syntax": {good + "<a> <name> \"unterminated .\n", "data:3"},
		"schema": {good + good + "<a> <age> <b> .\n", "data:5"}, // a uid for an int predicate
	} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "db")
			_, err := loadBulk(dir, "", randomSchema, []byte(tc.data), 0)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error at %s", err, tc.want)
			}
			left, _ := filepath.Glob(dir + "*")
			if len(left) != 0 {
				t.Fatalf("left behind: %v", left)
			}
		})
	}
}

// TestServedAfterBulk: a store built by a bulk load (transactional or
// direct) is served and takes online loads and mutations that reuse its
// XIDs and never its UIDs.
func TestServedAfterBulk(t *testing.T) {
	for _, direct := range []bool{false, true} {
		t.Run(fmt.Sprintf("direct=%v", direct), func(t *testing.T) { servedAfterBulk(t, direct) })
	}
}

func servedAfterBulk(t *testing.T, direct bool) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(9, 9))
	data := randomRDF(r, 200)
	dir := filepath.Join(t.TempDir(), "db")
	load := func() error { _, err := loadBulk(dir, "", randomSchema, data, 0); return err }
	if direct {
		load = func() error { _, err := loadDirect(dir, randomSchema, data, 0, loadConfig()); return err }
	}
	if err := load(); err != nil {
		t.Fatal(err)
	}
	db, err := engine.Open(engineConfig(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	g, err := dgraph.Open(ctx, dgraph.NamespaceView(db, 0), dgraph.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	e := exec.New(g)
	uids := func() map[string]string { // xid → uid
		snap, err := db.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		res, err := e.Query(ctx, dgraph.NewSnapshotReader(db, snap, false), `{ q(func: has(xid)) { uid xid } }`, nil)
		if err != nil {
			t.Fatal(err)
		}
		var out struct {
			Q []struct{ UID, XID string }
		}
		if err := json.Unmarshal(res.Data, &out); err != nil {
			t.Fatal(err)
		}
		m := map[string]string{}
		for _, n := range out.Q {
			m[n.XID] = n.UID
		}
		return m
	}
	before := uids()
	if len(before) < 15 {
		t.Fatalf("only %d XIDs after the bulk load", len(before))
	}
	// Same XIDs again and new ones, online: old XIDs keep their nodes.
	more := []byte("<x0> <age> \"5\"^^<xs:int> .\n<new1> <friend> <x1> .\n<new2> <age> \"7\"^^<xs:int> .\n")
	if _, err := g.LoadRDF(ctx, bytes.NewReader(more), "more", dgraph.DefaultLoadConfig()); err != nil {
		t.Fatal(err)
	}
	res, err := g.Mutate(ctx, dgraph.Mutation{Set: mustParse(t, "_:n <age> \"9\"^^<xs:int> .")})
	if err != nil {
		t.Fatal(err)
	}
	after := uids()
	taken := map[string]bool{}
	for x, u := range before {
		if after[x] != u {
			t.Errorf("xid %s: uid %s after the bulk load, %s after an online load", x, u, after[x])
		}
		taken[u] = true
	}
	for _, x := range []string{"new1", "new2"} {
		if u := after[x]; u == "" || taken[u] {
			t.Errorf("new xid %s got uid %q (bulk uids: %v)", x, u, before)
		}
	}
	if u := res.UIDs["n"]; u == "" || taken[u] {
		t.Errorf("online blank node got uid %q, taken by the bulk load", u)
	}
}

func mustParse(t *testing.T, text string) []rdf.NQuad {
	t.Helper()
	qs, err := rdf.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	return qs
}
