package engine

import (
	"errors"
	"log/slog"
	"testing"
	"time"
)

// TestStoppedGatekeeperReportsNoStalls: a gatekeeper that stopped (a FIFO
// stream broke) reports no shard unreachable, though its other streams
// hold unacknowledged messages: the report would condemn shards that are
// fine.
func TestStoppedGatekeeperReportsNoStalls(t *testing.T) {
	g := &ClusterGatekeeper{shards: []*shardLink{{}, {}}, stop: make(chan struct{}), log: slog.New(slog.DiscardHandler)}
	since := time.Now().Add(-time.Second)
	g.shards[1].unacked.Store(since.UnixNano())
	if got := g.ShardStalls(); !got[0].IsZero() || !got[1].Equal(since) {
		t.Fatalf("running: stalls %v, want shard 1 since %v", got, since)
	}
	g.fail(errors.New("FIFO stream to shard 0: EOF"))
	for i, s := range g.ShardStalls() {
		if !s.IsZero() {
			t.Fatalf("stopped: shard %d reported stalled since %v", i, s)
		}
	}
}
