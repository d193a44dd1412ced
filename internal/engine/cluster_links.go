package engine

import (
	"context"
	"sync"
	"time"

	"google.golang.org/grpc"

	"github.com/weft-db/weft/internal/vclock"
	pb "github.com/weft-db/weft/internal/wire/clusterpb"
)

// ShardLinks are a shard process's connections to the rest of its cluster:
// every gatekeeper (NOP requests, program reports) and every shard (program
// hops). They implement ShardConfig.RequestNop and ProgramLinks.
type ShardLinks struct {
	shard  uint32
	gks    []pb.GatekeeperClient
	shards []pb.ShardClient
	conns  []*grpc.ClientConn

	mu      sync.Mutex
	pending []*vclock.Clock // per gatekeeper: the NOP request to send next
	busy    []bool          // per gatekeeper: a sender goroutine runs
	done    chan struct{}
}

var _ ProgramLinks = (*ShardLinks)(nil)

// DialShardLinks connects shard to the gatekeepers and shards at the given
// addresses (connections are made lazily, so peers may start later).
func DialShardLinks(shard int, gatekeeperAddrs, shardAddrs []string) (*ShardLinks, error) {
	l := &ShardLinks{shard: uint32(shard), pending: make([]*vclock.Clock, len(gatekeeperAddrs)),
		busy: make([]bool, len(gatekeeperAddrs)), done: make(chan struct{})}
	for _, a := range gatekeeperAddrs {
		conn, err := dialCluster(a)
		if err != nil {
			l.Close()
			return nil, err
		}
		l.conns = append(l.conns, conn)
		l.gks = append(l.gks, pb.NewGatekeeperClient(conn))
	}
	for _, a := range shardAddrs {
		conn, err := dialCluster(a)
		if err != nil {
			l.Close()
			return nil, err
		}
		l.conns = append(l.conns, conn)
		l.shards = append(l.shards, pb.NewShardClient(conn))
	}
	return l, nil
}

// Close stops the NOP senders and closes the connections.
func (l *ShardLinks) Close() {
	l.mu.Lock()
	select {
	case <-l.done:
	default:
		close(l.done)
	}
	l.mu.Unlock()
	for _, c := range l.conns {
		c.Close()
	}
}

// RequestNop asks gatekeeper gk for an entry past c without blocking: one
// call at a time per gatekeeper, requests arriving meanwhile merged into
// the next (a NOP past the merged clock answers each of them); retried
// until the gatekeeper answers or the links close.
func (l *ShardLinks) RequestNop(gk int, c vclock.Clock) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if p := l.pending[gk]; p != nil && p.Epoch == c.Epoch {
		p.Merge(c)
	} else {
		c = c.Clone()
		l.pending[gk] = &c
	}
	if !l.busy[gk] {
		l.busy[gk] = true
		go l.sendNops(gk)
	}
}

func (l *ShardLinks) sendNops(gk int) {
	for {
		l.mu.Lock()
		c := l.pending[gk]
		l.pending[gk] = nil
		if c == nil {
			l.busy[gk] = false
			l.mu.Unlock()
			return
		}
		l.mu.Unlock()
		for attempt := 0; ; attempt++ {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_, err := l.gks[gk].RequestNop(ctx, &pb.NopRequest{Shard: l.shard, Clock: clockPB(*c)}, grpc.WaitForReady(true))
			cancel()
			if err == nil {
				break
			}
			select {
			case <-l.done:
				return
			case <-time.After(min(time.Duration(attempt+1)*50*time.Millisecond, time.Second)):
			}
		}
	}
}

// Report implements ProgramLinks.
func (l *ShardLinks) Report(ctx context.Context, gk int, report []byte, sentTo []uint32) error {
	_, err := l.gks[gk].Report(ctx, &pb.ReportRequest{Report: report, SentTo: sentTo}, grpc.WaitForReady(true))
	return err
}

// Hop implements ProgramLinks.
func (l *ShardLinks) Hop(ctx context.Context, shard, gk int, stamp, batch []byte) error {
	_, err := l.shards[shard].Hop(ctx, &pb.HopRequest{Gatekeeper: uint32(gk), Stamp: stamp, Batch: batch}, grpc.WaitForReady(true))
	return err
}
