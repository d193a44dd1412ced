package kronos

import "testing"

// Kronos paper §2.3 (strict GC) with one event at a time: a client that
// creates an event and releases it, over and over, across chunk boundaries,
// reuses the freed chunk instead of allocating an 80 KB chunk per event.
// Before the spare chunk, every cycle allocated one (the event was alone in
// its chunk, which its release freed).
func TestKronos2_3CreateReleaseChurnReusesChunk(t *testing.T) {
	g := newGraph(t)
	ids := make([]EventID, 1)
	cycle := func() {
		ids[0] = g.CreateEvent()
		if n, err := g.ReleaseRefs(ids); err != nil || n != 1 {
			t.Fatalf("release of %d collected %d (%v)", ids[0], n, err)
		}
	}
	for g.Stats().NextID < chunkSize-8 {
		cycle()
	}
	// 3 chunk boundaries; growing the directory may allocate at each.
	allocs := testing.AllocsPerRun(3*chunkSize, cycle)
	if allocs > 0.01 {
		t.Fatalf("%.3f allocations per create/release cycle, want ~0 (a freed chunk is reused)", allocs)
	}
	if g.tab.chunks() != 0 || g.tab.spare == nil {
		t.Fatalf("%d chunks in use, spare %v", g.tab.chunks(), g.tab.spare != nil)
	}
	check(t, g)
}
