package sim

import (
	"github.com/weft-db/weft/internal/gatekeeper"
	"github.com/weft-db/weft/internal/shard"
	"github.com/weft-db/weft/internal/vclock"
)

// Garbage collection (dissertation §4.3), as weft serve runs it: every
// GCEvery ticks a pass samples the gatekeepers' clocks and computes the
// watermark with the shells' own pass (gatekeeper.Group.WatermarkPass: the
// sample RetentionTicks old, lowered to every stamp in flight — read one
// gatekeeper at a time, with other events between two reads — and to every
// shard queue's position). A watermark that advanced is published: reads
// registering below it are refused, the shards collect the versions below
// it (shard.GCMsg, over the network) and refuse tasks below it, Kronos
// releases its events below it. A read or program below the watermark gets
// SNAPSHOT_TOO_OLD (a failed operation in the history), never a wrong
// answer: the checkers decide. One process only (cluster gatekeepers send
// lows instead, engine.ClusterGatekeeper; not simulated).

type gcSample struct {
	at    int64
	clock vclock.Clock
}

// scheduleGC starts server s's passes.
func (w *world) scheduleGC(s *server) {
	if w.cfg.GCEvery == 0 || s.group == nil {
		return
	}
	w.after(int64(1+w.rng.IntN(w.cfg.GCEvery)), func() { w.gcPass(s) })
}

// gcPass is one pass of s's garbage collection.
func (w *world) gcPass(s *server) {
	if w.srv != s {
		return
	}
	defer w.after(int64(w.cfg.GCEvery), func() { w.gcPass(s) })
	w.stats.GCPasses++
	// A NOP (or a note) from every gatekeeper to every shard keeps idle
	// queues moving, so their positions do not hold the watermark back.
	for g := range s.gks {
		for _, n := range s.shards {
			w.nopRequest(s, g, n, vclock.Clock{})
		}
	}
	var cur vclock.Clock
	for _, g := range s.gks {
		gatekeeper.MinInto(&cur, g.Clock())
	}
	s.samples = append(s.samples, gcSample{at: w.now, clock: cur})
	// The retention sample: the newest one at least RetentionTicks old.
	var old vclock.Clock
	n := 0
	for i, sm := range s.samples {
		if w.now-sm.at >= int64(w.cfg.RetentionTicks) {
			old, n = sm.clock, i
		}
	}
	s.samples = s.samples[n:]
	if old.Counters == nil {
		return
	}
	positions := func(m *vclock.Clock) bool {
		for _, n := range s.shards {
			if !n.Positions(m) {
				return false
			}
		}
		return true
	}
	s.group.WatermarkPass(old, positions, func(wm vclock.Clock, ok bool) {
		if ok && w.srv == s {
			w.publishWatermark(s, wm)
		}
	})
}

// publishWatermark makes wm s's watermark if it advanced.
func (w *world) publishWatermark(s *server, wm vclock.Clock) {
	if s.watermark.Counters != nil && !vclock.LessEq(s.watermark, wm) {
		return
	}
	s.watermark = wm
	w.stats.Watermarks++
	stamp := vclock.Stamp{Clock: wm}
	for _, n := range s.shards {
		w.after(w.delay(), func() {
			if w.srv == s {
				n.Push(shard.GCMsg{Watermark: stamp})
				w.stepShard(s, n)
			}
		})
	}
	for i := range s.gks {
		if err := s.oracle.Cleanup(ctx, uint32(i), wm); err != nil {
			panic(err)
		}
	}
}

// readable reports whether reads at st are still served on s.
func (s *server) readable(st vclock.Stamp) bool {
	return s.watermark.Counters == nil || vclock.LessEq(s.watermark, st.Clock)
}
