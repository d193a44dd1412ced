package txn

import (
	"slices"

	"github.com/weft-db/weft/internal/vclock"
)

// The per-transaction caches of run spare store reads whose answers the
// transaction already knows; they change no check and no result.
//
//   - verts: a vertex record read or written earlier in the transaction. The
//     first read of a record is a snapshot read (every path that writes a
//     record reads it first), so a second read would return the same record
//     (or the transaction's own write of it) and would add nothing to the
//     store's read set: the key is in it already.
//   - als: an alias record read or written earlier in the transaction: a
//     second read would answer the same snapshot record or the
//     transaction's own write, and add nothing to the read set.
//   - fresh and made: a vertex with no record, or a deleted one (Exists
//     false), at the snapshot has no stored edge — edges are created only on
//     live vertices and deleting a vertex deletes its edges — so an edge of it
//     exists exactly when this transaction created it and has not deleted it
//     since (made). Skipping the store read of such an edge key leaves it out
//     of the read set; the vertex record, which is in it, covers it: any
//     transaction that creates or deletes an edge writes its source's record.
//     A vertex deleted here leaves fresh, so after a re-creation in the same
//     transaction its edges are looked up in the store transaction again.
type vcached struct {
	rec VertexRec
	ok  bool
}

type acached struct {
	rec AliasRec
	ok  bool
}

// edgeExists reports whether the edge with key ek of src exists for this
// transaction: from made when src is fresh, else from the store transaction
// (its own writes included).
func (r *run) edgeExists(src string, ek []byte) (bool, error) {
	if r.fresh[src] {
		return r.made[string(ek)], nil
	}
	_, ok, err := r.kv.Get(ek)
	return ok, err
}

// forget ends h's freshness: it was deleted in this transaction.
func (r *run) forget(h string) { delete(r.fresh, h) }

// sameStamp reports whether a and b are the same stamp.
func sameStamp(a, b vclock.Stamp) bool {
	return a.Clock.Epoch == b.Clock.Epoch && a.Owner == b.Owner && slices.Equal(a.Clock.Counters, b.Clock.Counters)
}
