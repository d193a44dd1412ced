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
//     client carries) and shows each applied PUT to a PutHook. Every applied
//     PUT also leaves an undo record (the key's previous siblings and the
//     PUT's stamp) in a bounded rollback window (window.go, WindowMax
//     records, Retroscope-style), written in the same batch.
//   - Restore (§IV): rewinds a replica to the cut C(T). A logical write
//     (a PUT, named by the version it wrote) is in the cut iff some replica
//     applied it with CutTime(stamp) < T (its largest stamp entry, ε rule);
//     each replica undoes its applications of the other writes and rebuilds
//     the keys they touched by replaying the kept writes in order, whether
//     the discarded writes were acknowledged or not. Because stamps grow
//     entry-wise along causality (through servers and through clients,
//     which carry HVCs), a kept write's causal past is kept: C(T) is a
//     consistent cut. T older than the window's floor fails with ErrWindow.
//     Each restore starts a new rollback generation (persisted; answered in
//     every GET and PUT so sessions learn their work was discarded).
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
//     /v1/kv/stats, GET /v1/kv/candidates?after=I&max=M&wait_ms=W (a long
//     poll; the answer names the server incarnation and generation), GET
//     /healthz, and the rollback coordinator's POST
//     /v1/kv/admin/{pause,restore,resume,advice}. A pause is a fence: it
//     waits for in-flight GETs and PUTs, then refuses new ones with the
//     retryable PAUSED until resumed (or PauseTimeout passes). A restarted
//     server's detector starts from the stored values in a new
//     incarnation. Errors are {"error": {"code", "message", "retryable"}}
//     with stable codes (Code). client/kv is the Go client, the Python
//     client is clients/python/src/weft/kv.py; `weft kv` the commands.
//   - Watcher (watcher.go): the monitor process (`weft monitor`). One
//     fetcher per server long-polls its candidates (at most BatchesMax
//     pages waiting each); one loop owns a monitor.Set, reports each
//     violation (log, GET /v1/monitor/violations with the witnessing cut,
//     since and detection latency, Prometheus text at /metrics) and, with
//     Rollback, runs the rollback: pause every server, choose the cut T
//     (since, or earlier for writes straddling it: POST /v1/kv/admin/late
//     and /early), check every window reaches T, restore C(T) everywhere as
//     generation g+1, resume.
//     Detection latency is the watcher's clock at detection less the start
//     of the latest state in the cut (the PUT that completed the
//     violation): exact for servers on the watcher's machine. A server
//     restart or a generation change resets the monitors (violations
//     spanning it can be missed); a server's candidates that wait on a full
//     monitor queue stall that server's fetcher (back-pressure), and if
//     every server stalls the monitors reset (counted) instead of
//     deadlocking. After frequent violations (AdviseAfter) it advises a
//     sequential quorum, which servers pass on in their answers.
//   - apps (internal/kv/apps): the paper's applications — the graph
//     computation with local mutual exclusion and the synthetic conjunctive
//     workload with tunable β — with their predicate specs.
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
//     stamps, undo-record sequence numbers and hook calls share one order
//     (the clock lock), so CutTime is monotone along the window;
//   - every queue and buffer is bounded: SiblingsMax, VersionEntriesMax,
//     CandidatesMax, RequestsMax (OVERLOADED), pending transactions,
//     WindowMax, the watcher's BatchesMax, ViolationsKept, LatenciesMax.
//
// # Concurrency
//
// Version, Sibling, Ring and the wire types are values, safe to share. Op,
// Session, TxnParticipant and Txn are pure cores: no goroutines, clocks,
// I/O or randomness, not safe for concurrent use. Replica, Detector, Server
// and Watcher are safe for concurrent use.
//
// # Rollback semantics and limits
//
// A rollback discards every logical write that took effect nowhere before
// T, acknowledged or not: the paper's "restore the system to a state before
// the violation" (§IV), not a selective undo (the paper's refinement of
// rolling back only the clients involved is not done). The watcher starts
// from T = the violation's Since (the latest start in the cut less ε) and,
// if some write applied after Since on one replica had been applied before
// it on another (the monitored home replica may apply a W = 1 write late),
// moves T back once, to the earliest such application, so the writes that
// began the violating states go; writes in flight at the final T are kept
// wherever they arrived. After a restore each detector's first state
// begins when its values were written (LastWrites), so a violation that
// still holds at the restored cut is reported with its true start and the
// next rollback reaches further back instead of repeating.
//
// The PUT stamp is taken, and the detector told, before the write is
// durable (so the undo record can carry it); a write that then fails with
// an I/O error was seen by the detector. A client PUT that straddles a
// rollback — applied by some replicas before the pause, refused PAUSED by
// others — survives where it was applied, as an in-flight write of the
// restored cut, and read repair can spread it later (the monitors then see
// it anew). Sessions must treat a new generation (or PAUSED) as "redo from
// the restored state". A rollback that fails after some replicas restored
// leaves the store at no single cut (reported, not repaired). Undo records
// are trimmed without regard to in-flight writes; keep WindowMax well above
// RequestsMax.
//
// # Not yet
//
// A network shell for the transactional mode (it needs a shared Kronos: an
// order.Oracle over client/kronos) and replication of transactional writes
// to the other N−1 replicas; deletes (tombstones); membership changes (the
// ring is fixed by --peers); anti-entropy (only read repair); monitors that
// survive their own restart (the watcher starts over from the servers'
// buffered candidates); selective rollback of only the clients involved;
// the sim_test.go simulation does not yet drive rollbacks.
package kv
