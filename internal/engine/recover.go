package engine

import (
	"github.com/weft-db/weft/internal/shard"
	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/vclock"
)

// recover rebuilds every shard's partition and alias index from the store
// at the epoch's start stamp (shard.Recover).
func (db *DB) recover() error {
	t, err := db.st.Begin()
	if err != nil {
		return err
	}
	defer t.Discard()
	w := vclock.Stamp{Clock: vclock.New(db.epoch, db.cfg.Gatekeepers)}
	dir, err := txn.ReadDirectory(t, uint32(db.cfg.Shards), uint32(db.cfg.Shards))
	if err != nil {
		return err
	}
	db.dir.Store(dir)
	for _, s := range db.shards {
		s.Units = shard.RecoveredUnits(uint32(s.ID()), dir, w)
		s.Dir = db.dir.Load
	}
	return shard.Recover(t, w, func(h string) shard.Partition {
		s := db.shards[dir.ShardOf(h)]
		return s.Partition()
	})
}
