package pebble

import (
	"slices"
	"sort"
	"unsafe"
)

// write is one buffered write: a value, or a deletion.
type write struct {
	val []byte
	del bool
}

// writeSet buffers a transaction's writes, last one per key winning, and
// hands them out in key order. Not safe for concurrent use.
type writeSet struct {
	m      map[string]write
	sorted []string // keys of m in order; rebuilt when dirty
	dirty  bool
	bytes  int // keys + values
}

// put records a write, copying val, and returns the growth in bytes.
func (w *writeSet) put(key []byte, val []byte, del bool) int {
	if w.m == nil {
		w.m = make(map[string]write)
	}
	var v []byte
	if !del {
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

// adopt records x for key without copying (x is another set's, never
// modified again); the byte count is not kept.
func (w *writeSet) adopt(key string, x write) {
	if w.m == nil {
		w.m = make(map[string]write)
	}
	w.m[key] = x
	w.dirty = true
}

func (w *writeSet) get(key []byte) (write, bool) {
	x, ok := w.m[string(key)]
	return x, ok
}

func (w *writeSet) len() int { return len(w.m) }

// keys returns the written keys in order. The slice is never modified: a put
// of a new key makes the next call build a fresh one, so a Scan can go on
// walking its slice while its callback writes to the Txn.
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

// bytesOf views s as a byte slice without copying. The result must never be
// modified: Pebble and Scan callbacks only read it.
func bytesOf(s string) []byte {
	return unsafe.Slice(unsafe.StringData(s), len(s))
}
