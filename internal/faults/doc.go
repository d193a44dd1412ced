// Package faults runs Weft's real-process fault tests (Jepsen-style): a
// real `weft serve` process on loopback behind a fault-injecting TCP proxy
// (internal/faultproxy), clients running transactional workloads through the
// proxy, a nemesis that kills the server with SIGKILL and restarts it on the
// same data directory, pauses it with SIGSTOP/SIGCONT, partitions its client
// traffic (both ways or one way) and clogs it, and finally the history
// checkers of internal/check on everything the clients saw. `weft faults`
// is its command; docs/testing.md describes how to run it and read its
// report.
//
// Phases of a run (Run):
//  1. start the server and the proxy; set up each workload's vertices;
//  2. the fault phase: clients run while the nemesis injects faults from a
//     plan drawn from the seed (PlanFaults), one at a time, each lasting a
//     few seconds, separated by quiet gaps;
//  3. the healed phase: every fault is undone (the server resumed or
//     restarted, the proxy healed) and the clients go on; each client must
//     complete an operation (liveness);
//  4. the clients stop; when kill is among the nemeses the server is killed
//     with SIGKILL once more and restarted; each workload reads everything it
//     wrote at one snapshot (final reads, recorded in its history);
//  5. the server stops; histories are written as Jepsen JSON lines, checked,
//     cross-checked with the independent checker adya when it is installed,
//     and summarised in a Report.
//
// Targets. The nemesis and the clients work on a target (nemesis.go):
// one `weft serve` behind the fault proxy (the default, above), or, with
// Config.Cluster, a cluster of real processes started by `weft cluster up`
// in OutDir/cluster (cluster.go): Kronos and coordinator raft groups, a
// PostgreSQL, gatekeepers and shards with backups. Against a cluster the
// clients spread over the gatekeepers' API addresses from the
// coordinator's configuration and move to the next one when theirs fails
// or leaves the configuration; the nemesis kills with SIGKILL, in turn, a
// gatekeeper slot holder, a shard slot holder, a Kronos replica and a
// coordinator replica (the raft groups' leaders on their first kill),
// restarts each with its recorded command line after the fault's hold
// (the pause kinds stop the same processes with SIGSTOP instead; a fenced
// gatekeeper or shard that exits on resuming is restarted), and measures
// each fault's recovery: the time until every client completed an
// operation invoked after the kill, and until the coordinator served an
// active configuration with every slot held (Recovery, RecoverySummary).
// The next fault waits until the cluster is whole again (every process up,
// restarted gatekeepers and shards registered as backups). There is no
// final kill: the final reads run on the healed cluster. `weft cluster
// down` stops it at the end, after errors and when the context ends too,
// and any process of cluster.json still running then is killed and
// reported. With ClusterConfig.MoveEvery a mover (mover.go) also moves
// placement units between shards through a gatekeeper's POST /v1/move
// while the clients run; its moves, refusals and failures are counted in
// the Report, never problems.
//
// Workloads map Jepsen's onto the graph (workload.go lists them):
// list-append and rw-register keys are vertices with a list-valued or an
// integer property, bank accounts are vertices with a balance, the ring is
// FoundationDB's cycle as one out-edge per vertex, set-full adds vertices
// linked from a per-generation root vertex, and sideband passes a committed
// write to a reader through a Go channel.
//
// Outcomes. Every operation is recorded as an invocation and a completion:
// ok when the commit was acknowledged (or a read-only transaction read its
// snapshot), fail only when the transaction certainly did not commit (no
// commit was sent, or the server answered a code that rejects the whole
// transaction before it is applied: ABORTED, SNAPSHOT_TOO_OLD, OVERLOADED,
// NOT_FOUND, ALREADY_EXISTS, INVALID_ARGUMENT), and info otherwise: a
// timeout, a reset connection, UNAVAILABLE or INTERNAL during a commit may
// or may not have committed. A process whose operation ended info is
// retired and its client continues as a new process, as in Jepsen.
//
// Invariants checked: no anomaly in any history (strict serializability for
// list-append and rw-register, the bank total, one ring, no lost or stale
// set element, sideband visibility), no acknowledged write missing from the
// final reads, liveness after healing, no unexpected exit of a process, and
// (cluster) every kill recovered within ClusterConfig.RecoveryTimeout.
//
// Determinism: the fault plan and every workload's choices come from
// seeded generators (one per client), so the seed replays the same plan and
// the same operation mix; the interleaving of real processes does not
// replay. Nothing here is safe to share between two concurrent Runs
// except through their separate Configs.
package faults
