package coord

import (
	"bytes"
	"testing"

	"google.golang.org/protobuf/proto"

	pb "github.com/weft-db/weft/internal/wire/coordpb"
)

// applier feeds commands to a Machine with increasing log indexes.
type applier struct {
	t     *testing.T
	m     *Machine
	index uint64
}

func newApplier(t *testing.T) *applier { return &applier{t: t, m: NewMachine()} }

func (a *applier) apply(c *pb.Command) proto.Message {
	a.t.Helper()
	a.index++
	r := a.m.Apply(a.index, c)
	if err := a.m.CheckInvariants(); err != nil {
		a.t.Fatalf("after %v: %v", c, err)
	}
	return r
}

func (a *applier) register(name string, role pb.Role, token uint64) *pb.Member {
	a.t.Helper()
	r := a.apply(&pb.Command{Op: &pb.Command_Register{Register: &pb.RegisterRequest{Name: name, Role: role,
		Address: name + ":1", Token: token}}}).(*pb.RegisterResponse)
	if r.Error != nil {
		a.t.Fatalf("register %s: %v", name, r.Error)
	}
	if r.Member.AckedEpoch != r.Config.Epoch {
		a.t.Fatalf("register %s: acked %d, want the epoch it joins %d", name, r.Member.AckedEpoch, r.Config.Epoch)
	}
	return r.Member
}

func (a *applier) addSlots(role pb.Role, n int32) {
	a.t.Helper()
	if r := a.apply(&pb.Command{Op: &pb.Command_AddSlot{AddSlot: &pb.AddSlotRequest{Role: role, Count: n}}}).(*pb.AddSlotResponse); r.Error != nil {
		a.t.Fatal(r.Error)
	}
}

func (a *applier) fail(id uint64) {
	a.apply(&pb.Command{Op: &pb.Command_Fail{Fail: &pb.Fail{Member: id}}})
}

func (a *applier) ack(id, epoch uint64) *pb.AckEpochResponse {
	return a.apply(&pb.Command{Op: &pb.Command_Ack{Ack: &pb.AckEpochRequest{Member: id, Epoch: epoch}}}).(*pb.AckEpochResponse)
}

func (a *applier) member(id uint64) *pb.Member {
	mb, _ := a.m.Member(id)
	return mb
}

// TestFailoverPromotesBackup46: a shard fails; the registered backup takes
// its slot (same index) in one new epoch; the failed member is fenced, and
// the promotion records both.
func TestFailoverPromotesBackup46(t *testing.T) {
	a := newApplier(t)
	a.addSlots(pb.Role_SHARD, 2)
	if a.m.Epoch() != 2 {
		t.Fatalf("adding slots: epoch %d, want 2 (one bump per command)", a.m.Epoch())
	}
	s0 := a.register("s0", pb.Role_SHARD, 10)
	s1 := a.register("s1", pb.Role_SHARD, 11)
	b := a.register("b", pb.Role_SHARD, 12)
	if s0.Slot != 0 || s1.Slot != 1 || b.Slot != -1 {
		t.Fatalf("slots %d %d %d, want 0 1 -1 (backup)", s0.Slot, s1.Slot, b.Slot)
	}
	if a.m.Epoch() != 4 {
		t.Fatalf("epoch %d after two slots filled, want 4", a.m.Epoch())
	}
	// Retried registration: same member, nothing changes.
	before := a.m.Snapshot()
	again := a.apply(&pb.Command{Op: &pb.Command_Register{Register: &pb.RegisterRequest{Name: "s0", Role: pb.Role_SHARD,
		Address: "s0:1", Token: 10}}}).(*pb.RegisterResponse)
	if again.Error != nil || again.Member.Id != s0.Id || again.Member.Slot != 0 {
		t.Fatalf("retried register: %v, want member %d in slot 0", again, s0.Id)
	}
	a.index-- // the retry's entry changed nothing but the applied index
	a.m.SetApplied(a.index)
	if !bytes.Equal(before, a.m.Snapshot()) {
		t.Fatal("a retried register changed the state")
	}
	a.fail(s1.Id)
	if a.m.Epoch() != 5 {
		t.Fatalf("failure and promotion: epoch %d, want 5 (one new epoch)", a.m.Epoch())
	}
	if got := a.member(b.Id); got.Slot != 1 {
		t.Fatalf("backup holds slot %d, want the failed member's slot 1", got.Slot)
	}
	if got := a.member(s1.Id); got.Live || got.FailedEpoch != 5 || got.Slot != -1 {
		t.Fatalf("failed member: %v", got)
	}
	st := a.m.State()
	p := st.Promotions[len(st.Promotions)-1]
	if p.Epoch != 5 || p.Failed != s1.Id || p.Promoted != b.Id || p.Slot != 1 || p.Role != pb.Role_SHARD {
		t.Fatalf("promotion %v", p)
	}
	// A fenced member's ack is refused; it comes back only as a new member.
	if r := a.ack(s1.Id, 5); r.Error.GetCode() != pb.ErrorCode_FENCED {
		t.Fatalf("ack of a failed member: %v", r.Error)
	}
	if back := a.register("s1", pb.Role_SHARD, 11); back.Id == s1.Id || back.Slot != -1 {
		t.Fatalf("re-registered failed member: %v (old id %d)", back, s1.Id)
	}
	// Failure is idempotent.
	e := a.m.Epoch()
	a.fail(s1.Id)
	if a.m.Epoch() != e {
		t.Fatal("failing a failed member again changed the epoch")
	}
}

// TestEpochBarrier46: a new epoch is active only once every live member
// acknowledged it; a member that fails stops holding the barrier.
func TestEpochBarrier46(t *testing.T) {
	a := newApplier(t)
	a.addSlots(pb.Role_GATEKEEPER, 2)
	g0 := a.register("g0", pb.Role_GATEKEEPER, 1)
	g1 := a.register("g1", pb.Role_GATEKEEPER, 2)
	k := a.register("k", pb.Role_KRONOS, 3)
	// g1's registration made epoch 4; g0 acked only 3.
	if a.m.Epoch() != 4 || a.m.ActiveEpoch() != 3 {
		t.Fatalf("epoch %d active %d, want 4 and 3", a.m.Epoch(), a.m.ActiveEpoch())
	}
	if r := a.ack(g0.Id, 5); r.Error.GetCode() != pb.ErrorCode_MALFORMED {
		t.Fatalf("ack of a future epoch: %v", r.Error)
	}
	a.ack(g0.Id, 4)
	if a.m.ActiveEpoch() != 4 {
		t.Fatalf("all acked epoch 4, active %d", a.m.ActiveEpoch())
	}
	b := a.register("b", pb.Role_GATEKEEPER, 4)
	a.fail(g0.Id) // b takes slot 0 in epoch 5
	if a.m.Epoch() != 5 || a.m.ActiveEpoch() != 4 {
		t.Fatalf("epoch %d active %d, want 5 and 4", a.m.Epoch(), a.m.ActiveEpoch())
	}
	a.ack(g1.Id, 5)
	a.ack(b.Id, 5)
	if a.m.ActiveEpoch() != 4 {
		t.Fatal("epoch 5 active while the Kronos member has not acked it")
	}
	a.fail(k.Id) // the last one holding the barrier fails: no new epoch (no slot)
	if a.m.Epoch() != 5 || a.m.ActiveEpoch() != 5 {
		t.Fatalf("epoch %d active %d, want 5 and 5", a.m.Epoch(), a.m.ActiveEpoch())
	}
	if h := a.m.State().History; h[len(h)-1].Epoch != 5 || h[len(h)-1].ActiveEpoch != 5 {
		t.Fatalf("history's last entry %v", h[len(h)-1])
	}
}

// TestVacantSlotWaitsForBackup: with no backup, a failed member's slot stays
// vacant; the next registration of the role fills it in a new epoch.
func TestVacantSlotWaitsForBackup(t *testing.T) {
	a := newApplier(t)
	a.addSlots(pb.Role_SHARD, 1)
	s := a.register("s", pb.Role_SHARD, 1)
	a.fail(s.Id)
	c := a.m.Config()
	if c.Shards[0].Member != 0 || c.Epoch != 4 {
		t.Fatalf("slot after failure without backup: %v", c)
	}
	n := a.register("n", pb.Role_SHARD, 2)
	if n.Slot != 0 || a.m.Epoch() != 5 {
		t.Fatalf("new member slot %d epoch %d, want 0 and 5", n.Slot, a.m.Epoch())
	}
	// AddSlot is idempotent: asking for what exists changes nothing.
	e := a.m.Epoch()
	a.addSlots(pb.Role_SHARD, 1)
	if a.m.Epoch() != e || len(a.m.Config().Shards) != 1 {
		t.Fatal("AddSlot of an existing count changed the configuration")
	}
}

func TestMalformedCommands(t *testing.T) {
	a := newApplier(t)
	for _, r := range []*pb.RegisterRequest{
		{Role: pb.Role_SHARD, Token: 1}, {Name: "x", Token: 1}, {Name: "x", Role: pb.Role_SHARD},
	} {
		if resp := a.apply(&pb.Command{Op: &pb.Command_Register{Register: r}}).(*pb.RegisterResponse); resp.Error.GetCode() != pb.ErrorCode_MALFORMED {
			t.Fatalf("register %v: %v", r, resp.Error)
		}
	}
	for _, r := range []*pb.AddSlotRequest{{Role: pb.Role_KRONOS, Count: 1}, {Role: pb.Role_SHARD, Count: SlotsMax + 1}} {
		if resp := a.apply(&pb.Command{Op: &pb.Command_AddSlot{AddSlot: r}}).(*pb.AddSlotResponse); resp.Error.GetCode() != pb.ErrorCode_MALFORMED {
			t.Fatalf("add slot %v: %v", r, resp.Error)
		}
	}
	if a.m.Epoch() != 1 || len(a.m.LiveMembers()) != 0 {
		t.Fatal("malformed commands changed the state")
	}
}

// TestSnapshotRoundTrip: a restored machine has the same bytes and goes on
// exactly like the original; failed members stay bounded and fenced.
func TestSnapshotRoundTrip(t *testing.T) {
	a := newApplier(t)
	a.addSlots(pb.Role_SHARD, 2)
	a.addSlots(pb.Role_GATEKEEPER, 1)
	for i := range uint64(3*FailedMax/2 + 30) {
		mb := a.register("m", pb.Role_SHARD, 100+i)
		if i%3 != 0 {
			a.fail(mb.Id)
		}
	}
	r, err := RestoreMachine(a.m.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(r.Snapshot(), a.m.Snapshot()) {
		t.Fatal("restored snapshot differs")
	}
	// Member 2 was the first to fail: trimmed from the table, still fenced.
	if mb, issued := a.m.Member(2); mb != nil || !issued {
		t.Fatalf("member 2 should have been trimmed from the failed table but remain issued: %v %v", mb, issued)
	}
	b := &applier{t: t, m: r, index: a.index}
	for _, x := range []*applier{a, b} {
		g := x.register("g", pb.Role_GATEKEEPER, 7)
		x.fail(g.Id)
		x.ack(x.m.LiveMembers()[0], x.m.Epoch())
	}
	if !bytes.Equal(a.m.Snapshot(), b.m.Snapshot()) {
		t.Fatal("original and restored machines diverged on the same commands")
	}
	if failed := len(a.m.members) - len(a.m.LiveMembers()); failed > FailedMax {
		t.Fatalf("%d failed members kept, bound %d", failed, FailedMax)
	}
}
