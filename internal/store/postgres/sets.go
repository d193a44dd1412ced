package postgres

import (
	"bytes"
	"slices"
	"sort"
	"unsafe"

	"github.com/weft-db/weft/internal/store"
)

// write is one buffered write: a value, or a deletion.
type write struct {
	val []byte
	del bool
}

// writeSet buffers writes, the last one per key winning, and hands them out
// in key order. Not safe for concurrent use.
type writeSet struct {
	m      map[string]write
	sorted []string // keys of m in order; rebuilt when dirty
	dirty  bool
	bytes  int // keys + values
}

// put records a write, copying val, and returns the growth in bytes.
func (w *writeSet) put(key, val []byte, del bool) int {
	if w.m == nil {
		w.m = make(map[string]write)
	}
	var v []byte
	if !del {
		// Never nil: nil is how a deletion travels to the server (NULL).
		v = append(make([]byte, 0, len(val)), val...)
	}
	old, ok := w.m[string(key)]
	grow := len(v) - len(old.val)
	if !ok {
		grow += len(key)
		w.dirty = true
	}
	w.m[string(key)] = write{val: v, del: del}
	w.bytes += grow
	return grow
}

// adopt records x for key without copying (x belongs to a Txn that no longer
// changes it).
func (w *writeSet) adopt(key string, x write) {
	if w.m == nil {
		w.m = make(map[string]write)
	}
	if _, ok := w.m[key]; !ok {
		w.dirty = true
	}
	w.m[key] = x
}

// clone returns a copy sharing the values (never modified in place).
func (w *writeSet) clone() writeSet {
	c := writeSet{m: make(map[string]write, len(w.m)), sorted: w.sorted, dirty: w.dirty, bytes: w.bytes}
	for k, x := range w.m {
		c.m[k] = x
	}
	return c
}

func (w *writeSet) get(key []byte) (write, bool) {
	x, ok := w.m[string(key)]
	return x, ok
}

func (w *writeSet) len() int { return len(w.m) }

// keys returns the written keys in order. The slice is never modified: a
// put of a new key makes the next call build a fresh one, so a Scan can go
// on walking its slice while its callback writes to the Txn.
func (w *writeSet) keys() []string {
	if w.dirty {
		w.sorted = make([]string, 0, len(w.m))
		for k := range w.m {
			w.sorted = append(w.sorted, k)
		}
		slices.Sort(w.sorted)
		w.dirty = false
	}
	return w.sorted
}

// between returns the written keys in [start, end) (inf: no end), in order.
func (w *writeSet) between(start, end string, inf bool) []string {
	ks := w.keys()
	i := sort.SearchStrings(ks, start)
	j := len(ks)
	if !inf {
		j = i + sort.SearchStrings(ks[i:], end)
	}
	return ks[i:j]
}

// arrays returns the writes as parallel arrays for one statement, in key
// order; a deletion's value is nil (a NULL: a tombstone).
func (w *writeSet) arrays() (keys, vals [][]byte) {
	ks := w.keys()
	keys, vals = make([][]byte, len(ks)), make([][]byte, len(ks))
	for i, k := range ks {
		x := w.m[k]
		keys[i] = bytesOf(k)
		if !x.del {
			vals[i] = x.val
		}
	}
	return keys, vals
}

// span is a scanned key range [start, end), or [start, ∞) when inf.
type span struct {
	start, end string
	inf        bool
}

func (s span) has(key string) bool { return key >= s.start && (s.inf || key < s.end) }

// readSet records what a Txn read: point keys (found or not) and scanned
// spans. Not safe for concurrent use.
type readSet struct {
	points map[string]struct{}
	spans  []span
	bytes  int
}

// addPoint records key and returns the growth in bytes.
func (r *readSet) addPoint(key []byte) int {
	if _, ok := r.points[string(key)]; ok {
		return 0
	}
	if r.points == nil {
		r.points = make(map[string]struct{})
	}
	r.points[string(key)] = struct{}{}
	r.bytes += len(key)
	return len(key)
}

// addSpan records sp and returns the growth in bytes.
func (r *readSet) addSpan(sp span) int {
	r.spans = append(r.spans, sp)
	n := len(sp.start) + len(sp.end)
	r.bytes += n
	return n
}

func (r *readSet) empty() bool { return len(r.points) == 0 && len(r.spans) == 0 }

// hit returns a key of written (sorted) that r read, if any: how a Txn is
// validated against the earlier members of its commit group.
func (r *readSet) hit(written []string) (string, bool) {
	for _, k := range written {
		if _, ok := r.points[k]; ok {
			return k, true
		}
	}
	for _, sp := range r.spans {
		if i := sort.SearchStrings(written, sp.start); i < len(written) && sp.has(written[i]) {
			return written[i], true
		}
	}
	return "", false
}

// infinity is above every valid key: KeyLenMax+1 bytes of 0xff. An
// unbounded span travels to the server with it as its end, so one indexed
// range condition serves every span.
var infinity = bytes.Repeat([]byte{0xff}, store.KeyLenMax+1)

// arrays returns the read set as statement parameters: the point keys, and
// the spans' starts and ends.
func (r *readSet) arrays() (points, los, his [][]byte) {
	points = make([][]byte, 0, len(r.points))
	for k := range r.points {
		points = append(points, bytesOf(k))
	}
	// Sorted, so the conflicting key an error names does not depend on map
	// order.
	slices.SortFunc(points, bytes.Compare)
	los, his = make([][]byte, len(r.spans)), make([][]byte, len(r.spans))
	for i, sp := range r.spans {
		los[i] = bytesOf(sp.start)
		if sp.inf {
			his[i] = infinity
		} else {
			his[i] = bytesOf(sp.end)
		}
	}
	return points, los, his
}

// bytesOf views s as bytes without copying; the result must not be modified.
func bytesOf(s string) []byte {
	if s == "" {
		return []byte{} // not nil: nil would travel as NULL
	}
	return unsafe.Slice(unsafe.StringData(s), len(s))
}
