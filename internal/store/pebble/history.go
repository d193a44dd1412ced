package pebble

import (
	"fmt"
	"sort"

	"github.com/weft-db/weft/internal/store"
)

// entry is the write set of one committed transaction: its keys in order,
// and the version (commit group) that made them visible.
type entry struct {
	version uint64
	keys    []string
	bytes   int // sum of len(keys[i])
}

// history is the bounded record of recent write sets that OCC validation
// checks read sets against. Entries are pushed in version order; when the
// history holds more than keysMax keys or bytesMax key bytes, the oldest
// entries go, and floor rises to the newest evicted version: a snapshot
// older than floor may have missed an evicted write, so it cannot be
// validated (store.ErrTooOld).
//
// Pure: no locking, no I/O. The committer is its only writer.
type history struct {
	ents     []entry // ents[head:] are live, in version order
	head     int
	keys     int
	bytes    int
	keysMax  int
	bytesMax int
	floor    uint64
	evicts   uint64
}

func newHistory(keysMax, bytesMax int) history {
	return history{keysMax: keysMax, bytesMax: bytesMax}
}

// push appends e (e.version >= every live version) and evicts to the bounds.
func (h *history) push(e entry) {
	if n := len(h.ents); n > h.head && h.ents[n-1].version > e.version {
		panic(fmt.Sprintf("store/pebble: history version %d after %d", e.version, h.ents[n-1].version))
	}
	h.ents = append(h.ents, e)
	h.keys += len(e.keys)
	h.bytes += e.bytes
	for h.keys > h.keysMax || h.bytes > h.bytesMax {
		old := h.ents[h.head]
		h.ents[h.head] = entry{}
		h.head++
		h.keys -= len(old.keys)
		h.bytes -= old.bytes
		h.floor = max(h.floor, old.version)
		h.evicts++
	}
	// Reclaim the dead prefix once it is half the slice, so the backing
	// array stays within twice the live entries.
	if h.head > 0 && h.head >= len(h.ents)/2 {
		n := copy(h.ents, h.ents[h.head:])
		clear(h.ents[n:])
		h.ents = h.ents[:n]
		h.head = 0
	}
}

// check validates r, read at snapshot version snap, against every live entry
// newer than snap. A Txn that read nothing has nothing to validate, however
// old its snapshot.
func (h *history) check(snap uint64, r *readSet) error {
	if r.Empty() {
		return nil
	}
	if snap < h.floor {
		return fmt.Errorf("%w: snapshot version %d, history starts after %d", store.ErrTooOld, snap, h.floor)
	}
	live := h.ents[h.head:]
	i := sort.Search(len(live), func(i int) bool { return live[i].version > snap })
	return checkEntries(live[i:], snap, r)
}

// checkEntries validates r against ents, all written after snapshot snap.
func checkEntries(ents []entry, snap uint64, r *readSet) error {
	for _, e := range ents {
		if k, ok := r.Hit(e.keys); ok {
			return fmt.Errorf("%w: key %s read at version %d, written at version %d",
				store.ErrConflict, store.Brief(bytesOf(k)), snap, e.version)
		}
	}
	return nil
}
