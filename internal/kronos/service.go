package kronos

import (
	"context"

	"google.golang.org/protobuf/proto"

	pb "github.com/weft-db/weft/internal/wire/kronospb"
)

// The gRPC Kronos service. Mutations are proposed to raft; the reply comes
// from the state machine once the entry is committed and applied.

func (s *Server) mutate(ctx context.Context, sess *pb.Session, c *pb.Command) (proto.Message, error) {
	c.Session = sess
	if !s.isLeader() {
		return errReply(c, s.notLeader()), nil
	}
	p := &proposal{cmd: c, reply: make(chan proto.Message, 1)}
	select {
	case s.propc <- p:
	case <-s.stopc:
		return errReply(c, &pb.Error{Code: pb.ErrorCode_SHUTTING_DOWN, Message: ErrStopped.Error()}), nil
	default:
		return errReply(c, &pb.Error{Code: pb.ErrorCode_OVERLOADED, Message: "kronos: proposal queue full"}), nil
	}
	select {
	case r := <-p.reply:
		return r, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-s.done:
		return errReply(c, &pb.Error{Code: pb.ErrorCode_SHUTTING_DOWN, Message: ErrStopped.Error()}), nil
	}
}

// CreateEvent creates events holding one reference each.
func (s *Server) CreateEvent(ctx context.Context, req *pb.CreateEventRequest) (*pb.CreateEventResponse, error) {
	r, err := s.mutate(ctx, req.GetSession(), &pb.Command{Op: &pb.Command_Create{Create: req}})
	if err != nil {
		return nil, err
	}
	return r.(*pb.CreateEventResponse), nil
}

// AcquireRef adds references.
func (s *Server) AcquireRef(ctx context.Context, req *pb.RefsRequest) (*pb.RefsResponse, error) {
	r, err := s.mutate(ctx, req.GetSession(), &pb.Command{Op: &pb.Command_Acquire{Acquire: req}})
	if err != nil {
		return nil, err
	}
	return r.(*pb.RefsResponse), nil
}

// ReleaseRef drops references and collects garbage.
func (s *Server) ReleaseRef(ctx context.Context, req *pb.RefsRequest) (*pb.RefsResponse, error) {
	r, err := s.mutate(ctx, req.GetSession(), &pb.Command{Op: &pb.Command_Release{Release: req}})
	if err != nil {
		return nil, err
	}
	return r.(*pb.RefsResponse), nil
}

// AssignOrder applies an atomic must/prefer batch.
func (s *Server) AssignOrder(ctx context.Context, req *pb.AssignOrderRequest) (*pb.AssignOrderResponse, error) {
	r, err := s.mutate(ctx, req.GetSession(), &pb.Command{Op: &pb.Command_Assign{Assign: req}})
	if err != nil {
		return nil, err
	}
	return r.(*pb.AssignOrderResponse), nil
}

// Cleanup records a gatekeeper's cleanup clock.
func (s *Server) Cleanup(ctx context.Context, req *pb.CleanupRequest) (*pb.CleanupResponse, error) {
	r, err := s.mutate(ctx, req.GetSession(), &pb.Command{Op: &pb.Command_Cleanup{Cleanup: req}})
	if err != nil {
		return nil, err
	}
	return r.(*pb.CleanupResponse), nil
}

// QueryOrder answers from this replica's copy when the answers are orders
// (monotonicity makes a stale copy's order right); CONCURRENT and unknown
// answers need the leader's linearizable read.
func (s *Server) QueryOrder(ctx context.Context, req *pb.QueryOrderRequest) (*pb.QueryOrderResponse, error) {
	r := &readReq{req: req, reply: make(chan *pb.QueryOrderResponse, 1)}
	select {
	case s.readc <- r:
	case <-s.stopc:
		return &pb.QueryOrderResponse{Error: &pb.Error{Code: pb.ErrorCode_SHUTTING_DOWN, Message: ErrStopped.Error()}}, nil
	default:
		return &pb.QueryOrderResponse{Error: &pb.Error{Code: pb.ErrorCode_OVERLOADED, Message: "kronos: read queue full"}}, nil
	}
	select {
	case resp := <-r.reply:
		return resp, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-s.done:
		return &pb.QueryOrderResponse{Error: &pb.Error{Code: pb.ErrorCode_SHUTTING_DOWN, Message: ErrStopped.Error()}}, nil
	}
}

// Stats reports this replica's view.
func (s *Server) Stats(context.Context, *pb.StatsRequest) (*pb.StatsResponse, error) {
	s.statsMu.Lock()
	defer s.statsMu.Unlock()
	return proto.Clone(s.stats).(*pb.StatsResponse), nil
}
