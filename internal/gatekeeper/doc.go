// Package gatekeeper is the pure core of a Weft gatekeeper (dissertation
// §3.3.3, §3.5.2): it stamps transactions, node programs and NOPs with
// refinable timestamps (its vector clock, ticking its own entry), merges
// clocks announced by peers or carried by NOP requests, and forwards committed
// writes to shards over per-shard FIFO channels with sequence numbers — in
// stamp order, so every shard queue it feeds is increasing.
//
// Invariants: stamps are unique and strictly increasing in the gatekeeper's
// own entry; a shard receives this gatekeeper's entries with consecutive
// sequence numbers and increasing stamps; a stamped transaction holds back
// every later delivery until it is resolved (committed or aborted).
//
// Core is not safe for concurrent use: the shell serializes calls.
//
// Shell (shell.go) is the gatekeeper's one shell: the code around Core that
// weft serve and the simulation both run (clock sync, stamps, read points,
// a commit's execution and commit section, resolve and hand-off, NOPs and
// notes, node-program coordination, moves, what holds the GC watermark),
// written as steps over an Env seam: every yield point (a peer's clock
// loaded, the commit section entered, a resolve) goes through Env.Go, which
// weft serve runs at once on the calling goroutine and the simulation
// schedules as an event, so the interleavings the shell allows are the
// ones the simulation explores. Group (shell_group.go) is the gatekeepers of
// one process in shared memory. A cluster's gatekeeper process
// (engine.ClusterGatekeeper) does not run the shell yet. Shell and Group are
// safe for concurrent use.
package gatekeeper
