package roles

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/weft-db/weft/internal/coord"
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
// epoch has; the listening port stays across epochs. It serves only inside
// the member's lease (docs/cluster.md, "Leases"): a read, a batched read, a
// program run, a hop or a scan is refused (UNAVAILABLE, "lease expired",
// which the gatekeeper answers as a retryable OVERLOADED) when the lease
// lapsed before the call or before its answer; FIFO entries are not taken
// off their streams while it lapses (they wait, in order, and nothing is
// acknowledged), so nothing is applied until the lease is renewed — or the
// member is fenced and the stream ends with the epoch.
type shardFront struct {
	pb.UnimplementedShardServer
	slot[pb.ShardServer]
	lease atomic.Pointer[coord.LeaseState]
}

// setLeased installs the epoch's server and the member's lease (nil, nil:
// between epochs).
func (f *shardFront) setLeased(s pb.ShardServer, l *coord.LeaseState) {
	f.lease.Store(l)
	f.set(s, s != nil)
}

// leaseOK is nil while the member's lease holds.
func (f *shardFront) leaseOK() error {
	if l := f.lease.Load(); l != nil {
		if err := l.Check(); err != nil {
			return status.Error(codes.Unavailable, "weft: shard: "+err.Error())
		}
	}
	return nil
}

// serving returns the epoch's server if the member may serve now.
func (f *shardFront) serving() (pb.ShardServer, error) {
	s, err := f.get()
	if err != nil {
		return nil, err
	}
	return s, f.leaseOK()
}

// leaseHoldEvery is how often a FIFO stream held by a lapsed lease looks
// at the lease again.
const leaseHoldEvery = 5 * time.Millisecond

// heldStream is a FIFO stream whose entries wait while the lease lapses.
type heldStream struct {
	grpc.BidiStreamingServer[pb.Entries, pb.Delivered]
	f *shardFront
}

func (h heldStream) Recv() (*pb.Entries, error) {
	m, err := h.BidiStreamingServer.Recv()
	if err != nil {
		return m, err
	}
	for l := h.f.lease.Load(); l != nil && !l.MayServe(); {
		select {
		case <-h.Context().Done():
			return nil, h.Context().Err()
		case <-time.After(leaseHoldEvery):
		}
	}
	return m, nil
}

// leasedSend refuses each chunk of a server stream once the lease lapsed.
type leasedSend[T any] struct {
	grpc.ServerStreamingServer[T]
	f *shardFront
}

func (l leasedSend[T]) Send(m *T) error {
	if err := l.f.leaseOK(); err != nil {
		return err
	}
	return l.ServerStreamingServer.Send(m)
}

func (f *shardFront) Deliver(stream grpc.BidiStreamingServer[pb.Entries, pb.Delivered]) error {
	s, err := f.get()
	if err != nil {
		return err
	}
	return s.Deliver(heldStream{BidiStreamingServer: stream, f: f})
}

// answer returns a call's answer only if the lease still holds.
func answer[T any](f *shardFront, resp *T, err error) (*T, error) {
	if err != nil {
		return nil, err
	}
	if err := f.leaseOK(); err != nil {
		return nil, err
	}
	return resp, nil
}

func (f *shardFront) Read(ctx context.Context, r *pb.ReadRequest) (*pb.ReadResponse, error) {
	s, err := f.serving()
	if err != nil {
		return nil, err
	}
	resp, err := s.Read(ctx, r)
	return answer(f, resp, err)
}

func (f *shardFront) ReadBatch(r *pb.ReadBatchRequest, stream grpc.ServerStreamingServer[pb.ReadBatchChunk]) error {
	s, err := f.serving()
	if err != nil {
		return err
	}
	return s.ReadBatch(r, leasedSend[pb.ReadBatchChunk]{ServerStreamingServer: stream, f: f})
}

func (f *shardFront) Run(ctx context.Context, r *pb.RunRequest) (*pb.RunResponse, error) {
	s, err := f.serving()
	if err != nil {
		return nil, err
	}
	resp, err := s.Run(ctx, r)
	return answer(f, resp, err)
}

func (f *shardFront) Hop(ctx context.Context, r *pb.HopRequest) (*pb.HopResponse, error) {
	s, err := f.serving()
	if err != nil {
		return nil, err
	}
	resp, err := s.Hop(ctx, r)
	return answer(f, resp, err)
}

func (f *shardFront) Finish(ctx context.Context, r *pb.FinishRequest) (*pb.FinishResponse, error) {
	s, err := f.get() // releasing a program's state needs no lease
	if err != nil {
		return nil, err
	}
	return s.Finish(ctx, r)
}

func (f *shardFront) Status(ctx context.Context, r *pb.StatusRequest) (*pb.StatusResponse, error) {
	s, err := f.get() // the status serves no data: answered without a lease
	if err != nil {
		return nil, err
	}
	return s.Status(ctx, r)
}

func (f *shardFront) Scan(r *pb.ScanRequest, stream grpc.ServerStreamingServer[pb.ScanChunk]) error {
	s, err := f.serving()
	if err != nil {
		return err
	}
	return s.Scan(r, leasedSend[pb.ScanChunk]{ServerStreamingServer: stream, f: f})
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
