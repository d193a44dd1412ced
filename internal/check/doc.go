// Package check decides whether recorded histories of Weft operations are
// allowed by strict serializability, the model Weft promises. The
// deterministic simulator runs it on every simulated history and the
// real-process fault tests on theirs; a failure names the anomaly and shows
// the operations that prove it.
//
// Histories. A History is a slice of Op in Jepsen's format (process, type
// invoke/ok/fail/info, f, value, time, index), in real-time order: an
// operation precedes everything recorded after it, and only positions, never
// Time, decide real-time precedence, as in Jepsen. Recorder builds one as
// clients run; Reader and Writer move it as JSON lines that Jepsen and Elle
// tools read (micro-operations as ["append",3,7], keys and values integers).
// Pairs matches each invocation with its completion. An Info completion, or
// none, is indeterminate: the operation may have taken effect at any time
// after its invocation, even after the history ends, so its writes may be
// observed; it precedes nothing in real time and is never required to have
// happened. A Fail definitely did not happen.
//
// Checkers.
//   - CheckListAppend (Elle's list-append) and CheckRWRegister (Elle's
//     rw-register) infer Adya's dependency graph — ww, wr and rw edges from
//     the values read, plus process and real-time edges — find its strongly
//     connected components (Tarjan) and in each a short cycle, searching
//     for the weakest anomaly first (G0, G1c, G-single, G2, then with
//     process edges, then with real-time edges), and name it: G0, G1c,
//     G-single, G-nonadjacent or G2-item, suffixed -process or -realtime
//     when the cycle needs those edges. They also report the non-cycle
//     anomalies G1a, G1b, internal, future-read, incompatible-order,
//     duplicate-elements and garbage-read. Real-time edges are Elle's
//     transitive reduction (each operation linked from the frontier of
//     recently completed ones), so a 50,000-operation history checks in a
//     few hundred milliseconds.
//   - CheckBank, CheckRing, CheckSetFull and CheckSideband check the bank,
//     ring (FoundationDB's cycle workload), set-full and out-of-band
//     causality workloads.
//
// Soundness. Every reported anomaly is a real violation of strict
// serializability, provided the history obeys its workload's rules (unique
// values per key, one pending operation per process; breaches are
// ErrMalformed errors, not anomalies). Each inferred edge holds in every
// strictly serializable execution: version orders come only from list
// prefixes, a transaction's read-then-write, the initial nil, and (for
// rw-register) real time, whose edges are labelled so that cycles needing
// them are named -realtime. Edges out of an Info transaction exist only once
// its effects were observed, which proves it committed. Tests check this
// against a brute-force oracle that enumerates serial orders.
//
// Limits. The checkers are not complete: a valid verdict is not a proof.
// They see no predicate anomalies (G2 on predicates, phantoms), only item
// anomalies on keys. rw-register infers little of each key's version order,
// so it misses more than list-append. One anomaly is reported per strongly
// connected component, and a component's search for the weakest cycle has an
// edge budget (cycleSearchBudget) past which a more general shape names it.
// Results list at most AnomaliesMax anomalies. Real-time order is only as
// good as the recording: record an invocation before sending and a
// completion after the reply.
//
// Concurrency. Checkers are pure functions of their input and safe to call
// concurrently; they do not modify the history. Recorder is safe for
// concurrent use; Reader and Writer are not. Reports are deterministic:
// nothing depends on map iteration order. Builds with -tags invariants also
// verify every reported cycle and every real-time reduction.
package check
