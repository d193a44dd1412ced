package kronos

import (
	"context"

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

// Send receives a peer's raft message stream.
func (s *Server) Send(st grpc.ClientStreamingServer[pb.RaftEnvelope, pb.RaftAck]) error {
	return raftlog.ServeStream(st, &pb.RaftAck{}, s.recvc, s.stopc, ErrStopped)
}
