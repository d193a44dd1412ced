// Package groupcommit is the group-commit machinery the Pebble and
// PostgreSQL stores share: the gate that lets Close wait out the calls in
// progress, the bounded queue of Commits waiting for the store's one
// committer goroutine (and the hand-off deciding, between a Commit whose ctx
// ends and the committer, whether it is written), and the counters behind
// store.Stats. How a group is validated and written is each store's own.
//
// Invariants: a Request is answered exactly once, by whoever moved it out of
// the queued state: the committer (Take) or its Commit giving up before
// that (ctx ended: nothing written). The queue is bounded; a full one
// answers store.ErrOverloaded. Once Gate.Close has returned no call is
// inside the gate.
//
// Gate, Queue and Counters are safe for concurrent use. A Request's outcome
// (Err, Panic) is written only by the goroutine that took it, before it
// wakes the Commit.
package groupcommit
