package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/weft-db/weft/internal/vclock"
	pb "github.com/weft-db/weft/internal/wire/clusterpb"
)

// Garbage collection across processes (the dissertation's §4.3, as gc.go
// does in one process). Every GCEvery each gatekeeper computes its low
// clock: the entry-wise minimum of its clock HistoryRetention ago and every
// stamp it has in flight (commits, reads at a snapshot, programs), and
// sends it down each shard's FIFO stream. A shard collects versions below
// the minimum of every gatekeeper's latest low and its own queue positions
// (ShardServer.noteLow). Every stamp a gatekeeper gives later follows its
// clock, which follows its low; a read at an older snapshot is registered
// in flight first, and refused (ErrSnapshotTooOld) when the low already
// sent is not below it — so no shard collects a version a read or program
// still needs.

// holdRead registers a read or program at s in flight in the shell until
// release; err when the low this gatekeeper sent may already have let the
// shards collect versions s needs.
func (g *ClusterGatekeeper) holdRead(s vclock.Stamp) (release func(), err error) {
	key := 1<<61 | g.nextRead.Add(1) // apart from the shell's own keys (stamp sequences, 1<<62|n)
	if !g.shell.HoldRead(s, key, g.readable) {
		return nil, fmt.Errorf("%w: the snapshot is older than the history kept (HistoryRetention)", ErrSnapshotTooOld)
	}
	return func() { g.shell.EndRead(key) }, nil
}

// readable reports whether the low sent so far is below s. Called with the
// shell's lock held (HoldRead), which also guards lowSent.
func (g *ClusterGatekeeper) readable(s vclock.Stamp) bool {
	return g.lowSent.Counters == nil || vclock.LessEq(g.lowSent, s.Clock)
}

// gcLoop sends the low clock to the shards every GCEvery.
func (g *ClusterGatekeeper) gcLoop() {
	defer g.wg.Done()
	t := time.NewTicker(g.cfg.GCEvery)
	defer t.Stop()
	for {
		select {
		case <-g.stop:
			return
		case now := <-t.C:
			g.sendLow(now)
		}
	}
}

// releaseLoop reports the cluster's watermark to Kronos every GCEvery (at
// most ten times a second).
func (g *ClusterGatekeeper) releaseLoop() {
	defer g.wg.Done()
	t := time.NewTicker(max(g.cfg.GCEvery, 100*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-g.stop:
			return
		case <-t.C:
			g.releaseKronos()
		}
	}
}

func (g *ClusterGatekeeper) sendLow(now time.Time) {
	// A NOP to every shard (they coalesce) keeps idle queues moving, so
	// their positions do not hold the watermark back.
	for i := range g.shards {
		g.shell.RequestNop(uint32(i), vclock.Clock{}, false)
	}
	g.samples = append(g.samples, clockSample{at: now, clock: g.shell.Clock()})
	var old vclock.Clock
	n := 0
	for i, s := range g.samples {
		if now.Sub(s.at) >= g.cfg.HistoryRetention {
			old, n = s.clock, i
		}
	}
	g.samples = g.samples[n:]
	if old.Counters == nil {
		return
	}
	low := old.Clone()
	g.shell.InflightMinThen(&low, func() {
		if g.lowSent.Counters != nil && vclock.LessEq(low, g.lowSent) {
			return // not advanced
		}
		g.lowSent = low
		msg := &pb.Entries{Gatekeeper: uint32(g.cfg.ID), Low: clockPB(low)}
		for i, l := range g.shards {
			if err := l.stream.Send(msg); err != nil {
				g.fail(fmt.Errorf("FIFO stream to shard %d: %w", i, err))
				return
			}
		}
	})
}

// releaseKronos reports the cluster's watermark to Kronos for this
// gatekeeper: the minimum of every shard's watermark, each the minimum of
// every gatekeeper's low and that shard's queue positions — below it no
// stamp is ever ordered again (dissertation §4.3). Kronos releases events
// once every gatekeeper of the epoch has reported.
func (g *ClusterGatekeeper) releaseKronos() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var wm vclock.Clock
	for _, l := range g.shards {
		st, err := l.client.Status(ctx, &pb.StatusRequest{})
		if err != nil || st.GetWatermark() == nil {
			return // not every shard collects yet
		}
		c := clockFromPB(st.GetWatermark())
		if c.Epoch != g.cfg.Epoch || len(c.Counters) != g.cfg.Gatekeepers {
			return
		}
		minInto(&wm, c)
	}
	if err := g.cfg.Oracle.Cleanup(ctx, uint32(g.cfg.ID), wm); err != nil {
		g.log.Debug("kronos cleanup", "err", err)
		return
	}
	g.kronosCleanups.Add(1)
}
