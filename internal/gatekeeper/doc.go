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
package gatekeeper
