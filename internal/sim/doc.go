// Package sim is Weft's deterministic simulation: the server of weft serve
// — gatekeeper cores, shard cores with their multi-version graph
// partitions, Kronos (order.Local) and the Pebble store on Pebble's
// crashable in-memory file system — driven on one goroutine by a seeded
// scheduler, with clients running Elle's list-append workload over the
// graph and a simulated network between them.
//
// The same code as the engine runs: gatekeeper.Core (stamping, FIFO
// hand-off, NOPs and notes), gatekeeper.OrderAfterAccess (the commit's
// ordering after last accesses), txn.Exec on the store, shard.Core
// (scheduling), shard.Apply, shard.ReadOrderer and shard.Recover. Only the
// shells differ: here every message is an event with a random delay, so
// reads overtake writes, gatekeeper→shard entries arrive out of order and
// twice, and a gatekeeper reads the others' clocks some ticks before it
// stamps (SyncLagMax), which yields the concurrent stamps Kronos refines.
//
// Faults: process crashes (memory lost; the disk keeps what was synced and
// a random part of the rest; restart in a new epoch with the shards
// rebuilt from the store), client partitions (requests and replies lost;
// clients time out, and a commit whose answer is lost is indeterminate),
// duplicated and reordered deliveries. Swarm testing: Draw gives each seed
// its own cluster shape (1–5 gatekeepers, 1–8 shards), workload and fault
// mix. A run has a safety phase with faults and a liveness phase with them
// healed, in which every client must complete more operations; then
// check.CheckListAppend decides strict serializability of the history.
//
// A seed replays exactly: go test ./internal/sim -run TestSimulation
// -sim.seed=N. Not yet simulated: node programs spanning shards, garbage
// collection, and (until the cluster exists) failures of single roles.
package sim
