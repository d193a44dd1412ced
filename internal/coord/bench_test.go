package coord_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/weft-db/weft/internal/wire/coordclient"
	pb "github.com/weft-db/weft/internal/wire/coordpb"
)

// BenchmarkHeartbeat measures heartbeats answered by a 3-replica group's
// leader over gRPC on loopback, from parallel members (each heartbeat is a
// round trip through the leader's run loop; no log write).
func BenchmarkHeartbeat(b *testing.B) {
	_, addrs := startGroupB(b, 3)
	c, err := coordclient.NewClient(addrs)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	const members = 64
	ids := make([]uint64, members)
	for i := range ids {
		r, err := c.Register(ctx, &pb.RegisterRequest{Name: fmt.Sprint("m", i), Role: pb.Role_SHARD, Token: uint64(i + 1)})
		if err != nil {
			b.Fatal(err)
		}
		ids[i] = r.Member.Id
	}
	b.ResetTimer()
	b.SetParallelism(8)
	var next atomic.Uint64
	b.RunParallel(func(pb_ *testing.PB) {
		id := ids[next.Add(1)%members]
		for pb_.Next() {
			if _, err := c.Heartbeat(ctx, &pb.HeartbeatRequest{Member: id}); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkRegister measures registrations: each is a raft entry committed
// by a majority, fsynced (Sync on) before it is acknowledged.
func BenchmarkRegister(b *testing.B) {
	_, addrs := startGroupB(b, 3)
	c, err := coordclient.NewClient(addrs)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	b.ResetTimer()
	for i := range b.N {
		if _, err := c.Register(ctx, &pb.RegisterRequest{Name: fmt.Sprint("r", i), Role: pb.Role_KRONOS, Token: uint64(i + 1)}); err != nil {
			b.Fatal(err)
		}
	}
}
