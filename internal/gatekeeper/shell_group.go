package gatekeeper

import (
	"sync/atomic"

	"github.com/weft-db/weft/internal/vclock"
)

// Group is the gatekeepers of one process (weft serve) in shared memory:
// the clock each published with its latest stamp (Shell.sync loads them
// before stamping, so every stamp follows everything any gatekeeper
// stamped — Weaver's clock announcements with τ = 0), their read points
// and hand-offs (ReadPoint), and the garbage-collection passes read points
// must not overlap. It is safe for concurrent use.
type Group struct {
	shells       []*Shell
	published    []atomic.Pointer[vclock.Clock]
	noReadPoints bool
	plants       Plants
	// gcGen is odd while a watermark pass reads what is in flight, and
	// counts the passes (pointHeld).
	gcGen      atomic.Uint64
	pointReads atomic.Uint64
}

// NewGroup returns the group of n gatekeepers; noReadPoints stamps every
// read fresh (for comparisons). The shells join it in NewShell.
func NewGroup(n int, noReadPoints bool, plants Plants) *Group {
	return &Group{shells: make([]*Shell, n), published: make([]atomic.Pointer[vclock.Clock], n),
		noReadPoints: noReadPoints, plants: plants}
}

func (g *Group) join(s *Shell) {
	if g.shells[s.id] != nil {
		panic("gatekeeper: two shells with one id in a group")
	}
	g.shells[s.id] = s
}

// PointReads counts the reads stamped at a read point.
func (g *Group) PointReads() uint64 { return g.pointReads.Load() }

// WatermarkPass computes a garbage-collection watermark (dissertation
// §4.3): old — the entry-wise minimum of the gatekeepers' clocks the
// history retention ago — lowered to every shell's stamps in flight
// (Shell.InflightMin, read one gatekeeper at a time with a yield point
// before each: PointGCInflight) and then by positions, which folds in
// every shard queue's position (false: a queue never moved, nothing is
// safe yet). done gets the watermark, or ok false. Everything strictly
// below it by vector clock precedes every live stamp. A read that chose a
// read point while a pass ran takes a fresh stamp instead (pointHeld's
// check of gcGen), so a point withdrawn between two of the pass's reads
// cannot be registered below the watermark.
func (g *Group) WatermarkPass(old vclock.Clock, positions func(m *vclock.Clock) bool, done func(wm vclock.Clock, ok bool)) {
	g.gcGen.Add(1)
	p := &watermarkPass{g: g, wm: old.Clone(), positions: positions, done: done}
	p.next()
}

// watermarkPass is a pass in progress: the next gatekeeper to read.
type watermarkPass struct {
	g         *Group
	i         int
	wm        vclock.Clock
	positions func(*vclock.Clock) bool
	done      func(vclock.Clock, bool)
}

func (p *watermarkPass) next() {
	if p.i == len(p.g.shells) {
		ok := p.positions(&p.wm)
		p.g.gcGen.Add(1)
		p.done(p.wm, ok)
		return
	}
	p.g.shells[p.i].cfg.Env.Go(PointGCInflight, -1, p.i, p)
}

// Run reads gatekeeper p.i's stamps in flight and goes on.
func (p *watermarkPass) Run() {
	p.g.shells[p.i].InflightMin(&p.wm)
	p.i++
	p.next()
}

// ReadPoint returns a read point a read may be stamped with (see
// ChooseReadPoint and docs/simulation.md, "Read points"), preferring one
// before every transaction in flight; ok is false when there is none
// (nothing in flight: a fresh stamp waits for nothing either) or none may
// be used.
func (g *Group) ReadPoint() (vclock.Stamp, bool) {
	var buf [8]*vclock.Stamp
	points := buf[:0]
	any := false
	for _, s := range g.shells {
		p := s.point.Load()
		points = append(points, p)
		any = any || p != nil
	}
	if g.noReadPoints || !any {
		return vclock.Stamp{}, false
	}
	// The hand-offs are loaded after the points: a point that a hand-off
	// made stale is then seen as stale.
	var hbuf [8]*vclock.Clock
	handed := hbuf[:0]
	for k, s := range g.shells {
		h := s.handed.Load()
		if h != nil && g.plants.OwnCounterPoints {
			own := vclock.New(h.Epoch, len(h.Counters))
			own.Counters[k] = h.Counters[k]
			h = &own
		}
		handed = append(handed, h)
	}
	if g.plants.StalePoints {
		handed = nil // no coverage check
	}
	p := ChooseReadPoint(points, handed)
	if p == nil {
		return vclock.Stamp{}, false
	}
	return *p, true
}

// pointHeld takes a read point and registers it with hold, so that the
// watermark stays at or below it; when a watermark pass overlapped the
// choice (the point may have been withdrawn and passed by the watermark
// before hold ran), release undoes hold and ok is false: the read takes a
// fresh stamp. A pass that began after hold sees the registration; one
// that ended before the choice included the point, still offered then (or
// the point was stamped after it, above its watermark). The shards refuse
// a task below the watermark they collected all the same, so a mistake
// here could cost an ErrSnapshotTooOld, never a wrong answer
// (engine.TestReadPointBelowWatermark drives the race). The caller holds
// its shell's lock, so no watermark pass reads its registrations between
// the choice and hold.
func (g *Group) pointHeld(hold func(vclock.Stamp), release func()) (vclock.Stamp, bool) {
	gen := g.gcGen.Load()
	p, ok := g.ReadPoint()
	if !ok {
		return p, false
	}
	hold(p)
	if (gen&1 == 1 || g.gcGen.Load() != gen) && !g.plants.NoPointRecheck {
		release()
		return vclock.Stamp{}, false
	}
	g.pointReads.Add(1)
	return p, true
}
