package graph

import (
	"github.com/weft-db/weft/internal/vclock"
)

// Orderer decides the order of two stamps whose vector clocks are concurrent:
// in Weft, Kronos (through the shard's cache of its answers).
type Orderer interface {
	// Before reports whether a happens before b. Called only for distinct
	// stamps whose clocks are concurrent; the answer is final (monotonic) and
	// consistent (no cycles, and it extends vector-clock order), and it must
	// agree with the order in which the partition applied its writes.
	Before(a, b vclock.Stamp) bool
}

// sid names an interned stamp. 0 is special: in a deleted field it means "not
// deleted"; in a created field it means "created at or before a collected
// watermark", which every read allowed after that collection is later than.
type sid uint32

// stampEntry is one interned stamp and the number of fields naming it.
type stampEntry struct {
	st   vclock.Stamp
	refs uint32
}

// stampTable interns the stamps of one partition: a write transaction's stamp
// is stored once, and elements hold a 4-byte sid. An entry is freed when its
// last reference goes (refs are exact; CheckInvariants recounts them).
type stampTable struct {
	ents   []stampEntry // ents[0] is the unused "none" entry
	free   []sid
	byHash map[uint64]sid // hash of the stamp → an entry with that stamp
	live   int
}

func newStampTable() stampTable {
	return stampTable{ents: make([]stampEntry, 1), byHash: map[uint64]sid{}}
}

// stampHash hashes a stamp exactly (counter width included: the store's
// encoding of a stamp includes it, and LastWrite must return it unchanged).
func stampHash(s vclock.Stamp) uint64 {
	h := uint64(14695981039346656037)
	mix := func(x uint64) {
		h ^= x
		h *= 1099511628211
		h ^= h >> 29
	}
	mix(s.Clock.Epoch)
	mix(uint64(s.Owner))
	mix(uint64(len(s.Clock.Counters)))
	for _, c := range s.Clock.Counters {
		mix(c)
	}
	return h
}

// sameStamp is exact equality: owner, epoch and counters (width included).
func sameStamp(a, b vclock.Stamp) bool {
	if a.Owner != b.Owner || a.Clock.Epoch != b.Clock.Epoch || len(a.Clock.Counters) != len(b.Clock.Counters) {
		return false
	}
	for i, c := range a.Clock.Counters {
		if b.Clock.Counters[i] != c {
			return false
		}
	}
	return true
}

// intern returns the sid of s, adding an entry (with no references) when s is
// new. Callers intern only after validating a write, and reference the sid at
// once, so no entry stays unreferenced.
func (t *stampTable) intern(s vclock.Stamp) sid {
	h := stampHash(s)
	if id, ok := t.byHash[h]; ok && sameStamp(t.ents[id].st, s) {
		return id
	}
	e := stampEntry{st: vclock.Stamp{Clock: s.Clock.Clone(), Owner: s.Owner}}
	var id sid
	if n := len(t.free); n > 0 {
		id = t.free[n-1]
		t.free = t.free[:n-1]
		t.ents[id] = e
	} else {
		assert(len(t.ents) < 1<<32-1, "stamp table full")
		id = sid(len(t.ents))
		t.ents = append(t.ents, e)
	}
	if _, taken := t.byHash[h]; !taken { // a collision keeps the older entry indexed
		t.byHash[h] = id
	}
	t.live++
	return id
}

func (t *stampTable) ref(id sid) {
	if id != 0 {
		if t.ents[id].refs == 1<<32-1 {
			assert(false, "stamp %d referenced 2^32 times", id)
		}
		t.ents[id].refs++
	}
}

// unref drops one reference, freeing the entry with its last.
func (t *stampTable) unref(id sid) {
	if id == 0 {
		return
	}
	e := &t.ents[id]
	if e.refs == 0 {
		assert(false, "unref of unreferenced stamp %d", id)
	}
	e.refs--
	if e.refs > 0 {
		return
	}
	if h := stampHash(e.st); t.byHash[h] == id {
		delete(t.byHash, h)
	}
	*e = stampEntry{}
	t.free = append(t.free, id)
	t.live--
}

func (t *stampTable) get(id sid) vclock.Stamp { return t.ents[id].st }

// checkWatermark panics on a read strictly before the last collected
// watermark (by clock): collection already changed what it would see. (The
// arguments are boxed only on failure, so reads stay allocation-free.)
func checkWatermark(r, low vclock.Stamp) {
	if !low.IsZero() && vclock.CompareStamps(r, low) == vclock.Before {
		assert(false, "read at %s, before the collected watermark %s", r, low)
	}
}

// sparse reports a table mostly made of free slots: after a burst of
// transactions is collected, the slice and the hash index (Go maps never
// shrink) would otherwise keep their peak size.
func (t *stampTable) sparse() bool { return len(t.ents) > 1024 && 4*t.live < len(t.ents) }

// compact renumbers the live entries densely; each must call its argument on
// every sid field of the owner (0 included), which it rewrites.
func (t *stampTable) compact(each func(func(*sid))) {
	remap := make([]sid, len(t.ents))
	ents := make([]stampEntry, 1, t.live+1)
	byHash := make(map[uint64]sid, t.live)
	for id := 1; id < len(t.ents); id++ {
		if t.ents[id].refs == 0 { // free
			continue
		}
		n := sid(len(ents))
		remap[id] = n
		ents = append(ents, t.ents[id])
		if h := stampHash(t.ents[id].st); byHash[h] == 0 {
			byHash[h] = n
		}
	}
	each(func(p *sid) { *p = remap[*p] })
	t.ents, t.free, t.byHash = ents, nil, byHash
}

// reader decides "stamp ≤ R" for one read: vector clocks first, the Orderer
// only for concurrent pairs.
type reader struct {
	t   *stampTable
	r   vclock.Stamp
	ord Orderer
}

// le reports whether stamp id is at or before the read stamp. id must not be 0.
func (rd *reader) le(id sid) bool {
	st := rd.t.ents[id].st
	switch vclock.CompareStamps(st, rd.r) {
	case vclock.Equal, vclock.Before:
		return true
	case vclock.After:
		return false
	}
	if rd.ord == nil {
		assert(false, "stamps %s and %s are concurrent and the read has no Orderer", st, rd.r)
	}
	return rd.ord.Before(st, rd.r)
}

// memo caches le answers for a handful of sids during one iteration: elements
// written by one transaction (a bulk load, most of all) share a sid, so most
// visibility checks cost a table probe instead of a clock comparison.
type memo struct {
	k [8]sid
	v [8]bool
}

func (m *memo) le(rd *reader, id sid) bool {
	i := id & 7
	if m.k[i] == id {
		return m.v[i]
	}
	b := rd.le(id)
	m.k[i], m.v[i] = id, b
	return b
}

// visible is the visibility rule: created ≤ R and not deleted ≤ R.
func (m *memo) visible(rd *reader, created, deleted sid) bool {
	return (created == 0 || m.le(rd, created)) && (deleted == 0 || !m.le(rd, deleted))
}

// gcMemo caches clock relations to a watermark during one collection.
type gcMemo struct {
	t *stampTable
	w vclock.Stamp
	k [8]sid
	v [8]vclock.Relation
}

func (m *gcMemo) rel(id sid) vclock.Relation {
	i := id & 7
	if m.k[i] == id {
		return m.v[i]
	}
	r := vclock.CompareStamps(m.t.ents[id].st, m.w)
	m.k[i], m.v[i] = id, r
	return r
}

// before: strictly before the watermark by vector clock (deletions collectable).
func (m *gcMemo) before(id sid) bool { return id != 0 && m.rel(id) == vclock.Before }

// atOrBefore: creation stamps that every read at or after the watermark sees.
func (m *gcMemo) atOrBefore(id sid) bool {
	if id == 0 {
		return false
	}
	r := m.rel(id)
	return r == vclock.Before || r == vclock.Equal
}
