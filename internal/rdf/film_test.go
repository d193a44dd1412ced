package rdf

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// filmDir holds Dgraph's film data set (the first 200k lines of
// goldendata.rdf.gz and the 21million schema), shared by the workers.
const filmDir = "../../testdata/film" // a copy of the film data in the checkout

func filmData(tb testing.TB) []byte {
	tb.Helper()
	f, err := Open(filepath.Join(filmDir, "goldendata_first_200k.rdf.gz"))
	if errors.Is(err, os.ErrNotExist) {
		tb.Fatalf("film data not present in %s (testdata/film is part of the checkout)", filmDir)
	}
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// TestFilmDataset parses the whole film file. Every line is a quad except
// two release dates (years 1013 and 214) that value.Value's datetime range
// cannot hold: the reader reports them with their line and goes on.
func TestFilmDataset(t *testing.T) {
	start := time.Now()
	f, err := Open(filepath.Join(filmDir, "goldendata_first_200k.rdf.gz"))
	if err != nil {
		t.Fatalf("film data not present in %s (testdata/film is part of the checkout): %v", filmDir, err)
	}
	defer f.Close()
	r := NewReader(f)
	subjects := map[string]bool{}
	predicates := map[string]bool{}
	kinds := map[Kind]int{}
	langs := map[string]int{}
	var quads int
	var rangeLines []int
	for nq, err := range r.All() {
		if err != nil {
			var pe *Error
			if !errors.Is(err, ErrRange) || !errors.As(err, &pe) {
				t.Fatalf("unexpected error: %v", err)
			}
			rangeLines = append(rangeLines, pe.Line)
			continue
		}
		quads++
		subjects[nq.Subject.Name] = true
		predicates[nq.Predicate] = true
		kinds[nq.Object.Kind]++
		langs[nq.Lang]++
	}
	elapsed := time.Since(start)
	t.Logf("film: %d lines, %d quads, %d subjects, %d predicates, %d literal and %d IRI objects, %d range errors, in %v",
		r.Line(), quads, len(subjects), len(predicates), kinds[Literal], kinds[IRI], len(rangeLines), elapsed)
	// Expected figures counted independently with awk over the same file.
	if r.Line() != 200000 || quads != 199998 || len(subjects) != 72243 || len(predicates) != 10 {
		t.Errorf("lines %d quads %d subjects %d predicates %d; want 200000 199998 72243 10",
			r.Line(), quads, len(subjects), len(predicates))
	}
	if kinds[Literal] != 118965 || kinds[IRI] != 81033 || langs["en"]+langs["ja"]+langs["zh-Hant"] != 69257+4585+984 {
		t.Errorf("object kinds %v, languages %v", kinds, langs)
	}
	if len(rangeLines) != 2 || rangeLines[0] != 30467 || rangeLines[1] != 181327 {
		t.Errorf("range errors at lines %v; want [30467 181327]", rangeLines)
	}
}

// BenchmarkReaderFilm measures the streaming parser over the film data
// already decompressed in memory: MB/s of N-Quads text and quads/s.
//
//	go test ./internal/rdf -run '^$' -bench ReaderFilm -benchtime 5x
func BenchmarkReaderFilm(b *testing.B) {
	data := filmData(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var quads int
	for b.Loop() {
		r := NewReader(bytes.NewReader(data))
		for {
			_, err := r.Read()
			if err == io.EOF {
				break
			}
			quads++
		}
	}
	b.ReportMetric(float64(quads)/b.Elapsed().Seconds(), "quads/s")
}

// BenchmarkParseLine measures one typical line of each shape.
func BenchmarkParseLine(b *testing.B) {
	lines := []string{
		"<g.112yf7mpn>\t<name>\t\"Jail Breakers\"@en\t.",
		"<g.112yf7mpn>\t<directed_by>\t<m.0g7x9yx>\t.",
		"<g.112yf7mpn>\t<initial_release_date>\t\"1976-06-19\"^^<http://www.w3.org/2001/XMLSchema#date>\t.",
		`_:alice <friend> _:bob (since=2006-01-02T15:04:05, close=true) .`,
	}
	var n int64
	for _, l := range lines {
		n += int64(len(l))
	}
	b.SetBytes(n)
	b.ReportAllocs()
	for b.Loop() {
		for _, l := range lines {
			if _, _, err := ParseLine(l); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.N*len(lines))/b.Elapsed().Seconds(), "quads/s")
}
