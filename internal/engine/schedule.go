package engine

import "github.com/weft-db/weft/internal/gatekeeper"

// Yield points. A gatekeeper shell runs on many goroutines at once, and
// some of its steps are only correct for some interleavings of them: a
// preemption between two loads of the others' clocks (gkNode.sync), a
// commit that reaches its commit section or its resolve late. Each such
// place calls db.yield with its point, so a test (or a scheduler that
// explores interleavings) can hold one goroutine there while others run:
// a schedule that took two unlucky preemptions on a loaded machine is then
// a deterministic test. In production yield is nil and costs one branch.
type yieldPoint = gatekeeper.Point

// The shells' yield points (gatekeeper.Point).
const (
	yieldSyncLoad   = gatekeeper.PointSyncLoad
	yieldCritical   = gatekeeper.PointCritical
	yieldResolve    = gatekeeper.PointResolve
	yieldGCInflight = gatekeeper.PointGCInflight
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
// their checks catch them (the simulation plants the same ones through
// gatekeeper.Plants). All false in production; set by tests in Config.
type plants struct {
	// shell: the gatekeeper shells' and group's (gatekeeper.Plants).
	shell gatekeeper.Plants
	// noShardWatermark runs reads and program batches below the watermark
	// their shard collected (shard.Shell.run's refusal skipped).
	noShardWatermark bool
}
