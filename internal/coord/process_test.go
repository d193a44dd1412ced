package coord_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weft-db/weft/internal/testproc"
	"github.com/weft-db/weft/internal/wire/coordclient"
	pb "github.com/weft-db/weft/internal/wire/coordpb"
)

// waitFor polls cond every 20ms until it holds or timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) time.Duration {
	t.Helper()
	start := time.Now()
	last := ""
	for time.Since(start) < timeout {
		ok, why := cond()
		if ok {
			return time.Since(start)
		}
		last = why
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s: not within %v (last: %s)", what, timeout, last)
	return 0
}

// TestProcessKillLeaderAndMember46 runs 3 coordinator replicas and 5 member
// processes (a gatekeeper, two shards, a backup of each role) as real
// processes on loopback, kill -9s the raft leader (members must keep
// heartbeating through the new leader: none is fenced), then kill -9s a
// shard (its backup must be promoted into its slot in a new epoch, which
// becomes active once every live member acknowledged it).
func TestProcessKillLeaderAndMember46(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	bin := testproc.Build(t, "github.com/weft-db/weft/cmd/weft")
	dir := t.TempDir()
	addrs, err := testproc.FreeAddrs(6)
	if err != nil {
		t.Fatal(err)
	}
	var peers []string
	for i := range 3 {
		peers = append(peers, fmt.Sprintf("%d=%s", i+1, addrs[i]))
	}
	replicas := make([]*testproc.Proc, 3)
	for i := range 3 {
		replicas[i] = testproc.Start(t, testproc.Spec{Name: fmt.Sprintf("coord-%d", i+1), Path: bin,
			Args: []string{"coord", "--id", fmt.Sprint(i + 1), "--addr", addrs[i], "--http-addr", addrs[3+i],
				"--peers", strings.Join(peers, ","), "--data-dir", filepath.Join(dir, fmt.Sprintf("coord-%d", i+1)),
				"--gatekeepers", "1", "--shards", "2", "--suspect-after", "1s"},
			Ready: "serving on", LogPath: filepath.Join(dir, fmt.Sprintf("coord-%d.log", i+1))})
	}
	coordAddrs := strings.Join(addrs[:3], ",")
	members := map[string]*testproc.Proc{}
	for _, m := range []struct{ name, role string }{
		{"gk-0", "gatekeeper"}, {"shard-0", "shard"}, {"shard-1", "shard"}, {"backup-shard", "shard"}, {"backup-gk", "gatekeeper"},
	} {
		members[m.name] = testproc.Start(t, testproc.Spec{Name: m.name, Path: bin,
			Args:  []string{"coord", "member", "--coord", coordAddrs, "--role", m.role, "--name", m.name, "--interval", "100ms"},
			Ready: "member ", LogPath: filepath.Join(dir, m.name+".log")})
		// Register in order, so the primaries take the slots.
		time.Sleep(50 * time.Millisecond)
	}
	c, err := coordclient.NewClient(addrs[:3])
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	status := func() *pb.StatusResponse {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		st, err := c.LeaderStatus(ctx)
		if err != nil || !st.IsLeader {
			return nil
		}
		return st
	}
	byName := func(st *pb.StatusResponse, name string) *pb.Member {
		var found *pb.Member
		for _, mb := range st.Members {
			if mb.Name == name && (found == nil || mb.Id > found.Id) {
				found = mb
			}
		}
		return found
	}
	settled := func() (bool, string) {
		st := status()
		if st == nil {
			return false, "no serving leader"
		}
		live := 0
		for _, mb := range st.Members {
			if mb.Live {
				live++
			}
		}
		for _, s := range st.Slots {
			if s.Holder == 0 {
				return false, fmt.Sprintf("slot %v/%d vacant", s.Role, s.Index)
			}
		}
		ok := live == 5 && len(st.Slots) == 3 && st.Config.Epoch == st.Config.ActiveEpoch
		return ok, fmt.Sprintf("%d live, %d slots, epoch %d active %d", live, len(st.Slots), st.Config.Epoch, st.Config.ActiveEpoch)
	}
	waitFor(t, 20*time.Second, "cluster settles", settled)
	st := status()
	shard0 := byName(st, "shard-0")
	if shard0 == nil || shard0.Slot < 0 {
		t.Fatalf("shard-0 holds no slot: %v", st.Members)
	}
	epochBefore := st.Config.Epoch
	// The leader's failure detector: every live member heard from recently.
	for _, mb := range st.Members {
		if age, ok := st.HeartbeatAgeMs[mb.Id]; !ok || age >= 1000 {
			t.Fatalf("member %d (%s): heartbeat age %d ms (known %v), want < suspect-after", mb.Id, mb.Name, age, ok)
		}
	}

	// The HTTP endpoints of the leader.
	leaderIdx := int(st.NodeId) - 1
	for path, want := range map[string]string{"/healthz": `"status":"ok"`, "/metrics": "weft_coord_active_epoch",
		"/status": "backup-shard"} {
		resp, err := http.Get("http://" + addrs[3+leaderIdx] + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(b), want) {
			t.Fatalf("GET %s: %d, want %q in:\n%.2000s", path, resp.StatusCode, want, b)
		}
	}

	// kill -9 the leader: a new one must serve, and keep every member.
	if err := replicas[leaderIdx].Kill(); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	waitFor(t, 20*time.Second, "a new leader serves", func() (bool, string) {
		st := status()
		return st != nil && int(st.NodeId)-1 != leaderIdx, "no new serving leader"
	})
	leaderRecovery := time.Since(killed)
	// Hold for longer than suspect-after: no member may be declared failed.
	time.Sleep(1500 * time.Millisecond)
	st = status()
	if st == nil {
		t.Fatal("no serving leader 1.5s after failover")
	}
	for _, mb := range st.Members {
		if !mb.Live {
			t.Fatalf("member %d (%s) declared failed across a coordinator failover: %v", mb.Id, mb.Name, mb)
		}
	}
	for name, p := range members {
		if !p.Running() {
			t.Fatalf("member %s exited across the coordinator failover:\n%s", name, p.Tail(10))
		}
	}

	// kill -9 a shard: its backup takes the slot in a new epoch.
	if err := members["shard-0"].Kill(); err != nil {
		t.Fatal(err)
	}
	killed = time.Now()
	waitFor(t, 20*time.Second, "backup promoted into shard-0's slot", func() (bool, string) {
		st := status()
		if st == nil {
			return false, "no serving leader"
		}
		b := byName(st, "backup-shard")
		return b != nil && b.Slot == shard0.Slot, fmt.Sprintf("backup-shard: %v", b)
	})
	promotion := time.Since(killed)
	waitFor(t, 10*time.Second, "the new epoch becomes active", func() (bool, string) {
		st := status()
		if st == nil {
			return false, "no serving leader"
		}
		return st.Config.Epoch > epochBefore && st.Config.ActiveEpoch == st.Config.Epoch,
			fmt.Sprintf("epoch %d active %d", st.Config.Epoch, st.Config.ActiveEpoch)
	})
	active := time.Since(killed)
	st = status()
	if f := byName(st, "shard-0"); f == nil || f.Live || f.FailedEpoch <= epochBefore {
		t.Fatalf("shard-0 not recorded as failed in a new epoch: %v", f)
	}
	found := false
	for _, p := range st.Promotions {
		if p.Failed == shard0.Id && p.Slot == shard0.Slot && p.Role == pb.Role_SHARD {
			found = true
		}
	}
	if !found {
		t.Fatalf("no promotion recorded for shard-0's slot: %v", st.Promotions)
	}
	// The restarted replica catches up.
	if err := replicas[leaderIdx].Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "the restarted replica catches up", func() (bool, string) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		rs, err := c.Status(ctx, addrs[leaderIdx])
		if err != nil {
			return false, err.Error()
		}
		return rs.Config.GetEpoch() == st.Config.Epoch, fmt.Sprintf("restarted replica at epoch %d", rs.Config.GetEpoch())
	})
	t.Logf("recovery: new coordinator leader serving %v after kill -9 of the leader; backup promoted %v and epoch %d active %v after kill -9 of shard-0 (suspect-after 1s)",
		leaderRecovery.Round(time.Millisecond), promotion.Round(time.Millisecond), st.Config.Epoch, active.Round(time.Millisecond))
}
