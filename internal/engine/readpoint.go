package engine

import (
	"github.com/weft-db/weft/internal/gatekeeper"
	"github.com/weft-db/weft/internal/vclock"
)

// Read points (gatekeeper.Config.ReadPoints). A read stamped fresh follows
// every transaction any gatekeeper has stamped, so on the shards those
// transactions write it waits for their durable commit (an fsync, 1–5 ms,
// much more when the disk stalls). A transaction not yet acknowledged may be
// ordered after the read instead: strict serializability only asks a read
// to follow what was acknowledged, or seen by a finished read, before it
// began. Each gatekeeper stamps a read point just before every transaction
// it stamps and offers the point of its oldest one in flight; a read takes
// one of the offered points instead of a fresh stamp when it may.
//
// A point P may be used while it follows, as a whole vector clock, the
// stamp of every gatekeeper k's newest handed-off transaction (gkNode.handed,
// set before its entries reach any shard, and so before it is acknowledged
// or seen by any read). Everything acknowledged or seen by a finished read
// was handed off first, and k's stamps follow each other, so P follows all
// of it by vector clock: every shard orders it before P without asking
// Kronos. Matching k's own counter is not enough: P may match it and still
// be concurrent with k's transaction T (P's gatekeeper merged the other
// entries at other moments than k did), and Kronos may then hold P < X < T
// for a transaction X of P's gatekeeper in flight that read what T wrote
// (TestReadPointAfterPartialSync; docs/simulation.md, "Read points"). A
// point is an event its gatekeeper stamped, so Kronos still sees one clock
// per gatekeeper counter.
//
// Among usable points, one that precedes every transaction in flight (P's
// entry for each gatekeeper k below k's oldest in-flight counter) waits for
// none of them; otherwise any usable point waits for fewer than a fresh
// stamp would. The rule is gatekeeper.ChooseReadPoint, which the
// simulation (internal/sim, Config.ReadPoints) runs too, against its
// checker, with planted bugs that skip the coverage check or compare own
// counters only.

// readPoint returns a read point a read may be stamped with, preferring
// one before every transaction in flight; ok is false when there is none
// (nothing in flight: a fresh stamp waits for nothing either) or none may
// be used.
func (db *DB) readPoint() (vclock.Stamp, bool) {
	var buf [8]*vclock.Stamp
	points := buf[:0]
	any := false
	for _, g := range db.gks {
		p := g.point.Load()
		points = append(points, p)
		any = any || p != nil
	}
	if db.cfg.NoReadPoints || !any {
		return vclock.Stamp{}, false
	}
	// The hand-offs are loaded after the points: a point that a hand-off
	// made stale is then seen as stale.
	var hbuf [8]*vclock.Clock
	handed := hbuf[:0]
	for k, g := range db.gks {
		h := g.handed.Load()
		if h != nil && db.plant.ownCounterPoints {
			own := vclock.New(h.Epoch, len(h.Counters))
			own.Counters[k] = h.Counters[k]
			h = &own
		}
		handed = append(handed, h)
	}
	p := gatekeeper.ChooseReadPoint(points, handed)
	if p == nil {
		return vclock.Stamp{}, false
	}
	return *p, true
}

// pointHeld takes a read point (readPoint) and registers it as in flight
// with hold, so that the garbage-collection watermark stays at or below it;
// ok is false when there is none, or when a watermark pass overlapped the
// choice (the point may have been withdrawn and passed by the watermark
// before hold ran): release then undoes hold and the read takes a fresh
// stamp. A pass that began after hold sees the registration; one that
// ended before the choice included the point, still offered then (or the
// point was stamped after it, above its watermark). The shards refuse a
// task below the watermark they collected at all the same
// (shardNode.run), so a mistake here could cost an ErrSnapshotTooOld, never
// a wrong answer.
func (db *DB) pointHeld(gk int, hold func(vclock.Stamp), release func()) (vclock.Stamp, bool) {
	gen := db.gcGen.Load()
	p, ok := db.readPoint()
	if !ok {
		return p, false
	}
	db.yieldAt(yieldPointChosen, gk, 0)
	hold(p)
	if (gen&1 == 1 || db.gcGen.Load() != gen) && !db.plant.noPointRecheck {
		release()
		return vclock.Stamp{}, false
	}
	db.pointReads.Add(1)
	return p, true
}
