package engine

import (
	"fmt"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Leases and reachability on a cluster gatekeeper (docs/cluster.md,
// "Leases" and "Availability"): the gatekeeper serves only while its
// process's lease holds, and it tells its process since when each shard has
// failed it, for the heartbeat's report of unreachable peers.

// leaseOK is nil while the lease holds (or there is none), else the
// retryable refusal.
func (g *ClusterGatekeeper) leaseOK() error {
	if g.cfg.Lease == nil {
		return nil
	}
	if err := g.cfg.Lease(); err != nil {
		return fmt.Errorf("%w: %v", ErrOverloaded, err)
	}
	return nil
}

// noteRead records a read's outcome for the shard's reachability: a
// transport failure (the shard unavailable, or the deadline passed) starts
// or continues a failing run; anything the shard answered ends it.
func (l *shardLink) noteRead(err error) {
	switch status.Code(err) {
	case codes.OK:
		l.readFailing.Store(0)
	case codes.Unavailable, codes.DeadlineExceeded:
		l.readFailing.CompareAndSwap(0, time.Now().UnixNano())
	default:
		l.readFailing.Store(0) // it answered (an error of its own)
	}
}

// ShardStalls returns, for each shard, the instant since which the
// gatekeeper has failed to reach it — the first FIFO message it has not
// acknowledged, or the first of an unbroken run of failed reads — or the
// zero time if it reaches it. Lock-free: a FIFO stream blocked under the
// gatekeeper's lock does not block the report. A gatekeeper that stopped
// reports nothing: its streams ended by its own choice, and a report would
// condemn shards that are fine (CI saw a gatekeeper stopped by one killed
// shard report another, which had no backup, and the cluster never served
// again).
func (g *ClusterGatekeeper) ShardStalls() []time.Time {
	out := make([]time.Time, len(g.shards))
	if g.alive() != nil {
		return out
	}
	for i, l := range g.shards {
		since := int64(0)
		for _, t := range []int64{l.unacked.Load(), l.readFailing.Load()} {
			if t != 0 && (since == 0 || t < since) {
				since = t
			}
		}
		if since != 0 {
			out[i] = time.Unix(0, since)
		}
	}
	return out
}
