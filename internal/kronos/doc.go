// Package kronos is Weft's event ordering service (Kronos paper §2;
// dissertation ch.2): an event dependency graph that answers and records
// happens-before relations between events named by id or by vector clock.
//
// The core (Graph) is a pure, deterministic state machine: no goroutines, no
// clocks, no I/O, no randomness, and output never depends on map iteration
// order. It is not safe for concurrent use; the service shell (server.go)
// serialises access and replicates the commands that mutate it with etcd raft
// (Machine applies them, with per-client exactly-once sessions).
//
// Invariants, checked by CheckInvariants and the property tests (and after
// every mutating call in builds with -tags invariants; far too slow for
// production):
//   - coherency: the graph is acyclic;
//   - monotonicity: once query_order answers BEFORE or AFTER for a pair of live
//     events, it answers the same for as long as both live;
//   - atomicity: an AssignOrder batch whose must pair contradicts the graph
//     changes nothing;
//   - strict GC: an event lives while its client references or its in-edges
//     (edges from live events) are non-zero; releasing the last reference
//     collects every event that thereby becomes unreachable from a referenced
//     one, in time linear in what is collected (plus, if released clock
//     events are among it, the released entries of their chains, swept once
//     per call);
//   - clock agreement: for clock-named events, vector-clock order implies graph
//     order (each new clock event is linked to the last event below it and the
//     first event above it in every gatekeeper chain, found by binary search),
//     including events Cleanup released that still live: they keep their chain
//     entries until collected.
//
// Memory: an event with one reference and no edges costs 20 bytes in the event
// table (chunked arrays indexed by id; a fully collected chunk is freed, one
// kept in reserve for reuse), plus its share of the traversal scratch space;
// each edge costs 8 bytes in a size-classed arena. A clock event also costs its
// chain entry, and, once released but still live, an entry in the released map.
package kronos
