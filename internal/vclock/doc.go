// Package vclock holds Weft's vector clocks: pure values, safe for concurrent
// reads, never mutated in place by comparison.
//
// A clock is an epoch (the cluster configuration version) followed by one
// counter per gatekeeper (dissertation §3.3.3). Epochs compare first: every
// clock of epoch e precedes every clock of epoch e+1. Within an epoch, clocks
// compare entry-wise; neither dominating means concurrent, and only those
// pairs need the timeline oracle (Kronos).
//
// Hybrid vector clocks (hvc.go; Nguyen et al., "Optimistic Execution in
// Key-Value Store", §III-A) serve predicate monitoring (internal/monitor). An
// HVC entry j is the latest physical time of process j that the owner knows
// of; the owner's entry is its own physical time, read from an injected
// PhysicalClock so tests control skew. A local or send event sets the own
// entry to PT and raises every other entry to PT−ε; a receive first takes the
// entry-wise max with the message. Entries at or below Own−ε are implicit and
// compare as Own−ε (the ε rule), which is why the binary form keeps only a
// bitmap and the explicit entries, and why events more than ε plus the clock
// skew apart compare as ordered even without messages. Invariants, checked by
// the property tests: a → b implies hvc(a) < hvc(b); with ε = ∞ the HVC order
// is exactly the vector clock order; the own entry is PT while skew ≤ ε (the
// clock stays strictly monotone even when PT stalls). HybridClock is not safe
// for concurrent use; HVC values are.
package vclock
