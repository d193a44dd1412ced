// Package store is Weft's backing store: a durable, ordered, transactional
// byte-key/byte-value store with optimistic concurrency control
// (dissertation §3.3.2.2, §3.5.2). Gatekeepers commit graph write
// transactions on it; the layer above encodes vertices, edges, properties,
// the in-edge index, aliases, the vertex→shard map and per-vertex
// timestamps into keys. Implementations live in sub-packages (pebble: the
// embedded default; postgres); storetest is the conformance suite every
// implementation runs. What the implementations share is written once:
// txnset (a Txn's buffers, budget and the shape of Commit) and groupcommit
// (the close gate, the queue of waiting commits, the counters).
//
// # Transactions
//
// Begin opens a Txn at a consistent snapshot of every commit acknowledged so
// far. Reads (Get, Scan) see that snapshot overlaid with the Txn's own
// buffered writes and are recorded in a read set: point keys, and for a Scan
// the key range up to where it stopped, so inserts into a scanned range are
// caught (no phantoms). Writes (Set, Delete) are buffered until Commit.
//
// Commit validates the read set against every transaction that committed
// after the snapshot (and against earlier members of the same commit group):
// if one of them wrote a key the Txn read, Commit returns an error matching
// ErrConflict and writes nothing. A snapshot too old for the store's bounded
// validation history fails with ErrTooOld, which also matches ErrConflict.
// Blind writes (written, never read) do not conflict: the later commit wins,
// which is serializable. After validation an optional hook runs inside the
// store's serialized commit section and may read the latest committed state
// through Critical and add writes; then the writes are made durable.
//
// # Invariants
//
//   - Committed transactions are serializable in commit order, and that order
//     respects real time: a Txn begun after Commit returned nil sees it.
//   - Nothing is readable before it is durable: a snapshot never contains a
//     write whose Commit could still fail or be lost.
//   - When Commit returns nil the writes survive a crash (given the
//     implementation's sync option); when it returns an error nothing of the
//     Txn is written, except that a failed I/O error (ErrFailed) leaves the
//     outcome unknown and stops the store.
//   - Every queue and history is bounded; overload answers ErrOverloaded,
//     a too-large transaction ErrTxnTooLarge.
//   - Keys are at most KeyLenMax bytes, values at most ValueLenMax; longer
//     input is rejected with an error and changes nothing.
//
// # Concurrency
//
// A Store is safe for concurrent use. A Txn is used by one goroutine at a
// time. A Critical is valid only inside the hook it was passed to.
package store
