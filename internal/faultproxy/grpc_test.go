package faultproxy

import (
	"context"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
)

// TestGRPCHealthThroughPartition is end to end: a gRPC health server behind
// the proxy. Under a partition (either way) an RPC with a short deadline
// fails with DeadlineExceeded on the open connection; after Heal the next
// RPC succeeds on the same connection. After ResetAll the client redials.
func TestGRPCHealthThroughPartition(t *testing.T) {
	checkLeaks(t)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	healthpb.RegisterHealthServer(gs, health.NewServer()) // "" is SERVING
	served := make(chan error, 1)
	go func() { served <- gs.Serve(lis) }()
	t.Cleanup(func() {
		gs.Stop()
		if err := <-served; err != nil {
			t.Error(err)
		}
	})

	p := newProxy(t, lis.Addr().String(), nil)
	cc, err := grpc.NewClient("passthrough:///"+p.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cc.Close() })
	hc := healthpb.NewHealthClient(cc)
	check := func(timeout time.Duration) error {
		ctx, cancel := context.WithTimeout(t.Context(), timeout)
		defer cancel()
		resp, err := hc.Check(ctx, &healthpb.HealthCheckRequest{})
		if err == nil && resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
			t.Fatalf("status %v", resp.GetStatus())
		}
		return err
	}
	if err := check(5 * time.Second); err != nil {
		t.Fatal(err)
	}

	for _, dir := range []Direction{Upstream, Downstream, Both} {
		p.Partition(dir)
		if err := check(150 * time.Millisecond); status.Code(err) != codes.DeadlineExceeded {
			t.Fatalf("partition %v: Check = %v, want DeadlineExceeded", dir, err)
		}
		p.Heal()
		if err := check(5 * time.Second); err != nil {
			t.Fatalf("after healing %v: %v", dir, err)
		}
	}
	if s := p.Stats(); s.Accepted != 1 {
		t.Fatalf("stats %v: want the one connection to survive partitions", s)
	}

	p.ResetAll()
	if err := check(5 * time.Second); err != nil && status.Code(err) != codes.Unavailable {
		t.Fatalf("Check racing ResetAll: %v", err)
	}
	if err := check(5 * time.Second); err != nil {
		t.Fatalf("after ResetAll: %v", err)
	}
}
