package coord_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/weft-db/weft/internal/coord"
	"github.com/weft-db/weft/internal/testproc"
	"github.com/weft-db/weft/internal/wire/coordclient"
	pb "github.com/weft-db/weft/internal/wire/coordpb"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func startGroup(t *testing.T, n int, shards int32) ([]*coord.Server, []string) {
	t.Helper()
	return startGroupSync(t, n, shards, false)
}

func startGroupB(b *testing.B, n int) ([]*coord.Server, []string) {
	return startGroupSync(b, n, 0, true)
}

func startGroupSync(t testing.TB, n int, shards int32, sync bool) ([]*coord.Server, []string) {
	t.Helper()
	srvs, addrs, _ := startGroupWith(t, n, func(cfg *coord.ServerConfig) { cfg.Shards, cfg.Sync = shards, sync })
	return srvs, addrs
}

func startGroupWith(t testing.TB, n int, mod func(*coord.ServerConfig)) ([]*coord.Server, []string, []coord.ServerConfig) {
	t.Helper()
	addrs, err := testproc.FreeAddrs(n)
	if err != nil {
		t.Fatal(err)
	}
	peers := map[uint64]string{}
	for i, a := range addrs {
		peers[uint64(i+1)] = a
	}
	dir := t.TempDir()
	var srvs []*coord.Server
	var cfgs []coord.ServerConfig
	for i := range n {
		cfg := coord.DefaultServerConfig()
		cfg.ID, cfg.Addr, cfg.HTTPAddr, cfg.Peers = uint64(i+1), addrs[i], "", peers
		cfg.DataDir = filepath.Join(dir, fmt.Sprint(i+1))
		mod(&cfg)
		cfgs = append(cfgs, cfg)
		s, err := coord.NewServer(cfg, quiet)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Stop)
		srvs = append(srvs, s)
	}
	return srvs, addrs, cfgs
}

// TestServerMembersWatchAddSlot runs an in-process group of 3 with members
// using RunMember: adding a shard slot promotes the backup (elasticity); a
// member that stops heartbeating loses its slot in a new epoch; the
// coordinator survives its leader stopping; a silent member is fenced; and
// Watch delivers every configuration in epoch order.
func TestServerMembersWatchAddSlot(t *testing.T) {
	srvs, addrs := startGroup(t, 3, 1)
	c, err := coordclient.NewClient(addrs)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	var mu sync.Mutex
	var watched []*pb.Config
	watchDone := make(chan error, 1)
	go func() {
		watchDone <- c.Watch(ctx, func(cfg *pb.Config) error {
			mu.Lock()
			watched = append(watched, cfg)
			mu.Unlock()
			return nil
		})
	}()
	slots := map[string]int32{}
	run := func(name string, role pb.Role) (context.CancelFunc, chan error) {
		mctx, mcancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() {
			done <- coord.RunMember(mctx, c, coord.MemberConfig{Name: name, Role: role, Address: name + ":9",
				Interval: 50 * time.Millisecond, OnConfig: func(_ context.Context, _ *pb.Config, self *pb.Member) error {
					mu.Lock()
					slots[name] = self.Slot
					mu.Unlock()
					return nil
				}}, quiet)
		}()
		return mcancel, done
	}
	slotOf := func(name string) int32 {
		mu.Lock()
		defer mu.Unlock()
		if s, ok := slots[name]; ok {
			return s
		}
		return -2
	}
	leaderStatus := func() *pb.StatusResponse {
		sctx, scancel := context.WithTimeout(ctx, time.Second)
		defer scancel()
		st, err := c.LeaderStatus(sctx)
		if err != nil || !st.IsLeader {
			return nil
		}
		return st
	}
	stopS0, s0done := run("s0", pb.Role_SHARD)
	waitFor(t, 10*time.Second, "s0 takes shard slot 0", func() (bool, string) { return slotOf("s0") == 0, fmt.Sprint(slotOf("s0")) })
	_, bdone := run("b", pb.Role_SHARD)
	waitFor(t, 10*time.Second, "b registers as a backup", func() (bool, string) { return slotOf("b") == -1, fmt.Sprint(slotOf("b")) })

	// Elasticity: a second shard slot goes to the waiting backup.
	actx, acancel := context.WithTimeout(ctx, 5*time.Second)
	ar, err := c.AddSlot(actx, &pb.AddSlotRequest{Role: pb.Role_SHARD, Count: 2})
	acancel()
	if err != nil || len(ar.Config.Shards) != 2 || ar.Config.Shards[1].Member == 0 {
		t.Fatalf("add slot: %v %v", ar, err)
	}
	waitFor(t, 10*time.Second, "b learns it holds slot 1", func() (bool, string) { return slotOf("b") == 1, fmt.Sprint(slotOf("b")) })

	// The leader stops; the others elect a new one and keep the members.
	var leader *coord.Server
	waitFor(t, 10*time.Second, "a serving leader", func() (bool, string) {
		st := leaderStatus()
		if st == nil {
			return false, "none"
		}
		leader = srvs[st.NodeId-1]
		return true, ""
	})
	leader.Stop()
	waitFor(t, 10*time.Second, "a new serving leader", func() (bool, string) {
		st := leaderStatus()
		return st != nil && srvs[st.NodeId-1] != leader, "none"
	})

	// s0 goes silent: its slot is vacated in a new epoch (no backup left).
	before := leaderStatus().Config.Epoch
	stopS0()
	if err := <-s0done; err != nil {
		t.Fatalf("s0 stopped with %v", err)
	}
	waitFor(t, 10*time.Second, "s0's slot vacated", func() (bool, string) {
		st := leaderStatus()
		if st == nil {
			return false, "no leader"
		}
		return st.Config.Shards[0].Member == 0 && st.Config.Epoch > before, fmt.Sprint(st.Config)
	})

	// A registered member that never heartbeats is fenced.
	rctx, rcancel := context.WithTimeout(ctx, 5*time.Second)
	reg, err := c.Register(rctx, &pb.RegisterRequest{Name: "silent", Role: pb.Role_KRONOS, Token: 42})
	rcancel()
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the silent member declared failed", func() (bool, string) {
		st := leaderStatus()
		if st == nil {
			return false, "no leader"
		}
		for _, mb := range st.Members {
			if mb.Id == reg.Member.Id {
				return !mb.Live, fmt.Sprint(mb)
			}
		}
		return false, "not listed"
	})
	hctx, hcancel := context.WithTimeout(ctx, 5*time.Second)
	if _, err := c.Heartbeat(hctx, &pb.HeartbeatRequest{Member: reg.Member.Id}); !errors.Is(err, coordclient.ErrFenced) {
		t.Fatalf("heartbeat of a failed member: %v", err)
	}
	hcancel()
	ackCtx, ackCancel := context.WithTimeout(ctx, 5*time.Second)
	if _, err := c.AckEpoch(ackCtx, &pb.AckEpochRequest{Member: reg.Member.Id, Epoch: 1}); !errors.Is(err, coordclient.ErrFenced) {
		t.Fatalf("ack of a fenced member: %v", err)
	}
	ackCancel()

	// Everything settles: b acknowledged the latest epoch, which is active.
	waitFor(t, 10*time.Second, "the latest epoch active", func() (bool, string) {
		st := leaderStatus()
		return st != nil && st.Config.Epoch == st.Config.ActiveEpoch, fmt.Sprint(st.GetConfig())
	})
	select {
	case err := <-bdone:
		t.Fatalf("backup b stopped: %v", err)
	default:
	}
	cancel()
	<-watchDone
	mu.Lock()
	defer mu.Unlock()
	if len(watched) < 3 {
		t.Fatalf("watch saw %d configurations", len(watched))
	}
	for i := 1; i < len(watched); i++ {
		if watched[i].Epoch < watched[i-1].Epoch {
			t.Fatalf("watch went back from epoch %d to %d", watched[i-1].Epoch, watched[i].Epoch)
		}
	}
}

// TestServerSnapshotCatchUp: a replica that was down while the others
// compacted their logs past what it has catches up from a snapshot, and a
// restarted replica restores its own snapshot.
func TestServerSnapshotCatchUp(t *testing.T) {
	srvs, addrs, cfgs := startGroupWith(t, 3, func(cfg *coord.ServerConfig) { cfg.SnapshotEvery, cfg.Sync = 20, false })
	c, err := coordclient.NewClient(addrs)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// Stop a follower (a stopped leader would just be replaced).
	var down int
	waitFor(t, 10*time.Second, "a leader", func() (bool, string) {
		st, err := c.LeaderStatus(ctx)
		if err != nil || !st.IsLeader {
			return false, fmt.Sprint(err)
		}
		down = int(st.NodeId) % 3 // the next replica: a follower
		return true, ""
	})
	srvs[down].Stop()
	for i := range 120 {
		if _, err := c.Register(ctx, &pb.RegisterRequest{Name: fmt.Sprint("k", i), Role: pb.Role_KRONOS, Token: uint64(i + 1)}); err != nil {
			t.Fatal(err)
		}
	}
	st, err := c.LeaderStatus(ctx)
	if err != nil {
		t.Fatal(err)
	}
	restarted, err := coord.NewServer(cfgs[down], quiet)
	if err != nil {
		t.Fatal(err)
	}
	if err := restarted.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(restarted.Stop)
	waitFor(t, 15*time.Second, "the restarted replica catches up", func() (bool, string) {
		rs, err := c.Status(ctx, addrs[down])
		if err != nil {
			return false, err.Error()
		}
		n := 0
		for _, mb := range rs.Members {
			if mb.Role == pb.Role_KRONOS {
				n++
			}
		}
		return rs.AppliedIndex >= st.AppliedIndex && n >= 120, fmt.Sprintf("applied %d of %d, %d members", rs.AppliedIndex, st.AppliedIndex, n)
	})
}

// A member's load goes with its heartbeats and shows in the serving
// leader's status (and its page), and only there.
func TestServerShowsMemberLoad(t *testing.T) {
	_, addrs := startGroup(t, 1, 1)
	c, err := coordclient.NewClient(addrs)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		_ = coord.RunMember(ctx, c, coord.MemberConfig{Name: "s", Role: pb.Role_SHARD, Address: "s:9",
			Interval: 20 * time.Millisecond, Load: func() map[string]float64 {
				return map[string]float64{"vertices": 42, "applied_per_sec": 1.5}
			}}, quiet)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, err := c.LeaderStatus(ctx)
		if err == nil {
			for _, m := range st.GetMembers() {
				if m.GetName() == "s" {
					if got := (coord.StatusView{StatusResponse: st}).Load(m.GetId()); got == "applied_per_sec=1.5 vertices=42" {
						return
					}
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the member's load never showed in the leader's status (last: %v %v)", st.GetLoad(), err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
