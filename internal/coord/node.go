package coord

import (
	"errors"
	"fmt"
	"math/rand"
	"slices"
	"time"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"

	pb "github.com/weft-db/weft/internal/wire/coordpb"
)

// NodeConfig configures one coordinator replica's core. Times are in ticks.
type NodeConfig struct {
	// ID is this replica's raft id (1..n). Required.
	ID uint64
	// Peers lists every replica's id, this one included. Required.
	Peers []uint64
	// ElectionTicks: a follower that hears nothing from a leader for a random
	// time in [ElectionTicks, 2*ElectionTicks) campaigns; a leader that has
	// not heard from a quorum in ElectionTicks stops serving. Default 10.
	ElectionTicks int
	// HeartbeatTicks is raft's leader heartbeat interval. Default 1.
	HeartbeatTicks int
	// SuspectTicks declares a member failed when the serving leader has not
	// had its heartbeat for this long. Must exceed 2*ElectionTicks, so a new
	// leader's members find it before they are suspected. Default 100.
	SuspectTicks int64
	// Gatekeepers and Shards are the slot counts the leader grows the
	// configuration to (never shrinks). Default 0.
	Gatekeepers, Shards int32
	// Seed seeds the election timeouts (raft's own randomised timeouts are
	// switched off so a simulation replays exactly).
	Seed int64
	// Tick is the length of one tick: the core's clock, for leases, is
	// ticks × Tick. Default 10ms.
	Tick time.Duration
	// Lease is the lease granted with each confirmed heartbeat and the
	// clock drift allowed for (lease.go). Lease.Lease + Lease.MaxDrift must
	// stay below SuspectTicks × Tick. Default DefaultLeaseRule().
	Lease LeaseRule
}

// DefaultNodeConfig returns the documented defaults for replica id of peers.
func DefaultNodeConfig(id uint64, peers []uint64) NodeConfig {
	return NodeConfig{ID: id, Peers: peers, ElectionTicks: 10, HeartbeatTicks: 1, SuspectTicks: 100, Seed: int64(id),
		Tick: 10 * time.Millisecond, Lease: DefaultLeaseRule()}
}

// Validate reports a configuration error.
func (c NodeConfig) Validate() error {
	switch {
	case c.ID == 0 || !slices.Contains(c.Peers, c.ID):
		return fmt.Errorf("coord: replica id %d must be positive and among the peers %v", c.ID, c.Peers)
	case c.HeartbeatTicks <= 0 || c.ElectionTicks <= c.HeartbeatTicks:
		return errors.New("coord: need ElectionTicks > HeartbeatTicks > 0")
	case c.SuspectTicks <= 2*int64(c.ElectionTicks):
		return fmt.Errorf("coord: SuspectTicks %d must exceed 2*ElectionTicks %d", c.SuspectTicks, 2*c.ElectionTicks)
	case c.Gatekeepers < 0 || c.Shards < 0 || c.Gatekeepers > SlotsMax || c.Shards > SlotsMax:
		return fmt.Errorf("coord: slot counts must be in [0, %d]", SlotsMax)
	case c.Tick <= 0:
		return errors.New("coord: Tick must be positive")
	}
	return c.Lease.Validate(time.Duration(c.SuspectTicks) * c.Tick)
}

// raftNoElection switches raft's own election timer off: Node campaigns
// itself with a seeded timeout (raft draws its timeouts from crypto/rand).
const raftNoElection = 1 << 30

// ErrNotServing is returned by Propose when this replica is not a leader
// that can serve (see Node.Serving).
var ErrNotServing = errors.New("coord: not the serving leader")

// Result is the reply to one applied command, routed by its proposal id.
type Result struct {
	Proposal uint64
	Reply    proto.Message
}

// Node is one coordinator replica's core: an etcd raft RawNode replicating a
// Machine, the leader's failure detector, and a seeded election timer. It has
// no goroutines, clocks or I/O: the shell (or a simulator) calls Tick, Step,
// Propose and Heartbeat, and for each Ready persists it, sends its messages,
// then calls Advance. Not safe for concurrent use.
type Node struct {
	cfg     NodeConfig
	rn      *raft.RawNode
	storage *raft.MemoryStorage
	mach    *Machine
	conf    *raftpb.ConfState
	rand    *rand.Rand

	now          int64 // ticks since start
	sinceContact int   // ticks since a message from the leader (followers)
	timeout      int   // this term's randomised election timeout
	heard        map[uint64]bool
	window       int  // ticks into the leader's quorum window
	lease        bool // the leader heard from a quorum in the last window
	lead, term   uint64
	termStart    uint64 // index of the leader's first entry of its term
	nextProposal uint64
	proposalTerm uint64
	// snapshotsApplied counts snapshots received from a leader.
	snapshotsApplied int

	// The serving leader's soft state, rebuilt whenever it starts serving.
	serving     bool
	lastHeard   map[uint64]int64              // member -> tick of its last heartbeat
	lastLoad    map[uint64]map[string]float64 // member -> load from its last heartbeat (serving leader only)
	pendingFail map[uint64]int64              // member -> tick its Fail was proposed
	pendingAck  map[uint64][2]int64
	pendingSlot int64
	// Leases (lease.go): the instant of each live member's last grant (at
	// the start of serving, every live member is assumed granted then);
	// the members condemned (to be failed: granted nothing more, failed
	// once their lease certainly expired), with the instant of the
	// decision; heartbeats waiting for raft to confirm the leadership
	// (queued for the next ReadIndex, or in flight by batch id); the
	// members' reports of peers they cannot reach; answers to give out
	// with the next Advance.
	grants     map[uint64]time.Duration
	condemned  map[uint64]time.Duration
	leaseTerm  uint64 // the term grants and condemned belong to
	hbQueue    []pendingHeartbeat
	hbInflight map[uint64]*heartbeatBatch
	reports    map[uint64][]uint64
	outbox     []Result
	leaseStats LeaseStats

	// OnApply, if set, is called after each applied entry (simulation
	// checkers observe every state every replica passes through).
	OnApply func(index uint64, m *Machine)
}

// NewNode creates the core over storage, which holds what was persisted
// (empty for a new replica, which then bootstraps the group), and mach, the
// state restored from storage's snapshot (NewMachine if none).
func NewNode(cfg NodeConfig, storage *raft.MemoryStorage, mach *Machine, conf *raftpb.ConfState) (*Node, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	n := &Node{cfg: cfg, storage: storage, mach: mach, conf: conf, rand: rand.New(rand.NewSource(cfg.Seed)),
		heard: map[uint64]bool{}}
	n.timeout = n.drawTimeout()
	hs, _, err := storage.InitialState()
	if err != nil {
		return nil, err
	}
	last, _ := storage.LastIndex()
	fresh := raft.IsEmptyHardState(hs) && last == 0
	rc := &raft.Config{ID: cfg.ID, ElectionTick: raftNoElection, HeartbeatTick: cfg.HeartbeatTicks,
		Storage: storage, Applied: mach.Applied(), MaxSizePerMsg: 1 << 20, MaxInflightMsgs: 256,
		MaxUncommittedEntriesSize: 64 << 20, PreVote: true, Logger: discardLogger{}}
	if n.rn, err = raft.NewRawNode(rc); err != nil {
		return nil, err
	}
	if fresh {
		peers := make([]raft.Peer, 0, len(cfg.Peers))
		for _, id := range sortedIDs(cfg.Peers) {
			peers = append(peers, raft.Peer{ID: id})
		}
		if err := n.rn.Bootstrap(peers); err != nil {
			return nil, err
		}
	}
	return n, nil
}

func sortedIDs(ids []uint64) []uint64 {
	out := slices.Clone(ids)
	slices.Sort(out)
	return out
}

func (n *Node) drawTimeout() int {
	return n.cfg.ElectionTicks + n.rand.Intn(n.cfg.ElectionTicks)
}

// Machine returns the applied state (read-only use).
func (n *Node) Machine() *Machine { return n.mach }

// ConfState returns the applied raft configuration (for snapshots).
func (n *Node) ConfState() *raftpb.ConfState { return n.conf }

// Leader returns the raft leader this replica knows of (0: none) and the term.
func (n *Node) Leader() (id, term uint64) { return n.lead, n.term }

// Now returns the ticks since this core started.
func (n *Node) Now() int64 { return n.now }

// Serving reports whether this replica is the leader, heard from a quorum
// within the last election timeout, and has applied its whole log up to its
// term's first entry (so its state holds every committed registration).
func (n *Node) Serving() bool { return n.serving }

// loadValuesMax bounds the gauges one member reports.
const loadValuesMax = 32

// Loads returns, on the serving leader, each live member's last reported
// load (nil elsewhere). The maps are the heartbeats'; do not modify them.
func (n *Node) Loads() map[uint64]map[string]float64 {
	if !n.serving {
		return nil
	}
	out := make(map[uint64]map[string]float64, len(n.lastLoad))
	for id, l := range n.lastLoad {
		out[id] = l
	}
	return out
}

// HeartbeatAges returns, on the serving leader, the ticks since each live
// member's last heartbeat (nil elsewhere).
func (n *Node) HeartbeatAges() map[uint64]int64 {
	if !n.serving {
		return nil
	}
	out := make(map[uint64]int64, len(n.lastHeard))
	for id, t := range n.lastHeard {
		out[id] = n.now - t
	}
	return out
}

// Tick advances time by one tick: raft's heartbeats, the election timer, the
// leader's quorum lease, and (when serving) failure detection.
func (n *Node) Tick() {
	n.now++
	n.rn.Tick()
	if n.lead == n.cfg.ID {
		n.window++
		if n.window >= n.cfg.ElectionTicks {
			n.lease = len(n.heard)+1 > len(n.cfg.Peers)/2
			clear(n.heard)
			n.window = 0
		}
	} else {
		n.sinceContact++
		if n.sinceContact >= n.timeout && len(n.cfg.Peers) > 0 {
			_ = n.rn.Campaign()
			n.sinceContact, n.timeout = 0, n.drawTimeout()
		}
	}
	n.updateServing()
	if n.serving {
		n.detect()
		n.ensureSlots()
		n.confirmHeartbeats()
	}
}

// Step delivers a raft message from a peer.
func (n *Node) Step(m *raftpb.Message) error {
	if m.GetFrom() == n.lead && m.GetFrom() != n.cfg.ID {
		n.sinceContact = 0
	}
	if n.lead == n.cfg.ID && m.GetTerm() == n.term && m.GetFrom() != n.cfg.ID {
		n.heard[m.GetFrom()] = true
	}
	err := n.rn.Step(m)
	if errors.Is(err, raft.ErrStepPeerNotFound) || errors.Is(err, raft.ErrStepLocalMsg) {
		return fmt.Errorf("coord: step %v from %d: %w", m.GetType(), m.GetFrom(), err)
	}
	return nil
}

// newID returns a fresh proposal id (also used for heartbeats that wait for
// a leadership confirmation, and for their batches). Proposal ids are unique
// across replicas and restarts: a term has one leader, and a replica leads a
// term at most once (it must win an election, which starts a new term). A
// counter alone would collide with entries of an earlier incarnation still
// being applied.
func (n *Node) newID() uint64 {
	if n.proposalTerm != n.term {
		n.proposalTerm, n.nextProposal = n.term, 0
	}
	n.nextProposal++
	return n.term<<32 | n.nextProposal&(1<<32-1)
}

// Propose appends a command to the log; its reply comes from Advance, as a
// Result with the returned proposal id.
func (n *Node) Propose(c *pb.Command) (uint64, error) {
	if !n.serving {
		return 0, ErrNotServing
	}
	c.Proposal = n.newID()
	data, err := proto.Marshal(c)
	if err != nil {
		return 0, err
	}
	if err := n.rn.Propose(data); err != nil {
		return 0, fmt.Errorf("coord: propose: %w", err)
	}
	return c.Proposal, nil
}

// NotServingError describes why this replica cannot serve (nil if it can).
// LeaderHint is left to the shell, which knows addresses.
func (n *Node) NotServingError() *pb.Error {
	switch {
	case n.serving:
		return nil
	case n.lead == n.cfg.ID && n.lease:
		return &pb.Error{Code: pb.ErrorCode_NOT_READY, Message: "coord: new leader still applying its log"}
	}
	return &pb.Error{Code: pb.ErrorCode_NOT_LEADER, Message: "coord: not the leader"}
}

// Heartbeat records a member's heartbeat on the serving leader. The reply
// (the member's record, the configuration and a lease) waits until raft
// confirmed that this replica still leads (a ReadIndex, batched per tick):
// Heartbeat then returns a nil reply and an id, and the reply comes from
// Advance as the Result of that id. A reply that grants nothing (an error,
// or a member condemned to be replaced) is returned at once, with id 0. An
// acked_epoch above the recorded one is proposed as an Ack (the reply does
// not wait for it).
func (n *Node) Heartbeat(req *pb.HeartbeatRequest) (*pb.HeartbeatResponse, uint64) {
	if e := n.NotServingError(); e != nil {
		return &pb.HeartbeatResponse{Error: e}, 0
	}
	id := req.GetMember()
	mb, issued := n.mach.Member(id)
	switch {
	case mb == nil && !issued:
		return &pb.HeartbeatResponse{Error: &pb.Error{Code: pb.ErrorCode_NOT_READY,
			Message: fmt.Sprintf("coord: member %d unknown (not registered, or not applied yet)", id)}}, 0
	case mb == nil || !mb.Live:
		return &pb.HeartbeatResponse{Error: &pb.Error{Code: pb.ErrorCode_FENCED,
			Message: fmt.Sprintf("coord: member %d was declared failed; register again", id)}, Member: mb}, 0
	}
	n.lastHeard[id] = n.now
	n.recordReport(id, req.GetUnreachable())
	if l := req.GetLoad(); len(l) > 0 && len(l) <= loadValuesMax {
		if n.lastLoad == nil {
			n.lastLoad = map[uint64]map[string]float64{}
		}
		n.lastLoad[id] = l
	}
	if a := req.GetAckedEpoch(); a > mb.AckedEpoch && a <= n.mach.Epoch() {
		if p, ok := n.pendingAck[id]; !ok || uint64(p[0]) < a || n.now-p[1] > int64(n.cfg.ElectionTicks) {
			if _, err := n.Propose(&pb.Command{Op: &pb.Command_Ack{Ack: &pb.AckEpochRequest{Member: id, Epoch: a}}}); err == nil {
				n.pendingAck[id] = [2]int64{int64(a), n.now}
			}
		}
	}
	if _, ok := n.condemned[id]; ok {
		// Being replaced: its lease runs out, then it is failed.
		n.leaseStats.Withheld++
		return &pb.HeartbeatResponse{Member: mb, Config: n.mach.Config()}, 0
	}
	if len(n.hbQueue) >= heartbeatsMax {
		return &pb.HeartbeatResponse{Error: &pb.Error{Code: pb.ErrorCode_OVERLOADED,
			Message: "coord: too many heartbeats waiting for the leadership check"}}, 0
	}
	hb := pendingHeartbeat{id: n.newID(), member: id}
	n.hbQueue = append(n.hbQueue, hb)
	return nil, hb.id
}

// HasReady reports whether Ready has work.
func (n *Node) HasReady() bool { return n.rn.HasReady() }

// Ready returns what to persist (HardState, Entries, Snapshot) and then send
// (Messages). Persist before sending; then call Advance.
func (n *Node) Ready() raft.Ready { return n.rn.Ready() }

// Advance applies rd's snapshot and committed entries, after the shell has
// persisted rd into storage and sent its messages, and returns the replies.
func (n *Node) Advance(rd raft.Ready) ([]Result, error) {
	if rd.SoftState != nil {
		if rd.SoftState.Lead != n.lead {
			n.sinceContact = 0
		}
		if rd.SoftState.Lead == n.cfg.ID && n.lead != n.cfg.ID {
			n.lease, n.window = true, 0
			clear(n.heard)
			n.termStart, _ = n.storage.LastIndex()
		}
		n.lead = rd.SoftState.Lead
	}
	if t := rd.HardState.GetTerm(); t != 0 {
		n.term = t
	}
	if rd.Snapshot != nil && !raft.IsEmptySnap(rd.Snapshot) {
		m, err := RestoreMachine(rd.Snapshot.GetData())
		if err != nil {
			return nil, err
		}
		m.SetApplied(rd.Snapshot.GetMetadata().GetIndex())
		m.bug = n.mach.bug
		n.mach, n.conf = m, rd.Snapshot.GetMetadata().GetConfState()
		n.snapshotsApplied++
	}
	var out []Result
	for _, e := range rd.CommittedEntries {
		r, err := n.apply(e)
		if err != nil {
			return out, err
		}
		if r.Proposal != 0 {
			out = append(out, r)
		}
	}
	n.rn.Advance(rd)
	n.updateServing()
	for _, rs := range rd.ReadStates {
		out = append(out, n.confirmed(rs)...)
	}
	out = append(out, n.outbox...)
	n.outbox = nil
	return out, nil
}

func (n *Node) apply(e *raftpb.Entry) (Result, error) {
	var r Result
	switch e.GetType() {
	case raftpb.EntryType_EntryConfChange:
		cc := &raftpb.ConfChange{}
		if err := proto.Unmarshal(e.GetData(), cc); err != nil {
			return r, fmt.Errorf("coord: conf change %d: %w", e.GetIndex(), err)
		}
		n.conf = n.rn.ApplyConfChange(cc)
	case raftpb.EntryType_EntryConfChangeV2:
		cc := &raftpb.ConfChangeV2{}
		if err := proto.Unmarshal(e.GetData(), cc); err != nil {
			return r, fmt.Errorf("coord: conf change %d: %w", e.GetIndex(), err)
		}
		n.conf = n.rn.ApplyConfChange(cc)
	case raftpb.EntryType_EntryNormal:
		if len(e.GetData()) == 0 {
			break
		}
		c := &pb.Command{}
		if err := proto.Unmarshal(e.GetData(), c); err != nil {
			// Every replica reads the same bytes: a corrupt committed entry
			// is a bug or a broken disk, not something to skip.
			panic(fmt.Sprintf("coord: corrupt committed entry %d: %v", e.GetIndex(), err))
		}
		r = Result{Proposal: c.Proposal, Reply: n.mach.Apply(e.GetIndex(), c)}
		if f := c.GetFail(); f != nil && n.pendingFail != nil {
			delete(n.pendingFail, f.Member)
		}
	}
	n.mach.SetApplied(e.GetIndex())
	if n.OnApply != nil {
		n.OnApply(e.GetIndex(), n.mach)
	}
	return r, nil
}

// updateServing starts or stops serving. A replica that starts serving
// resets the failure detector: every live member is given a full
// SuspectTicks from now to find the new leader.
func (n *Node) updateServing() {
	ok := n.lead == n.cfg.ID && n.lease && n.mach.Applied() >= n.termStart
	if ok == n.serving {
		if ok {
			n.syncDetector()
		}
		return
	}
	n.serving = ok
	if !ok {
		n.lastHeard, n.pendingFail, n.pendingAck, n.pendingSlot, n.lastLoad = nil, nil, nil, 0, nil
		n.reports = nil
		n.dropHeartbeats()
		// The grants and the condemned outlive a pause in serving within
		// the term: a Fail this leader proposed may still commit, so a
		// member it condemned must get no lease when it serves again.
		return
	}
	n.lastHeard, n.pendingFail, n.pendingAck = map[uint64]int64{}, map[uint64]int64{}, map[uint64][2]int64{}
	n.lastLoad = map[uint64]map[string]float64{}
	if n.grants == nil || n.leaseTerm != n.term || n.mach.bug == bugForgetCondemned {
		// A new leadership does not know its predecessors' grants: it
		// assumes one to every live member now (lease.go says why that
		// suffices), and nothing it condemned before (in another term) can
		// still be proposed by it.
		n.grants, n.condemned, n.leaseTerm = map[uint64]time.Duration{}, map[uint64]time.Duration{}, n.term
	}
	n.reports = map[uint64][]uint64{}
	n.hbInflight = map[uint64]*heartbeatBatch{}
	n.syncDetector()
}

// syncDetector tracks exactly the live members: a newly applied one starts
// with a full timeout; a failed one is forgotten.
func (n *Node) syncDetector() {
	live := n.mach.LiveMembers()
	for _, id := range live {
		if _, ok := n.lastHeard[id]; !ok {
			n.lastHeard[id] = n.now
		}
		if _, ok := n.grants[id]; !ok {
			n.grants[id] = n.grantClock()
		}
	}
	if len(n.lastHeard) > len(live) || len(n.grants) > len(live) {
		for id := range n.lastHeard {
			if _, ok := slices.BinarySearch(live, id); !ok {
				delete(n.lastHeard, id)
				delete(n.pendingAck, id)
				delete(n.lastLoad, id)
				delete(n.reports, id)
			}
		}
		for id := range n.grants {
			if _, ok := slices.BinarySearch(live, id); !ok {
				delete(n.grants, id) // a failed member is never granted again
				delete(n.condemned, id)
			}
		}
	}
}

// detect condemns every member silent for SuspectTicks, and one side of
// every pair of members that cannot reach each other (resolveUnreachable);
// then, in id order, proposes Fail for each condemned member whose lease has
// certainly expired. A Fail not applied within SuspectTicks is proposed
// again (Fail is idempotent).
func (n *Node) detect() {
	live := n.mach.LiveMembers()
	for _, id := range live {
		if last, ok := n.lastHeard[id]; ok && n.now-last > n.cfg.SuspectTicks {
			n.condemn(id)
		}
	}
	n.resolveUnreachable(live)
	now := n.clock()
	for _, id := range live {
		if _, ok := n.condemned[id]; !ok {
			continue
		}
		if !n.cfg.Lease.MayReplace(n.grants[id], now) && n.mach.bug != bugReplaceEarly {
			n.leaseStats.Waited++
			continue // its lease may still hold: wait
		}
		if p, pending := n.pendingFail[id]; pending && n.now-p <= n.cfg.SuspectTicks {
			continue
		}
		if _, err := n.Propose(&pb.Command{Op: &pb.Command_Fail{Fail: &pb.Fail{Member: id}}}); err == nil {
			n.pendingFail[id] = n.now
		}
	}
}

// ensureSlots grows the slot counts to the configured ones.
func (n *Node) ensureSlots() {
	if n.pendingSlot != 0 && n.now-n.pendingSlot <= int64(n.cfg.ElectionTicks) {
		return
	}
	c := n.mach.Config()
	for _, want := range []struct {
		role  pb.Role
		have  int
		count int32
	}{{pb.Role_GATEKEEPER, len(c.Gatekeepers), n.cfg.Gatekeepers}, {pb.Role_SHARD, len(c.Shards), n.cfg.Shards}} {
		if int32(want.have) < want.count {
			if _, err := n.Propose(&pb.Command{Op: &pb.Command_AddSlot{AddSlot: &pb.AddSlotRequest{Role: want.role, Count: want.count}}}); err == nil {
				n.pendingSlot = n.now
			}
			return
		}
	}
}

// discardLogger drops raft's logs; failures surface as errors.
type discardLogger struct{}

func (discardLogger) Debug(...any)            {}
func (discardLogger) Debugf(string, ...any)   {}
func (discardLogger) Info(...any)             {}
func (discardLogger) Infof(string, ...any)    {}
func (discardLogger) Warning(...any)          {}
func (discardLogger) Warningf(string, ...any) {}
func (discardLogger) Error(...any)            {}
func (discardLogger) Errorf(string, ...any)   {}
func (discardLogger) Fatal(v ...any)          { panic(fmt.Sprint(v...)) }
func (discardLogger) Fatalf(f string, v ...any) {
	panic(fmt.Sprintf(f, v...))
}
func (discardLogger) Panic(v ...any)            { panic(fmt.Sprint(v...)) }
func (discardLogger) Panicf(f string, v ...any) { panic(fmt.Sprintf(f, v...)) }
