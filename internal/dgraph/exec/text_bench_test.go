package exec

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/weft-db/weft/internal/dgraph"
)

// BenchmarkFilmLoadIndexes loads the first 4,000 film lines per op with
// name indexed by term alone, with fulltext added, and with fulltext and
// trigram: the write cost of the text indexes (quads/s reported).
func BenchmarkFilmLoadIndexes(b *testing.B) {
	data, sch := filmLines(b, 4000)
	for _, c := range []struct{ name, index string }{
		{"term", "term"}, {"term+fulltext", "term, fulltext"}, {"term+fulltext+trigram", "term, fulltext, trigram"},
	} {
		b.Run(c.name, func(b *testing.B) {
			s := strings.Replace(sch, "@index(term)", "@index("+c.index+")", 1)
			quads := 0
			for b.Loop() {
				b.StopTimer()
				f := newFixture(b, s, "")
				b.StartTimer()
				cfg := dgraph.DefaultLoadConfig()
				st, err := f.g.LoadRDF(context.Background(), bytes.NewReader(data), "film", cfg)
				if err != nil {
					b.Fatal(err)
				}
				quads += int(st.Quads)
			}
			b.ReportMetric(float64(quads)/b.Elapsed().Seconds(), "quads/s")
		})
	}
}

// BenchmarkFilmAlloftext runs alloftext and anyoftext queries at the root
// over 20,000 film lines with a fulltext index on name, for words picked
// across the data.
func BenchmarkFilmAlloftext(b *testing.B) {
	f, data := loadFilmText(b, *placementFlag, 20000)
	o := newOracle(b, data)
	words := o.pickTerms("director.film", 20)
	words = append(words, o.pickTerms("directed_by", 20)...)
	if len(words) < 10 {
		b.Fatalf("too few words: %v", words)
	}
	for _, fn := range []string{"alloftext", "anyoftext"} {
		b.Run(fn, func(b *testing.B) {
			i := 0
			for b.Loop() {
				text := words[i%len(words)] + " " + words[(i+3)%len(words)]
				if fn == "alloftext" {
					text = words[i%len(words)]
				}
				i++
				q := fmt.Sprintf(`{ q(func: %s(name@en, %q)) { uid name@en } }`, fn, text)
				if _, err := f.e.Query(context.Background(), f.reader(b, false), q, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
