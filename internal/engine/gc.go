package engine

import (
	"context"
	"github.com/weft-db/weft/internal/shard"
	"time"

	"github.com/weft-db/weft/internal/vclock"
)

// gcLoop advances the garbage-collection watermark: the entry-wise minimum of
// (a) the gatekeepers' clocks HistoryRetention ago, (b) every in-flight
// commit, read and program, and (c) every shard queue's position. Everything
// strictly below it by vector clock precedes every live stamp, so versions
// deleted below it are dropped from the shards, and Kronos releases its
// events below it (dissertation §4.3).
func (db *DB) gcLoop() {
	defer db.wg.Done()
	tick := time.NewTicker(db.cfg.GCEvery)
	defer tick.Stop()
	for {
		select {
		case <-db.done:
			return
		case now := <-tick.C:
			db.advanceWatermark(now)
		}
	}
}

func (db *DB) advanceWatermark(now time.Time) {
	// A NOP (or, from an idle gatekeeper, a delivered note) from every
	// gatekeeper to every shard keeps idle queues moving, so their
	// positions do not hold the watermark back (NOPs coalesce).
	for _, g := range db.gks {
		for s, sh := range db.shards {
			if g.requestNop(uint32(s), vclock.Clock{}) {
				sh.Wake()
			}
		}
	}
	var cur vclock.Clock
	for _, g := range db.gks {
		minInto(&cur, g.shell.Clock())
	}
	db.wmMu.Lock()
	db.samples = append(db.samples, clockSample{at: now, clock: cur})
	// The retention sample: the newest one at least HistoryRetention old.
	var old vclock.Clock
	n := 0
	for i, s := range db.samples {
		if now.Sub(s.at) >= db.cfg.HistoryRetention {
			old, n = s.clock, i
		}
	}
	db.samples = db.samples[n:]
	db.wmMu.Unlock()
	if old.Counters == nil || db.cfg.KeepHistory {
		return
	}
	positions := func(m *vclock.Clock) bool {
		for _, s := range db.shards {
			if !s.Positions(m) {
				return false
			}
		}
		return true
	}
	db.group.WatermarkPass(old, positions, func(wm vclock.Clock, ok bool) {
		if ok {
			db.publishWatermark(wm)
		}
	})
}

// publishWatermark makes wm the watermark if it advanced: reads below it
// are refused, the shards collect below it, Kronos releases its events
// below it.
func (db *DB) publishWatermark(wm vclock.Clock) {
	db.wmMu.Lock()
	if db.watermark.Counters != nil && !vclock.LessEq(db.watermark, wm) {
		db.wmMu.Unlock()
		return
	}
	db.watermark = wm
	db.wmMu.Unlock()
	stamp := vclock.Stamp{Clock: wm}
	for _, s := range db.shards {
		s.Push(shard.GCMsg{Watermark: stamp})
	}
	for i := range db.gks {
		if err := db.oracle.Cleanup(context.Background(), uint32(i), wm); err != nil {
			db.log.Warn("kronos cleanup", "gk", i, "err", err)
		}
	}
}
