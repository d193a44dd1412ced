package dql

import (
	"fmt"
	"strings"
	"testing"
)

// spielberg is a typical query: var blocks, math, ordering, filters.
const spielberg = `{
  var(func:allofterms(name@en, "steven spielberg")) {
    films as director.film {
      p as count(starring)
      q as count(genre)
      date as initial_release_date
      years as math(since(date)/(365*24*60*60))
      score as math(cond(years > 10, 0, ln(p)+q-ln(years)))
    }
  }

  TopMovies(func: uid(films), orderdesc: val(score), first: 10) @filter(gt(val(score), 2) AND NOT has(tagline)) {
    name@en
    val(score)
    val(date)
    genre (orderasc: name@en) @filter(anyofterms(name@en, "war drama")) {
      name@en
    }
  }
}`

// BenchmarkParse parses a typical query. go test -bench Parse -benchmem
// ./internal/dgraph/dql
func BenchmarkParse(b *testing.B) {
	b.SetBytes(int64(len(spielberg)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(spielberg); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseFilmCorpus parses every query of testdata/film.dql once per
// iteration.
func BenchmarkParseFilmCorpus(b *testing.B) {
	_, texts := corpus(b, "film.dql")
	n := 0
	for _, t := range texts {
		n += len(t)
	}
	b.SetBytes(int64(n))
	b.ReportAllocs()
	for b.Loop() {
		for _, t := range texts {
			if _, err := Parse(t); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func BenchmarkString(b *testing.B) {
	q, err := Parse(spielberg)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = q.String()
	}
}

// BenchmarkParseUpsert parses an upsert with 1000 quads.
func BenchmarkParseUpsert(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("upsert {\n  query { q(func: eq(email, \"a@b.c\")) { v as uid } }\n  mutation @if(eq(len(v), 1)) {\n    set {\n")
	for i := range 1000 {
		fmt.Fprintf(&sb, "      uid(v) <p%d> \"value %d\" .\n", i%10, i)
	}
	sb.WriteString("    }\n  }\n}\n")
	text := sb.String()
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseUpsert(text); err != nil {
			b.Fatal(err)
		}
	}
}
