package engine

import (
	"errors"
	"fmt"

	"github.com/weft-db/weft/internal/graph"
	"github.com/weft-db/weft/internal/nodeprog"
	"github.com/weft-db/weft/internal/order"
	"github.com/weft-db/weft/internal/shard"
	"github.com/weft-db/weft/internal/vclock"
)

// shardNode is one shard of weft serve or of a cluster's shard process:
// the shard shell every shard runs (shard.Shell, which the simulation runs
// too), over a host that is the DB (localHost) or the shard process's
// links (ShardServer).
type shardNode = shard.Shell

// reader is what a read task sees: a shard's graph at one stamp.
type reader = shard.Reader

func newShardNode(db *DB, id int) (*shardNode, error) {
	return newShardNodeWith(localHost{db}, db.reg, id, db.cfg, newResolver(db))
}

// newShardNodeWith makes shard id of a system of cfg.Gatekeepers
// gatekeepers, ordering through res.
func newShardNodeWith(host shard.Host, reg *nodeprog.Registry, id int, cfg Config, res *order.Resolver) (*shardNode, error) {
	gcfg := graph.DefaultConfig()
	gcfg.KeepHistory = cfg.KeepHistory
	return shard.NewShell(shard.ShellConfig{ID: id, Gatekeepers: cfg.Gatekeepers, Host: host, Registry: reg, Resolver: res,
		Graph: gcfg, ReorderMax: 1 << 16, TasksMax: cfg.ShardTasksMax, NoRefuseBelow: cfg.plants.noShardWatermark})
}

// localHost is the shards' host in one process: the DB itself.
type localHost struct{ db *DB }

func (h localHost) RequestNop(gk, shard int, c vclock.Clock) bool {
	return h.db.gks[gk].requestNop(uint32(shard), c)
}

func (h localHost) Notes(gk, shard int) (*vclock.Clock, *vclock.Clock) {
	return h.db.delivered[gk].Load(), h.db.shardNotes[gk*h.db.cfg.Shards+shard].Load()
}

func (h localHost) Report(gk int, rep nodeprog.Report, sentTo []nodeprog.Batch) {
	h.db.gks[gk].report(rep, sentTo)
}

func (h localHost) SendHop(gk int, stamp vclock.Stamp, b nodeprog.Batch) {
	h.db.shards[b.Shard].Push(shard.ProgMsg{GK: gk, Stamp: stamp, Batch: b})
}

func (h localHost) ShardOf(v string) int { return h.db.shardOf(v) }
func (h localHost) Applied()             { h.db.applied.Add(1) }
func (h localHost) Fail(err error)       { h.db.fail(err) }
func (h localHost) Stopping() bool       { return h.db.closing.Load() }

// shardErr maps a shard's answer to a read to the API's errors.
func shardErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, shard.ErrTooOld):
		return fmt.Errorf("%w: %v", ErrSnapshotTooOld, err)
	case errors.Is(err, shard.ErrOverloaded):
		return fmt.Errorf("%w: %v", ErrOverloaded, err)
	}
	return err
}
