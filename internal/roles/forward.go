package roles

import (
	"context"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/weft-db/weft/internal/wire/clusterpb"
)

// slot holds the current epoch's server of one cluster service, or nil
// between epochs.
type slot[T any] struct {
	mu  sync.RWMutex
	cur T
	ok  bool
}

func (s *slot[T]) set(v T, ok bool) {
	s.mu.Lock()
	s.cur, s.ok = v, ok
	s.mu.Unlock()
}

func (s *slot[T]) get() (T, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if !s.ok {
		var zero T
		return zero, status.Error(codes.Unavailable, "weft: between configuration epochs")
	}
	return s.cur, nil
}

// shardFront serves the Shard service of whichever ShardServer the current
// epoch has; the listening port stays across epochs.
type shardFront struct {
	pb.UnimplementedShardServer
	slot[pb.ShardServer]
}

func (f *shardFront) Deliver(stream grpc.BidiStreamingServer[pb.Entries, pb.Delivered]) error {
	s, err := f.get()
	if err != nil {
		return err
	}
	return s.Deliver(stream)
}

func (f *shardFront) Read(ctx context.Context, r *pb.ReadRequest) (*pb.ReadResponse, error) {
	s, err := f.get()
	if err != nil {
		return nil, err
	}
	return s.Read(ctx, r)
}

func (f *shardFront) ReadBatch(r *pb.ReadBatchRequest, stream grpc.ServerStreamingServer[pb.ReadBatchChunk]) error {
	s, err := f.get()
	if err != nil {
		return err
	}
	return s.ReadBatch(r, stream)
}

func (f *shardFront) Run(ctx context.Context, r *pb.RunRequest) (*pb.RunResponse, error) {
	s, err := f.get()
	if err != nil {
		return nil, err
	}
	return s.Run(ctx, r)
}

func (f *shardFront) Hop(ctx context.Context, r *pb.HopRequest) (*pb.HopResponse, error) {
	s, err := f.get()
	if err != nil {
		return nil, err
	}
	return s.Hop(ctx, r)
}

func (f *shardFront) Finish(ctx context.Context, r *pb.FinishRequest) (*pb.FinishResponse, error) {
	s, err := f.get()
	if err != nil {
		return nil, err
	}
	return s.Finish(ctx, r)
}

func (f *shardFront) Status(ctx context.Context, r *pb.StatusRequest) (*pb.StatusResponse, error) {
	s, err := f.get()
	if err != nil {
		return nil, err
	}
	return s.Status(ctx, r)
}

func (f *shardFront) Scan(r *pb.ScanRequest, stream grpc.ServerStreamingServer[pb.ScanChunk]) error {
	s, err := f.get()
	if err != nil {
		return err
	}
	return s.Scan(r, stream)
}

// gatekeeperFront serves the Gatekeeper (peer) service of the current
// epoch's ClusterGatekeeper.
type gatekeeperFront struct {
	pb.UnimplementedGatekeeperServer
	slot[pb.GatekeeperServer]
}

func (f *gatekeeperFront) Announce(ctx context.Context, r *pb.AnnounceRequest) (*pb.AnnounceResponse, error) {
	g, err := f.get()
	if err != nil {
		return nil, err
	}
	return g.Announce(ctx, r)
}

func (f *gatekeeperFront) RequestNop(ctx context.Context, r *pb.NopRequest) (*pb.NopResponse, error) {
	g, err := f.get()
	if err != nil {
		return nil, err
	}
	return g.RequestNop(ctx, r)
}

func (f *gatekeeperFront) Report(ctx context.Context, r *pb.ReportRequest) (*pb.ReportResponse, error) {
	g, err := f.get()
	if err != nil {
		return nil, err
	}
	return g.Report(ctx, r)
}
