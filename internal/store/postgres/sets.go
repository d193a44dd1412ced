package postgres

import (
	"bytes"
	"slices"
	"unsafe"

	"github.com/weft-db/weft/internal/store"
	"github.com/weft-db/weft/internal/store/txnset"
)

// The transaction's buffers are the ones every store shares.
type (
	write    = txnset.Write
	writeSet = txnset.WriteSet
	readSet  = txnset.ReadSet
	span     = txnset.Span
)

// arrays returns the writes as parallel arrays for one statement, in key
// order; a deletion's value is nil (a NULL: a tombstone).
func writeArrays(w *writeSet) (keys, vals [][]byte) {
	ks := w.Keys()
	keys, vals = make([][]byte, len(ks)), make([][]byte, len(ks))
	for i, k := range ks {
		x := w.M[k]
		keys[i] = bytesOf(k)
		if !x.Del {
			vals[i] = x.Val
		}
	}
	return keys, vals
}

// infinity is above every valid key: KeyLenMax+1 bytes of 0xff. An
// unbounded span travels to the server with it as its end, so one indexed
// range condition serves every span.
var infinity = bytes.Repeat([]byte{0xff}, store.KeyLenMax+1)

// arrays returns the read set as statement parameters: the point keys, and
// the spans' starts and ends.
func readArrays(r *readSet) (points, los, his [][]byte) {
	points = make([][]byte, 0, len(r.Points))
	for k := range r.Points {
		points = append(points, bytesOf(k))
	}
	// Sorted, so the conflicting key an error names does not depend on map
	// order.
	slices.SortFunc(points, bytes.Compare)
	los, his = make([][]byte, len(r.Spans)), make([][]byte, len(r.Spans))
	for i, sp := range r.Spans {
		los[i] = bytesOf(sp.Start)
		if sp.Inf {
			his[i] = infinity
		} else {
			his[i] = bytesOf(sp.End)
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
