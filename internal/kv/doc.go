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
// The pure pieces that clients share (versions, siblings and their stored
// form, the ring, Op and Session, the errors and their codes, the wire
// types) are in internal/kv/kvcore, which has no server code; the servers,
// the tools and the tests name them there (kvcore.Version).
//
//   - Ring: consistent hashing with virtual nodes; a key's preference list
//     is the first N distinct servers clockwise from its hash. Tokens depend
//     only on (server number, vnode), so every party computes the same ring.
//   - Replica: one server's share, in Pebble (key 'v'+key → the encoded
//     sibling list, kvcore/codec.go), fsynced before a PUT is
//     acknowledged; stamps each request with the server's
//     vclock.HybridClock (merging the HVC the client carries) and shows
//     each applied PUT to a PutHook. Every applied
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
//   - TxnParticipant and Txn: the Kronos transactional mode (txn.go),
//     served over HTTP by txn_server.go (below) with its durable state in
//     txn_store.go.
//   - Server: the shell — HTTP/JSON on loopback (kvcore/wire.go): POST /v1/kv/get,
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
//     with stable codes (Code). With ServerConfig.Oracle (a shared Kronos:
//     `weft kv serve --kronos`), POST /v1/kv/txn runs a multi-key
//     transaction coordinated by the server that receives it: each part
//     goes to its key's primary server (POST /v1/kv/txn/prepare: the
//     participant queues it, stores it with fsync, and votes by asking
//     Kronos to order it after the transactions before it on its keys),
//     then POST /v1/kv/txn/decide; a committed part runs once it heads
//     its keys' queues, each write with a marker in its batch so a part
//     re-run after a crash skips what it wrote (Add writes are not run
//     twice), and the last write's batch records it as the last
//     transaction run on its keys (reloaded after a restart, so later
//     transactions are still ordered after it). Each write's batch also
//     stores one outbox record per other replica of the key
//     (txn_outbox.go); the primary pushes them as POST /v1/kv/put with its
//     stamp, deletes each once acknowledged, retries the rest every
//     OutboxRetry (durable across restarts), and answers the decide call
//     only once W replicas of each written key hold the write. Presumed abort: the coordinator stores a commit with fsync
//     before telling anyone; a part undecided for TxnTimeout (or reloaded
//     after a restart) asks its coordinator (POST /v1/kv/txn/status), and
//     one that no longer runs the transaction and has no commit record
//     answers abort. client/kv.Client.Txn is the Go call. client/kv is
//     the Go client, the Python
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
//     With DataDir (watcher_state.go) it stores every reported
//     violation's identity (fsynced before the report): a restarted
//     watcher replays the candidates the servers retain from index 0 and
//     drops the violations it already reported (counted as Duplicates).
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
// (-kv.sim.seed).
//
// sim_rollback_test.go runs the same world (crashes included) with N3R1W1
// clients under a monitored conjunctive predicate, detectors and monitors
// inside the simulation (a restarted server's detector reloads its values
// and the monitors start over, as the kv server and the watcher do), and
// every violation rolled back through ChooseCut and RestoreMonitored (the
// watcher's and the server's own code; with a server down the rollback
// fails and changes nothing, as the watcher's does; a replica that crashes
// between the pause and its restore is restored once it is back, as the
// watcher's retry does); after each
// rollback, checkers built on the simulation's log of every applied PUT
// (not the undo window) verify that each replica holds exactly the cut
// C(T) for a T at or before the violation's Since, that the cut is
// causally closed, that no write that took effect before T was lost
// anywhere, that a violation still holding at the restored cut is
// reported again and the next rollback reaches before T, and that the
// monitors miss nothing a brute-force search of the logged local states
// finds under the ε rule (and report no phantom). Planted bugs (a restore
// skipping a replica, the straddling writes not kept, a fetcher losing
// candidates, a retry that forgets the crashed replica) are each caught by
// their checker (-kv.sim.rbseeds=N for more seeds).
//
// Quorums are strict: round 2 asks only the key's own
// replicas (no sloppy quorum or hinted handoff), so a key with fewer than W
// live replicas refuses writes. Replicas talk to each other only to push
// transactional writes (the outbox): there is no anti-entropy besides read
// repair.
//
// # Invariants (checked with -tags invariants, and by the tests)
//
//   - a key's stored siblings are pairwise concurrent, in canonical order;
//   - a replica acknowledges a PUT only after it is durable (Sync);
//   - hook calls are serialised and their HVC stamps strictly increase;
//     stamps, undo-record sequence numbers and hook calls share one order
//     (the clock lock), so CutTime is monotone along the window;
//   - every queue and buffer is bounded: SiblingsMax, VersionEntriesMax,
//     CandidatesMax, RequestsMax (OVERLOADED), pending transactions
//     (TxnPendingMax), the transactional outbox (OutboxMax), the watcher's
//     stored violation identities (ReportedMax),
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
// next rollback reaches further back instead of repeating. One exception,
// found by the rollback simulation: when the restored value on the watched
// replica was written by a kept straddling write that replica applied
// after T, its state begins at that late application, the new report's
// Since is not before T, and it is ChooseCut (that write straddles the new
// Since) that takes the next cut before T. The "reported again" rule also
// needs the monitors not to reset in between (a reset loses the report).
//
// The PUT stamp is taken, and the detector told, before the write is
// durable (so the undo record can carry it); a write that then fails with
// an I/O error was seen by the detector. A client PUT that straddles a
// rollback — applied by some replicas before the pause, refused PAUSED by
// others — survives where it was applied, as an in-flight write of the
// restored cut, and read repair can spread it later (the monitors then see
// it anew). Sessions must treat a new generation (or PAUSED) as "redo from
// the restored state". A restore that fails on some server (its request or
// answer lost, or the server restarted and lost its pause) is redone — the
// server asked for its generation first, paused again if it is not yet
// there — until 3 × RollbackTimeout after the rollback began (the pauses
// last 4 ×); only a server unreachable for that long leaves the store at no
// single cut (reported, not repaired). A pause is stored (fsynced) until
// resumed or expired, so a server that restarts in the middle of a
// rollback comes back paused instead of serving the state being
// discarded. If its pause expired first, the writes it took meanwhile come
// after the cut and its restore discards them, except those that took
// effect before the cut elsewhere: each retry lists the writes straddling
// the cut again and keeps them. Undo records
// are trimmed without regard to in-flight writes; keep WindowMax well above
// RequestsMax.
//
// # Transactions: limits
//
// A transaction's part runs (and its reads read) on its key's primary;
// its writes reach the other N−1 replicas through the primary's durable
// outbox, W of them before the client is answered, the rest eventually (a
// quorum GET with R + W > N sees an acknowledged transaction). If fewer
// than W acknowledge within TxnTimeout the client gets UNAVAILABLE for a
// transaction committed on its primary. A replica holding an eventual-mode
// sibling the primary never saw keeps it beside the transactional write.
// While a primary is down, transactions on its keys fail (nothing is
// applied anywhere): there is no failover of the primary role. The outbox
// holds at most OutboxMax records (beyond: new parts OVERLOADED). Two-phase commit blocks: a part whose
// coordinator is down keeps its keys until the coordinator returns. An
// Add write to a value
// that is not a decimal integer fails at run time, after the commit: that
// part then stops with the writes before it applied (logged). Kronos clock
// events are never released (Cleanup), and a commit record stays until
// every part confirmed the decision. A transaction answered UNAVAILABLE
// has an unknown outcome (it may commit later, when its parts are
// settled). Transactions ignore the rollback pause, and a rollback undoes
// transactional writes like any other (it is meant for the eventual mode).
//
// # Not yet
//
// Deletes (tombstones); membership changes (the ring is fixed by --peers);
// anti-entropy (only read repair and the transactional outbox); failover
// of a transaction primary; a restarted monitor's duplicates found through
// a different cut are not identified (watcher_state.go); selective rollback
// of only the clients involved (the rollback simulation checks whole-store
// rollback).
package kv
