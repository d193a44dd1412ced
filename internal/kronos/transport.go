package kronos

import (
	"context"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/grpc"

	"github.com/weft-db/weft/internal/raftlog"
	pb "github.com/weft-db/weft/internal/wire/kronospb"
)

// openRaft makes the raft message stream to a peer replica.
func openRaft(ctx context.Context, conn *grpc.ClientConn) (func([]byte) error, error) {
	st, err := pb.NewRaftClient(conn).Send(ctx)
	if err != nil {
		return nil, err
	}
	return func(b []byte) error { return st.Send(&pb.RaftEnvelope{Message: b}) }, nil
}

// send routes a raft message to its peer.
func (s *Server) send(m *raftpb.Message) {
	if p, ok := s.peers[m.GetTo()]; ok {
		p.Send(m)
	}
}

// Send receives a peer's raft message stream.
func (s *Server) Send(st grpc.ClientStreamingServer[pb.RaftEnvelope, pb.RaftAck]) error {
	err := raftlog.Receive(func() ([]byte, error) {
		env, err := st.Recv()
		return env.GetMessage(), err
	}, s.recvc, s.stopc)
	switch err {
	case nil:
		return st.SendAndClose(&pb.RaftAck{})
	case raftlog.ErrStopped:
		return ErrStopped
	}
	return err
}
