// Package kv is Weft's key-value face: a Voldemort-style replicated store
// (Nguyen et al., "Optimistic Execution in Key-Value Store", §II) whose
// replicas stamp every request with hybrid vector clocks and feed local
// predicate detectors (§III-A, §V), plus the Kronos transactional mode
// (Kronos paper §3.3) on the same store.
//
// # Data model
//
// A key maps to a list of siblings ⟨version, value⟩; a version is a vector
// clock over client sessions (Version: sparse, sorted by actor). A GET
// returns every sibling; a PUT carries a context — the versions its writer
// read — and its version (Descend) covers exactly those, so it supersedes
// them and leaves concurrent values as siblings (Apply). Version order is
// causal order (tested against an explicit causal oracle). A key holds at
// most SiblingsMax siblings: a PUT beyond that fails with
// ErrTooManySiblings and the writer must resolve (read, then write with all
// versions as context, which always fits); values are never dropped
// silently. Versions are pruned to VersionEntriesMax entries, smallest
// counters first, which can only turn "ordered" into "concurrent" (an extra
// sibling), never the reverse.
//
// # Pieces
//
//   - Ring: consistent hashing with virtual nodes; a key's preference list
//     is the first N distinct servers clockwise from its hash. Tokens depend
//     only on (server number, vnode), so every party computes the same ring.
//   - Replica: one server's share, in Pebble (key 'v'+key → the encoded
//     sibling list, codec.go), fsynced before a PUT is acknowledged; stamps
//     each request with the server's vclock.HybridClock (merging the HVC the
//     client carries) and shows each applied PUT to a PutHook.
//   - Op: the client-side quorum logic as a pure state machine (§II-B):
//     send to the key's N replicas (or the first Preferred), succeed with R
//     answers or W acknowledgements, second round to the replicas that have
//     not succeeded after a timeout counted in ticks, then fail with
//     ErrQuorum; read repair optional. Session turns requests into Ops
//     (actor id, counters, the HVC it carries, default R and W).
//   - Detector: the PutHook that runs a monitor.Detector on every applied
//     PUT and buffers its candidates (bounded; the oldest dropped and
//     counted) for the monitors to fetch.
//   - TxnParticipant and Txn: the Kronos transactional mode (txn.go).
//   - Server: the shell — HTTP/JSON on loopback (wire.go): POST /v1/kv/get,
//     POST /v1/kv/put (one replica's share: the client replicates), GET
//     /v1/kv/meta (ring and suggested R, W: Voldemort's metadata), GET
//     /v1/kv/stats, GET /v1/kv/candidates?after=I&max=M, GET /healthz.
//     Errors are {"error": {"code", "message", "retryable"}} with stable
//     codes (Code). client/kv is the Go client; `weft kv` the commands.
//
// # Consistency
//
// With W + R > N and W > N/2 every GET returns every PUT acknowledged
// before it began, or a version descending from it; with W + R ≤ N it may
// not. The deterministic simulation (sim_test.go: message delay, loss and
// duplication, partitions, crashes losing unsynced bytes) checks the first
// on every history and measures the second; it replays from its seed
// (-kv.sim.seed). Quorums are strict: round 2 asks only the key's own
// replicas (no sloppy quorum or hinted handoff), so a key with fewer than W
// live replicas refuses writes. Replicas never talk to each other: there is
// no anti-entropy besides read repair.
//
// # Invariants (checked with -tags invariants, and by the tests)
//
//   - a key's stored siblings are pairwise concurrent, in canonical order;
//   - a replica acknowledges a PUT only after it is durable (Sync);
//   - hook calls are serialised and their HVC stamps strictly increase;
//   - every queue and buffer is bounded: SiblingsMax, VersionEntriesMax,
//     CandidatesMax, RequestsMax (OVERLOADED), pending transactions.
//
// # Concurrency
//
// Version, Sibling, Ring and the wire types are values, safe to share. Op,
// Session, TxnParticipant and Txn are pure cores: no goroutines, clocks,
// I/O or randomness, not safe for concurrent use. Replica, Detector and
// Server are safe for concurrent use.
//
// # Not yet
//
// Rollback on a violation (§IV) and the monitor processes; the paper's
// applications; a network shell for the transactional mode (it needs a
// shared Kronos: an order.Oracle over client/kronos) and replication of
// transactional writes to the other N−1 replicas; deletes (tombstones);
// membership changes (the ring is fixed by --peers).
package kv
