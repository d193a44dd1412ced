// Package progtest is the test harness of package nodeprog: an in-memory
// property graph implementing nodeprog.Vertex, nodeprog.Edge and
// nodeprog.Snapshot, and Cluster, a deterministic single-threaded driver that
// partitions the graph over S shards, runs one nodeprog.Runner per shard and
// routes batches and reports between them and a nodeprog.Coordinator, as a
// cluster would, optionally through JSON (the wire) and in a seeded random
// delivery order. After every program it checks termination detection (no
// message in flight once the coordinator has nothing outstanding) and state
// release (every runner empty after Finish).
//
// Nothing here is safe for concurrent use; a Graph must not change while a
// program runs over it.
package progtest
