package exec

import (
	"context"
	"encoding/json"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weft-db/weft/internal/dgraph"
)

// BenchmarkFilm2Hop runs the report's two 2-hop queries over the whole
// film file (200k lines) in an in-memory engine, one snapshot reader per
// query, without and with recording reads:
//
//	DirectorFilms: a director (by uid) → director.film → each film's name
//	FilmDirectorFilms: a film → directed_by → the director's films → names and dates
//	Terms: directors found by a name term (term index) → films → names
//
// Sub-benchmarks "parallel" run the same from about 10 goroutines (10
// clients) and report queries/s.
//
//	go test ./internal/dgraph/exec -run '^$' -bench Film2Hop -benchtime 2000x
func BenchmarkFilm2Hop(b *testing.B) {
	f, data := loadFilm(b, *placementFlag, 0)
	o := newOracle(b, data)
	ctx := context.Background()
	uids := func(q string) []string {
		res, err := f.e.Query(ctx, f.reader(b, false), q, nil)
		if err != nil {
			b.Fatal(err)
		}
		var out struct {
			Q []struct {
				UID string `json:"uid"`
			} `json:"q"`
		}
		if err := json.Unmarshal(res.Data, &out); err != nil {
			b.Fatal(err)
		}
		var us []string
		for _, r := range out.Q {
			us = append(us, r.UID)
		}
		if len(us) == 0 {
			b.Fatalf("no uids for %s", q)
		}
		return us
	}
	directors := uids(`{ q(func: has(director.film), first: 1000) { uid } }`)
	films := uids(`{ q(func: has(directed_by), first: 1000) { uid } }`)
	terms := o.pickTerms("director.film", 200)
	queries := []struct {
		name string
		q    string
		args []string
	}{
		{"DirectorFilms", `query q($u: string) { q(func: uid($u)) { name@en director.film { name@en } } }`, directors},
		{"FilmDirectorFilms", `query q($u: string) { q(func: uid($u)) { name@en directed_by { name@en director.film { name@en initial_release_date } } } }`, films},
		{"Terms", `query q($u: string) { q(func: allofterms(name@en, $u)) @filter(has(director.film)) { name@en director.film { name@en } } }`, terms},
	}
	for _, q := range queries {
		for _, record := range []bool{false, true} {
			name := q.name
			if record {
				name += "/record"
			}
			b.Run(name, func(b *testing.B) {
				i, calls := 0, int64(0)
				for b.Loop() {
					calls += run2Hop(b, f, q.q, q.args[i%len(q.args)], record)
					i++
				}
				b.ReportMetric(float64(calls)/float64(b.N), "reads/op")
			})
		}
		b.Run(q.name+"/parallel", func(b *testing.B) {
			var n atomic.Int64
			b.SetParallelism(max(1, 10/runtime.GOMAXPROCS(0)))
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					i := int(n.Add(1))
					run2Hop(b, f, q.q, q.args[i%len(q.args)], false)
				}
			})
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "queries/s")
		})
	}
}

// run2Hop runs one query at a fresh snapshot and returns its vertex reads.
func run2Hop(b *testing.B, f *fixture, q, arg string, record bool) int64 {
	snap, err := f.db.Begin(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	r := dgraph.NewSnapshotReader(f.db, snap, record)
	key := "$u"
	if _, err := f.e.Query(context.Background(), r, q, map[string]string{key: arg}); err != nil {
		b.Fatal(err)
	}
	return r.Calls()
}
