package graph

import "hash/maphash"

// nameIndex finds an interned string's id: open addressing with linear
// probing over one []uint64, each word a 32-bit hash tag (high half) and an
// id (low half; 0 = empty slot). It replaces a map[string]uint32, which held
// a second string header per name (24-byte slots the collector scans) and
// needed a third cache miss per lookup to compare the key: here the words
// hold no pointers, and the string compared is the entry's own, read anyway
// by the caller. A slot's home is its tag's low bits, so growing never
// rehashes a string. Deletion shifts the following run back (no tombstones).
type nameIndex struct {
	seed  maphash.Seed
	slots []uint64
	n     int
}

const nameIndexMinSlots = 8

func newNameIndex() nameIndex { return nameIndex{seed: maphash.MakeSeed()} }

func (x *nameIndex) tag(s string) uint32 { return uint32(maphash.String(x.seed, s)) }

// get returns the id of s; ents resolves ids to their strings.
func (x *nameIndex) get(ents []nameEntry, s string) (uint32, bool) {
	if x.n == 0 {
		return 0, false
	}
	t := x.tag(s)
	mask := uint32(len(x.slots) - 1)
	for i := t & mask; ; i = (i + 1) & mask {
		w := x.slots[i]
		if w == 0 {
			return 0, false
		}
		if uint32(w>>32) == t {
			if id := uint32(w); ents[id].name == s {
				return id, true
			}
		}
	}
}

// put adds s (not present) with id ≠ 0.
func (x *nameIndex) put(s string, id uint32) {
	assert(id != 0, "name index: id 0")
	if (x.n+1)*4 > len(x.slots)*3 {
		x.grow()
	}
	x.insert(uint64(x.tag(s))<<32 | uint64(id))
	x.n++
}

func (x *nameIndex) insert(w uint64) {
	mask := uint32(len(x.slots) - 1)
	i := uint32(w>>32) & mask
	for x.slots[i] != 0 {
		i = (i + 1) & mask
	}
	x.slots[i] = w
}

func (x *nameIndex) grow() {
	old := x.slots
	x.slots = make([]uint64, max(nameIndexMinSlots, 2*len(old)))
	for _, w := range old {
		if w != 0 {
			x.insert(w)
		}
	}
}

// del removes s, which has id.
func (x *nameIndex) del(s string, id uint32) {
	mask := uint32(len(x.slots) - 1)
	w := uint64(x.tag(s))<<32 | uint64(id)
	i := uint32(w>>32) & mask
	for x.slots[i] != w {
		assert(x.slots[i] != 0, "name index: deleting an absent name")
		i = (i + 1) & mask
	}
	// Shift back every later word of the run whose home does not lie
	// cyclically in (i, j]: it was displaced past the hole.
	for j := (i + 1) & mask; x.slots[j] != 0; j = (j + 1) & mask {
		home := uint32(x.slots[j]>>32) & mask
		if (j-home)&mask >= (j-i)&mask {
			x.slots[i] = x.slots[j]
			i = j
		}
	}
	x.slots[i] = 0
	x.n--
}

// ids calls fn for every id held, in slot order.
func (x *nameIndex) ids(fn func(id uint32)) {
	for _, w := range x.slots {
		if w != 0 {
			fn(uint32(w))
		}
	}
}
