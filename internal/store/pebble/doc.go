// Package pebble is Weft's embedded backing store: store.Store on a local
// Pebble database, with optimistic concurrency control and durable group
// commit. It is the default store of `weft serve`.
//
// # Reads
//
// Begin hands out the Pebble snapshot taken right after the latest commit
// group was applied (one snapshot per group, shared and reference-counted),
// tagged with that group's version. A Txn reads it through Get and Scan,
// overlaid with its own buffered writes, and records its read set: point
// keys, and scanned spans cut after the last key the scan passed on.
//
// # Commit
//
// One committer goroutine is the only writer. Commit queues the Txn
// (CommitQueueMax; full → store.ErrOverloaded) and waits. The committer takes
// what is waiting, up to CommitGroupMax Txns or GroupBytesMax of writes, and
// for each in arrival order: validates its read set against the history of
// write sets committed after its snapshot and against the earlier members of
// the group (a hit → store.ErrConflict); runs its hook, whose Critical reads
// Pebble's latest state overlaid with the earlier members' writes and its
// own; adds its writes to the group's batch. The batch is applied once, with
// fsync when Options.Sync, and only then is the group published: its write
// sets join the history, a new snapshot serves Begin, and its Commits
// return. So nothing is readable before it is durable, and a Txn begun after
// a Commit returned sees it (real-time order).
//
// A read-only Txn without a hook skips the queue: it is validated against
// the history up to the latest published group and serializes there.
//
// The history is bounded (RecentWritesMax keys, RecentWriteBytesMax bytes);
// evicting the oldest entries raises a floor, and a Txn whose snapshot is
// below it cannot be validated: store.ErrTooOld, which matches ErrConflict,
// so callers retry. Versions and history live in memory: after a restart
// there are no Txns from before it to validate.
//
// A Commit whose ctx ends while it is still queued returns ctx.Err() and
// writes nothing; once the committer has taken it, it completes. A hook runs
// on the committer's goroutine and holds up every commit while it runs; a
// hook panic is re-raised on the committing goroutine. A failed WAL write or
// fsync crashes the process (Pebble holds it fatal, rightly: after a failed
// fsync the page cache cannot be trusted; restart recovers from the WAL).
// Any other failure to apply a batch makes the store answer store.ErrFailed
// from then on: the outcome of that group is unknown.
//
// # Invariants
//
//   - Commit order is serialization order: each committed Txn's reads are
//     the latest writes to those keys (and spans) as of its group.
//   - A snapshot at version v contains exactly the groups 1..v, all durable.
//   - history holds every write set newer than its floor; every queue and
//     buffer named above is bounded by its Options field.
//
// # Concurrency
//
// Store is safe for concurrent use; a Txn is used by one goroutine at a
// time. Close waits for calls in progress, fails queued commits with
// store.ErrClosed and closes snapshots still held by open Txns; their later
// calls return store.ErrClosed.
package pebble
