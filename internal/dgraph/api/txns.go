package api

import (
	"container/list"
	"sync"
	"time"

	"github.com/weft-db/weft/internal/dgraph"
	"github.com/weft-db/weft/internal/engineapi"
	"github.com/weft-db/weft/internal/txn"
)

// txnState is one open Dgraph transaction: a Weft snapshot, the reads its
// queries and mutations made (validated at commit), and its mutations,
// buffered with their blank nodes already given UIDs. mu serializes the
// requests of one transaction (Dgraph clients send them one at a time).
type txnState struct {
	mu       sync.Mutex
	id       uint64
	snap     engineapi.Snapshot
	user     string
	ns       uint64 // the namespace the transaction acts in
	readOnly bool
	done     bool // committed, aborted or forgotten: later requests abort

	reads    []txn.Read          // of queries (mutations' reads are in prepared), one per vertex
	readSeen map[txnReadKey]bool // the vertices (and aliases) in reads
	muts     []dgraph.Mutation   // buffered, without blank nodes
	prepared *dgraph.Prepared    // muts evaluated at snap
	keys     map[string]bool     // Dgraph's conflict keys, reported to the client
	preds    map[string]bool
	lastUsed time.Time     // guarded by the table's mutex
	elem     *list.Element // in the table's LRU list, guarded by its mutex
}

// txnReadKey is a vertex (or alias) of a transaction's read set.
type txnReadKey struct {
	vertex string
	alias  bool
}

func (t *txnState) mutated() bool { return len(t.muts) > 0 }

// txnTable maps start_ts values to open transactions. It is bounded
// (TxnsMax) and forgets transactions idle for longer than TxnIdle. Ids
// increase (they double as Dgraph's commit_ts) from the clock's
// milliseconds times 1024 when the server starts, so that a client that
// outlived a restart names no transaction of the new process (unless the
// old one began over 1024 transactions per millisecond), and stay below
// 2^53, exact in JSON numbers.
type txnTable struct {
	mu   sync.Mutex
	m    map[uint64]*txnState
	lru  *list.List // of *txnState, least recently used first
	next uint64
	max  int
	idle time.Duration
	now  func() time.Time
}

// evictScanMax bounds how many transactions a full table looks at to find
// one without buffered mutations to drop.
const evictScanMax = 64

func newTxnTable(max int, idle time.Duration, now func() time.Time) *txnTable {
	return &txnTable{m: map[uint64]*txnState{}, lru: list.New(), next: uint64(now().UnixMilli()) << 10, max: max, idle: idle, now: now}
}

// newID returns a fresh id (a start_ts or commit_ts).
func (tt *txnTable) newID() uint64 {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	tt.next++
	return tt.next
}

// open registers a new transaction at snap.
func (tt *txnTable) open(snap engineapi.Snapshot, user string, ns uint64, readOnly bool) (*txnState, error) {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	now := tt.now()
	if len(tt.m) >= tt.max {
		tt.evictLocked(now)
	}
	if len(tt.m) >= tt.max {
		return nil, &Error{Code: CodeOverloaded, Msg: msgOverloaded + ": too many open transactions"}
	}
	tt.next++
	t := &txnState{id: tt.next, snap: snap, user: user, ns: ns, readOnly: readOnly, lastUsed: now,
		keys: map[string]bool{}, preds: map[string]bool{}, readSeen: map[txnReadKey]bool{}}
	t.elem = tt.lru.PushBack(t)
	tt.m[t.id] = t
	return t, nil
}

// evictLocked forgets the expired transactions at the front of the LRU
// list, then, if the table is still full, the least recently used of the
// first evictScanMax that has no buffered mutations (its loss costs a
// client a re-read, not work). A transaction in the middle of a request
// is skipped (its lock is held).
func (tt *txnTable) evictLocked(now time.Time) {
	for e := tt.lru.Front(); e != nil; e = tt.lru.Front() {
		t := e.Value.(*txnState)
		if now.Sub(t.lastUsed) <= tt.idle {
			break
		}
		tt.removeLocked(t)
	}
	if len(tt.m) < tt.max {
		return
	}
	n := 0
	for e := tt.lru.Front(); e != nil && n < evictScanMax; e, n = e.Next(), n+1 {
		t := e.Value.(*txnState)
		if !t.mu.TryLock() {
			continue
		}
		idle := !t.mutated()
		t.mu.Unlock()
		if idle {
			tt.removeLocked(t)
			return
		}
	}
}

func (tt *txnTable) removeLocked(t *txnState) {
	if tt.m[t.id] == t {
		delete(tt.m, t.id)
		tt.lru.Remove(t.elem)
	}
}

// get returns the open transaction id, or an abort: Dgraph would still
// know it, but Weft forgot it (expired, evicted, finished, or never ours).
func (tt *txnTable) get(id uint64) (*txnState, error) {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	t, ok := tt.m[id]
	now := tt.now()
	if ok && now.Sub(t.lastUsed) > tt.idle {
		tt.removeLocked(t)
		ok = false
	}
	if !ok {
		return nil, errAborted(errorf(CodeAborted, "transaction %d is unknown, finished or expired", id))
	}
	t.lastUsed = now
	tt.lru.MoveToBack(t.elem)
	return t, nil
}

// remove forgets id.
func (tt *txnTable) remove(id uint64) {
	tt.mu.Lock()
	if t, ok := tt.m[id]; ok {
		tt.removeLocked(t)
	}
	tt.mu.Unlock()
}

// len is the number of transactions remembered.
func (tt *txnTable) len() int {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	return len(tt.m)
}
