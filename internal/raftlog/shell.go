package raftlog

import (
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sort"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/grpc"
)

// The pieces of a raft service's shell that Kronos and the coordinator
// share: where the log lives, the group's ids, the streams to the peers, the
// receiving end of a peer's stream, and when to snapshot. Each service keeps
// its own run loop, Ready handling and state machine.

// OpenDir opens (or creates) the log kept in dataDir/raft, creating dataDir.
func OpenDir(dataDir string, o Options) (*Log, error) {
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return nil, err
	}
	return Open(filepath.Join(dataDir, "raft"), o)
}

// OpenAndListen opens the log (OpenDir), has restore rebuild the service's
// state from it, and listens on addr, the service's gRPC address. On failure
// it closes what it opened.
func OpenAndListen(dataDir string, o Options, addr string, restore func(*Log) error) (*Log, net.Listener, error) {
	l, err := OpenDir(dataDir, o)
	if err != nil {
		return nil, nil, err
	}
	if err := restore(l); err != nil {
		l.Close()
		return nil, nil, err
	}
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		l.Close()
		return nil, nil, err
	}
	return l, lis, nil
}

// IDs returns the ids of the replicas of a group in order: those of peers
// (every replica's address, self included), or self alone when peers is
// empty (a group of one).
func IDs(self uint64, peers map[uint64]string) []uint64 {
	if len(peers) == 0 {
		return []uint64{self}
	}
	ids := make([]uint64, 0, len(peers))
	for id := range peers {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}

// Peers are a replica's message streams to the other replicas of its group,
// by id. The map is built once and only read after.
type Peers map[uint64]*Peer

// NewPeers starts a stream to every replica of addrs but self.
func NewPeers(self uint64, addrs map[uint64]string, log *slog.Logger, open OpenStream) Peers {
	ps := Peers{}
	for id, addr := range addrs {
		if id != self {
			ps[id] = NewPeer(id, addr, log, open)
		}
	}
	return ps
}

// Send routes a raft message to its peer (a message to an unknown replica is
// dropped).
func (ps Peers) Send(m *raftpb.Message) {
	if p, ok := ps[m.GetTo()]; ok {
		p.Send(m)
	}
}

// Stop ends every stream.
func (ps Peers) Stop() {
	for _, p := range ps {
		p.Stop()
	}
}

// ServeStream is the receiving end of a peer's message stream, for a
// service's generated Send handler: it steps every message into recvc until
// the stream ends (then acknowledged with ack) or stopc closes (then it
// returns stopped, the service's own error).
func ServeStream[Env, Ack any, PEnv interface {
	*Env
	GetMessage() []byte
}](st grpc.ClientStreamingServer[Env, Ack], ack *Ack, recvc chan<- *raftpb.Message, stopc <-chan struct{}, stopped error) error {
	err := Receive(func() ([]byte, error) {
		env, err := st.Recv()
		return PEnv(env).GetMessage(), err
	}, recvc, stopc)
	switch err {
	case nil:
		return st.SendAndClose(ack)
	case ErrStopped:
		return stopped
	}
	return err
}

// Compactor decides when a replica snapshots its state machine: after Every
// applied entries since the last snapshot, keeping Every/2 entries behind it
// for slow followers. It is used by the run loop only.
type Compactor struct {
	Every uint64
	last  uint64 // index of the last snapshot
}

// From records a snapshot at index, restored at start or installed from the
// leader: the next one counts from it.
func (c *Compactor) From(index uint64) { c.last = index }

// Maybe snapshots into l when due: data is called then for the state
// machine's snapshot at applied, with configuration conf (nil: empty).
func (c *Compactor) Maybe(l *Log, applied uint64, conf *raftpb.ConfState, data func() []byte) error {
	if applied-c.last < c.Every {
		return nil
	}
	c.last = applied
	if conf == nil {
		conf = &raftpb.ConfState{}
	}
	return l.Compact(applied, conf, data(), c.Every/2)
}
