package roles

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/weft-db/weft/internal/coord"
	pb "github.com/weft-db/weft/internal/wire/clusterpb"
)

type fakeShard struct {
	pb.UnimplementedShardServer
	reads int
}

func (f *fakeShard) Read(context.Context, *pb.ReadRequest) (*pb.ReadResponse, error) {
	f.reads++
	return &pb.ReadResponse{Exists: true}, nil
}

// TestShardFrontServesInsideTheLease: the shard front refuses reads with no
// lease and after it lapsed (UNAVAILABLE "lease expired", counted), serves
// inside it, and resumes when it is renewed; a fenced lease refuses for good.
func TestShardFrontServesInsideTheLease(t *testing.T) {
	now := time.Duration(0)
	lease := coord.NewLeaseState(func() time.Duration { return now })
	shard := &fakeShard{}
	f := &shardFront{}
	f.setLeased(shard, lease)
	read := func() error {
		_, err := f.Read(context.Background(), &pb.ReadRequest{})
		return err
	}
	refused := func(what string) {
		t.Helper()
		err := read()
		if status.Code(err) != codes.Unavailable || !strings.Contains(err.Error(), "lease expired") {
			t.Fatalf("%s: %v, want UNAVAILABLE lease expired", what, err)
		}
	}
	refused("no lease yet")
	lease.Granted(0, 500*time.Millisecond)
	now = 100 * time.Millisecond
	if err := read(); err != nil {
		t.Fatalf("inside the lease: %v", err)
	}
	now = 500 * time.Millisecond
	refused("at the expiry")
	lease.Granted(450*time.Millisecond, 500*time.Millisecond)
	if err := read(); err != nil {
		t.Fatalf("renewed: %v", err)
	}
	lease.Fence()
	refused("fenced")
	if lease.Refusals() != 3 || shard.reads != 2 {
		t.Fatalf("refusals %d, reads served %d", lease.Refusals(), shard.reads)
	}
}

// TestReporter: a peer is reported once it has failed the member for the
// bound while the member's lease held; a lapse of the lease restarts the
// count.
func TestReporter(t *testing.T) {
	now := time.Duration(0)
	lease := coord.NewLeaseState(func() time.Duration { return now })
	lease.Granted(0, time.Hour)
	stalled := map[uint64]time.Time{}
	r := &reporter{lease: lease, after: 50 * time.Millisecond, stalls: func() map[uint64]time.Time { return stalled },
		log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if got := r.unreachable(); len(got) != 0 {
		t.Fatalf("nothing stalled: %v", got)
	}
	stalled[7] = time.Now().Add(-time.Second)
	stalled[8] = time.Time{}
	if got := r.unreachable(); len(got) != 0 {
		t.Fatalf("reported before the bound since the lease held: %v", got)
	}
	time.Sleep(60 * time.Millisecond)
	if got := r.unreachable(); len(got) != 1 || got[0] != 7 {
		t.Fatalf("after the bound: %v, want [7]", got)
	}
	now = 2 * time.Hour // the lease lapsed
	if got := r.unreachable(); len(got) != 0 {
		t.Fatalf("reported while the lease lapsed: %v", got)
	}
	lease.Granted(now, time.Hour)
	if got := r.unreachable(); len(got) != 0 {
		t.Fatalf("reported at once after a renewal: %v", got)
	}
}
