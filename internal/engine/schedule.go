package engine

// Yield points. A gatekeeper shell runs on many goroutines at once, and
// some of its steps are only correct for some interleavings of them: a
// preemption between two loads of the others' clocks (gkNode.sync), a
// commit that reaches its commit section or its resolve late. Each such
// place calls db.yield with its point, so a test (or a scheduler that
// explores interleavings) can hold one goroutine there while others run:
// a schedule that took two unlucky preemptions on a loaded machine is then
// a deterministic test. In production yield is nil and costs one branch.
type yieldPoint uint8

const (
	// yieldSyncLoad: gkNode.sync, gatekeeper gk about to load gatekeeper
	// arg's published clock.
	yieldSyncLoad yieldPoint = iota + 1
	// yieldCritical: gkNode.commit, gatekeeper gk's transaction executed
	// and declared, about to enter the store's commit section.
	yieldCritical
	// yieldResolve: gkNode.commit, gatekeeper gk's transaction durable,
	// about to be resolved (handed to the shards).
	yieldResolve
	// yieldPointChosen: DB.pointHeld, a read through gatekeeper gk chose a
	// read point and has not registered it yet.
	yieldPointChosen
	// yieldGCInflight: DB.advanceWatermark, about to read gatekeeper arg's
	// stamps in flight (gk is -1).
	yieldGCInflight
)

// yielder is called at every yield point; arg qualifies the point (the
// gatekeeper loaded, for yieldSyncLoad; 0 otherwise).
type yielder func(p yieldPoint, gk, arg int)

func (db *DB) yieldAt(p yieldPoint, gk, arg int) {
	if db.yield != nil {
		db.yield(p, gk, arg)
	}
}

// plants are bugs planted in the shells on purpose, so that tests show
// their checks catch them (the simulation's planted bugs, in the code that
// runs). All false in production; set by tests before the DB is used.
type plants struct {
	// partialSync merges the others' clocks counter by counter (only each
	// gatekeeper's own entry of its published clock), as gkNode.sync did
	// before clocks were published whole.
	partialSync bool
	// ownCounterPoints accepts a read point that covers each gatekeeper's
	// newest hand-off on that gatekeeper's own counter only, as
	// DB.readPoint did before it compared whole clocks.
	ownCounterPoints bool
	// noPointRecheck uses a read point registered while a watermark pass
	// overlapped its choice (DB.pointHeld's check skipped), as stampRead
	// and runProgram did before it: a commit in flight longer than the
	// history retention let the watermark pass the read's stamp.
	noPointRecheck bool
	// noShardWatermark runs reads and program batches below the watermark
	// their shard collected (shardNode.run's refusal skipped).
	noShardWatermark bool
}
