package kronos

import (
	"math/bits"

	"github.com/weft-db/weft/internal/invariants"
)

// The event table: per-event fields in chunked parallel arrays indexed by id.
// Ids are dense and increasing, so no hash map is needed to find an event; a
// chunk is freed when its last event is collected. One freed chunk is kept in
// reserve for the next chunk needed: otherwise a client that creates and
// releases events one at a time would allocate (and the Go GC reclaim) an
// 80 KB chunk per event whenever the event is alone in its chunk, as at a
// chunk boundary.

const (
	chunkBits = 12
	chunkSize = 1 << chunkBits
	chunkMask = chunkSize - 1

	// clockFlag marks events named by a vector clock in the refs word.
	clockFlag = uint32(1) << 31
	// refsMax is the largest client reference count.
	refsMax = clockFlag - 1
)

type chunk struct {
	refs    [chunkSize]uint32 // client references; clockFlag for clock events
	indeg   [chunkSize]uint32 // edges from live events
	edgeOff [chunkSize]uint32 // arena offset of the out-edge block
	edgeLen [chunkSize]uint32 // out-edges in use
	sparse  [chunkSize]uint32 // sparse half of the traversal's visited set
	live    int
}

type table struct {
	dir   []*chunk // dir[i] holds ids [(base+i)<<chunkBits, ...)
	base  uint64   // chunk number of dir[0]
	spare *chunk   // a freed chunk, all zero, reused by add
}

// slot returns the chunk and index of id, or nil if its chunk is gone.
func (t *table) slot(id EventID) (*chunk, int) {
	c := id >> chunkBits
	if c < t.base || c-t.base >= uint64(len(t.dir)) {
		return nil, 0
	}
	return t.dir[c-t.base], int(id & chunkMask)
}

// alive reports whether id names a live event.
func (t *table) alive(id EventID) bool {
	ch, i := t.slot(id)
	return ch != nil && (ch.refs[i] != 0 || ch.indeg[i] != 0)
}

// add makes room for id (the next id) and returns its slot.
func (t *table) add(id EventID) (*chunk, int) {
	c := id >> chunkBits
	if len(t.dir) == 0 {
		t.base = c
	}
	for c-t.base >= uint64(len(t.dir)) {
		t.dir = append(t.dir, nil)
	}
	ch := t.dir[c-t.base]
	if ch == nil {
		ch, t.spare = t.spare, nil
		if ch == nil {
			ch = new(chunk)
		} else if invariants.On {
			assert(*ch == chunk{}, "add: spare chunk is not zero")
		}
		t.dir[c-t.base] = ch
	}
	ch.live++
	return ch, int(id & chunkMask)
}

// remove frees id's slot; its fields must already be zero (so a freed chunk
// is all zero and can be kept as the spare without clearing it).
func (t *table) remove(id EventID) {
	c := id >> chunkBits
	ch := t.dir[c-t.base]
	ch.live--
	if ch.live > 0 {
		return
	}
	if t.spare == nil {
		t.spare = ch
	}
	t.dir[c-t.base] = nil
	// Trim freed chunks from the front so the directory tracks live ids.
	n := 0
	for n < len(t.dir)-1 && t.dir[n] == nil {
		n++
	}
	if n > 0 {
		t.dir = t.dir[n:]
		t.base += uint64(n)
	}
}

// chunks returns the number of chunks in use (the spare is not).
func (t *table) chunks() int {
	n := 0
	for _, ch := range t.dir {
		if ch != nil {
			n++
		}
	}
	return n
}

// The edge arena: out-edge lists live in blocks of power-of-two capacity
// carved from one slice, with a free list per size class, so adjacency costs
// 8 bytes an edge and no per-event slice headers.
type arena struct {
	mem  []uint64
	free [33][]uint32 // free block offsets by class (capacity 1<<class)
}

func class(n uint32) int {
	if n <= 1 {
		return 0
	}
	return bits.Len32(n - 1)
}

func (a *arena) alloc(cls int) uint32 {
	if f := a.free[cls]; len(f) > 0 {
		off := f[len(f)-1]
		a.free[cls] = f[:len(f)-1]
		return off
	}
	off := len(a.mem)
	if uint64(off)+uint64(1)<<cls > 1<<32 {
		panic("kronos: edge arena exceeds 2^32 edges")
	}
	a.mem = append(a.mem, make([]uint64, 1<<cls)...)
	return uint32(off)
}

func (a *arena) release(off uint32, n uint32) {
	if n == 0 {
		return
	}
	cls := class(n)
	clear(a.mem[off : off+1<<cls])
	a.free[cls] = append(a.free[cls], off)
}

// push appends dst to the block (off, n), growing it when full; it returns
// the block's new offset.
func (a *arena) push(off, n uint32, dst uint64) uint32 {
	if n == 0 {
		off = a.alloc(0)
	} else if n&(n-1) == 0 { // full: capacity is the next power of two ≥ n
		grown := a.alloc(class(n) + 1)
		copy(a.mem[grown:grown+n], a.mem[off:off+n])
		a.release(off, n)
		off = grown
	}
	a.mem[off+n] = dst
	return off
}

// pop removes the last edge of block (off, n), shrinking it to the smaller
// class when it becomes a power of two; it returns the new offset.
func (a *arena) pop(off, n uint32) uint32 {
	a.mem[off+n-1] = 0
	m := n - 1
	if m == 0 {
		a.free[0] = append(a.free[0], off)
		return 0
	}
	if class(m) == class(n) {
		return off
	}
	shrunk := a.alloc(class(m))
	copy(a.mem[shrunk:shrunk+m], a.mem[off:off+m])
	a.release(off, n)
	return shrunk
}
