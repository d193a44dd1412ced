// Package txnset holds what a store transaction buffers before it commits,
// and the store.Txn logic around it that the Pebble and PostgreSQL stores
// share: its writes (last one per key winning, handed out in key order), its
// read set (point keys and scanned spans), against which commits are
// validated, the byte budget over both (TxnBytesMax), the Txn's state, the
// shape of Commit, and the part of a commit hook's Critical that reads and
// writes the buffers. Each store adds what touches its storage: snapshot
// reads, the read-only validation, the committer and Discard.
//
// Invariants: a Txn that is done or spoiled (Err) refuses every call; a
// key a Txn wrote reads that write and records no read; every growth of the
// buffers is charged to the budget, and past it the Txn is spoiled with
// store.ErrTxnTooLarge.
//
// Not safe for concurrent use: a Txn is used by one goroutine at a time, and
// a Critical only inside the hook it was passed to.
package txnset
