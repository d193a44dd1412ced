package raftlog

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"time"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"
)

// The replicas' raft transport, shared by Kronos and the coordinator: one
// client stream per peer carrying marshalled raftpb.Messages, dropped rather
// than blocked on overload (raft retransmits). Each service has its own
// gRPC stream type; Open and Recv adapt them.

// PeerQueueMax bounds the messages queued for one peer. Raft tolerates lost
// messages (it retransmits), so a full queue drops rather than blocks.
const PeerQueueMax = 1024

// OpenStream makes a message stream to a peer on conn: send sends one marshalled
// message; the stream ends with ctx.
type OpenStream func(ctx context.Context, conn *grpc.ClientConn) (send func(msg []byte) error, err error)

// Peer streams raft messages to one other replica, reconnecting with
// backoff.
type Peer struct {
	id    uint64
	addr  string
	log   *slog.Logger
	open  OpenStream
	q     chan []byte
	stopc chan struct{}
}

// NewPeer starts streaming to the replica id at addr.
func NewPeer(id uint64, addr string, log *slog.Logger, open OpenStream) *Peer {
	p := &Peer{id: id, addr: addr, log: log, open: open, q: make(chan []byte, PeerQueueMax), stopc: make(chan struct{})}
	go p.loop()
	return p
}

// Stop ends the stream.
func (p *Peer) Stop() { close(p.stopc) }

// Send queues m for the peer (dropped when the queue is full, or when m
// does not marshal).
func (p *Peer) Send(m *raftpb.Message) {
	b, err := proto.Marshal(m)
	if err != nil {
		return
	}
	select {
	case p.q <- b:
	default: // dropped; raft will retry
	}
}

func (p *Peer) loop() {
	backoff := 10 * time.Millisecond
	for {
		select {
		case <-p.stopc:
			return
		default:
		}
		if err := p.stream(); err != nil {
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

func (p *Peer) stream() error {
	conn, err := grpc.NewClient(p.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	send, err := p.open(ctx, conn)
	if err != nil {
		return err
	}
	for {
		select {
		case <-p.stopc:
			return nil
		case b := <-p.q:
			if err := send(b); err != nil {
				return err
			}
		}
	}
}

// ErrStopped is Receive's answer once its replica stops.
var ErrStopped = errors.New("raftlog: replica stopped")

// Receive reads a peer's message stream (recv returns the next marshalled
// message, io.EOF at its end) and hands each message to recvc, dropping it
// when recvc is full (raft retries), until the stream ends (nil) or stopc
// closes (ErrStopped).
func Receive(recv func() ([]byte, error), recvc chan<- *raftpb.Message, stopc <-chan struct{}) error {
	for {
		b, err := recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		m := &raftpb.Message{}
		if err := proto.Unmarshal(b, m); err != nil {
			return err
		}
		select {
		case recvc <- m:
		case <-stopc:
			return ErrStopped
		default: // receiver full: drop, raft retries
		}
	}
}
