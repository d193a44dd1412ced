package graph

import (
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/weft-db/weft/internal/value"
	"github.com/weft-db/weft/internal/vclock"
)

// render is everything a read at R can observe about handle h.
func render(g *Graph, h string, r vclock.Stamp, ord Orderer) string {
	lw := g.LastWrite(h, r, ord)
	vv, ok := g.View(h, r, ord)
	if !ok {
		return fmt.Sprintf("%s absent lw=%s", h, lw)
	}
	return fmt.Sprintf("%s props=%s aliases=%v edges=%v count=%d lw=%s", h, propString(vv.Props()),
		slices.Collect(vv.Aliases()), edgeList(vv), vv.EdgeCount(), lw)
}

// churn applies n transactions of random writes (errors ignored: they change
// nothing) over a few vertices and edges, one stamp each.
func churn(g *Graph, r *rand.Rand, n int, stamp func(int) vclock.Stamp) {
	hs := []string{"v0", "v1", "v2", "v3", "v4"}
	for i := 1; i <= n; i++ {
		w := stamp(i)
		h, e, k := hs[r.Intn(len(hs))], fmt.Sprintf("e%d", r.Intn(40)), fmt.Sprintf("k%d", r.Intn(3))
		switch r.Intn(10) {
		case 0:
			_ = g.CreateVertex(h, w)
		case 1:
			if r.Intn(4) == 0 {
				_ = g.DeleteVertex(h, w)
			}
		case 2, 3, 4:
			_ = g.CreateEdge(h, e, hs[r.Intn(len(hs))], w)
		case 5:
			_ = g.DeleteEdge(h, e, w)
		case 6:
			_ = g.SetVertexProp(h, k, value.I64(int64(i)), w)
		case 7:
			_ = g.SetEdgeProp(h, e, k, value.I64(int64(i)), w)
		case 8:
			_ = g.AddAlias(h, k, w)
		case 9:
			_ = g.RemoveAlias(h, k, w)
		}
	}
}

// Dissertation §4.3: state deleted before the watermark goes, and reads at
// or after it are unchanged — here across thousands of transactions, so the
// stamp table is also compacted (renumbered) by the collection.
func TestCollectKeepsReadsAfterWatermark(t *testing.T) {
	cfg := DefaultConfig()
	cfg.EdgeIndexMin = 8
	g := New(cfg)
	const n, w = 6000, 5000
	churn(g, rand.New(rand.NewSource(1)), n, func(i int) vclock.Stamp { return at(uint64(i)) })
	var before []string
	reads := []uint64{w, w + 1, w + 500, n, n + 1}
	for _, r := range reads {
		for _, h := range []string{"v0", "v1", "v2", "v3", "v4", "nope"} {
			before = append(before, render(g, h, at(r), nil))
		}
	}
	st := g.Stats()
	freed := g.Collect(at(w))
	after := g.Stats()
	t.Logf("freed %d versions; stamps %d → %d (table %d); versions %d → %d", freed, st.Stamps, after.Stamps,
		len(g.stamps.ents), st.Versions, after.Versions)
	if freed == 0 || after.Versions != st.Versions-freed || after.Stamps >= st.Stamps/4 || len(g.stamps.ents) > after.Stamps+1 {
		t.Errorf("collection did too little: freed %d, %+v → %+v, table %d", freed, st, after, len(g.stamps.ents))
	}
	i := 0
	for _, r := range reads {
		for _, h := range []string{"v0", "v1", "v2", "v3", "v4", "nope"} {
			if got := render(g, h, at(r), nil); got != before[i] {
				t.Errorf("at %d after collect:\n got %s\nwant %s", r, got, before[i])
			}
			i++
		}
	}
	if err := g.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
	// Writes continue normally after compaction.
	churn(g, rand.New(rand.NewSource(2)), 500, func(i int) vclock.Stamp { return at(uint64(n + i)) })
	if err := g.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
}

// Watermarks decide by vector clock only: a deletion concurrent with the
// watermark stays (even though the Orderer would put it before), and no
// Orderer is consulted.
func TestCollectIgnoresOrderer(t *testing.T) {
	g := New(DefaultConfig())
	s := func(owner uint32, a, b uint64) vclock.Stamp {
		return vclock.Stamp{Clock: vclock.Clock{Counters: []uint64{a, b}}, Owner: owner}
	}
	mustOK(t, g.CreateVertex("v", s(0, 1, 0)))
	mustOK(t, g.CreateEdge("v", "e", "x", s(0, 2, 0)))
	mustOK(t, g.DeleteEdge("v", "e", s(0, 3, 0))) // concurrent with the watermark below
	wm := s(1, 0, 5)                              // [3,0] vs [0,5]: concurrent
	if n := g.Collect(wm); n != 0 {
		t.Fatalf("collected %d versions deleted concurrently with the watermark", n)
	}
	if n := g.Collect(s(1, 3, 5)); n != 1 {
		t.Fatalf("collected %d, want the edge once its deletion precedes the watermark", n)
	}
}

func TestCollectKeepHistory(t *testing.T) {
	cfg := DefaultConfig()
	cfg.KeepHistory = true
	g := New(cfg)
	mustOK(t, g.CreateVertex("v", at(1)))
	mustOK(t, g.SetVertexProp("v", "k", value.I64(1), at(1)))
	mustOK(t, g.SetVertexProp("v", "k", value.I64(2), at(2)))
	mustOK(t, g.DeleteVertex("v", at(3)))
	if n := g.Collect(at(10)); n != 0 {
		t.Fatalf("KeepHistory: Collect freed %d", n)
	}
	wantProp(t, g, "v", "k", 1, "1") // historic reads below the "watermark" still work
	wantProp(t, g, "v", "k", 2, "2")
	if g.Stats().Versions != 3 {
		t.Errorf("versions %d", g.Stats().Versions)
	}
}

// Deleting everything and collecting above it leaves only tombstones, which
// hold one stamp each (the last write the store also remembers).
func TestCollectEverything(t *testing.T) {
	g := New(DefaultConfig())
	for i := range 50 {
		h := fmt.Sprintf("v%d", i)
		mustOK(t, g.CreateVertex(h, at(uint64(i+1))))
		mustOK(t, g.CreateEdge(h, "e", "v0", at(uint64(i+1))))
		mustOK(t, g.SetEdgeProp(h, "e", "w", value.I64(1), at(uint64(i+1))))
		mustOK(t, g.AddAlias(h, "a", at(uint64(i+1))))
	}
	for i := range 50 {
		mustOK(t, g.DeleteVertex(fmt.Sprintf("v%d", i), at(100)))
	}
	g.Collect(at(101))
	st := g.Stats()
	if st.Vertices != 0 || st.Edges != 0 || st.Versions != 0 || st.Tombstones != 50 || st.Stamps != 1 || st.Handles != 50 {
		t.Errorf("after collecting everything: %+v", st)
	}
	if len(g.free) != 50 || g.keys.len() != 0 {
		t.Errorf("%d free slots, %d keys", len(g.free), g.keys.len())
	}
	// Slots and tombstones are reused by re-creation.
	mustOK(t, g.CreateVertex("v7", at(102)))
	if lw := g.LastWrite("v7", at(101), nil); !sameStamp(lw, at(100)) {
		t.Errorf("re-created vertex forgot its tombstone's last write: %s", lw)
	}
	if err := g.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
}

func TestReadBelowWatermarkPanics(t *testing.T) {
	g := New(DefaultConfig())
	mustOK(t, g.CreateVertex("v", at(1)))
	g.Collect(at(5))
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "watermark") {
			t.Fatalf("panic %v", r)
		}
	}()
	g.View("v", at(4), nil)
}

func TestConcurrentReadWithoutOrdererPanics(t *testing.T) {
	g := New(DefaultConfig())
	mustOK(t, g.CreateVertex("v", vclock.Stamp{Clock: vclock.Clock{Counters: []uint64{1, 0}}}))
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "Orderer") {
			t.Fatalf("panic %v", r)
		}
	}()
	g.View("v", vclock.Stamp{Clock: vclock.Clock{Counters: []uint64{0, 1}}, Owner: 1}, nil)
}

// Vertices enumerates in handle order, at R.
func TestVertices(t *testing.T) {
	g := New(DefaultConfig())
	for i, h := range []string{"c", "a", "d", "b"} {
		mustOK(t, g.CreateVertex(h, at(uint64(i+1))))
	}
	mustOK(t, g.DeleteVertex("d", at(5)))
	var got []string
	for vv := range g.Vertices(at(5), nil) {
		got = append(got, vv.Handle())
	}
	if !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Errorf("at 5: %v", got)
	}
	got = got[:0]
	for vv := range g.Vertices(at(3), nil) {
		got = append(got, vv.Handle())
	}
	if !slices.Equal(got, []string{"a", "c", "d"}) {
		t.Errorf("at 3: %v", got)
	}
}

func mustOK(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
