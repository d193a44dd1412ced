package engine

import (
	"github.com/weft-db/weft/internal/gatekeeper"
	"github.com/weft-db/weft/internal/nodeprog"
	"github.com/weft-db/weft/internal/vclock"
)

// progRun is a node program a cluster gatekeeper coordinates
// (ClusterGatekeeper.runProgram). weft serve's gatekeepers run theirs in
// the shell (gatekeeper.Shell.RunProgram); the cluster's are to move there.
type progRun struct {
	coord  *nodeprog.Coordinator
	stamp  vclock.Stamp
	done   chan struct{}
	err    error
	res    any
	shards gatekeeper.ShardSet // shards that may hold state for it
}

// step takes a shard's report (with the shards it sent batches to) and says
// whether the program is over.
func (r *progRun) step(rep nodeprog.Report, sentTo []int) (done bool, err error) {
	r.touch(rep.Shard)
	for _, sh := range sentTo {
		r.touch(sh)
	}
	err = r.coord.Step(rep)
	return err != nil || r.coord.Done(), err
}

// settle records the program's outcome: err, else its gathered result.
func (r *progRun) settle(err error) {
	if err != nil {
		r.err = err
		return
	}
	r.res, r.err = r.coord.Result()
}

func (r *progRun) touch(shard int) { r.shards.Add(shard) }

func (r *progRun) touched(shard int) bool { return r.shards.Has(shard) }
