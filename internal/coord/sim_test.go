package coord

import (
	"crypto/sha256"
	"flag"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"
	"time"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"

	pb "github.com/weft-db/weft/internal/wire/coordpb"
)

var (
	simSeed = flag.Int64("sim.seed", 0, "run only this simulation seed (0: -sim.runs seeds from 1)")
	simRuns = flag.Int("sim.runs", 20, "simulation seeds to run")
)

// simOptions shape one simulated run.
type simOptions struct {
	replicas      int
	gatekeepers   int32
	shards        int32
	backups       int // backup processes started with the cluster
	ticks         int
	lossPct       int // raft and member messages lost, percent
	faults        bool
	bug           plantedBug
	quiesceTicks  int
	heartbeatTick int
	scripted      bool // driven by a golden script (cluster_script_test.go)
	// Leases: every clock (replicas' ticks, members' lease clocks) runs at
	// a rate drawn in [1-driftPct%, 1+driftPct%] of the simulation's time;
	// members are cut off from every replica (both ways) and gatekeepers
	// lose their way to one shard (reported unreachable) as faults.
	driftPct    float64
	cuts        bool
	unreachable bool
	// ignoreLease plants a member that serves on after its lease lapsed
	// (LeaseState.PlantIgnoreExpiry).
	ignoreLease bool
	// maxDrift is the coordinator's drift margin (simMaxDrift).
	maxDrift time.Duration
	// unreachableEvery scales how often gatekeepers lose a shard (1: the
	// default 3 in 1000 ticks).
	unreachableEvery int
}

func defaultSimOptions() simOptions {
	return simOptions{replicas: 3, gatekeepers: 2, shards: 3, backups: 3, ticks: 3000, lossPct: 5,
		faults: true, quiesceTicks: 800, heartbeatTick: 5, driftPct: 15, cuts: true, unreachable: true,
		maxDrift: simMaxDrift}
}

// The simulation's time: one tick is one millisecond of "real" time; the
// replicas' tick and the lease fit inside SuspectTicks (60). Clocks drift by
// up to ±15% — far beyond real clocks, so that the drift margin is what the
// lease checker tests: MaxDrift 10ms covers a 25ms lease at that drift
// ((25+10)/1.15 > 25/0.85), and with MaxDrift 0 the checker fails
// (TestPlantedNoDriftMarginIsCaught).
const (
	simTick     = time.Millisecond
	simLease    = 25 * time.Millisecond
	simMaxDrift = 10 * time.Millisecond
)

type inflight struct {
	at  int
	msg *raftpb.Message
}

type simReplica struct {
	id      uint64
	storage *raft.MemoryStorage
	node    *Node // nil while crashed
	inc     int   // incarnation, for the per-incarnation monotonicity check
	// lastSnap is the index of the last snapshot: replicas compact their
	// logs, so restarts restore snapshots and lagging replicas receive them.
	lastSnap uint64
	// rate is how fast the replica's clock (its ticks) runs; acc carries
	// the fraction of a tick due.
	rate, acc float64
}

// Log compaction in the simulation: a snapshot every snapEvery applied
// entries, keeping snapKeep entries behind it for slow followers.
const snapEvery, snapKeep = 40, 8

type simMember struct {
	name     string
	role     pb.Role
	token    uint64
	id       uint64
	alive    bool // false: crashed for good (kill -9)
	pausedTo int  // heartbeats lost until this tick (a stall or a one-way partition)
	fenced   bool
	adopted  uint64 // highest epoch this process moved to
	guess    int    // index of the replica it talks to
	regProp  uint64 // pending Register proposal
	regAt    int

	// The lease, over the member's own drifting clock (rate, offset), run
	// by the same LeaseState a process's RunMember renews.
	lease  *LeaseState
	rate   float64
	offset time.Duration
	// slot is the slot the member believes it holds (-1: none), from the
	// last answer it heard.
	slot int32
	// cutTo: cut off from every replica, both ways, until this tick.
	cutTo int
	// noReach: shard members this (gatekeeper) member cannot reach, until
	// a tick each; reported with its heartbeats.
	noReach map[uint64]int
	// hbs: heartbeats waiting for their answer -> the member's instant of
	// sending.
	hbs map[uint64]time.Duration
	// serving: whether it might serve at the last check (lapses count
	// the ends of a lease of a slot holder not fenced).
	serving bool
}

// memberAnswer is a heartbeat's answer on its way to a member.
type memberAnswer struct {
	at   int
	mb   *simMember
	resp *pb.HeartbeatResponse
	sent time.Duration
}

// localNow is a member's clock reading at the simulation's time now.
func (mb *simMember) localNow(now int) time.Duration {
	return mb.offset + time.Duration(float64(now)*mb.rate*float64(simTick))
}

// sim runs a coordinator group, its members and a faulty network in one
// thread, every choice drawn from one seeded rand: a seed replays exactly.
type sim struct {
	t        testing.TB
	o        simOptions
	rng      *rand.Rand
	now      int
	replicas []*simReplica
	net      []inflight
	side     map[uint64]int // partition side of each replica (all 0: healed)
	members  []*simMember
	answers  []memberAnswer
	chk      *checker
	trace    *strings.Builder
	stats    simStats
}

// newMember makes a member process (not yet registered) with its lease over
// its own drifting clock.
func (s *sim) newMember(name string, role pb.Role, token uint64, guess int) *simMember {
	mb := &simMember{name: name, role: role, token: token, alive: true, guess: guess, slot: -1, rate: 1,
		noReach: map[uint64]int{}, hbs: map[uint64]time.Duration{}}
	if s.o.driftPct > 0 {
		mb.rate, mb.offset = s.drawRate(), time.Duration(s.rng.Intn(1000))*simTick
	}
	mb.lease = NewLeaseState(func() time.Duration { return mb.localNow(s.now) })
	if s.o.ignoreLease {
		mb.lease.PlantIgnoreExpiry()
	}
	return mb
}

// drawRate draws a clock's rate within the drift bound.
func (s *sim) drawRate() float64 {
	if s.o.driftPct == 0 {
		return 1
	}
	return 1 + (2*s.rng.Float64()-1)*s.o.driftPct/100
}

type simStats struct {
	crashes, partitions, kills, pauses, fenced, leaderChanges, registered, slotsAdded, restores int
	snapshotsReceived                                                                           int
	cuts, unreachable, lapses, grants, withheld                                                 int
}

func newSim(t testing.TB, seed int64, o simOptions) *sim {
	s := &sim{t: t, o: o, rng: rand.New(rand.NewSource(seed)), side: map[uint64]int{}, chk: newChecker(),
		trace: &strings.Builder{}}
	s.chk.now = &s.now
	for i := 1; i <= o.replicas; i++ {
		r := &simReplica{id: uint64(i), storage: raft.NewMemoryStorage(), rate: s.drawRate()}
		s.replicas = append(s.replicas, r)
		s.start(r)
	}
	add := func(role pb.Role, n int, prefix string) {
		for i := range n {
			s.members = append(s.members, s.newMember(fmt.Sprintf("%s-%d", prefix, i), role, s.rng.Uint64()|1, s.rng.Intn(o.replicas)))
		}
	}
	if o.scripted {
		return s // the script adds its members
	}
	add(pb.Role_GATEKEEPER, int(o.gatekeepers), "gk")
	add(pb.Role_SHARD, int(o.shards), "shard")
	add(pb.Role_KRONOS, 1, "kronos")
	for i := range o.backups {
		role := pb.Role_SHARD
		if i%2 == 1 {
			role = pb.Role_GATEKEEPER
		}
		add(role, 1, fmt.Sprintf("backup%d", i))
	}
	return s
}

func (s *sim) peers() []uint64 {
	var ids []uint64
	for _, r := range s.replicas {
		ids = append(ids, r.id)
	}
	return ids
}

// start (re)creates a replica's core from its durable storage: the machine
// starts empty and raft re-applies the committed log.
func (s *sim) start(r *simReplica) {
	cfg := DefaultNodeConfig(r.id, s.peers())
	if len(cfg.Peers) < s.o.replicas {
		cfg.Peers = nil
		for i := 1; i <= s.o.replicas; i++ {
			cfg.Peers = append(cfg.Peers, uint64(i))
		}
	}
	cfg.Gatekeepers, cfg.Shards = s.o.gatekeepers, s.o.shards
	cfg.SuspectTicks = 60
	cfg.Tick, cfg.Lease = simTick, LeaseRule{Lease: simLease, MaxDrift: s.o.maxDrift}
	cfg.Seed = s.rng.Int63()
	m := NewMachine()
	var conf *raftpb.ConfState
	if snap, err := r.storage.Snapshot(); err == nil && len(snap.GetData()) > 0 {
		if m, err = RestoreMachine(snap.GetData()); err != nil {
			s.t.Fatal(err)
		}
		m.SetApplied(snap.GetMetadata().GetIndex())
		conf = snap.GetMetadata().GetConfState()
		s.stats.restores++
	}
	m.bug = s.o.bug
	r.lastSnap = m.Applied()
	n, err := NewNode(cfg, r.storage, m, conf)
	if err != nil {
		s.t.Fatal(err)
	}
	r.inc++
	key := fmt.Sprintf("%d/%d", r.id, r.inc)
	n.OnApply = func(index uint64, m *Machine) { s.chk.observe(key, index, m) }
	r.node = n
}

func (s *sim) logf(format string, args ...any) {
	fmt.Fprintf(s.trace, "%d: "+format+"\n", append([]any{s.now}, args...)...)
}

func (s *sim) run() {
	for s.now = 1; s.now <= s.o.ticks+s.o.quiesceTicks; s.now++ {
		if s.o.faults && s.now <= s.o.ticks {
			s.fault()
		} else if s.now == s.o.ticks+1 {
			s.heal()
		}
		s.step()
	}
}

// step is one tick of every replica, the network and the members.
func (s *sim) step() {
	for _, r := range s.replicas {
		// A replica's clock drifts: it ticks at its own rate.
		for r.acc += r.rate; r.node != nil && r.acc >= 1; r.acc-- {
			r.node.Tick()
			s.drain(r)
		}
		r.acc = min(r.acc, 1)
	}
	s.deliver()
	s.deliverAnswers()
	if s.now%s.o.heartbeatTick == 0 {
		for _, mb := range s.members {
			s.memberStep(mb)
		}
	}
	s.checkLeases()
}

// fault draws at most one fault per tick.
func (s *sim) fault() {
	switch x := s.rng.Intn(1000); {
	case x < 3: // crash a replica, keeping a majority up
		var up []*simReplica
		for _, r := range s.replicas {
			if r.node != nil {
				up = append(up, r)
			}
		}
		if len(up)-1 > len(s.replicas)/2 {
			r := up[s.rng.Intn(len(up))]
			r.node = nil
			s.stats.crashes++
			s.logf("crash replica %d", r.id)
		}
	case x < 12: // restart crashed replicas
		for _, r := range s.replicas {
			if r.node == nil {
				s.start(r)
				s.logf("restart replica %d", r.id)
			}
		}
	case x < 15: // partition one replica away
		clear(s.side)
		s.side[uint64(1+s.rng.Intn(len(s.replicas)))] = 1
		s.stats.partitions++
	case x < 25:
		clear(s.side)
	case x < 27: // kill -9 a member for good
		mb := s.members[s.rng.Intn(len(s.members))]
		if mb.alive {
			mb.alive = false
			s.stats.kills++
			s.logf("kill %s (member %d)", mb.name, mb.id)
		}
	case x < 30: // a member stalls (its heartbeats are lost) for a while
		mb := s.members[s.rng.Intn(len(s.members))]
		mb.pausedTo = s.now + s.rng.Intn(150)
		s.stats.pauses++
	case x < 31: // elasticity: add a slot (at most two per role)
		if l := s.leader(); l != nil {
			role := []pb.Role{pb.Role_GATEKEEPER, pb.Role_SHARD}[s.rng.Intn(2)]
			have := int32(len(l.Machine().Config().Shards))
			want := s.o.shards
			if role == pb.Role_GATEKEEPER {
				have, want = int32(len(l.Machine().Config().Gatekeepers)), s.o.gatekeepers
			}
			if have < want+2 {
				if _, err := l.Propose(&pb.Command{Op: &pb.Command_AddSlot{AddSlot: &pb.AddSlotRequest{Role: role, Count: have + 1}}}); err == nil {
					s.stats.slotsAdded++
					s.logf("add %v slot %d", role, have)
				}
			}
		}
	case x < 33: // a fresh backup process joins
		role := []pb.Role{pb.Role_GATEKEEPER, pb.Role_SHARD}[s.rng.Intn(2)]
		s.members = append(s.members, s.newMember(fmt.Sprintf("late-%d", len(s.members)), role, s.rng.Uint64()|1,
			s.rng.Intn(len(s.replicas))))
	case x < 37 && s.o.cuts: // a slot holder is cut off from every replica (clients still reach it)
		if mb := s.pickHolder(pb.Role_ROLE_UNSPECIFIED); mb != nil {
			mb.cutTo = s.now + 10 + s.rng.Intn(190)
			s.stats.cuts++
			s.logf("cut %s (member %d) off from the coordinators until %d", mb.name, mb.id, mb.cutTo)
		}
	case x < 37+max(3, s.o.unreachableEvery*3) && s.o.unreachable: // a gatekeeper loses its way to one shard
		gk, sh := s.pickHolder(pb.Role_GATEKEEPER), s.pickHolder(pb.Role_SHARD)
		if gk != nil && sh != nil {
			gk.noReach[sh.id] = s.now + 50 + s.rng.Intn(300)
			s.stats.unreachable++
			s.logf("%s (member %d) cannot reach %s (member %d) until %d", gk.name, gk.id, sh.name, sh.id, gk.noReach[sh.id])
		}
	}
}

// pickHolder picks a live member process that believes it holds a slot
// (of role, or of any role).
func (s *sim) pickHolder(role pb.Role) *simMember {
	var c []*simMember
	for _, mb := range s.members {
		if mb.alive && !mb.fenced && mb.slot >= 0 && (role == pb.Role_ROLE_UNSPECIFIED || mb.role == role) {
			c = append(c, mb)
		}
	}
	if len(c) == 0 {
		return nil
	}
	return c[s.rng.Intn(len(c))]
}

func (s *sim) heal() {
	clear(s.side)
	for _, r := range s.replicas {
		if r.node == nil {
			s.start(r)
		}
	}
	for _, mb := range s.members {
		mb.pausedTo, mb.cutTo = 0, 0
		clear(mb.noReach)
	}
	// Enough backups to refill every slot: a healed cluster must converge.
	for _, role := range []pb.Role{pb.Role_GATEKEEPER, pb.Role_SHARD} {
		for i := range int(s.o.gatekeepers+s.o.shards) + 4 {
			s.members = append(s.members, s.newMember(fmt.Sprintf("heal%d-%v", i, role), role, s.rng.Uint64()|1,
				s.rng.Intn(len(s.replicas))))
		}
	}
	s.o.lossPct = 0
}

// drain persists, sends and applies every Ready of r (persist before send).
func (s *sim) drain(r *simReplica) {
	for r.node != nil && r.node.HasReady() {
		rd := r.node.Ready()
		if rd.Snapshot != nil && !raft.IsEmptySnap(rd.Snapshot) {
			if err := r.storage.ApplySnapshot(rd.Snapshot); err != nil {
				s.t.Fatal(err)
			}
		}
		if err := r.storage.Append(rd.Entries); err != nil {
			s.t.Fatal(err)
		}
		if rd.HardState != nil && !raft.IsEmptyHardState(rd.HardState) {
			if err := r.storage.SetHardState(rd.HardState); err != nil {
				s.t.Fatal(err)
			}
		}
		for _, m := range rd.Messages {
			s.net = append(s.net, inflight{at: s.now + 1 + s.rng.Intn(3), msg: m})
		}
		before, _ := r.node.Leader()
		results, err := r.node.Advance(rd)
		if err != nil {
			s.t.Fatal(err)
		}
		if after, _ := r.node.Leader(); after != before && after == r.id {
			s.stats.leaderChanges++
			s.logf("replica %d leads", r.id)
		}
		for _, res := range results {
			s.route(res)
		}
		s.maybeCompact(r)
	}
}

func (s *sim) maybeCompact(r *simReplica) {
	if s.o.bug != bugNone {
		// A planted bug's states fail RestoreMachine's own check: no
		// snapshots, so only the history checker can catch it.
		return
	}
	m := r.node.Machine()
	applied := m.Applied()
	if snap, err := r.storage.Snapshot(); err == nil {
		r.lastSnap = max(r.lastSnap, snap.GetMetadata().GetIndex()) // one received from the leader
	}
	if applied < r.lastSnap+snapEvery {
		return
	}
	if _, err := r.storage.CreateSnapshot(applied, r.node.ConfState(), m.Snapshot()); err != nil {
		s.t.Fatalf("replica %d snapshot at %d: %v", r.id, applied, err)
	}
	if err := r.storage.Compact(applied - snapKeep); err != nil {
		s.t.Fatalf("replica %d compact: %v", r.id, err)
	}
	r.lastSnap = applied
}

func (s *sim) route(res Result) {
	if hb, ok := res.Reply.(*pb.HeartbeatResponse); ok {
		for _, mb := range s.members {
			if sent, ok := mb.hbs[res.Proposal]; ok {
				delete(mb.hbs, res.Proposal)
				s.answer(mb, hb, sent)
			}
		}
		return
	}
	for _, mb := range s.members {
		if mb.regProp == res.Proposal && mb.id == 0 {
			rr := res.Reply.(*pb.RegisterResponse)
			if rr.Error == nil {
				mb.id, mb.adopted = rr.Member.Id, rr.Config.Epoch
				s.stats.registered++
				s.logf("%s registered as %d slot %d epoch %d", mb.name, mb.id, rr.Member.Slot, rr.Config.Epoch)
			}
		}
	}
}

func (s *sim) deliver() {
	keep := s.net[:0]
	var due []inflight
	for _, f := range s.net {
		if f.at <= s.now {
			due = append(due, f)
		} else {
			keep = append(keep, f)
		}
	}
	s.net = keep
	for _, f := range due {
		to := s.replicas[f.msg.GetTo()-1]
		if to.node == nil || s.side[f.msg.GetFrom()] != s.side[f.msg.GetTo()] || s.rng.Intn(100) < s.o.lossPct {
			continue
		}
		if err := to.node.Step(f.msg); err != nil {
			s.t.Fatal(err)
		}
		s.drain(to)
	}
}

// memberStep is one heartbeat period of a member process: register (and
// retry), or heartbeat and adopt the epoch it hears of.
func (s *sim) memberStep(mb *simMember) {
	if !mb.alive || mb.fenced || mb.pausedTo > s.now || mb.cutTo > s.now || s.rng.Intn(100) < s.o.lossPct {
		return
	}
	// Members reach every replica that is up, whatever side of a raft
	// partition it is on: a stale leader hears heartbeats too (and must
	// not grant leases it cannot confirm).
	r := s.replicas[mb.guess]
	if r.node == nil {
		mb.guess = s.rng.Intn(len(s.replicas))
		return
	}
	if mb.id == 0 {
		if mb.regProp != 0 && s.now-mb.regAt < 30 {
			return
		}
		p, err := r.node.Propose(&pb.Command{Op: &pb.Command_Register{Register: &pb.RegisterRequest{
			Name: mb.name, Role: mb.role, Address: mb.name + ":1", Token: mb.token}}})
		if err != nil {
			mb.guess = s.rng.Intn(len(s.replicas))
			return
		}
		mb.regProp, mb.regAt = p, s.now
		s.drain(r)
		return
	}
	sent := mb.lease.Now()
	req := &pb.HeartbeatRequest{Member: mb.id, AckedEpoch: mb.adopted}
	for _, id := range sortedKeys(mb.noReach) {
		if mb.noReach[id] > s.now {
			req.Unreachable = append(req.Unreachable, id)
		}
	}
	resp, id := r.node.Heartbeat(req)
	if resp == nil {
		mb.hbs[id] = sent // answered once the leadership check comes back
		for len(mb.hbs) > 16 {
			delete(mb.hbs, sortedKeys(mb.hbs)[0]) // the member gave up on the oldest
		}
	} else {
		s.answer(mb, resp, sent)
	}
	s.drain(r)
}

// answer sends a heartbeat's answer to its member, after a network delay
// (or loses it).
func (s *sim) answer(mb *simMember, resp *pb.HeartbeatResponse, sent time.Duration) {
	if s.o.lossPct > 0 && s.rng.Intn(100) < s.o.lossPct {
		return
	}
	s.answers = append(s.answers, memberAnswer{at: s.now + 1 + s.rng.Intn(3), mb: mb, resp: resp, sent: sent})
}

// deliverAnswers hands the answers due to their members: RunMember's
// handling — renew the lease from the sending instant, adopt, or stop when
// fenced.
func (s *sim) deliverAnswers() {
	keep := s.answers[:0]
	var due []memberAnswer
	for _, a := range s.answers {
		if a.at <= s.now {
			due = append(due, a)
		} else {
			keep = append(keep, a)
		}
	}
	s.answers = keep
	for _, a := range due {
		mb, resp := a.mb, a.resp
		if !mb.alive || mb.fenced || mb.cutTo > s.now {
			continue
		}
		switch resp.GetError().GetCode() {
		case pb.ErrorCode_OK:
			mb.adopted = max(mb.adopted, resp.Config.Epoch)
			mb.slot = resp.GetMember().GetSlot()
			if resp.GetLeaseNs() > 0 {
				mb.lease.Granted(a.sent, time.Duration(resp.GetLeaseNs()))
				s.stats.grants++
			} else {
				s.stats.withheld++
			}
		case pb.ErrorCode_FENCED:
			mb.fenced, mb.slot = true, -1
			mb.lease.Fence()
			s.stats.fenced++
			s.logf("%s (member %d) fenced", mb.name, mb.id)
		default:
			mb.guess = s.rng.Intn(len(s.replicas))
		}
	}
}

// checkLeases is the lease checker, at every tick: no two member processes
// may serve one slot at once, and no member may serve a slot after any
// replica applied the failure that gave it away (the new epoch's start).
func (s *sim) checkLeases() {
	holder := map[string]*simMember{}
	for _, mb := range s.members {
		serving := mb.alive && mb.slot >= 0 && mb.lease.MayServe()
		if mb.serving && !serving && mb.alive && !mb.fenced && mb.slot >= 0 {
			s.stats.lapses++
		}
		mb.serving = serving
		if !serving {
			continue
		}
		key := fmt.Sprintf("%v/%d", mb.role, mb.slot)
		if o, ok := holder[key]; ok {
			s.chk.fail("tick %d: members %d and %d may both serve slot %s", s.now, o.id, mb.id, key)
		}
		holder[key] = mb
		if at, ok := s.chk.failedTick[mb.id]; ok && at < s.now {
			s.chk.fail("tick %d: member %d may serve slot %s (lease %v, clock %v) after its failure was applied at tick %d",
				s.now, mb.id, key, mb.lease.Current(), mb.lease.Now(), at)
		}
	}
}

// checker holds what every replica's applied states showed, and reports
// every violation of the coordinator's safety properties.
type checker struct {
	last       map[string][2]uint64 // replica incarnation -> (epoch, active) last seen
	byIndex    map[uint64][32]byte  // log index -> state digest: replicas agree
	assign     map[uint64]string    // epoch -> slot assignment: one holder per slot per epoch
	failedAt   map[uint64]uint64    // member -> epoch that removed it
	failedTick map[uint64]int       // member -> simulation tick its failure was first applied
	now        *int
	violations []string
	states     int
}

func newChecker() *checker {
	return &checker{last: map[string][2]uint64{}, byIndex: map[uint64][32]byte{}, assign: map[uint64]string{},
		failedAt: map[uint64]uint64{}, failedTick: map[uint64]int{}, now: new(int)}
}

func (c *checker) fail(format string, args ...any) {
	if len(c.violations) < 20 {
		c.violations = append(c.violations, fmt.Sprintf(format, args...))
	}
}

func assignment(st *pb.State) string {
	var b strings.Builder
	for _, s := range st.Slots {
		fmt.Fprintf(&b, "%v/%d=%d ", s.Role, s.Index, s.Holder)
	}
	return b.String()
}

func (c *checker) observe(replica string, index uint64, m *Machine) {
	c.states++
	st := m.State()
	// Epochs only increase, at each replica.
	if l, ok := c.last[replica]; ok && (st.Epoch < l[0] || st.ActiveEpoch < l[1]) {
		c.fail("replica %s index %d: epoch/active went from %d/%d to %d/%d", replica, index, l[0], l[1], st.Epoch, st.ActiveEpoch)
	}
	c.last[replica] = [2]uint64{st.Epoch, st.ActiveEpoch}
	// Replicas agree on the state after every index.
	b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(st)
	d := sha256.Sum256(b)
	if old, ok := c.byIndex[index]; ok && old != d {
		c.fail("replicas disagree on the state after index %d (replica %s)", index, replica)
	}
	c.byIndex[index] = d
	// At most one member per slot per epoch.
	a := assignment(st)
	if old, ok := c.assign[st.Epoch]; ok && old != a {
		c.fail("epoch %d has two slot assignments: %q and %q", st.Epoch, old, a)
	}
	c.assign[st.Epoch] = a
	for _, mb := range st.Members {
		if !mb.Live {
			c.failedAt[mb.Id] = mb.FailedEpoch
			if _, ok := c.failedTick[mb.Id]; !ok {
				c.failedTick[mb.Id] = *c.now
			}
		}
	}
	// A failed member holds no slot in its failure epoch or after, and a
	// promoted backup never shares its epoch with the member it replaced.
	for _, s := range st.Slots {
		if f, ok := c.failedAt[s.Holder]; ok && f <= st.Epoch {
			c.fail("epoch %d: slot %v/%d held by member %d, failed in epoch %d", st.Epoch, s.Role, s.Index, s.Holder, f)
		}
	}
	for _, p := range st.Promotions {
		if p.Failed == 0 {
			continue
		}
		if f, ok := c.failedAt[p.Failed]; ok && f > p.Epoch {
			c.fail("member %d promoted into slot %v/%d in epoch %d while its holder %d failed only in epoch %d",
				p.Promoted, p.Role, p.Slot, p.Epoch, p.Failed, f)
		}
		if strings.Contains(c.assign[p.Epoch-1], fmt.Sprintf("%v/%d=%d ", p.Role, p.Slot, p.Promoted)) {
			c.fail("member %d held slot %v/%d already in epoch %d, before its promotion", p.Promoted, p.Role, p.Slot, p.Epoch-1)
		}
	}
	// The barrier: an epoch is active only once every live member acked it.
	for _, mb := range st.Members {
		if mb.Live && mb.AckedEpoch < st.ActiveEpoch {
			c.fail("replica %s index %d: epoch %d active but live member %d acked only %d",
				replica, index, st.ActiveEpoch, mb.Id, mb.AckedEpoch)
		}
	}
}

func (s *sim) digest() [32]byte {
	h := sha256.New()
	h.Write([]byte(s.trace.String()))
	for _, r := range s.replicas {
		if r.node != nil {
			h.Write(r.node.Machine().Snapshot())
		}
	}
	var d [32]byte
	copy(d[:], h.Sum(nil))
	return d
}

func (s *sim) leader() *Node {
	for _, r := range s.replicas {
		if r.node != nil && r.node.Serving() {
			return r.node
		}
	}
	return nil
}

func simSeeds() []int64 {
	if *simSeed != 0 {
		return []int64{*simSeed}
	}
	n := *simRuns
	if testing.Short() {
		n = max(n/4, 1)
	}
	var out []int64
	for i := 1; i <= n; i++ {
		out = append(out, int64(i))
	}
	return out
}

// TestSimFaultTolerance46 runs the coordinator group (3 replicas) with
// message loss, partitions, replica crashes (a minority at a time), lost
// heartbeats, member kills and stalls, checking every applied state of every
// replica; then heals the faults and checks the cluster converges: every
// slot filled, the latest epoch active (dissertation §4.6).
func TestSimFaultTolerance46(t *testing.T) {
	var total simStats
	promotions := 0
	for _, seed := range simSeeds() {
		s := newSim(t, seed, defaultSimOptions())
		s.run()
		if len(s.chk.violations) > 0 {
			t.Fatalf("seed %d (replay: -sim.seed=%d): %d violations:\n%s\ntrace tail:\n%s", seed, seed,
				len(s.chk.violations), strings.Join(s.chk.violations, "\n"), tail(s.trace.String(), 30))
		}
		l := s.leader()
		if l == nil {
			t.Fatalf("seed %d: no serving leader after healing", seed)
		}
		m := l.Machine()
		c := m.Config()
		if m.Epoch() != m.ActiveEpoch() {
			t.Fatalf("seed %d: epoch %d never became active (active %d) after healing", seed, m.Epoch(), m.ActiveEpoch())
		}
		if int32(len(c.Gatekeepers)) < s.o.gatekeepers || int32(len(c.Shards)) < s.o.shards {
			t.Fatalf("seed %d: slots %d/%d, want at least %d/%d", seed, len(c.Gatekeepers), len(c.Shards), s.o.gatekeepers, s.o.shards)
		}
		for _, e := range append(slices.Clone(c.Gatekeepers), c.Shards...) {
			mb, _ := m.Member(e.Member)
			if e.Member == 0 || mb == nil || !mb.Live {
				t.Fatalf("seed %d: slot %d not held by a live member after healing: %v", seed, e.Slot, c)
			}
		}
		for _, p := range m.State().Promotions {
			if p.Failed != 0 {
				promotions++
			}
		}
		// Liveness after healing: every slot's holder serves again (its
		// lease renewed).
		if err := s.holdersServe(m.Config()); err != nil {
			t.Fatalf("seed %d (replay: -sim.seed=%d): %v", seed, seed, err)
		}
		total.cuts += s.stats.cuts
		total.unreachable += s.stats.unreachable
		total.lapses += s.stats.lapses
		total.grants += s.stats.grants
		total.withheld += s.stats.withheld
		total.crashes += s.stats.crashes
		total.partitions += s.stats.partitions
		total.kills += s.stats.kills
		total.fenced += s.stats.fenced
		total.leaderChanges += s.stats.leaderChanges
		total.slotsAdded += s.stats.slotsAdded
		total.restores += s.stats.restores
		for _, r := range s.replicas {
			if r.node != nil {
				total.snapshotsReceived += r.node.snapshotsApplied
			}
		}
	}
	t.Logf("%d seeds: %d replica crashes (%d restarts from a snapshot), %d snapshots received from a leader, %d partitions, "+
		"%d leader changes, %d member kills, %d fenced, %d promotions after a failure, %d slots added",
		len(simSeeds()), total.crashes, total.restores, total.snapshotsReceived, total.partitions, total.leaderChanges,
		total.kills, total.fenced, promotions, total.slotsAdded)
	t.Logf("leases: %d granted, %d heartbeats answered without one (member condemned), %d lapses of a slot holder's lease, "+
		"%d members cut off from the coordinators, %d gatekeepers cut from a shard (reported unreachable); clocks drift ±%.0f%%",
		total.grants, total.withheld, total.lapses, total.cuts, total.unreachable, defaultSimOptions().driftPct)
	// The faults must actually have happened for the checks to mean anything.
	if len(simSeeds()) >= 5 && (total.crashes == 0 || total.lapses == 0 || total.withheld == 0 || total.cuts == 0 || total.leaderChanges <= len(simSeeds()) || total.fenced == 0 || promotions == 0 || total.slotsAdded == 0 ||
		total.restores == 0 || total.snapshotsReceived == 0) {
		t.Fatalf("the simulation did not exercise failover: %+v, %d promotions", total, promotions)
	}
}

// holdersServe reports an error unless every slot of conf is held by a
// member process that may serve (its lease renewed) and believes it holds
// that slot.
func (s *sim) holdersServe(conf *pb.Config) error {
	for _, e := range append(slices.Clone(conf.Gatekeepers), conf.Shards...) {
		var mb *simMember
		for _, m := range s.members {
			if m.id == e.Member {
				mb = m
			}
		}
		if mb == nil || !mb.lease.MayServe() || mb.slot != e.Slot {
			return fmt.Errorf("slot %d's holder %d does not serve after healing (process %v)", e.Slot, e.Member, mb != nil)
		}
	}
	return nil
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// TestSimDeterministic: a seed replays exactly (same trace, same states).
func TestSimDeterministic(t *testing.T) {
	o := defaultSimOptions()
	o.ticks = 1500
	a, b := newSim(t, 7, o), newSim(t, 7, o)
	a.run()
	b.run()
	if a.digest() != b.digest() {
		t.Fatalf("seed 7 ran twice gave different histories:\n%s\n---\n%s", tail(a.trace.String(), 10), tail(b.trace.String(), 10))
	}
	if c := newSim(t, 8, o); func() bool { c.run(); return c.digest() == a.digest() }() {
		t.Fatal("seeds 7 and 8 gave identical histories: the seed is not used")
	}
}

// TestSimCatchesPlantedBugs: the checker must catch a promotion that reuses
// the failed member's epoch, and a barrier that activates before the acks.
func TestSimCatchesPlantedBugs(t *testing.T) {
	for _, tc := range []struct {
		name string
		bug  plantedBug
		want string
	}{
		{"promote-in-place", bugPromoteInPlace, "two slot assignments"},
		{"early-barrier", bugEarlyBarrier, "acked only"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			caught := 0
			for seed := int64(1); seed <= 5; seed++ {
				o := defaultSimOptions()
				o.bug = tc.bug
				o.ticks = 1500
				s := newSim(t, seed, o)
				s.run()
				for _, v := range s.chk.violations {
					if strings.Contains(v, tc.want) {
						caught++
						break
					}
				}
			}
			if caught == 0 {
				t.Fatalf("the checker missed the planted bug %s in 5 seeds", tc.name)
			}
			t.Logf("caught in %d of 5 seeds", caught)
		})
	}
}

// TestSimFiveReplicas: a group of 5 loses up to 2 replicas at a time.
func TestSimFiveReplicas(t *testing.T) {
	n := max(len(simSeeds())/4, 1)
	crashes := 0
	for seed := int64(1); seed <= int64(n); seed++ {
		o := defaultSimOptions()
		o.replicas, o.ticks = 5, 2000
		s := newSim(t, 1000+seed, o)
		s.run()
		if len(s.chk.violations) > 0 {
			t.Fatalf("seed %d: %s\n%s", 1000+seed, strings.Join(s.chk.violations, "\n"), tail(s.trace.String(), 30))
		}
		l := s.leader()
		if l == nil || l.Machine().Epoch() != l.Machine().ActiveEpoch() {
			t.Fatalf("seed %d: no serving leader with an active epoch after healing", 1000+seed)
		}
		crashes += s.stats.crashes
	}
	if crashes == 0 {
		t.Fatal("no replica crashed")
	}
}

// plantedSeedsMax bounds the seeds a planted-bug test may need.
const plantedSeedsMax = 500

// firstCaught runs seeds 1, 2, … with o until the lease checker reports a
// violation containing want, and returns that seed (0: not caught below
// plantedSeedsMax).
func firstCaught(t *testing.T, o simOptions, want string) (int64, string) {
	return firstCaughtFrom(t, 1, o, want)
}

func firstCaughtFrom(t *testing.T, from int64, o simOptions, want string) (int64, string) {
	for seed := from; seed < plantedSeedsMax; seed++ {
		s := newSim(t, seed, o)
		s.run()
		for _, v := range s.chk.violations {
			if strings.Contains(v, want) {
				return seed, v
			}
		}
	}
	return 0, ""
}

// TestPlantedIgnoreLeaseIsCaught: a member that serves on after its lease
// lapsed (LeaseState.PlantIgnoreExpiry, in the LeaseState every member
// process runs) is caught by the lease checker: cut off from the
// coordinators, it still serves its slot after the epoch that gave the slot
// to a backup started.
func TestPlantedIgnoreLeaseIsCaught(t *testing.T) {
	o := defaultSimOptions()
	o.ignoreLease = true
	seed, v := firstCaught(t, o, "after its failure was applied")
	if seed == 0 {
		t.Fatalf("a member ignoring its lease's expiry was not caught in %d seeds", plantedSeedsMax-1)
	}
	t.Logf("caught at seed %d (replay: -sim.seed=%d): %s", seed, seed, v)
}

// TestPlantedReplaceBeforeExpiryIsCaught: a coordinator that fails a
// condemned member without waiting for its lease to expire (bugReplaceEarly)
// is caught: the unreachable-peer rule condemns members that still
// heartbeat, whose leases are fresh.
func TestPlantedReplaceBeforeExpiryIsCaught(t *testing.T) {
	o := defaultSimOptions()
	o.bug = bugReplaceEarly
	seed, v := firstCaught(t, o, "after its failure was applied")
	if seed == 0 {
		t.Fatalf("a coordinator replacing before lease expiry was not caught in %d seeds", plantedSeedsMax-1)
	}
	t.Logf("caught at seed %d (replay: -sim.seed=%d): %s", seed, seed, v)
}

// TestPlantedNoDriftMarginIsCaught: a coordinator that allows for no clock
// drift (MaxDrift 0) replaces a member whose clock runs slow while it still
// serves.
func TestPlantedNoDriftMarginIsCaught(t *testing.T) {
	o := defaultSimOptions()
	o.maxDrift = 0
	// Only a member condemned while it still heartbeats (the unreachable
	// rule) is failed at its lease's expiry rather than long after it; at
	// ±15% drift the heartbeat's round trip alone nearly covers the error,
	// so the run drifts ±30% and cuts gatekeepers from shards more often.
	o.driftPct, o.unreachableEvery = 30, 3
	seed, v := firstCaught(t, o, "after its failure was applied")
	if seed == 0 {
		t.Fatalf("a coordinator without a drift margin was not caught in %d seeds", plantedSeedsMax-1)
	}
	t.Logf("caught at seed %d (replay: -sim.seed=%d): %s", seed, seed, v)
}

// TestPlantedForgetCondemnedIsCaught: the first lease code forgot, when its
// leader paused serving (no quorum heard in a window) and resumed within
// the same term, which members it had condemned; it granted one a lease
// again while its Fail was still in the log, and the Fail then committed.
// The simulation found it at seed 425 (the only one of the first 500);
// bugForgetCondemned plants it back. The test runs seeds 400-499 only, to
// stay quick (all of 1-499 take about a minute).
func TestPlantedForgetCondemnedIsCaught(t *testing.T) {
	o := defaultSimOptions()
	o.bug = bugForgetCondemned
	seed, v := firstCaughtFrom(t, 400, o, "after its failure was applied")
	if seed == 0 {
		t.Fatalf("a leader forgetting its condemned members was not caught in seeds 400-%d", plantedSeedsMax-1)
	}
	t.Logf("caught at seed %d (replay: -sim.seed=%d): %s", seed, seed, v)
}
