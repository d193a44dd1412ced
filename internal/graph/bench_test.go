package graph

import (
	"math/rand"
	"runtime"
	"strconv"
	"testing"

	"github.com/weft-db/weft/internal/vclock"
)

// Benchmarks measure; they assert nothing about time.

// graphOfDegree loads nv vertices of out-degree d. With unsettled set, a
// second batch of edges is written at distinct stamps and not collected, so
// reads pay clock comparisons (and the Orderer, for concurrent stamps).
func graphOfDegree(b *testing.B, nv, d int, unsettled bool) *Graph {
	g := New(DefaultConfig())
	rec := VertexRecord{}
	for i := range nv {
		rec.Handle = "v" + strconv.Itoa(i)
		rec.Edges = rec.Edges[:0]
		for j := range d {
			rec.Edges = append(rec.Edges, EdgeRecord{Handle: "e" + strconv.Itoa(i*d+j), Dst: "v" + strconv.Itoa((i+j+1)%nv)})
		}
		if err := g.Load(&rec, wideStamp(1)); err != nil {
			b.Fatal(err)
		}
	}
	if unsettled {
		t := uint64(1)
		for i := range nv {
			for j := range d / 2 {
				t++
				w := vclock.Stamp{Clock: vclock.Clock{Epoch: 1, Counters: []uint64{t, 0, 0, 0}}}
				if err := g.CreateEdge("v"+strconv.Itoa(i), "u"+strconv.Itoa(i*d+j), "v0", w); err != nil {
					b.Fatal(err)
				}
			}
		}
	} else {
		g.Collect(wideStamp(2))
	}
	return g
}

// get_edges, the TAO mix's most frequent operation: View + iterate out-edges.
func BenchmarkViewEdges(b *testing.B) {
	for _, d := range []int{10, 100, 1000} {
		for _, unsettled := range []bool{false, true} {
			name := "deg=" + strconv.Itoa(d) + map[bool]string{false: "/collected", true: "/recent"}[unsettled]
			b.Run(name, func(b *testing.B) {
				nv := 100_000 / d
				g := graphOfDegree(b, nv, d, unsettled)
				// Concurrent with every write stamp: the Orderer decides each new sid.
				r := vclock.Stamp{Clock: vclock.Clock{Epoch: 1, Counters: []uint64{1 << 40, 1, 0, 0}}, Owner: 1}
				hs := make([]string, nv)
				for i := range hs {
					hs[i] = "v" + strconv.Itoa(i)
				}
				rng := rand.New(rand.NewSource(1))
				edges := 0
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					vv, ok := g.View(hs[rng.Intn(nv)], r, sumOrder{})
					if !ok {
						b.Fatal("missing vertex")
					}
					for e := range vv.Edges() {
						edges += len(e.Dst()) + len(e.Handle())
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(d+map[bool]int{true: d / 2}[unsettled]), "ns/edge")
				runtime.KeepAlive(edges)
			})
		}
	}
}

// count_edges and get_edge (lookup by handle) on a hub with 10k edges.
func BenchmarkEdgeLookup(b *testing.B) {
	g := graphOfDegree(b, 10, 10_000, false)
	r := wideStamp(3)
	rng := rand.New(rand.NewSource(1))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		i := rng.Intn(10)
		vv, _ := g.View("v"+strconv.Itoa(i), r, nil)
		if _, ok := vv.Edge("e" + strconv.Itoa(i*10_000+rng.Intn(10_000))); !ok {
			b.Fatal("edge not found")
		}
	}
}

func BenchmarkEdgeCount(b *testing.B) {
	g := graphOfDegree(b, 100, 1000, true)
	r := wideStamp(1 << 40)
	b.ReportAllocs()
	b.ResetTimer()
	n := 0
	for i := range b.N {
		vv, _ := g.View("v"+strconv.Itoa(i%100), r, nil)
		n += vv.EdgeCount()
	}
	runtime.KeepAlive(n)
}

// create_edge, one transaction per edge, onto 10k vertices.
func BenchmarkCreateEdge(b *testing.B) {
	g := New(DefaultConfig())
	const nv = 10_000
	for i := range nv {
		if err := g.CreateVertex("v"+strconv.Itoa(i), wideStamp(1)); err != nil {
			b.Fatal(err)
		}
	}
	hs := make([]string, b.N)
	for i := range hs {
		hs[i] = "e" + strconv.Itoa(i)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if err := g.CreateEdge("v"+strconv.Itoa(i%nv), hs[i], "v"+strconv.Itoa((i*7)%nv), wideStamp(uint64(i+2))); err != nil {
			b.Fatal(err)
		}
	}
}

// Bulk load: vertices of 10 edges each.
func BenchmarkLoad(b *testing.B) {
	g := New(DefaultConfig())
	recs := make([]VertexRecord, 1000)
	for i := range recs {
		recs[i].Edges = make([]EdgeRecord, 10)
		for j := range recs[i].Edges {
			recs[i].Edges[j] = EdgeRecord{Handle: "e" + strconv.Itoa(j), Dst: "v" + strconv.Itoa(j)}
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		rec := &recs[i%len(recs)]
		rec.Handle = "v" + strconv.Itoa(i)
		if err := g.Load(rec, wideStamp(1)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/10, "ns/edge")
}

// Collect after a batch of single-edge transactions (the steady state: the
// watermark trails writes by one batch).
func BenchmarkCollect(b *testing.B) {
	g := New(DefaultConfig())
	const nv, batch = 10_000, 10_000
	for i := range nv {
		if err := g.CreateVertex("v"+strconv.Itoa(i), wideStamp(1)); err != nil {
			b.Fatal(err)
		}
	}
	t := uint64(1)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		for j := range batch {
			t++
			src := "v" + strconv.Itoa((i*batch+j)%nv)
			if err := g.CreateEdge(src, "e"+strconv.Itoa(i*batch+j), "v1", wideStamp(t)); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		g.Collect(wideStamp(t + 1))
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/batch, "ns/write")
}

// The memory figure as a benchmark metric (B/edge, live heap after GC).
func BenchmarkMemoryPerEdge(b *testing.B) {
	for range b.N {
		base := heapAlloc()
		g := loadSocial(b, 100_000, 1_000_000)
		b.ReportMetric(float64(heapAlloc()-base)/1e6, "B/edge")
		runtime.KeepAlive(g)
	}
}

// The same vertices as BenchmarkLoad through CreateVertex + CreateEdge at one
// stamp, for comparison with the bulk path.
func BenchmarkLoadByWrites(b *testing.B) {
	g := New(DefaultConfig())
	es := make([]string, 10)
	ds := make([]string, 10)
	for j := range es {
		es[j], ds[j] = "e"+strconv.Itoa(j), "v"+strconv.Itoa(j)
	}
	w := wideStamp(1)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		h := "v" + strconv.Itoa(i)
		if err := g.CreateVertex(h, w); err != nil {
			b.Fatal(err)
		}
		for j := range es {
			if err := g.CreateEdge(h, es[j], ds[j], w); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/10, "ns/edge")
}
