package dql

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weft-db/weft/internal/dgraph/exec"
	"github.com/weft-db/weft/internal/rdf"
)

// dqlFilmDir holds Dgraph's film data set (the first 200k lines of
// goldendata.rdf.gz) and its schema, as the dgraph and dgraph/exec tests find it.
const dqlFilmDir = "../../../testdata/film" // a copy of the film data in the checkout

func dqlFilm(t *testing.T) string {
	t.Helper()
	p := filepath.Join(dqlFilmDir, "goldendata_first_200k.rdf.gz")
	if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
		t.Fatalf("film data not present in %s (testdata/film is part of the checkout)", dqlFilmDir)
	}
	return p
}

// TestRunDQLQuick is §4.2 of the Dgraph report in miniature: the first
// 3,000 film lines load, both 2-hop queries run through the HTTP API from
// 1 and 3 clients, answers carry names, and the JSON document is whole.
func TestRunDQLQuick(t *testing.T) {
	runDQLSmoke(t, "http", "")
}

// TestRunDQLQuickInproc is the same calling the executor directly.
func TestRunDQLQuickInproc(t *testing.T) {
	runDQLSmoke(t, "inproc", "")
}

// TestRunDQLQuickPredicatePlacement is the same over the predicate
// placement (through the HTTP API).
func TestRunDQLQuickPredicatePlacement(t *testing.T) {
	runDQLSmoke(t, "http", "predicate")
}

func runDQLSmoke(t *testing.T, mode, placement string) {
	dir := t.TempDir()
	opts := Options{Out: dir, Quick: true, RDF: dqlFilm(t), Lines: 3000, Duration: 150 * time.Millisecond,
		Clients: []int{1, 3}, Mode: mode, Placement: placement, InMemory: true, CallsSample: 50, Seed: 3}
	res, err := Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if placement == "" {
		placement = "vertex"
	}
	name := "film-" + mode + "-" + placement + "-quick"
	b, err := os.ReadFile(filepath.Join(dir, name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Benchmark string         `json:"benchmark"`
		Params    map[string]any `json:"params"`
		Results   dqlResults     `json:"results"`
		Plots     []string       `json:"plots"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s.json: %v", name, err)
	}
	if doc.Benchmark != "dql/"+name || res.Benchmark != doc.Benchmark {
		t.Errorf("benchmark %q (returned %q)", doc.Benchmark, res.Benchmark)
	}
	if doc.Params["placement"] != placement || doc.Params["mode"] != mode {
		t.Errorf("params placement %v mode %v", doc.Params["placement"], doc.Params["mode"])
	}
	ld := doc.Results.Load
	if ld.Lines != 3000 || ld.Quads+ld.Skipped != 3000 || ld.Transactions == 0 || ld.EngineEdges <= 0 || ld.QuadsPerSec <= 0 {
		t.Errorf("load %+v", ld)
	}
	if got := len(doc.Results.Cells); got != len(Queries)*2 {
		t.Fatalf("%d cells, want %d", got, len(Queries)*2)
	}
	for _, q := range Queries {
		calls := doc.Results.Calls[q.Name]
		if doc.Results.Roots[q.Name] == 0 || calls.Roots == 0 || calls.GetVertexMean < 1 || calls.NamesMean <= 0 ||
			calls.Placement != placement {
			t.Errorf("%s: %d roots, calls %+v", q.Name, doc.Results.Roots[q.Name], calls)
		}
	}
	for _, c := range doc.Results.Cells {
		l := c.LatencyMS
		if c.Queries == 0 || c.Errors != 0 || c.PerSec <= 0 || c.NamesMean <= 0 || c.Empty >= c.Queries ||
			l.Min > l.P50 || l.P50 > l.P95 || l.P95 > l.P99 || l.P99 > l.Max {
			t.Errorf("cell %+v", c)
		}
	}
	if len(doc.Plots) != 4 {
		t.Errorf("plots %v", doc.Plots)
	}
	for _, p := range doc.Plots {
		if fi, err := os.Stat(filepath.Join(dir, p)); err != nil || fi.Size() == 0 {
			t.Errorf("plot %s: %v", p, err)
		}
	}
}

// TestDQLQueryAnswers checks the two queries' answers against the raw
// N-Quads: for every root of the first 10,000 lines, the answer holds the
// root's name and each name two hops away (once per path).
func TestDQLQueryAnswers(t *testing.T) {
	path := dqlFilm(t)
	const lines = 10_000
	b := &dqlBench{opts: Options{RDF: path, Lines: lines, InMemory: true}}
	b.opts.setDefaults()
	defer b.close()
	if err := b.prepare(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := b.load(ctx); err != nil {
		t.Fatal(err)
	}
	o := dqlOracleOf(t, path, lines)
	in := &inprocDQL{db: b.db, exec: exec.New(b.g)}
	uids := xidUIDs(t, ctx, in)
	for _, q := range Queries {
		roots, err := findRoots(ctx, in, q.RootsPred)
		if err != nil {
			t.Fatal(err)
		}
		if len(roots) != len(o.edges[q.RootsPred]) {
			t.Errorf("%s: %d roots, the N-Quads have %d subjects", q.RootsPred, len(roots), len(o.edges[q.RootsPred]))
		}
		hop2 := "director.film"
		if q.RootsPred == "director.film" {
			hop2 = "directed_by"
		}
		var nonEmpty, checked int
		for xid, mids := range o.edges[q.RootsPred] {
			want := 0
			if o.names[xid] {
				want++
			}
			for _, m := range mids {
				for _, leaf := range o.edges[hop2][m] {
					if o.names[leaf] {
						want++
					}
				}
			}
			uid, ok := uids[xid]
			if !ok {
				t.Fatalf("no node has xid %s", xid)
			}
			a, err := in.query(ctx, strings.Replace(q.Text, "%s", uid, 1))
			if err != nil {
				t.Fatal(err)
			}
			if a.names != want {
				t.Errorf("%s at %s (%s): %d names, the N-Quads give %d", q.Name, xid, uid, a.names, want)
			}
			if want > 1 {
				nonEmpty++ // a name two hops away
			}
			checked++
		}
		if nonEmpty == 0 {
			t.Errorf("%s: no answer reaches two hops", q.Name)
		}
		t.Logf("%s: %d roots checked, %d with names two hops away", q.Name, checked, nonEmpty)
	}
}

// dqlOracle is the film subset as plain maps, straight from the N-Quads.
type dqlOracle struct {
	names map[string]bool                // xids with a name@en
	edges map[string]map[string][]string // pred → subject xid → object xids (distinct)
}

func dqlOracleOf(t *testing.T, path string, lines int) *dqlOracle {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := rdf.Decompress(f)
	if err != nil {
		t.Fatal(err)
	}
	o := &dqlOracle{names: map[string]bool{}, edges: map[string]map[string][]string{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for i := 0; i < lines && sc.Scan(); i++ {
		f := strings.Split(sc.Text(), "\t")
		if len(f) < 3 {
			continue
		}
		s, p, obj := strings.Trim(f[0], "<>"), strings.Trim(f[1], "<>"), f[2]
		switch {
		case p == "name" && strings.HasSuffix(obj, `"@en`):
			o.names[s] = true
		case (p == "directed_by" || p == "director.film") && strings.HasPrefix(obj, "<"):
			m := o.edges[p]
			if m == nil {
				m = map[string][]string{}
				o.edges[p] = m
			}
			obj = strings.Trim(obj, "<>")
			if !containsString(m[s], obj) {
				m[s] = append(m[s], obj)
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return o
}

func containsString(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// xidUIDs maps every XID to its node through the xid predicate the loader
// stores.
func xidUIDs(t *testing.T, ctx context.Context, in *inprocDQL) map[string]string {
	t.Helper()
	data, err := in.data(ctx, `{ q(func: has(xid)) { uid xid } }`)
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Q []struct {
			UID string `json:"uid"`
			XID string `json:"xid"`
		} `json:"q"`
	}
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, n := range out.Q {
		m[n.XID] = n.UID
	}
	return m
}

// TestLineLimitReader: the quick mode's first-N-lines cut, with lines
// longer than the reader's buffer and a last line without its newline.
func TestLineLimitReader(t *testing.T) {
	long := strings.Repeat("x", 100)
	for _, tc := range []struct {
		in   string
		n    int64
		want string
	}{
		{"a\nb\nc\n", 2, "a\nb\n"},
		{"a\nb\nc\n", 5, "a\nb\nc\n"},
		{"a\nb\nc", 3, "a\nb\nc"},
		{"a\n" + long + "\nc\n", 2, "a\n" + long + "\n"},
		{"", 3, ""},
		{"a\n", 0, ""},
	} {
		r := &lineLimitReader{r: bufio.NewReaderSize(strings.NewReader(tc.in), 16), left: tc.n}
		got, err := io.ReadAll(r)
		if err != nil || string(got) != tc.want {
			t.Errorf("first %d lines of %q = %q, %v; want %q", tc.n, tc.in, got, err, tc.want)
		}
	}
}

// TestCountLines counts the gzipped film file's lines, capped.
func TestCountLines(t *testing.T) {
	path := dqlFilm(t)
	n, err := countLines(path, 1234)
	if err != nil || n != 1234 {
		t.Errorf("countLines(cap 1234) = %d, %v", n, err)
	}
	p := filepath.Join(t.TempDir(), "x.rdf")
	if err := os.WriteFile(p, []byte("a\nb\nc"), 0o644); err != nil {
		t.Fatal(err)
	}
	if n, err := countLines(p, 0); err != nil || n != 3 {
		t.Errorf("countLines(3 lines, the last unterminated) = %d, %v", n, err)
	}
}
