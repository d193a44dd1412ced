package kronos

import (
	"fmt"
	"testing"

	"github.com/weft-db/weft/internal/bench"
	"github.com/weft-db/weft/internal/kronos"
)

// The Go benchmarks are the in-process core's costs in `go test -bench` form
// (weft bench kronos is the full suite, with plots). They measure and never
// assert a time.
//
//	go test ./internal/bench/kronos -run '^$' -bench Kronos -benchmem

// BenchmarkQueryOrderER times QueryOrder batches of 100 uniformly random
// pairs on G(10,000, p) graphs (p = 0.1 is left out: loading it takes ~10 s;
// weft bench kronos covers it). Reported: pairs/s and ns/pair.
func BenchmarkQueryOrderER(b *testing.B) {
	const events, batch = 10_000, 100
	for _, p := range []float64{1e-5, 1e-4, 1e-3, 1e-2} {
		b.Run(fmt.Sprintf("p=%g", p), func(b *testing.B) {
			rng := bench.NewRand(1, 1)
			edges := ErdosRenyi(events, p, rng)
			OrientByRank(edges, RandomRanks(events, rng))
			g, first, err := loadGraph(events, edges, kronos.DefaultConfig().CacheSlots, 256)
			if err != nil {
				b.Fatal(err)
			}
			// A pool far larger than the answer cache, so cycling through it
			// almost never hits; generating pairs inside the loop would time
			// the generator.
			pool := uniformPairs(bench.NewRand(1, 2), first, events, 1<<18)()
			next := cyclePairs(pool, batch)
			out := make([]kronos.Order, 0, batch)
			b.ResetTimer()
			for range b.N {
				if _, err := g.QueryOrder(out[:0], next()); err != nil {
					b.Fatal(err)
				}
			}
			pairs := float64(b.N) * batch
			b.ReportMetric(pairs/b.Elapsed().Seconds(), "pairs/s")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/pairs, "ns/pair")
		})
	}
}

// BenchmarkCreateEvent times Graph.CreateEvent (one reference, no edges).
func BenchmarkCreateEvent(b *testing.B) {
	g, err := kronos.New(kronos.DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for range b.N {
		g.CreateEvent()
	}
}

// BenchmarkAssignPrefer times single-pair Prefer AssignOrder calls that
// order a fresh event before a uniformly random older one (the assign
// benchmark's prefer1 workload: a random recursive tree). Fresh events are
// created outside the timer, 4096 at a time; the graph starts over every
// 2^20 events so the cost per op does not depend on b.N.
func BenchmarkAssignPrefer(b *testing.B) {
	g, err := kronos.New(kronos.DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	root := g.CreateEvent()
	rng := bench.NewRand(1, 3)
	var fresh []kronos.EventID
	var res []kronos.AssignResult
	as := make([]kronos.Assignment, 1)
	b.ResetTimer()
	for i := range b.N {
		if i%4096 == 0 {
			b.StopTimer()
			if i%(1<<20) == 0 && i > 0 {
				if g, err = kronos.New(kronos.DefaultConfig()); err != nil {
					b.Fatal(err)
				}
				root = g.CreateEvent()
			}
			if fresh, err = g.CreateEvents(fresh[:0], 4096); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
		id := fresh[i%4096]
		as[0] = kronos.Assignment{A: kronos.ID(id), Order: kronos.Before,
			B: kronos.ID(root + kronos.EventID(rng.IntN(int(id-root)))), Strength: kronos.Prefer}
		if res, err = g.AssignOrder(res[:0], as); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGCChain times the ReleaseRefs call that collects a Must chain of
// the given length. Chains are built outside the timer, in groups that fill a
// table chunk (see chainGroup). Reported: ns/event collected.
func BenchmarkGCChain(b *testing.B) {
	for _, length := range []int{1, 64, 4096, 65536} {
		b.Run(fmt.Sprintf("len=%d", length), func(b *testing.B) {
			g, err := kronos.New(kronos.DefaultConfig())
			if err != nil {
				b.Fatal(err)
			}
			var cb chainBuilder
			group := chainGroup(length)
			b.ResetTimer()
			for done := 0; done < b.N; done += group {
				k := min(group, b.N-done)
				b.StopTimer()
				if err := cb.build(g, length, k); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				for i := range k {
					if n, err := cb.releaseHead(g, i); err != nil || n != length {
						b.Fatalf("collected %d of %d: %v", n, length, err)
					}
				}
			}
			b.StopTimer()
			total := float64(b.Elapsed().Nanoseconds())
			b.ReportMetric(total/float64(b.N), "ns/release")
			b.ReportMetric(total/float64(b.N)/float64(length), "ns/event")
		})
	}
}
