// Package nodeprog is Weft's node program engine (dissertation §3.2.3, §4.2;
// Weaver's node programs): programs that run at one timestamp over a
// consistent snapshot of the graph, vertex by vertex, across shards, and the
// built-in programs and whole-snapshot analyses.
//
// # Model
//
// A node program is a function of (vertex view, hop argument, the vertex's
// state for this program) that sends next hops (vertex handle + argument)
// and emits values. Vertices are partitioned over shards; each shard has a
// Runner, which executes the hops for its own vertices, handles local next
// hops in the same call, and returns hops for other shards as Batches.
// Emitted values travel in the Report of each Run to the Coordinator (at the
// gatekeeper that started the program), whose Gather reduces them to the
// final, JSON-marshalable result. Programs are defined by Def (typed params,
// argument, emit) or by implementing Program; params arrive as JSON and are
// validated before anything runs. Analyses (pagerank, wcc, lcc, triangles)
// read a whole Snapshot instead.
//
// # Invariants
//
//   - Determinism: a Runner's output, a Coordinator's result and an
//     analysis' result are functions of their inputs; no map iteration
//     order, clock or randomness leaks into them.
//   - Shard-count independence: every built-in's result is the same for
//     any number of shards and any delivery order of batches and reports
//     (programs are label-correcting with total orders on labels; tests run
//     each on 1 to 7 shards with shuffled, JSON-encoded delivery).
//   - Termination: the coordinator is done exactly when every batch
//     produced has been consumed, whatever order reports arrive in (batch
//     ids, not counters), or early when the Gather knows the answer.
//   - Release: Runner.Finish frees all of a program's state; later batches
//     of that program are refused (ErrFinished) and create none.
//   - Bounds: state entries per runner (ErrOverloaded), programs per runner
//     (ErrOverloaded), hops per program per runner and over the cluster,
//     emits per Run, results, batches in flight (ErrTooLarge), hops per
//     batch (split), params size and list lengths (ErrBadParams). Nothing
//     grows without a bound.
//   - Vertices not visible at the program's stamp are skipped silently: the
//     program sees nothing there.
//
// # Scheduling
//
// A runner processes its hops in the program's Order (BFS by default).
// Label-correcting programs (bfs, reachability, shortest and widest paths)
// use Priority: a runner runs its cheapest local hop first and yields once
// it is ahead of the cheapest hop it sent to another shard, keeping the rest
// of its queue for a later Run (a token batch to itself keeps the program
// alive meanwhile), so shards advance together as in Δ-stepping and rarely
// redo work. A program that reaches its destination calls Ctx.Prune; the
// bound travels on batches and every runner drops hops that can no longer
// change the result. Neither changes any result, only the work done. A shard
// should run all the batches of a program waiting for it in one Run.
//
// # Concurrency
//
// Runner and Coordinator are pure cores in the etcd-raft style: no
// goroutines, no I/O, not safe for concurrent use; the shard and gatekeeper
// shells serialise calls and move Batches and Reports (JSON-encodable;
// Runner.DecodeBatch and Coordinator.DecodeReport decode them). A Registry
// is filled at start-up and read-only after, so shared reads are safe.
// Compiled programs are immutable and may be shared.
//
// # Built-in node programs
//
// Each built-in's parameters (types, defaults), result and an example are
// in reference.go (BuiltinDocs), from which docs/programs-reference.md is
// generated; TestReferenceMatchesPrograms holds it to what the programs
// decode. The tables below are the summary.
//
// Vertex and edge filters (edge_props, node_props, node_preds, edge_preds)
// take {"key": value, ...} (all equal) or [{"key", "rel", "value"}, ...]
// with rel one of EQUALS (default), LESS, GREATER, LESS_EQUAL,
// GREATER_EQUAL, STARTS_WITH, ENDS_WITH, CONTAINS; values are typed
// (value.Value JSON: 3 is an int, 3.0 a float, {"$datetime": "..."} a
// datetime) and compared with value.Compare. Paths tie-break to the fewest
// hops, then the lexicographically smallest handle sequence.
//
//	name                   params                                              result
//	get_node               node; props, edges, aliases (bools, default true)   {handle, props, edges, aliases} or null
//	read_node_props        node; keys (empty = all)                            {node, props} or null
//	get_edges              node; nbrs, edges (handles), edge_props, limit,     {edges: [{handle, src, dst, props}]} or null
//	                       with_props (default true)
//	count_edges            node; nbrs, edges, edge_props                       {count} or null
//	reachability           src, dest; edge_props                               {reachable, hops, path}
//	pathless_reachability  src, dest; edge_props                               {reachable} (answers as soon as found)
//	n_hop_reachability     src, dest, max_hops; edge_props                     {reachable, hops, path}
//	bfs                    src; max_depth, edge_props                          {depths: {vertex: hops}}
//	shortest_path          src, weight (edge property); dest, edge_props       with dest {reachable, cost, hops, path};
//	                                                                           without {costs: {vertex: cost}}
//	widest_path            as shortest_path; cost is the bottleneck width      as shortest_path (src omitted from costs)
//	clustering             node; mode ("out")                                  {node, coefficient, degree, links} or null
//	triangle_count         nodes                                               {total, per_node: {vertex: n}}
//	two_neighborhood       node, prop_key; prop_value, edge_props              {nodes: [{node, value}]}
//	traverse_props         src, node_props (one per level); node_aliases,      {nodes, edges}
//	                       edge_props (one per step, +1 collects the last
//	                       level's edges), collect_nodes, collect_edges
//	discover_paths         src, dest; path_len, node_preds, edge_preds         {paths: {vertex: [edge]}, count}
//
// # Built-in analyses (over a Snapshot)
//
// Each takes top (the k best) and nodes (only these); with neither, every
// vertex, up to SnapshotLimits.ResultsMax.
//
//	pagerank   damping (0.85), iterations (20), tolerance (0), directed (true)  {iterations, delta, ranks, top}
//	wcc        -                                                                {count, largest, labels, top}
//	lcc        mode: out (Weaver's), undirected (Graphalytics), directed        {mode, average, coefficients, top}
//	triangles  -                                                                {triangles, per_node, top}
//
// Package progtest holds the in-memory graph and the deterministic
// multi-shard driver the tests use.
package nodeprog
