package coord

import (
	"context"
	"log/slog"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	pb "github.com/weft-db/weft/internal/wire/coordpb"
)

// The raft transport follows internal/kronos/transport.go (one client
// stream per peer, dropped on overload: raft retransmits).

// peerQueueMax bounds the messages queued for one peer. Raft tolerates lost
// messages (it retransmits), so a full queue drops rather than blocks.
const peerQueueMax = 1024

// peer streams raft messages to one other replica over gRPC.
type peer struct {
	id    uint64
	addr  string
	log   *slog.Logger
	q     chan []byte
	stopc chan struct{}
}

func newPeer(id uint64, addr string, log *slog.Logger) *peer {
	p := &peer{id: id, addr: addr, log: log, q: make(chan []byte, peerQueueMax), stopc: make(chan struct{})}
	go p.loop()
	return p
}

func (p *peer) stop() { close(p.stopc) }

func (p *peer) enqueue(b []byte) {
	select {
	case p.q <- b:
	default: // dropped; raft will retry
	}
}

func (p *peer) loop() {
	backoff := 10 * time.Millisecond
	for {
		select {
		case <-p.stopc:
			return
		default:
		}
		err := p.stream()
		if err != nil {
			p.log.Debug("raft peer stream ended", "peer", p.id, "err", err)
		}
		select {
		case <-p.stopc:
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, time.Second)
	}
}

func (p *peer) stream() error {
	conn, err := grpc.NewClient(p.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, err := pb.NewCoordRaftClient(conn).Send(ctx)
	if err != nil {
		return err
	}
	for {
		select {
		case <-p.stopc:
			return nil
		case b := <-p.q:
			if err := st.Send(&pb.RaftEnvelope{Message: b}); err != nil {
				return err
			}
		}
	}
}
