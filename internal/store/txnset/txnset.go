package txnset

import (
	"slices"
	"sort"
)

// Write is one buffered write: a value, or a deletion.
type Write struct {
	Val []byte
	Del bool
}

// WriteSet buffers a transaction's writes.
type WriteSet struct {
	M      map[string]Write
	sorted []string // keys of M in order; rebuilt when dirty
	dirty  bool
	Bytes  int // keys + values
}

// Put records a write, copying val (never nil for a value, so nil can
// stand for a deletion on a wire), and returns the growth in bytes.
func (w *WriteSet) Put(key, val []byte, del bool) int {
	if w.M == nil {
		w.M = make(map[string]Write)
	}
	var v []byte
	if !del {
		v = append(make([]byte, 0, len(val)), val...)
	}
	old, ok := w.M[string(key)]
	grow := len(v) - len(old.Val)
	if !ok {
		grow += len(key)
		w.dirty = true
	}
	w.M[string(key)] = Write{Val: v, Del: del}
	w.Bytes += grow
	return grow
}

// Adopt records x for key without copying (x belongs to a set that no
// longer changes it); the byte count is not kept.
func (w *WriteSet) Adopt(key string, x Write) {
	if w.M == nil {
		w.M = make(map[string]Write)
	}
	if _, ok := w.M[key]; !ok {
		w.dirty = true
	}
	w.M[key] = x
}

// Clone returns a copy sharing the values (never modified in place).
func (w *WriteSet) Clone() WriteSet {
	c := WriteSet{M: make(map[string]Write, len(w.M)), sorted: w.sorted, dirty: w.dirty, Bytes: w.Bytes}
	for k, x := range w.M {
		c.M[k] = x
	}
	return c
}

// Get returns the write to key, if any.
func (w *WriteSet) Get(key []byte) (Write, bool) {
	x, ok := w.M[string(key)]
	return x, ok
}

// Len is the number of keys written.
func (w *WriteSet) Len() int { return len(w.M) }

// Keys returns the written keys in order. The slice is never modified: a
// put of a new key makes the next call build a fresh one, so a Scan can go
// on walking its slice while its callback writes to the Txn.
func (w *WriteSet) Keys() []string {
	if w.dirty {
		w.sorted = make([]string, 0, len(w.M))
		for k := range w.M {
			w.sorted = append(w.sorted, k)
		}
		slices.Sort(w.sorted)
		w.dirty = false
	}
	return w.sorted
}

// Between returns the written keys in [start, end) (inf: no end), in order.
func (w *WriteSet) Between(start, end string, inf bool) []string {
	ks := w.Keys()
	i := sort.SearchStrings(ks, start)
	j := len(ks)
	if !inf {
		j = i + sort.SearchStrings(ks[i:], end)
	}
	return ks[i:j]
}

// Span is a scanned key range [Start, End), or [Start, ∞) when Inf.
type Span struct {
	Start, End string
	Inf        bool
}

// Has reports whether key is in the span.
func (s Span) Has(key string) bool { return key >= s.Start && (s.Inf || key < s.End) }

// ReadSet records what a transaction read: point keys (found or not) and
// scanned spans.
type ReadSet struct {
	Points map[string]struct{}
	Spans  []Span
	Bytes  int
}

// AddPoint records key and returns the growth in bytes.
func (r *ReadSet) AddPoint(key []byte) int {
	if _, ok := r.Points[string(key)]; ok {
		return 0
	}
	if r.Points == nil {
		r.Points = make(map[string]struct{})
	}
	r.Points[string(key)] = struct{}{}
	r.Bytes += len(key)
	return len(key)
}

// AddSpan records sp and returns the growth in bytes.
func (r *ReadSet) AddSpan(sp Span) int {
	r.Spans = append(r.Spans, sp)
	n := len(sp.Start) + len(sp.End)
	r.Bytes += n
	return n
}

// Empty reports a transaction that read nothing.
func (r *ReadSet) Empty() bool { return len(r.Points) == 0 && len(r.Spans) == 0 }

// Hit returns a key of written (sorted) that r read, if any: how a
// transaction is validated against the writes committed after its snapshot.
func (r *ReadSet) Hit(written []string) (string, bool) {
	if len(r.Points) > 0 {
		if len(written) <= len(r.Points) {
			for _, k := range written {
				if _, ok := r.Points[k]; ok {
					return k, true
				}
			}
		} else {
			for k := range r.Points {
				if i := sort.SearchStrings(written, k); i < len(written) && written[i] == k {
					return k, true
				}
			}
		}
	}
	for _, sp := range r.Spans {
		if i := sort.SearchStrings(written, sp.Start); i < len(written) && sp.Has(written[i]) {
			return written[i], true
		}
	}
	return "", false
}
