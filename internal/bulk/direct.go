package bulk

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"sync"

	"github.com/cockroachdb/pebble/v2/objstorage/objstorageprovider"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/vclock"
)

// Direct writes: a loader that builds the store's records itself (the
// Dgraph face's direct load, dgraph.LoadRDFDirect) instead of running
// transactions writes them into Tables. A Table sorts what it holds and
// writes it as an SSTable when full; Finish ingests every Table's SSTables
// after the in-memory store's last one, so a direct record replaces a
// transactional record of the same key. Records of different Tables must
// not share keys (which one wins would be undefined); within a Table a
// key written twice fails the Table.

// DirectStamp returns a fresh commit stamp for records written directly:
// a direct load is one transaction, every record it writes carries this
// stamp.
func (db *DB) DirectStamp() (vclock.Stamp, error) {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.done {
		return vclock.Stamp{}, ErrDone
	}
	db.st.Commits++
	return db.stamp(), nil
}

// ShardOf is the shard a commit would place handle (or alias) on.
func (db *DB) ShardOf(name string) uint32 { return db.x.Dir.ShardOf(name) }

// TempDir (db.go) is the direct load's scratch directory too.

// Base is the placement base: the shard count units are counted by
// (txn.UnitOf).
func (db *DB) Base() uint32 { return db.x.Dir.Base() }

// Counted adds to the vertex and edge counts a direct load wrote.
func (db *DB) Counted(vertices, edges int64) {
	db.mu.Lock()
	db.st.Vertices += vertices
	db.st.Edges += edges
	db.mu.Unlock()
}

// NewTables returns n empty writers (one per goroutine) holding at most
// memMax bytes of records together before they write them out, each with
// room for recsHint records (bounded by memMax) to start with.
func (db *DB) NewTables(n, memMax, recsHint int) txn.KeyTables {
	ts := &Tables{db: db, ws: make([]*Table, n)}
	for i := range ts.ws {
		m := max(memMax/max(n, 1), 64<<10)
		ts.ws[i] = &Table{db: db, memMax: m, recs: make([]tableRec, 0, min(max(recsHint, 0), m/(4*tableRecBytes)))}
	}
	return ts
}

// Tables is a set of Tables whose Close sorts them in parallel and merges
// them into SSTables over disjoint key ranges, so that Pebble ingests them
// side by side with no compaction to do. A Table that fills up before
// Close writes what it holds as an SSTable of its own (overlapping the
// others': Pebble compacts those).
type Tables struct {
	db     *DB
	ws     []*Table
	closed bool
}

// Writer returns writer i (not safe for concurrent use; each goroutine
// its own).
func (ts *Tables) Writer(i int) txn.KeyWriter { return ts.ws[i] }

// Table collects records in memory (arena chunks and offsets: no Go
// pointer per record).
type Table struct {
	db     *DB
	memMax int
	arena  [][]byte
	recs   []tableRec
	bytes  int
	err    error
}

type tableRec struct {
	// win holds 8 bytes of the key from byte base on (big-endian, zeros
	// past its end): the sort reads the bytes it partitions on from here,
	// going to the arena once per 8 levels instead of at every one.
	win  uint64
	loc  uint64 // arena chunk << 32 | offset
	klen uint16
	base uint16
	vlen uint32
}

// tableKeyMax bounds a key's length (the store's are at most a few KiB).
const tableKeyMax = 1<<16 - 1

const (
	tableRecBytes = 24
	tableChunk    = 4 << 20
)

// Set adds one record (key and value are copied).
func (t *Table) Set(key, val []byte) error {
	if t.err != nil {
		return t.err
	}
	if t.bytes >= t.memMax {
		if t.err = t.spill(); t.err != nil {
			return t.err
		}
	}
	if len(key) > tableKeyMax || len(val) > 1<<31 {
		t.err = fmt.Errorf("bulk: a key of %d bytes or a value of %d for a direct table", len(key), len(val))
		return t.err
	}
	n := len(key) + len(val)
	c := len(t.arena) - 1
	if c < 0 || len(t.arena[c])+n > cap(t.arena[c]) {
		t.arena = append(t.arena, make([]byte, 0, max(tableChunk, n)))
		c++
	}
	var p [8]byte
	copy(p[:], key)
	t.recs = append(t.recs, tableRec{win: binary.BigEndian.Uint64(p[:]), loc: uint64(c)<<32 | uint64(len(t.arena[c])),
		klen: uint16(len(key)), vlen: uint32(len(val))})
	t.arena[c] = append(append(t.arena[c], key...), val...)
	t.bytes += n + tableRecBytes
	return nil
}

func (t *Table) key(r *tableRec) []byte {
	o := r.loc & (1<<32 - 1)
	return t.arena[r.loc>>32][o : o+uint64(r.klen)]
}

func (t *Table) val(r *tableRec) []byte {
	o := r.loc&(1<<32-1) + uint64(r.klen)
	return t.arena[r.loc>>32][o : o+uint64(r.vlen)]
}

func (t *Table) sort() { t.radixSort(t.recs, 0) }

// byteAt is byte d of r's key, -1 past its end (keys hold NUL bytes).
func (t *Table) byteAt(r *tableRec, d int) int {
	if d >= int(r.klen) {
		return -1
	}
	if off := d - int(r.base); off >= 0 && off < 8 {
		return int(r.win >> (56 - 8*off) & 0xff)
	}
	var p [8]byte
	copy(p[:], t.key(r)[d:])
	r.win, r.base = binary.BigEndian.Uint64(p[:]), uint16(d)
	return int(p[0])
}

// radixSort sorts recs, whose keys share their first d bytes, by key:
// multikey quicksort (Bentley and Sedgewick), which partitions on one byte
// at a time and so never compares the long prefixes the store's keys share
// ("E_dg|i|3|term|name@en|0|...") twice, as a comparison sort does.
func (t *Table) radixSort(recs []tableRec, d int) {
	for len(recs) > 12 {
		a, b, c := t.byteAt(&recs[0], d), t.byteAt(&recs[len(recs)/2], d), t.byteAt(&recs[len(recs)-1], d)
		p := max(min(a, b), min(max(a, b), c)) // median of three
		lt, i, gt := 0, 0, len(recs)
		for i < gt {
			switch x := t.byteAt(&recs[i], d); {
			case x < p:
				recs[lt], recs[i] = recs[i], recs[lt]
				lt++
				i++
			case x > p:
				gt--
				recs[i], recs[gt] = recs[gt], recs[i]
			default:
				i++
			}
		}
		t.radixSort(recs[:lt], d)
		t.radixSort(recs[gt:], d)
		if p < 0 {
			return // equal keys
		}
		recs, d = recs[lt:gt], d+1
	}
	for i := 1; i < len(recs); i++ {
		for j := i; j > 0 && bytes.Compare(t.key(&recs[j])[d:], t.key(&recs[j-1])[d:]) < 0; j-- {
			recs[j], recs[j-1] = recs[j-1], recs[j]
		}
	}
}

func (t *Table) reset() { t.arena, t.recs, t.bytes = nil, nil, 0 }

// spill writes the Table's records, sorted, as an SSTable of its own.
func (t *Table) spill() error {
	t.sort()
	i := 0
	err := t.db.writeDirect(func(w *sstable.Writer) error {
		return setSorted(w, func() (k, v []byte, ok bool) {
			if i == len(t.recs) {
				return nil, nil, false
			}
			r := &t.recs[i]
			i++
			return t.key(r), t.val(r), true
		})
	}, len(t.recs), true)
	t.reset()
	return err
}

// writeDirect writes one SSTable with fill and registers it for Finish
// (overlapping: ingested on its own).
func (db *DB) writeDirect(fill func(*sstable.Writer) error, n int, overlapping bool) error {
	db.mu.Lock()
	if db.done {
		db.mu.Unlock()
		return ErrDone
	}
	db.directN++
	path := filepath.Join(db.tmp, fmt.Sprintf("bulk-direct-%d.sst", db.directN))
	db.mu.Unlock()
	opts := db.kv.opts
	f, err := opts.FS.Create(path, vfs.WriteCategoryUnspecified)
	if err != nil {
		return err
	}
	w := sstable.NewWriter(objstorageprovider.NewFileWritable(f),
		opts.MakeWriterOptions(0, db.pdb.FormatMajorVersion().MaxTableFormat()))
	if err := fill(w); err != nil {
		_ = w.Close()
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	if overlapping {
		db.directOver = append(db.directOver, path)
		db.st.Overlapping++
	} else {
		db.direct = append(db.direct, path)
	}
	db.st.Entries += int64(n)
	db.st.Spills++
	return nil
}

// Close sorts the Tables (in parallel), picks len(ws) key ranges from the
// largest one's quantiles and merges each range of all Tables into an
// SSTable (in parallel). A key in two Tables fails the load.
func (ts *Tables) Close() error {
	if ts.closed {
		return ErrDone
	}
	ts.closed = true
	for _, t := range ts.ws {
		if t.err != nil {
			return t.err
		}
	}
	parallel(len(ts.ws), func(i int) error { ts.ws[i].sort(); return nil })
	big := ts.ws[0]
	for _, t := range ts.ws {
		if len(t.recs) > len(big.recs) {
			big = t
		}
	}
	// Range r is [bounds[r], bounds[r+1]); nil ends are open.
	bounds := [][]byte{nil}
	for r := 1; r < len(ts.ws); r++ {
		k := big.key(&big.recs[r*len(big.recs)/len(ts.ws)])
		if len(big.recs) > 0 && (bounds[len(bounds)-1] == nil || bytes.Compare(k, bounds[len(bounds)-1]) > 0) {
			bounds = append(bounds, k)
		}
	}
	bounds = append(bounds, nil)
	err := parallel(len(bounds)-1, func(r int) error { return ts.merge(bounds[r], bounds[r+1]) })
	for _, t := range ts.ws {
		t.reset()
	}
	return err
}

// merge writes the records of [lo, hi) of every Table as one SSTable.
func (ts *Tables) merge(lo, hi []byte) error {
	type run struct {
		t    *Table
		i, j int
	}
	var runs []run
	n := 0
	for _, t := range ts.ws {
		find := func(b []byte) int {
			if b == nil {
				return len(t.recs)
			}
			return sort.Search(len(t.recs), func(i int) bool { return bytes.Compare(t.key(&t.recs[i]), b) >= 0 })
		}
		i := 0
		if lo != nil {
			i = find(lo)
		}
		if j := find(hi); i < j {
			runs = append(runs, run{t, i, j})
			n += j - i
		}
	}
	if n == 0 {
		return nil
	}
	return ts.db.writeDirect(func(w *sstable.Writer) error {
		return setSorted(w, func() (k, v []byte, ok bool) {
			m := -1
			for x := range runs {
				if runs[x].i < runs[x].j && (m < 0 || bytes.Compare(runs[x].t.key(&runs[x].t.recs[runs[x].i]), k) < 0) {
					m, k = x, runs[x].t.key(&runs[x].t.recs[runs[x].i])
				}
			}
			if m < 0 {
				return nil, nil, false
			}
			r := &runs[m]
			rec := &r.t.recs[r.i]
			r.i++
			return k, r.t.val(rec), true
		})
	}, n, false)
}

// setSorted writes the records next yields, in key order, to w; a key
// yielded twice fails.
func setSorted(w *sstable.Writer, next func() (k, v []byte, ok bool)) error {
	var last []byte
	for {
		k, v, ok := next()
		if !ok {
			return nil
		}
		if last != nil && bytes.Equal(k, last) {
			return fmt.Errorf("bulk: the direct tables hold key %q twice", k)
		}
		last = k
		if err := w.Set(k, v); err != nil {
			return err
		}
	}
}

// parallel runs fn(0..n-1) in parallel and returns the errors joined.
func parallel(n int, fn func(i int) error) error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = fn(i)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// ingestDirect ingests the direct SSTables: those a full Table wrote one
// at a time (they may overlap each other's key ranges), then the merged
// ones, disjoint, together.
func (db *DB) ingestDirect() error {
	for _, path := range db.directOver {
		if err := db.pdb.Ingest(context.Background(), []string{path}); err != nil {
			return err
		}
	}
	if len(db.direct) > 0 {
		if err := db.pdb.Ingest(context.Background(), db.direct); err != nil {
			return err
		}
	}
	for _, path := range append(db.directOver, db.direct...) {
		_ = db.kv.opts.FS.Remove(path)
	}
	db.direct, db.directOver = nil, nil
	return nil
}
