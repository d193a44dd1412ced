// Package monitor detects violations of global predicates over Weft's
// servers while they run, after Nguyen, Charapko, Kulkarni and Demirbas,
// "Optimistic Execution in Key-Value Store" (§IV–V): run optimistically on a
// weakly consistent store, watch a correctness predicate P, and report any
// consistent global state in which ¬P holds, so the system can roll back.
//
// # Pieces
//
// A Spec lists the predicates to monitor, each ¬P in disjunctive normal form
// over keys on servers (literal: key@server = value, or ≠), typed as the paper
// does (Fig. 3) and loaded from JSON or YAML (ParseJSON, ParseYAML):
//
//   - conjunctive: one clause;
//   - linear: every combination of per-server parts, i.e. a conjunction of
//     per-server disjunctions written out (Validate checks the product form,
//     which is what makes forbidden-state advancement complete here);
//   - semilinear: any DNF, e.g. local mutual exclusion over a graph: one
//     clause h_u=1 ∧ h_v=1 per edge between different clients.
//
// A Detector per server (one for all predicates) sees the server's PUTs,
// stamped with the server's hybrid vector clock (vclock.HybridClock), and
// emits Candidates: a local state as the HVC interval between the relevant
// PUTs that began and ended it, plus the predicate's values on that server.
// It sends only what the rule of Fig. 5 makes necessary: for conjunctive and
// linear predicates a state goes out only if some clause's local part held
// in it (judged when the state ends); for semilinear ones every state ended
// by a relevant PUT goes out, as the paper prescribes. Flush, the detector's
// heartbeat, ends the current state and sends it whatever it holds: a state
// that stays true reaches the monitor without a new PUT, and a false one
// still moves the server's mark (below).
//
// A Monitor per predicate (a Set holds one per predicate of a spec) queues
// each server's candidates and advances a global state GS (one candidate per
// server) along forbidden states, Chase and Garg's scheme:
//
//   - a candidate is forbidden if no clause's local part holds in it, or if
//     it happened before another candidate of GS (then it happened before
//     every later candidate of that server too, so no violation above GS
//     contains it), or before the mark of a server GS waits for: the end of
//     the last candidate that server sent, useful or not, where all its later
//     candidates start;
//   - conjunctive predicates: this is Garg–Waldecker's checker (red heads are
//     deleted until the heads are pairwise concurrent), and the first
//     violation found is the least one;
//   - linear predicates: the same loop with "some per-server part holds" as
//     the local test; the product form guarantees that when no candidate of a
//     consistent GS is forbidden, some clause holds, and the first violation
//     found is the least one (violations are closed under meet);
//   - semilinear predicates: each clause keeps its own global state over the
//     shared per-server queues, and a server advances in a clause's state when
//     its candidate is forbidden for that clause. Advancing there is
//     semi-forbidden advancement for ¬P: it never removes a violation of the
//     clause, and ¬P is violated iff some clause is, so every clause's least
//     violation is found. A candidate useless to every clause is dropped on
//     arrival.
//
// After a violation the monitor advances past the candidate with the earliest
// start (as the paper's monitor does) and goes on, so one episode may be
// reported several times; each report is a distinct cut.
//
// # The ε rule
//
// Candidates are ordered by their HVC intervals (§V, Fig. 6, Precedes):
// a precedes b iff a.End < b.Start as HVCs and a.End[a's server] ≤
// b.Start[b's server] − ε. When the HVCs are ordered but the owners' times
// are within ε, the intervals may still have overlapped in real time; that
// uncertain case counts as concurrent, as does everything else. The
// direction is conservative: given clocks synchronised within ε,
//
//   - no missed violation: any states that overlapped in real time, and any
//     consistent cut whose states are pairwise less than ε apart, are
//     reported if a clause holds on them (with ε = ∞ that is Possibly(¬P));
//   - but phantoms are possible: states ordered by a message chain yet less
//     than ε apart in physical time may be reported together. With ε = 0 and
//     perfectly synchronised clocks every report is a consistent cut.
//
// If the real skew exceeds ε, real overlaps can be missed: ε must be a safe
// bound. Each Violation carries Since, the latest start in the cut less ε,
// a time no later than any server's clock when the violation began: the
// safe estimate of T_violate a rollback needs (§IV).
//
// # Guarantees and limits
//
// Tested against brute force (oracle_test.go): on random executions the
// monitor reports a violation iff some tuple of states, one per server the
// clause names, satisfies the clause and is pairwise unordered under
// Precedes; its first report for a conjunctive or linear predicate, and for
// each clause of a semilinear one, is the least such tuple.
//
// The monitor needs each server's candidates in order (FIFO; ErrOutOfOrder
// otherwise) and learns nothing from a server that sends none: under Fig. 5 a
// server whose local part stays false is silent, and the other servers'
// candidates queue up waiting for it. Shells must therefore Flush every
// detector now and then; the heartbeat's mark lets the monitor discard what
// precedes it (TestHeartbeatBoundsQueues). Every queue is bounded: QueueMax
// candidates per server and ViolationsMax unread violations; beyond that Step
// returns ErrOverloaded and changes nothing, which is back-pressure, not loss. The monitor itself does not
// roll anything back (kv.Watcher, the monitor process, does: §IV), does
// not survive restarts, and predicates outside these classes (e.g. sums
// over servers) are not supported. Detector.Load sets the values a
// restarted or restored server already holds before its first state.
//
// Detector, Monitor and Set are pure cores: no goroutines, clocks, I/O or
// randomness, output independent of map order; none is safe for concurrent
// use. Candidates and violations share HVC values, which are immutable.
// Building with -tags invariants checks a monitor's whole state after every
// Step.
package monitor
