// Package roles runs a gatekeeper or shard process as a member of a cluster
// managed by the coordinator (internal/coord): the process registers,
// heartbeats, waits as a backup until it holds a slot, and follows the
// configuration epochs of the dissertation's §4.6. On every new epoch it
// takes its old engine out of service before acknowledging (a gatekeeper
// first drains its commits in flight, so none of an old epoch reaches the
// store later); once the epoch is active — every live member acknowledged
// it — it builds the new epoch's engine: a shard rebuilds its partition from
// the store, a gatekeeper connects to the epoch's shards and peers. The
// listening ports stay across epochs; calls between epochs fail with
// retryable errors.
//
// A member serves only inside its lease from the coordinator
// (coord.LeaseState, docs/cluster.md "Leases"): the gatekeeper engine asks
// it before taking a call, before acknowledging a commit and before
// answering a read; the shard front before forwarding a call and before
// answering it, and it holds FIFO entries while the lease lapses. A
// gatekeeper reports the shards it has not reached for UnreachableAfter
// with its heartbeats (lease.go).
//
// The process around it is assembled here too (process.go): from a
// process's command line (ProcessConfig, the flags of weft shard and weft
// gatekeeper) RunShardProcess and RunGatekeeperProcess open the shared
// store, dial the Kronos group, and serve either a member (with a
// coordinator) or slot ID of a fixed cluster; a gatekeeper also serves the
// Weft API (internal/api) and, with DgraphConfig, Dgraph's face
// (dgraph.go, which weft serve uses as well). Each logs a ready line
// holding " serving on ", which launchers wait for, and stops on SIGINT or
// SIGTERM.
//
// Concurrency: a member's state is guarded by its lock; the Run functions
// block until the process must stop, and a DgraphServer may be stopped
// from any goroutine.
package roles
