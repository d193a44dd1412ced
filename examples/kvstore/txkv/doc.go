// Package txkv is the transactional key-value store of the Kronos paper
// (§3.3) on Weft's Kronos service, with the bank of §4.1.2 and a checker.
//
// Keys are split into contiguous ranges, one per partition server. Every
// transaction attempt is a Kronos event, and runs in two phases.
//
// Ordering. The coordinator sends the transaction to every partition that
// owns one of its keys, in parallel. A partition, one transaction at a time,
// issues a single atomic assign_order batch asking that the transaction MUST
// follow the last event that read or wrote each of its keys there, and on
// success appends the transaction to each key's chain, making it that key's
// last event. If any partition's batch fails with MUST_CONFLICT — two
// partitions ordered two transactions oppositely, so the second order would
// close a cycle — the attempt aborts: its entries elsewhere become no-ops,
// and the transaction retries as a new event. An attempt aborts only here,
// before it has read anything, so a transaction's function runs once.
//
// Execution. A transaction reads key k at its own position in k's chain: the
// value of the nearest entry before it that wrote k. It waits until every
// entry before it that may write k has finished (written, decided not to, or
// aborted); entries after it are ignored even if they have already written.
// It then writes, or not, and finishes its entries, waking its successors.
//
// Why that read is the right one. Each chain is a total order of every
// transaction that touched its key, and each link is a Kronos edge, so the
// chains agree with one acyclic graph. Take any topological order of the
// committed events and run the transactions serially in it: the writers of k
// preceding T are exactly the writers before T in k's chain (all of k's
// touchers are on one path), so T reads there what it read here. Hence every
// topological sort of the event dependency graph is an equivalent serial
// schedule — the paper's claim, which Verify checks on real histories.
// Reading the newest version instead, or not waiting for a pending
// predecessor, breaks it: the read would come from a writer Kronos places
// after T, or miss one it places before. Waits follow Kronos edges, which are
// acyclic, and ordering never waits, so there is no deadlock. A read-only
// transaction (an audit) is on the chains too, so a later writer is ordered
// after it; writers do not wait for readers, and versions a pending reader
// may still need are kept (multi-versioning) until every entry before a
// newer finished write has finished.
//
// Events are never released here: a long-lived store would have each
// partition hold a reference to each key's last event and release the one it
// replaces. Store is safe for concurrent use.
package txkv
