package dql

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weft-db/weft/internal/dgraph/schema"
)

// filmDir holds Dgraph's film data set and its schemas, shared by the
// workers.
const filmDir = "../../../testdata/film" // a copy of the film data in the checkout

// corpus reads a testdata file of "## name" entries.
func corpus(t testing.TB, file string) (names, texts []string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(string(b), "\n## ")
	for _, part := range parts[1:] {
		name, text, _ := strings.Cut(part, "\n")
		names, texts = append(names, name), append(texts, text)
	}
	return names, texts
}

// roundTrip checks that q renders to text that parses back to an equal
// query rendering to the same text.
func roundTrip(t *testing.T, q *Query) {
	t.Helper()
	roundTripWith(t, q, Options{})
}

func roundTripWith(t *testing.T, q *Query, opt Options) {
	t.Helper()
	text := q.String()
	back, err := ParseWith(text, opt)
	if err != nil {
		t.Fatalf("canonical text does not parse: %v\n%s", err, text)
	}
	if !back.Equal(q) {
		t.Fatalf("canonical text parses to another query:\n%s\n%s", text, back)
	}
	if back.String() != text {
		t.Fatalf("canonical text is not stable:\n%s\n%s", text, back)
	}
}

// TestFilmQueries parses the film queries of Dgraph's documentation,
// round-trips them and validates them against the 21million schema.
func TestFilmQueries(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(filmDir, "21million.schema"))
	if err != nil {
		t.Fatalf("film schema not present in %s (testdata/film is part of the checkout): %v", filmDir, err)
	}
	s, err := schema.Parse(string(b))
	if err != nil {
		t.Fatal(err)
	}
	names, texts := corpus(t, "film.dql")
	if len(names) < 40 {
		t.Fatalf("film.dql holds %d queries", len(names))
	}
	for i, name := range names {
		t.Run(name, func(t *testing.T) {
			q, err := Parse(texts[i])
			if err != nil {
				t.Fatalf("%v\n%s", err, texts[i])
			}
			roundTrip(t, q)
			if err := q.Validate(s); err != nil {
				t.Fatalf("Validate: %v", err)
			}
		})
	}
}

// TestDocsQueries parses the other documentation queries: facets,
// shortest paths, GraphQL variables, fragments, schema queries.
func TestDocsQueries(t *testing.T) {
	names, texts := corpus(t, "docs.dql")
	for i, name := range names {
		t.Run(name, func(t *testing.T) {
			q, err := Parse(texts[i])
			if err != nil {
				t.Fatalf("%v\n%s", err, texts[i])
			}
			roundTrip(t, q)
		})
	}
}
