package exec

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"

	"github.com/weft-db/weft/internal/dgraph"
	"github.com/weft-db/weft/internal/rdf"
	"github.com/weft-db/weft/internal/value"
)

// filmDir holds Dgraph's film data set (the first 200k lines of
// goldendata.rdf.gz) and its schema.
const filmDir = "../../../testdata/film" // a copy of the film data in the checkout

// filmLines returns the first n lines of the film data (all when n <= 0)
// and its schema.
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

// loadFilm loads the first n film lines into a fresh in-memory graph of
// the given placement.
func loadFilm(tb testing.TB, placement string, n int) (*fixture, []byte) {
	tb.Helper()
	data, sch := filmLines(tb, n)
	f := newFixtureIn(tb, placement, sch, "")
	cfg := dgraph.DefaultLoadConfig()
	cfg.Loaders = 1 // file order, so that a repeated value's last one wins, as in the oracle
	start := time.Now()
	st, err := f.g.LoadRDF(context.Background(), bytes.NewReader(data), "film", cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Logf("loaded %d quads (%d skipped) in %v", st.Quads, st.Skipped, time.Since(start).Round(time.Millisecond))
	return f, data
}

// oracle is the film data held as plain maps, straight from the N-Quads:
// the independent answer to the queries the tests ask the executor.
type oracle struct {
	nameEn map[string]string              // xid → name@en (the last one given)
	date   map[string]value.Value         // xid → initial_release_date
	edges  map[string]map[string][]string // pred → xid → object xids (distinct)
}

func newOracle(tb testing.TB, data []byte) *oracle {
	o := &oracle{nameEn: map[string]string{}, date: map[string]value.Value{}, edges: map[string]map[string][]string{}}
	for nq, err := range rdf.NewReader(bytes.NewReader(data)).All() {
		if err != nil {
			continue // the loader skips the same lines (values Weft cannot hold)
		}
		s := nq.Subject.Name
		switch {
		case nq.Predicate == "name" && nq.Lang == "en":
			o.nameEn[s] = nq.Object.Value.Str()
		case nq.Predicate == "initial_release_date":
			o.date[s] = nq.Object.Value
		case nq.Object.Kind == rdf.IRI:
			m := o.edges[nq.Predicate]
			if m == nil {
				m = map[string][]string{}
				o.edges[nq.Predicate] = m
			}
			if !slices.Contains(m[s], nq.Object.Name) {
				m[s] = append(m[s], nq.Object.Name)
			}
		}
	}
	return o
}

// terms splits a name as a term index does: lower-cased runs of letters and
// digits (Han, Hiragana and Katakana one character each).
func terms(s string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, string(cur))
			cur = cur[:0]
		}
	}
	for _, r := range strings.ToLower(s) {
		switch {
		case unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana):
			flush()
			out = append(out, string(r))
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
			cur = append(cur, r)
		default:
			flush()
		}
	}
	flush()
	return out
}

// withAllTerms lists the xids whose name@en has every term of q.
func (o *oracle) withAllTerms(q string) []string {
	want := terms(q)
	var out []string
	for x, name := range o.nameEn {
		have := terms(name)
		if len(want) > 0 && !slices.ContainsFunc(want, func(t string) bool { return !slices.Contains(have, t) }) {
			out = append(out, x)
		}
	}
	slices.Sort(out)
	return out
}

// node renders a node as the executor should: its xid, its name@en when it
// has one, then the fields fill adds.
func (o *oracle) node(x string, fill func(m map[string]any)) map[string]any {
	m := map[string]any{"xid": x}
	if n, ok := o.nameEn[x]; ok {
		m["name@en"] = n
	}
	if fill != nil {
		fill(m)
	}
	return m
}

// list renders the nodes pred reaches from x (key absent when none).
func (o *oracle) list(m map[string]any, pred, x string, each func(y string) map[string]any) {
	var out []any
	for _, y := range o.edges[pred][x] {
		out = append(out, each(y))
	}
	if len(out) > 0 {
		m[pred] = out
	}
}

// directorFilms answers the report's first 2-hop query: directors by name
// term → their films → the films' names.
func (o *oracle) directorFilms(term string) any {
	var out []any
	for _, d := range o.withAllTerms(term) {
		if len(o.edges["director.film"][d]) == 0 {
			continue
		}
		out = append(out, o.node(d, func(m map[string]any) {
			o.list(m, "director.film", d, func(f string) map[string]any { return o.node(f, nil) })
		}))
	}
	return map[string]any{"q": orEmpty(out)}
}

// filmDirectorDates answers the second: films by name term → their
// directors → the directors' films → release dates.
func (o *oracle) filmDirectorDates(term string) any {
	var out []any
	for _, f := range o.withAllTerms(term) {
		if len(o.edges["directed_by"][f]) == 0 {
			continue
		}
		out = append(out, o.node(f, func(m map[string]any) {
			o.list(m, "directed_by", f, func(d string) map[string]any {
				return o.node(d, func(m map[string]any) {
					m["count(director.film)"] = len(o.edges["director.film"][d])
					o.list(m, "director.film", d, func(g string) map[string]any {
						mm := map[string]any{"xid": g}
						if v, ok := o.date[g]; ok {
							mm["initial_release_date"] = v.Time().Format(time.RFC3339Nano)
						}
						return mm
					})
				})
			})
		}))
	}
	return map[string]any{"q": orEmpty(out)}
}

func orEmpty(xs []any) []any {
	if xs == nil {
		return []any{}
	}
	return xs
}

const (
	filmQueryDirectors = `query q($t: string) { q(func: allofterms(name@en, $t)) @filter(has(director.film)) {
		xid name@en director.film { xid name@en } } }`
	filmQueryFilms = `query q($t: string) { q(func: allofterms(name@en, $t)) @filter(has(directed_by)) {
		xid name@en directed_by { xid name@en count(director.film) director.film { xid initial_release_date } } } }`
)

// sortByXID puts every list of objects in xid order (the executor answers
// in uid order, which the oracle does not know) and normalises numbers.
func sortByXID(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			v[k] = sortByXID(e)
		}
	case []any:
		for i, e := range v {
			v[i] = sortByXID(e)
		}
		slices.SortStableFunc(v, func(a, b any) int {
			ma, _ := a.(map[string]any)
			mb, _ := b.(map[string]any)
			xa, _ := ma["xid"].(string)
			xb, _ := mb["xid"].(string)
			return strings.Compare(xa, xb)
		})
	}
	return v
}

func jsonCanon(tb testing.TB, v any) string {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	var back any
	if err := json.Unmarshal(b, &back); err != nil {
		tb.Fatal(err)
	}
	b, _ = json.Marshal(sortByXID(back))
	return string(b)
}

// pickTerms chooses name terms of nodes having pred, spread over the data:
// the longest term of every k-th such node's English name.
func (o *oracle) pickTerms(pred string, n int) []string {
	var xs []string
	for x := range o.edges[pred] {
		if _, ok := o.nameEn[x]; ok {
			xs = append(xs, x)
		}
	}
	slices.Sort(xs)
	var out []string
	for i := 0; i < len(xs) && len(out) < n; i += max(1, len(xs)/n) {
		ts := terms(o.nameEn[xs[i]])
		if len(ts) == 0 {
			continue
		}
		slices.SortStableFunc(ts, func(a, b string) int { return len(b) - len(a) })
		out = append(out, ts[0])
	}
	return out
}

var (
	filmMu      sync.Mutex
	filmFix     = map[string]*fixture{} // by placement
	filmOracle  *oracle
	filmSkipped string
)

// sharedFilm loads the first 60,000 lines (4,000 in -short and invariants
// builds) once per placement for the tests of this file.
func sharedFilm(t *testing.T, placement string) (*fixture, *oracle) {
	t.Helper()
	filmMu.Lock()
	defer filmMu.Unlock()
	if f, ok := filmFix[placement]; ok || filmSkipped != "" {
		if f == nil {
			t.Fatalf("film data not present: %s", filmSkipped)
		}
		return f, filmOracle
	}
	if _, err := os.Stat(filepath.Join(filmDir, "goldendata_first_200k.rdf.gz")); err != nil {
		filmSkipped = err.Error()
		t.Fatalf("film data not present: %s", filmSkipped)
	}
	lines := 60000
	if slowBuild || testing.Short() {
		lines = 4000 // the invariants engine checks itself after every step
	}
	f, data := loadFilm(keepOpen{t}, placement, lines) // shared by the tests: never closed
	if filmOracle == nil {
		filmOracle = newOracle(t, data)
	}
	filmFix[placement] = f
	return f, filmOracle
}

// inPlacements runs test once per placement, as subtests.
func inPlacements(t *testing.T, test func(t *testing.T, placement string)) {
	for _, p := range placements {
		t.Run(p, func(t *testing.T) { test(t, p) })
	}
}

// keepOpen is a test whose cleanups never run, for state shared across tests.
type keepOpen struct{ *testing.T }

func (keepOpen) Cleanup(func()) {}

// TestFilmTwoHop checks the report's two 2-hop queries on the film data
// against the oracle, for terms picked across the data set.
func TestFilmTwoHop(t *testing.T) { inPlacements(t, testFilmTwoHop) }

func testFilmTwoHop(t *testing.T, placement string) {
	f, o := sharedFilm(t, placement)
	check := func(q, term string, want any) {
		t.Helper()
		res, err := f.e.Query(context.Background(), f.reader(t, false), q, map[string]string{"$t": term})
		if err != nil {
			t.Fatalf("%s: %v", term, err)
		}
		var got any
		if err := json.Unmarshal(res.Data, &got); err != nil {
			t.Fatalf("%s: %v", res.Data, err)
		}
		if g, w := jsonCanon(t, got), jsonCanon(t, want); g != w {
			t.Errorf("term %q:\ngot  %.2000s\nwant %.2000s", term, g, w)
		}
	}
	dirTerms := o.pickTerms("director.film", 25)
	filmTerms := o.pickTerms("directed_by", 25)
	if len(dirTerms) < 10 || len(filmTerms) < 10 {
		t.Fatalf("too few terms: %v %v", dirTerms, filmTerms)
	}
	nonEmpty := 0
	for _, term := range dirTerms {
		want := o.directorFilms(term)
		if len(want.(map[string]any)["q"].([]any)) > 0 {
			nonEmpty++
		}
		check(filmQueryDirectors, term, want)
	}
	for _, term := range filmTerms {
		check(filmQueryFilms, term, o.filmDirectorDates(term))
	}
	if nonEmpty < len(dirTerms)/2 {
		t.Errorf("only %d of %d director terms found anyone: the test checks too little", nonEmpty, len(dirTerms))
	}
}

// TestFilmCountsAndOrder checks counts, ordering and pagination on the film
// data against the oracle: the directors with the most films.
func TestFilmCountsAndOrder(t *testing.T) { inPlacements(t, testFilmCountsAndOrder) }

func testFilmCountsAndOrder(t *testing.T, placement string) {
	f, o := sharedFilm(t, placement)
	res := f.query(t, `{ var(func: has(director.film)) { c as count(director.film) }
		q(func: uid(c), orderdesc: val(c), first: 5) { xid n: val(c) } }`, nil)
	var got struct {
		Q []struct {
			XID string `json:"xid"`
			N   int    `json:"n"`
		} `json:"q"`
	}
	if err := json.Unmarshal(res.Data, &got); err != nil {
		t.Fatal(err)
	}
	var counts []int
	for _, fs := range o.edges["director.film"] {
		counts = append(counts, len(fs))
	}
	slices.Sort(counts)
	slices.Reverse(counts)
	if len(got.Q) != 5 {
		t.Fatalf("got %d results: %s", len(got.Q), res.Data)
	}
	for i, r := range got.Q {
		if r.N != counts[i] || len(o.edges["director.film"][r.XID]) != r.N {
			t.Errorf("rank %d: %s has %d films by the query, %d by the oracle; rank count %d",
				i, r.XID, r.N, len(o.edges["director.film"][r.XID]), counts[i])
		}
	}
	sum := f.query(t, `{ var(func: has(director.film)) { c as count(director.film) } s() { total: sum(val(c)) } }`, nil)
	total := 0
	for _, fs := range o.edges["director.film"] {
		total += len(fs)
	}
	if want := fmt.Sprintf(`{"s":[{"total":%d}]}`, total); string(sum.Data) != want {
		t.Errorf("sum: got %s want %s", sum.Data, want)
	}
}

// TestFilmNestedOrder checks ordering and pagination below the root on the
// film data: each director's first three films by release date (the dates,
// which the oracle knows; films of one date tie in uid order, which it
// does not).
func TestFilmNestedOrder(t *testing.T) { inPlacements(t, testFilmNestedOrder) }

func testFilmNestedOrder(t *testing.T, placement string) {
	f, o := sharedFilm(t, placement)
	checked := 0
	for _, term := range o.pickTerms("director.film", 25) {
		res := f.query(t, `query q($t: string) { q(func: allofterms(name@en, $t)) @filter(has(director.film)) {
			xid director.film(orderasc: initial_release_date, first: 3) { initial_release_date } } }`,
			map[string]string{"$t": term})
		var got struct {
			Q []struct {
				XID   string `json:"xid"`
				Films []struct {
					Date string `json:"initial_release_date"`
				} `json:"director.film"`
			} `json:"q"`
		}
		if err := json.Unmarshal(res.Data, &got); err != nil {
			t.Fatal(err)
		}
		for _, d := range got.Q {
			var dates []string
			for _, fm := range o.edges["director.film"][d.XID] {
				if v, ok := o.date[fm]; ok {
					dates = append(dates, v.Time().Format(time.RFC3339Nano))
				}
			}
			slices.Sort(dates) // RFC 3339 in UTC sorts as time
			var gotDates []string
			for _, fm := range d.Films {
				gotDates = append(gotDates, fm.Date)
			}
			n := min(3, len(o.edges["director.film"][d.XID]))
			for len(dates) < n {
				dates = append(dates, "") // films without a date come last, and show no date
			}
			want := dates[:n]
			for len(gotDates) < n {
				gotDates = append(gotDates, "")
			}
			if !slices.Equal(gotDates, want) {
				t.Errorf("%s: dates %q, want %q", d.XID, gotDates, want)
			}
			checked++
		}
	}
	if checked < 10 {
		t.Errorf("only %d directors checked", checked)
	}
}
