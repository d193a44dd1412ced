// Package apps holds the two applications of "Optimistic Execution in
// Key-Value Store" (§VI-A), written against the Go kv client as an algorithm
// written for sequential consistency would be, so they can run on an
// eventually consistent store under the monitors (internal/monitor,
// kv.Watcher) and be rolled back:
//
//   - the graph computation with local mutual exclusion (graph.go): clients
//     own vertices and update each from its neighbours' values; a client
//     announces its intent on a vertex (f_v = 1), reads the intents of the
//     neighbours other clients own and backs off if one is raised, else
//     works on v with h_v = 1 (Dekker's pattern: correct when W + R > N and
//     W > N/2, not when W + R ≤ N). ¬P is the
//     semilinear predicate ∨ over edges (u, v) between different clients of
//     h_u = 1 ∧ h_v = 1, each flag watched on its key's first replica;
//   - the synthetic conjunctive workload (synthetic.go): one variable per
//     server, each made true with probability β on a write, ¬P = the
//     conjunction of all of them; GETs and PUTs mixed at a chosen ratio.
//
// Each application also builds its predicate spec. The clients are shells
// (network I/O through client/kv); the graph and spec builders are pure
// functions of a seeded *rand.Rand. A runner is not safe for concurrent use;
// run one per client goroutine.
package apps
