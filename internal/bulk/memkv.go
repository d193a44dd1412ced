package bulk

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"path/filepath"
	"slices"

	"github.com/cockroachdb/pebble/v2/objstorage/objstorageprovider"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/cockroachdb/pebble/v2"

	"github.com/weft-db/weft/internal/txn"
)

// memKV is the store under construction (txn.KV): the newest writes in
// memory, older ones spilled to Pebble (under) in key order. Point reads
// look in memory, then in Pebble; scans — always one vertex's entries of
// one table, "tag handle NUL" — merge the vertex's keys in memory with
// Pebble's.
//
// Memory holds no Go pointers per entry, so the garbage collector does not
// walk it: keys and values live in arena chunks, entries in one slice, and
// the index from a key's hash to its entries (a chain per hash) and from a
// scan prefix's hash to its keys (a chain per prefix) are maps of integers.
// (Go maps with a string per entry made the collector's scans of millions
// of keys the load's main cost.)
//
// A transaction's writes are undone from a log when Exec refuses it (begin,
// rollback), so a refused transaction leaves nothing behind.
type memKV struct {
	under   *pebble.DB
	opts    *pebble.Options // under's (FS and writer options for spilled tables)
	dir     string          // under's directory, where spilled tables are written
	spills  int
	spilled bool // under holds data: misses must look there
	seed    maphash.Seed
	arena   [][]byte // chunks (put)
	entries []entry  // entry i+1 is entries[i]; 0 ends chains
	// slots is an open-addressing table (linear probing, at most half
	// full) of the entries by key hash: 0 is empty.
	slots   []int32
	byGroup map[uint64]int32 // scan prefix hash → first entry of its chain
	bytes   int              // memory used: arena, entries, index slots
	undo    []undoRec
	logged  bool // inside a transaction: log undo records
}

// Entry states.
const (
	absent  = iota // undone: as if never written here
	present        // val holds the value
	deleted        // a tombstone over under's value
)

type entry struct {
	hash       uint64
	koff, voff uint64
	klen, vlen uint32
	gnext      int32 // next entry under the same scan prefix
	glen       uint16
	state      uint8
}

type undoRec struct {
	idx        int32
	voff       uint64
	vlen       uint32
	state      uint8
	wasCreated bool
}

const (
	arenaChunk = 64 << 20
	// slotBytes approximates one entry's memory beyond its key and value:
	// the entry, its slots and its share of the prefix map.
	slotBytes = 72
)

func newMemKV(under *pebble.DB, opts *pebble.Options, dir string) *memKV {
	opts.EnsureDefaults() // MakeWriterOptions reads the defaults
	m := &memKV{under: under, opts: opts, dir: dir, seed: maphash.MakeSeed()}
	m.reset()
	return m
}

func (m *memKV) reset() {
	m.arena, m.entries, m.bytes = nil, m.entries[:0], 0
	m.slots, m.byGroup = make([]int32, 1<<10), map[uint64]int32{}
}

// grow doubles the slot table.
func (m *memKV) grow() {
	m.bytes += 4 * len(m.slots)
	m.slots = make([]int32, 2*len(m.slots))
	mask := uint64(len(m.slots) - 1)
	for i := range m.entries {
		p := m.entries[i].hash & mask
		for m.slots[p] != 0 {
			p = (p + 1) & mask
		}
		m.slots[p] = int32(i + 1)
	}
}

// put copies b into the arena and returns its offset: chunk index in the
// high 32 bits, offset in the chunk in the low ones. Chunks start small
// (a store that spills often or holds little does not pay for a large
// one) and double up to arenaChunk; a value larger than that gets a chunk
// of its own.
func (m *memKV) put(b []byte) uint64 {
	m.bytes += len(b)
	n := len(m.arena)
	if n == 0 || len(m.arena[n-1])+len(b) > cap(m.arena[n-1]) {
		size := 64 << 10
		if n > 0 {
			size = min(2*cap(m.arena[n-1]), arenaChunk)
		}
		m.arena = append(m.arena, make([]byte, 0, max(size, len(b))))
		n++
	}
	c := m.arena[n-1]
	off := uint64(n-1)<<32 | uint64(len(c))
	m.arena[n-1] = append(c, b...)
	return off
}

func (m *memKV) at(off uint64, n uint32) []byte {
	c := m.arena[off>>32]
	o := off & (1<<32 - 1)
	return c[o : o+uint64(n) : o+uint64(n)]
}

func (m *memKV) key(e *entry) []byte { return m.at(e.koff, e.klen) }

// find returns the entry of key (1-based, 0: none), the key's hash and the
// slot where it is or would go.
func (m *memKV) find(key []byte) (int32, uint64, uint64) {
	h := maphash.Bytes(m.seed, key)
	mask := uint64(len(m.slots) - 1)
	for p := h & mask; ; p = (p + 1) & mask {
		i := m.slots[p]
		if i == 0 {
			return 0, h, p
		}
		if e := &m.entries[i-1]; e.hash == h && bytes.Equal(m.key(e), key) {
			return i, h, p
		}
	}
}

func (m *memKV) begin() { m.undo, m.logged = m.undo[:0], true }

func (m *memKV) commit() { m.logged = false }

// rollback undoes the transaction's writes, newest first. An entry the
// transaction created stays in its chains, absent.
func (m *memKV) rollback() {
	for i := len(m.undo) - 1; i >= 0; i-- {
		u := m.undo[i]
		e := &m.entries[u.idx-1]
		e.voff, e.vlen, e.state = u.voff, u.vlen, u.state
		if u.wasCreated {
			e.state = absent
		}
	}
	m.undo, m.logged = m.undo[:0], false
}

// groupOf returns the length of key's scan prefix ("tag handle NUL" of the
// P, E, I and W tables), false for a point table.
func groupOf(key []byte) (int, bool) {
	if len(key) == 0 {
		return 0, false
	}
	switch key[0] {
	case 'P', 'E', 'I', 'W':
		if i := bytes.IndexByte(key, 0); i > 0 && i+1 < 1<<16 {
			return i + 1, true
		}
	}
	return 0, false
}

// write sets key's entry to (val, state), creating it when missing.
func (m *memKV) write(key, val []byte, state uint8) {
	i, h, p := m.find(key)
	created := i == 0
	if created {
		m.entries = append(m.entries, entry{hash: h, koff: m.put(key), klen: uint32(len(key))})
		i = int32(len(m.entries))
		m.slots[p] = i
		m.bytes += slotBytes
		if 2*len(m.entries) > len(m.slots) {
			m.grow()
		}
		if n, ok := groupOf(key); ok {
			g := maphash.Bytes(m.seed, key[:n])
			e := &m.entries[i-1]
			e.gnext, e.glen = m.byGroup[g], uint16(n)
			m.byGroup[g] = i
		}
	}
	e := &m.entries[i-1]
	if m.logged {
		m.undo = append(m.undo, undoRec{idx: i, voff: e.voff, vlen: e.vlen, state: e.state, wasCreated: created})
	}
	e.state = state
	e.vlen = uint32(len(val))
	if len(val) > 0 {
		e.voff = m.put(val)
	}
}

func (m *memKV) Get(key []byte) ([]byte, bool, error) {
	if i, _, _ := m.find(key); i != 0 {
		e := &m.entries[i-1]
		switch e.state {
		case present:
			if e.vlen == 0 {
				return []byte{}, true, nil
			}
			return m.at(e.voff, e.vlen), true, nil
		case deleted:
			return nil, false, nil
		}
	}
	if !m.spilled {
		return nil, false, nil
	}
	v, c, err := m.under.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	out := bytes.Clone(v)
	if out == nil {
		out = []byte{}
	}
	return out, true, c.Close()
}

func (m *memKV) Set(key, val []byte) error {
	m.write(key, val, present)
	return nil
}

func (m *memKV) Delete(key []byte) error {
	m.write(key, nil, deleted)
	return nil
}

var errScanRange = errors.New("bulk: only one vertex's entries of one table can be scanned")

// Scan calls fn for the keys of [start, end), which must be one prefix
// "tag handle NUL" (txn's *Prefix functions), in order.
func (m *memKV) Scan(start, end []byte, limit int, fn func(key, val []byte) error) error {
	n, ok := groupOf(start)
	if !ok || n != len(start) || len(end) != len(start) || !bytes.Equal(start[:n-1], end[:n-1]) || end[n-1] != 1 {
		return errScanRange
	}
	var mem []int32 // entries under the prefix, any state
	for i := m.byGroup[maphash.Bytes(m.seed, start)]; i != 0; i = m.entries[i-1].gnext {
		e := &m.entries[i-1]
		if int(e.glen) == n && bytes.HasPrefix(m.key(e), start) {
			mem = append(mem, i)
		}
	}
	slices.SortFunc(mem, func(a, b int32) int { return bytes.Compare(m.key(&m.entries[a-1]), m.key(&m.entries[b-1])) })
	type kv struct{ k, v []byte }
	var items []kv
	for _, i := range mem {
		if e := &m.entries[i-1]; e.state == present {
			items = append(items, kv{m.key(e), m.at(e.voff, e.vlen)})
		}
	}
	if m.spilled {
		it, err := m.under.NewIter(&pebble.IterOptions{LowerBound: start, UpperBound: end})
		if err != nil {
			return err
		}
		for ok := it.First(); ok; ok = it.Next() {
			if i, _, _ := m.find(it.Key()); i != 0 && m.entries[i-1].state != absent {
				continue // newer in memory (or deleted there)
			}
			v, err := it.ValueAndErr()
			if err != nil {
				it.Close()
				return err
			}
			items = append(items, kv{bytes.Clone(it.Key()), bytes.Clone(v)})
		}
		if err := errors.Join(it.Error(), it.Close()); err != nil {
			return err
		}
		slices.SortFunc(items, func(a, b kv) int { return bytes.Compare(a.k, b.k) })
	}
	for i, it := range items {
		if limit > 0 && i >= limit {
			break
		}
		if err := fn(it.k, it.v); err != nil {
			return err
		}
	}
	return nil
}

// spill writes everything in memory to under, in key order, and empties
// memory. Outside transactions only.
func (m *memKV) spill() error {
	// Sorted by the keys' first 8 bytes, then by whole keys on ties: most
	// comparisons never leave the slice.
	type sortKey struct {
		prefix uint64
		idx    int32
	}
	idx := make([]sortKey, 0, len(m.entries))
	for i := range m.entries {
		if e := &m.entries[i]; e.state != absent {
			var p [8]byte
			copy(p[:], m.key(e))
			idx = append(idx, sortKey{binary.BigEndian.Uint64(p[:]), int32(i)})
		}
	}
	slices.SortFunc(idx, func(a, b sortKey) int {
		if c := cmp.Compare(a.prefix, b.prefix); c != 0 {
			return c
		}
		return bytes.Compare(m.key(&m.entries[a.idx]), m.key(&m.entries[b.idx]))
	})
	if len(idx) == 0 {
		m.reset()
		return nil
	}
	// One sorted table, ingested: no memtable, no second sort.
	m.spills++
	path := filepath.Join(m.dir, fmt.Sprintf("bulk-spill-%d.sst", m.spills))
	f, err := m.opts.FS.Create(path, vfs.WriteCategoryUnspecified)
	if err != nil {
		return err
	}
	w := sstable.NewWriter(objstorageprovider.NewFileWritable(f),
		m.opts.MakeWriterOptions(0, m.under.FormatMajorVersion().MaxTableFormat()))
	for _, k := range idx {
		e := &m.entries[k.idx]
		var err error
		if e.state == deleted {
			err = w.Delete(m.key(e))
		} else {
			err = w.Set(m.key(e), m.at(e.voff, e.vlen))
		}
		if err != nil {
			_ = w.Close()
			return err
		}
	}
	if err := w.Close(); err != nil {
		return err
	}
	if err := m.under.Ingest(context.Background(), []string{path}); err != nil {
		return err
	}
	_ = m.opts.FS.Remove(path) // Ingest linked (or moved) it into the store
	m.spilled = m.spilled || len(idx) > 0
	m.reset()
	return nil
}

var _ txn.KV = (*memKV)(nil)

// live counts the entries a spill writes (values and tombstones).
func (m *memKV) live() int {
	n := 0
	for i := range m.entries {
		if m.entries[i].state != absent {
			n++
		}
	}
	return n
}
