package coord

import (
	"testing"
	"time"

	"go.etcd.io/raft/v3"

	pb "github.com/weft-db/weft/internal/wire/coordpb"
)

// single is a one-replica group driven by hand: persist, advance, collect.
type single struct {
	t       *testing.T
	n       *Node
	st      *raft.MemoryStorage
	results map[uint64]Result
}

func newSingle(t *testing.T, cfg NodeConfig) *single {
	st := raft.NewMemoryStorage()
	n, err := NewNode(cfg, st, NewMachine(), nil)
	if err != nil {
		t.Fatal(err)
	}
	s := &single{t: t, n: n, st: st, results: map[uint64]Result{}}
	for i := 0; i < 100 && !n.Serving(); i++ {
		s.tick()
	}
	if !n.Serving() {
		t.Fatal("a group of one never served")
	}
	return s
}

func (s *single) drain() {
	for s.n.HasReady() {
		rd := s.n.Ready()
		if err := s.st.Append(rd.Entries); err != nil {
			s.t.Fatal(err)
		}
		if rd.HardState != nil && !raft.IsEmptyHardState(rd.HardState) {
			if err := s.st.SetHardState(rd.HardState); err != nil {
				s.t.Fatal(err)
			}
		}
		rs, err := s.n.Advance(rd)
		if err != nil {
			s.t.Fatal(err)
		}
		for _, r := range rs {
			s.results[r.Proposal] = r
		}
	}
}

func (s *single) tick() { s.n.Tick(); s.drain() }

// heartbeat sends one heartbeat and returns its answer: at once, or after
// the tick whose leadership check confirms it.
func (s *single) heartbeat(req *pb.HeartbeatRequest) *pb.HeartbeatResponse {
	s.t.Helper()
	resp, id := s.n.Heartbeat(req)
	if resp != nil {
		return resp
	}
	s.tick()
	r, ok := s.results[id]
	if !ok {
		s.t.Fatalf("heartbeat of %d: not confirmed within a tick", req.GetMember())
	}
	return r.Reply.(*pb.HeartbeatResponse)
}

func (s *single) register(name string, role pb.Role, token uint64) *pb.Member {
	s.t.Helper()
	p, err := s.n.Propose(&pb.Command{Op: &pb.Command_Register{Register: &pb.RegisterRequest{Name: name, Role: role, Token: token}}})
	if err != nil {
		s.t.Fatal(err)
	}
	s.drain()
	r, ok := s.results[p]
	if !ok {
		s.t.Fatalf("register %s: no result", name)
	}
	return r.Reply.(*pb.RegisterResponse).Member
}

// TestFailureDetectionInTicks: the leader fails a member exactly when its
// last heartbeat is more than SuspectTicks old; the backup is promoted, sees
// it in its next heartbeat, and its ack activates the new epoch.
func TestFailureDetectionInTicks(t *testing.T) {
	cfg := DefaultNodeConfig(1, []uint64{1})
	cfg.Shards, cfg.SuspectTicks = 1, 50
	cfg.Lease = LeaseRule{Lease: 200 * time.Millisecond, MaxDrift: 50 * time.Millisecond}
	s := newSingle(t, cfg)
	for range 3 {
		s.tick() // the slot is added by the leader
	}
	if len(s.n.Machine().Config().Shards) != 1 {
		t.Fatal("the leader did not create the configured slot")
	}
	a := s.register("a", pb.Role_SHARD, 1)
	b := s.register("b", pb.Role_SHARD, 2)
	if a.Slot != 0 || b.Slot != -1 {
		t.Fatalf("slots %d %d", a.Slot, b.Slot)
	}
	if r := s.heartbeat(&pb.HeartbeatRequest{Member: 99}); r.Error.GetCode() != pb.ErrorCode_NOT_READY {
		t.Fatalf("heartbeat of an id never issued: %v", r.Error)
	}
	s.n.Heartbeat(&pb.HeartbeatRequest{Member: a.Id})
	last := s.n.Now()
	failedAt := int64(0)
	for i := 0; i < 200 && failedAt == 0; i++ {
		s.n.Heartbeat(&pb.HeartbeatRequest{Member: b.Id})
		s.tick()
		if mb, _ := s.n.Machine().Member(a.Id); !mb.Live {
			failedAt = s.n.Now()
		}
	}
	if failedAt-last != cfg.SuspectTicks+1 {
		t.Fatalf("failed %d ticks after the last heartbeat, want SuspectTicks+1 = %d", failedAt-last, cfg.SuspectTicks+1)
	}
	if r := s.heartbeat(&pb.HeartbeatRequest{Member: a.Id}); r.Error.GetCode() != pb.ErrorCode_FENCED {
		t.Fatalf("heartbeat of a failed member: %v", r.Error)
	}
	r := s.heartbeat(&pb.HeartbeatRequest{Member: b.Id})
	if r.Error != nil || r.Member.Slot != 0 || r.Config.Epoch <= r.Config.ActiveEpoch {
		t.Fatalf("backup's heartbeat after promotion: %v (want slot 0, epoch not yet active)", r)
	}
	s.n.Heartbeat(&pb.HeartbeatRequest{Member: b.Id, AckedEpoch: r.Config.Epoch})
	s.drain()
	if m := s.n.Machine(); m.ActiveEpoch() != r.Config.Epoch {
		t.Fatalf("after the only live member acked epoch %d: active %d", r.Config.Epoch, m.ActiveEpoch())
	}
}

// TestFollowerDoesNotServe: a replica that is not the leader answers
// NOT_LEADER and refuses proposals.
func TestFollowerDoesNotServe(t *testing.T) {
	n, err := NewNode(DefaultNodeConfig(2, []uint64{1, 2, 3}), raft.NewMemoryStorage(), NewMachine(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := n.Heartbeat(&pb.HeartbeatRequest{Member: 1}); r.Error.GetCode() != pb.ErrorCode_NOT_LEADER {
		t.Fatalf("follower heartbeat: %v", r.Error)
	}
	if _, err := n.Propose(&pb.Command{}); err != ErrNotServing {
		t.Fatalf("follower propose: %v", err)
	}
}

func TestNodeConfigValidate(t *testing.T) {
	ok := DefaultNodeConfig(1, []uint64{1, 2, 3})
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, mut := range map[string]func(*NodeConfig){
		"id not a peer":      func(c *NodeConfig) { c.ID = 4 },
		"zero id":            func(c *NodeConfig) { c.ID = 0 },
		"suspect too short":  func(c *NodeConfig) { c.SuspectTicks = 20 },
		"election too short": func(c *NodeConfig) { c.ElectionTicks = 1 },
		"negative slots":     func(c *NodeConfig) { c.Shards = -1 },
		"lease too long":     func(c *NodeConfig) { c.Lease.Lease = time.Second },
		"no lease":           func(c *NodeConfig) { c.Lease.Lease = 0 },
		"negative drift":     func(c *NodeConfig) { c.Lease.MaxDrift = -1 },
		"no tick":            func(c *NodeConfig) { c.Tick = 0 },
	} {
		c := ok
		c.Peers = append([]uint64(nil), ok.Peers...)
		mut(&c)
		if err := c.Validate(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
