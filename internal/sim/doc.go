// Package sim is Weft's deterministic simulation: the server of weft serve
// — gatekeeper cores, shard cores with their multi-version graph
// partitions, Kronos (order.Local) and the Pebble store on Pebble's
// crashable in-memory file system — driven on one goroutine by a seeded
// scheduler, with clients running Elle's list-append workload over the
// graph and a simulated network between them.
//
// The same code as the engine runs. The gatekeepers are weft serve's own
// shells (gatekeeper.Shell: clock sync, stamps, read points, commits with
// their commit sections — the epoch fence, the order after last accesses,
// the directory check —, resolve and the FIFO hand-off, NOPs and notes,
// node-program coordination, moves), over links of the simulation's
// (shells.go): every yield point of the shell is an event the seed
// schedules, so a sync's loads of the others' clocks are spread over up to
// SyncLagMax ticks (the concurrent stamps Kronos refines, and clocks newer
// on one gatekeeper's entry than on another's), a commit section waits for
// its commit delay and a resolve for its resolve delay. The shards are the
// engine's shard shells too (shard.Shell: inbox, rounds, apply, reads and
// program batches at their stamps, the watermark refusal, forwarding for
// moved units, the node-program runner), over a host of the simulation's
// (world.go, shardHost): every message reaches a shard's inbox over the
// network and the shard runs a round. Every message is an event with a
// random delay, so reads overtake writes and gatekeeper→shard entries
// arrive out of order and twice.
//
// Faults: process crashes (memory lost; the disk keeps what was synced and
// a random part of the rest; restart in a new epoch with the shards
// rebuilt from the store), client partitions (requests and replies lost;
// clients time out, and a commit whose answer is lost is indeterminate),
// duplicated and reordered deliveries, and reconfigurations (reconfig.go:
// the cluster moves to a new configuration epoch on the same store, a
// member replaced or a shard added; old-epoch commits still on their way to
// the store reach it after the new epoch's shards rebuilt, and the epoch
// fence, gatekeeper.CheckFence, must refuse them), and moves of placement
// units between shards while the clients run (moves.go;
// docs/online-moves.md). Swarm testing: Draw
// gives each seed its own cluster shape (1–5 gatekeepers, 1–8 shards),
// workload and fault mix. A run has a safety phase with faults and a liveness phase with them
// healed, in which every client must complete more operations; then
// check.CheckListAppend decides strict serializability of the history, and
// the graph-equals-store checker (graphVersusStore: every shard's graph at
// the latest stamp holds exactly what the store says it owns) runs at the
// end and after every reconfiguration, once nothing is in flight.
//
// A seed replays exactly: go test ./internal/sim -run TestSimulation
// -sim.seed=N. Garbage collection runs in half the seeds (gc.go). Not yet
// simulated: the PostgreSQL store's commit retries, the cluster gatekeeper process's own shell
// (engine.ClusterGatekeeper; cluster mode here runs gatekeeper.Shell with
// PeerAck), and failures of single roles (a gatekeeper or shard process
// dying alone).
package sim
