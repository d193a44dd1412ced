package dgraph

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/weft-db/weft/internal/rdf"
	"github.com/weft-db/weft/internal/value"
)

// filmDir holds Dgraph's film data set (the first 200k lines of
// goldendata.rdf.gz) and its schemas, shared by the workers.
const filmDir = "../../testdata/film" // a copy of the film data in the checkout

// filmLines returns the first n lines of the film data (all when n <= 0)
// and the goldendata schema.
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

// TestLoadFilmSample loads the first 20,000 film lines with two loaders and
// checks every invariant, then answers lookups on the result, in each
// placement.
func TestLoadFilmSample(t *testing.T) {
	data, sch := filmLines(t, 20000)
	for _, p := range placements {
		t.Run(p, func(t *testing.T) { loadFilmSample(t, p, data, sch) })
	}
}

func loadFilmSample(t *testing.T, placement string, data []byte, sch string) {
	ctx := context.Background()
	g := newPlacedGraph(t, placement, sch)
	g.cfg.LeaseSize = 1 << BucketShift
	cfg := DefaultLoadConfig()
	cfg.BatchQuads = 500
	cfg.Loaders = 2
	st, err := g.LoadRDF(ctx, bytes.NewReader(data), "film", cfg)
	if err != nil {
		t.Fatal(err)
	}
	var want int64
	for _, err := range rdf.NewReader(bytes.NewReader(data)).All() {
		if err == nil {
			want++
		}
	}
	t.Logf("%+v", st)
	if st.Quads != want || st.Skipped != 0 || st.Edges+st.Values != st.Quads {
		t.Fatalf("loaded %+v, want %d quads", st, want)
	}
	film := uidOf(t, g, "g.112yf7mpn") // "Jail Breakers", 1976
	got, err := g.Lookup(ctx, snapshot(t, g), "name", "en", "term", "breakers")
	if err != nil || !slices.Contains(got, film) {
		t.Fatalf("term breakers: %v %v", got, err)
	}
	got, err = g.Range(ctx, snapshot(t, g), "initial_release_date", "",
		&Bound{Value: value.Str("1976-06-19")}, &Bound{Value: value.Str("1976-06-19")})
	if err != nil || !slices.Contains(got, film) {
		t.Fatalf("release date range: %v %v", got, err)
	}
	checkConsistency(t, g)
}

// BenchmarkLoadFilm loads the whole film file (200k lines) into an
// in-memory engine: quads/s, and conflicts (retries per batch).
//
//	go test ./internal/dgraph -run '^$' -bench LoadFilm -benchtime 1x
func BenchmarkLoadFilm(b *testing.B) {
	data, sch := filmLines(b, 0)
	for b.Loop() {
		b.StopTimer()
		g := newGraph(b, sch)
		g.cfg.LeaseSize = 1 << BucketShift
		b.StartTimer()
		st, err := g.LoadRDF(context.Background(), io.NopCloser(bytes.NewReader(data)), "film", DefaultLoadConfig())
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(st.Quads)/st.Elapsed.Seconds(), "quads/s")
		b.ReportMetric(float64(st.Attempts-st.Batches)/float64(st.Batches), "retries/batch")
	}
}
