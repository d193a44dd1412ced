// Package engine runs every role of Weft in one process (weft serve): G
// gatekeepers, S shards, an in-process Kronos and the Pebble backing store,
// behind the API interface the gRPC and HTTP front ends call (declared in
// package engineapi, with its value types and errors; aliased here).
//
// Data flow (dissertation §3.3–3.5):
//   - A transaction's reads happen at a snapshot stamp on the shards (each
//     returns the vertex's last-write stamp as its version); Commit stamps the
//     transaction at a gatekeeper, executes its writes on a store
//     transaction (validating the read versions and every operation against
//     the store), orders it after the last access of every vertex and alias it
//     touched (Kronos when the stamps are concurrent; abort when Kronos holds
//     the opposite order), makes it durable, and hands its operations to the
//     owning shards over the gatekeeper's FIFO channels. The client is
//     answered once the hand-off happened.
//   - A node program is stamped at a gatekeeper and runs on each shard once no
//     queued or future write can precede it (package shard); hops between
//     shards are messages; the gatekeeper gathers the result.
//   - Whole-snapshot analyses copy every shard's partition at one stamp.
//
// Real-time order. Before stamping, a gatekeeper merges the clock of every
// gatekeeper's latest stamp (published whole in shared memory), so every stamp
// follows everything already acknowledged: Weaver's periodic clock
// announcements with τ = 0, which is free within one process. Without it a
// later transaction can be ordered before an acknowledged one that it never
// conflicted with, and a program can miss the earlier one (the shard
// simulation's real-time check finds that history). A cluster must provide
// the same guarantee with a round of messages.
//
// Read points (readpoint.go). A fresh read stamp follows every transaction
// stamped so far, so on the shards those transactions write a read waits for
// their durable commit. Each gatekeeper therefore stamps a read point just
// before every transaction and offers the one of its oldest transaction in
// flight; reads and programs take an offered point that covers every
// transaction handed to the shards so far as a whole vector clock (and so
// everything acknowledged or seen by a finished read) and, when one exists,
// precedes every transaction in flight. They are ordered before the
// unacknowledged transactions instead of waiting for their fsync.
//
// Invariants: strict serializability of transactions and programs; no
// acknowledged commit is lost (it is durable before the hand-off); a shard's
// graph equals a replay of the store (rebuilt from it at Open); every queue is
// bounded by admission control (in-flight commits and programs per
// gatekeeper); reads below the GC watermark fail with ErrSnapshotTooOld.
//
// Placement. A vertex lives on shard txn.ShardOf(handle, Shards): its
// handle's hash, or, for a handle of a placement group ("_pl|<group>|..."),
// its group's, so that front ends can co-locate what they read together.
// GetVertices (BatchReader, batch_read.go) reads many vertices at one
// snapshot with one request per shard involved.
//
// DB is safe for concurrent use.
package engine
