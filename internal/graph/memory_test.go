package graph

import (
	"math/rand"
	"runtime"
	"strconv"
	"testing"

	"github.com/weft-db/weft/internal/invariants"
	"github.com/weft-db/weft/internal/vclock"
)

// socialDegrees returns nv out-degrees summing to ne with a LinkBench-like
// skew (Zipf: most vertices have a handful of links, a few have thousands).
func socialDegrees(nv, ne int, seed int64) []int {
	r := rand.New(rand.NewSource(seed))
	z := rand.NewZipf(r, 1.5, 2, 25000)
	deg := make([]int, nv)
	sum := 0
	for i := range deg {
		deg[i] = int(z.Uint64())
		sum += deg[i]
	}
	total := 0
	for i := range deg {
		deg[i] = deg[i] * ne / sum
		total += deg[i]
	}
	for ; total < ne; total++ { // spread the rounding remainder
		deg[r.Intn(nv)]++
	}
	return deg
}

func heapAlloc() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// loadSocial bulk-loads nv vertices "v<i>" and ne edges "e<j>" (no
// properties) at one stamp, as a shard rebuilding from the store does.
func loadSocial(tb testing.TB, nv, ne int) *Graph {
	g := New(DefaultConfig())
	deg := socialDegrees(nv, ne, 1)
	r := rand.New(rand.NewSource(2))
	w, next := wideStamp(1), 0
	rec := VertexRecord{}
	for i, d := range deg {
		rec.Handle = "v" + strconv.Itoa(i)
		rec.Edges = rec.Edges[:0]
		for range d {
			rec.Edges = append(rec.Edges, EdgeRecord{Handle: "e" + strconv.Itoa(next), Dst: "v" + strconv.Itoa(r.Intn(nv))})
			next++
		}
		if err := g.Load(&rec, w); err != nil {
			tb.Fatal(err)
		}
	}
	return g
}

// wideStamp is a stamp of a 4-gatekeeper deployment (gatekeeper 0 at t).
func wideStamp(t uint64) vclock.Stamp {
	return vclock.Stamp{Clock: vclock.Clock{Epoch: 1, Counters: []uint64{t, 0, 0, 0}}}
}

// writeSocial builds the same graph through single writes, each edge its own
// transaction with its own stamp (the worst case for the stamp table).
func writeSocial(tb testing.TB, nv, ne int) (*Graph, vclock.Stamp) {
	g := New(DefaultConfig())
	deg := socialDegrees(nv, ne, 1)
	r := rand.New(rand.NewSource(2))
	t, next := uint64(1), 0
	for i := range deg {
		if err := g.CreateVertex("v"+strconv.Itoa(i), wideStamp(t)); err != nil {
			tb.Fatal(err)
		}
	}
	for i, d := range deg {
		src := "v" + strconv.Itoa(i)
		for range d {
			t++
			if err := g.CreateEdge(src, "e"+strconv.Itoa(next), "v"+strconv.Itoa(r.Intn(nv)), wideStamp(t)); err != nil {
				tb.Fatal(err)
			}
			next++
		}
	}
	return g, wideStamp(t + 1)
}

// The TAO benchmark's budget is < 200 bytes per edge for the whole process;
// the graph's own share must stay well under 150. Measured as live heap after
// GC, 100k vertices and 1M edges with LinkBench-like skew, no properties.
func TestMemoryPerEdge(t *testing.T) {
	if testing.Short() || raceEnabled || invariants.On {
		t.Skip("builds a 1M-edge graph; skipped in -short, -race and invariants builds")
	}
	const nv, ne, budget = 100_000, 1_000_000, 150.0
	base := heapAlloc()
	g := loadSocial(t, nv, ne)
	loaded := float64(heapAlloc()-base) / ne
	t.Logf("bulk load: %.1f B/edge (Stats.Bytes %.1f B/edge, %+v)", loaded, float64(g.Stats().Bytes)/ne, g.Stats())
	if loaded > budget {
		t.Errorf("bulk-loaded graph: %.1f B/edge, budget %.0f", loaded, budget)
	}
	runtime.KeepAlive(g)
	g = nil

	base = heapAlloc()
	g, after := writeSocial(t, nv, ne)
	written := float64(heapAlloc()-base) / ne
	st := g.Stats()
	g.Collect(after)
	collected := float64(heapAlloc()-base) / ne
	t.Logf("1M single-edge transactions: %.1f B/edge (%d stamps); after Collect %.1f B/edge (%d stamps)",
		written, st.Stamps, collected, g.Stats().Stamps)
	if collected > budget {
		t.Errorf("written then collected: %.1f B/edge, budget %.0f", collected, budget)
	}
	if err := g.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
	runtime.KeepAlive(g)
}
