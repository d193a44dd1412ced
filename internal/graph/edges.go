package graph

// Out-edge lookup by handle. A vertex below Config.EdgeIndexMin edge versions
// scans its edges (newest first); at or above it, an open-addressing table of
// edge positions (linear probing, load ≤ 3/4, every version inserted) finds
// the versions of a handle without touching the others.

// hashName is FNV-1a: deterministic, so the index layout is too.
func hashName(s string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= 16777619
	}
	return h
}

// versionsOf calls fn with the position of every version of edge handle h,
// newest first when scanning (index order otherwise), until fn returns false.
func (v *vertex) versionsOf(h string, fn func(i int) bool) {
	if v.x != nil && v.x.index != nil {
		idx := v.x.index
		mask := uint32(len(idx) - 1)
		for p := hashName(h) & mask; idx[p] != 0; p = (p + 1) & mask {
			i := int(idx[p] - 1)
			if v.edgeName(&v.edges[i]) == h && !fn(i) {
				return
			}
		}
		return
	}
	for i := len(v.edges) - 1; i >= 0; i-- {
		if v.edgeName(&v.edges[i]) == h && !fn(i) {
			return
		}
	}
}

// liveEdge returns the position of the live (not deleted) version of h.
func (v *vertex) liveEdge(h string) (int, bool) {
	found := -1
	v.versionsOf(h, func(i int) bool {
		if v.edges[i].deleted == 0 {
			found = i
			return false
		}
		return true
	})
	return found, found >= 0
}

// indexAdded maintains the index after edge position pos was appended.
func (v *vertex) indexAdded(pos, min int) {
	if len(v.edges) < min {
		return
	}
	x := v.ext()
	if x.index == nil || 4*len(v.edges) > 3*len(x.index) {
		v.rebuildIndex(min)
		return
	}
	indexInsert(x.index, v.edgeName(&v.edges[pos]), pos)
}

func indexInsert(idx []uint32, name string, pos int) {
	mask := uint32(len(idx) - 1)
	p := hashName(name) & mask
	for idx[p] != 0 {
		p = (p + 1) & mask
	}
	idx[p] = uint32(pos + 1)
}

// rebuildIndex sizes the index for the current edges (or drops it below min).
func (v *vertex) rebuildIndex(min int) {
	if len(v.edges) < min {
		if v.x != nil {
			v.x.index = nil
		}
		return
	}
	v.ext().index = buildIndex(v, 6)
}

// buildIndex returns a power-of-two table for all edges with at least
// slotsPer3/3 slots per edge: 6/3 after growth (load 1/2, room to grow by
// half before the next rebuild), 4/3 for a bulk load (the maximum load).
func buildIndex(v *vertex, slotsPer3 int) []uint32 {
	n := len(v.edges)
	size := 4
	for 3*size < slotsPer3*n {
		size <<= 1
	}
	idx := make([]uint32, size)
	for i := 0; i < n; i++ {
		indexInsert(idx, v.edgeName(&v.edges[i]), i)
	}
	return idx
}
