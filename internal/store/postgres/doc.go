// Package postgres is Weft's PostgreSQL-wire backing store: store.Store on
// one table of a PostgreSQL server, so gatekeepers in several processes (on
// several machines) can share one store. It keeps the store's semantics
// exactly — the same conformance suite as the embedded Pebble store — and
// uses the server only for what it gives cheaply: snapshots, durable
// transactions, row locks.
//
// # Layout
//
// A schema (Options.Schema, created on Open, idempotently) holds kv (one
// row per key: bytea key, bytea value, the commit version that wrote it; a
// NULL value is a deletion tombstone), meta (the latest commit version and
// the tombstone floor) and commits (a random token per commit version).
// bytea orders bytewise, which is the store's key order: scans are index
// range scans, and collations play no part.
//
// # Reads
//
// Begin takes a pool connection and opens a REPEATABLE READ READ ONLY
// transaction on it: its snapshot is the Txn's, and the meta version read in
// it says which commits the snapshot includes. Get and Scan read it,
// overlaid with the Txn's buffered writes (Scan a page of ScanPageMax rows
// per round trip), and record the read set as the Pebble store does: points,
// and spans cut where the scan stopped.
//
// # Commit: validation, the serialized section, SERIALIZABLE
//
// PostgreSQL's SERIALIZABLE alone is not the store's contract: it may
// serialize a Txn before a commit that overwrote what it read (no cycle, no
// error), while the store promises ErrConflict then and serializes in
// commit order. So validation is explicit, as in the Pebble store: a Txn
// conflicts if any key or span it read holds a row written at a version
// above its snapshot (tombstones make deletions visible). A read-only Txn is
// validated by one statement, with no write and no WAL flush.
//
// Writes go through one committer goroutine per Store, which groups waiting
// commits (up to CommitGroupMax) into one SERIALIZABLE transaction: BEGIN,
// bump meta.ver (the group's version), validate every member (one
// pipelined round trip); then per member in order: check against the
// earlier members' writes, run its hook; then upsert all writes with the
// version, record the token, COMMIT — one WAL flush for the group.
//
// The store.Critical contract — a hook reads the latest committed state and
// nothing commits between its reads and its Txn's commit — needs every
// committer on the schema, in every process, serialized. Two mechanisms,
// one for correctness and one for speed:
//
//   - Every commit transaction updates the meta row first. Two that overlap
//     cannot both commit: under SERIALIZABLE the second fails with 40001
//     (CockroachDB and YugabyteDB behave alike), and is retried with backoff
//     (RetryMax). So a transaction that commits saw every earlier commit.
//   - With SerializeAdvisory (the default, PostgreSQL only) the committer
//     takes a session-level advisory lock before BEGIN: the transaction's
//     snapshot then already includes every earlier commit, and committers of
//     other processes queue on the server instead of failing and retrying.
//     The lock is held across back-to-back groups while commits keep coming
//     (at most 16 in a row, then it is released for the others).
//
// This is the price of the contract: commits on one schema are serial
// across processes (group commit amortizes the WAL flush within a process).
// It is what the Pebble store does within one process.
//
// # Retries and failures
//
// A group attempt failing with 40001 or 40P01, or losing its connection
// before COMMIT, is retried from scratch up to RetryMax attempts: hooks run
// again, on the then-latest state, from the Txn's writes as they were before
// the hook first ran. A member whose ctx ends between attempts leaves with
// ctx.Err(). When the connection breaks during COMMIT the outcome is
// ambiguous: the committer reconnects, waits on the meta row lock (so the
// old transaction has ended) and looks for its token — committed, or not and
// retried. If the server cannot answer within OutcomeWaitMax the store fails
// (store.ErrFailed): an unknown outcome must not be reported as either. A
// statement error of one member (a key PostgreSQL cannot index: longer than
// ~2.7 kB and incompressible, store.ErrKeyTooLarge) fails it alone: the
// group is retried one Txn at a time.
//
// A lost connection or unreachable server answers ErrUnavailable, which
// matches store.ErrOverloaded (retryable, nothing written). Pool exhaustion
// (every connection held by open Txns for AcquireTimeout) answers
// store.ErrOverloaded.
//
// # Durability
//
// The committer's session runs with synchronous_commit on (unless the server
// has something stronger, or Sync is off), so COMMIT returns after the WAL
// flush, and a commit is visible only after that: nothing is readable
// before it is durable, and a Txn begun after Commit returned sees it.
// Tombstones older than TombstoneVersions versions are pruned every
// PruneEvery versions; a snapshot below the pruned floor fails with
// store.ErrTooOld.
//
// # Invariants
//
//   - Commit order (meta.ver) is serialization order; every Txn committed in
//     version v read only values current as of v.
//   - A snapshot at version v contains exactly the commits 1..v, all durable.
//   - Every queue, pool, page and retry loop is bounded by an Options field.
//
// Builds with -tags invariants check what the server hands back: scan pages
// in order and in range, and commit versions above every member's snapshot.
//
// # Concurrency
//
// Store is safe for concurrent use; a Txn is used by one goroutine at a
// time. Close waits for calls in progress, lets the committer finish the
// group it holds, fails queued commits with store.ErrClosed, and closes
// connections still held by open Txns; their later calls return
// store.ErrClosed.
//
// Tested against PostgreSQL 15 (Debian bookworm's) only; the row serializer
// is meant for CockroachDB and YugabyteDB but has not been run on them.
package postgres
