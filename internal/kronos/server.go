package kronos

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/weft-db/weft/internal/raftlog"
	pb "github.com/weft-db/weft/internal/wire/kronospb"
)

// ServerConfig configures one Kronos replica.
type ServerConfig struct {
	// ID is this replica's raft id (1..n). Default 1.
	ID uint64
	// Addr is the address serving the Kronos API and the raft transport.
	// Default 127.0.0.1:7400; port 0 picks a free port.
	Addr string
	// Peers maps every replica's id to its Addr, this one included. Empty
	// means a group of one.
	Peers map[uint64]string
	// DataDir holds the raft log and snapshots. Required.
	DataDir string
	// Sync fsyncs each log write before it is acknowledged. Without it Pebble
	// may hold the last writes in process memory, so kill -9 loses them just
	// as power loss does: a replica that lost entries it acknowledged panics
	// on restart (raft: "tocommit out of range"), and the group can lose
	// acknowledged writes (TestLinearizabilityKill9 -kronos.lin.sync=false
	// shows both). Default true.
	Sync bool
	// Tick is the raft tick interval. Default 10ms.
	Tick time.Duration
	// ElectionTicks and HeartbeatTicks count Ticks. Default 20 and 2.
	ElectionTicks, HeartbeatTicks int
	// ProposalsMax bounds queued client mutations; full answers OVERLOADED. Default 4096.
	ProposalsMax int
	// BatchMax bounds commands per log entry (group commit). Default 256.
	BatchMax int
	// SnapshotEvery takes a snapshot after this many applied entries. Default 10000.
	SnapshotEvery uint64
	// Graph configures the state machine.
	Graph Config
}

// DefaultServerConfig returns the documented defaults.
func DefaultServerConfig() ServerConfig {
	return ServerConfig{ID: 1, Addr: "127.0.0.1:7400", Sync: true, Tick: 10 * time.Millisecond,
		ElectionTicks: 20, HeartbeatTicks: 2, ProposalsMax: 4096, BatchMax: 256,
		SnapshotEvery: 10000, Graph: DefaultConfig()}
}

// Validate reports a configuration error.
func (c ServerConfig) Validate() error {
	switch {
	case c.ID == 0:
		return errors.New("kronos: replica id must be positive")
	case c.DataDir == "":
		return errors.New("kronos: a data directory is required")
	case c.Tick <= 0 || c.HeartbeatTicks <= 0 || c.ElectionTicks <= c.HeartbeatTicks:
		return errors.New("kronos: need Tick > 0 and ElectionTicks > HeartbeatTicks > 0")
	case c.ProposalsMax <= 0 || c.BatchMax <= 0 || c.SnapshotEvery == 0:
		return errors.New("kronos: ProposalsMax, BatchMax and SnapshotEvery must be positive")
	}
	if len(c.Peers) > 0 {
		if _, ok := c.Peers[c.ID]; !ok {
			return fmt.Errorf("kronos: peers do not include this replica's id %d", c.ID)
		}
	}
	return c.Graph.Validate()
}

// ErrStopped is returned to requests in flight when the server stops.
var ErrStopped = errors.New("kronos: server stopped")

type proposal struct {
	cmd   *pb.Command
	reply chan proto.Message
}

type readReq struct {
	req   *pb.QueryOrderRequest
	reply chan *pb.QueryOrderResponse
}

// Server is a Kronos replica: the Machine replicated by etcd raft, served
// over gRPC. Only the run loop goroutine touches the raft node and machine.
type Server struct {
	pb.UnimplementedKronosServer
	pb.UnimplementedRaftServer

	cfg  ServerConfig
	log  *slog.Logger
	rlog *raftlog.Log
	rn   *raft.RawNode
	mach *Machine
	conf *raftpb.ConfState

	lis   net.Listener
	gsrv  *grpc.Server
	peers raftlog.Peers

	propc chan *proposal
	readc chan *readReq
	recvc chan *raftpb.Message
	stopc chan struct{}
	done  chan struct{}
	once  sync.Once

	leader  atomic.Uint64
	term    atomic.Uint64
	nextPID uint64 // read contexts
	// propTerm and propSeq number this leader's proposals (propose).
	propTerm, propSeq uint64
	waiters           map[uint64]*proposal
	reads             map[string][]*readReq
	waiting           []pendingRead // read states waiting for apply
	snaps             raftlog.Compactor

	statsMu sync.Mutex
	stats   *pb.StatsResponse
}

type pendingRead struct {
	index uint64
	reads []*readReq
}

// NewServer creates a replica; Start opens its store and serves.
func NewServer(cfg ServerConfig, log *slog.Logger) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.Default()
	}
	return &Server{cfg: cfg, log: log.With("role", "kronos", "node", cfg.ID),
		propc: make(chan *proposal, cfg.ProposalsMax), readc: make(chan *readReq, cfg.ProposalsMax),
		recvc: make(chan *raftpb.Message, 4096), stopc: make(chan struct{}), done: make(chan struct{}),
		waiters: map[uint64]*proposal{}, reads: map[string][]*readReq{}, snaps: raftlog.Compactor{Every: cfg.SnapshotEvery},
		stats: &pb.StatsResponse{}}, nil
}

// Start opens the log, restores the state machine, listens and runs.
func (s *Server) Start() error {
	_, lis, err := raftlog.OpenAndListen(s.cfg.DataDir, raftlog.Options{Sync: s.cfg.Sync}, s.cfg.Addr,
		func(l *raftlog.Log) error { s.rlog = l; return s.restore() })
	if err != nil {
		return err
	}
	s.lis = lis
	s.gsrv = grpc.NewServer(grpc.MaxRecvMsgSize(64 << 20))
	pb.RegisterKronosServer(s.gsrv, s)
	pb.RegisterRaftServer(s.gsrv, s)
	s.peers = raftlog.NewPeers(s.cfg.ID, s.cfg.Peers, s.log, openRaft)
	go func() { _ = s.gsrv.Serve(s.lis) }()
	go s.run()
	s.log.Info("kronos replica serving", "addr", s.lis.Addr().String(), "peers", len(s.cfg.Peers), "sync", s.cfg.Sync)
	return nil
}

// restore rebuilds the machine from the stored snapshot and creates the raft
// node; committed entries after the snapshot are re-applied by raft.
func (s *Server) restore() error {
	snap, err := s.rlog.Mem.Snapshot()
	if err != nil {
		return err
	}
	if len(snap.GetData()) > 0 {
		if s.mach, err = RestoreMachine(s.cfg.Graph, SessionsMax, snap.GetData()); err != nil {
			return err
		}
		s.conf = snap.GetMetadata().GetConfState()
	} else if s.mach, err = NewMachine(s.cfg.Graph, SessionsMax); err != nil {
		return err
	}
	s.mach.SetApplied(snap.GetMetadata().GetIndex())
	s.snaps.From(s.mach.Applied())
	fresh := s.rlog.Empty()
	rc := &raft.Config{ID: s.cfg.ID, ElectionTick: s.cfg.ElectionTicks, HeartbeatTick: s.cfg.HeartbeatTicks,
		Storage: s.rlog.Mem, Applied: s.mach.Applied(), MaxSizePerMsg: 4 << 20, MaxInflightMsgs: 256,
		MaxUncommittedEntriesSize: 1 << 30, CheckQuorum: true, PreVote: true,
		ReadOnlyOption: raft.ReadOnlySafe, Logger: quietLogger{s.log}}
	if s.rn, err = raft.NewRawNode(rc); err != nil {
		return err
	}
	if fresh {
		var peers []raft.Peer
		for _, id := range raftlog.IDs(s.cfg.ID, s.cfg.Peers) {
			peers = append(peers, raft.Peer{ID: id})
		}
		if err := s.rn.Bootstrap(peers); err != nil {
			return err
		}
	}
	s.maybeCampaign()
	return nil
}

// maybeCampaign makes a replica that is the only voter of its applied
// configuration campaign, and so lead, as soon as raft lets it rather than
// after an election timeout. Raft refuses while committed configuration
// changes are unapplied — a fresh replica's bootstrap entries until its first
// Ready is applied, a restarted one's log tail — so this runs after every
// Ready until the replica leads. Replicas of larger groups wait out their
// randomized election timeouts as before (all campaigning at once would split
// the vote).
func (s *Server) maybeCampaign() {
	voters := s.conf.GetVoters()
	if len(voters) != 1 || voters[0] != s.cfg.ID || len(s.conf.GetVotersOutgoing()) != 0 || s.isLeader() {
		return
	}
	// Only from follower: a campaign in progress finishes on the next
	// Readies (its self-votes arrive on Advance); another would restart it.
	st := s.rn.BasicStatus()
	if st.RaftState != raft.StateFollower || st.Applied < st.HardState.GetCommit() {
		return
	}
	_ = s.rn.Campaign()
}

// Addr returns the address the server listens on.
func (s *Server) Addr() string { return s.lis.Addr().String() }

// Stop stops serving and closes the store. Requests in flight fail.
func (s *Server) Stop() {
	s.once.Do(func() {
		close(s.stopc)
		<-s.done
		s.gsrv.Stop()
		s.peers.Stop()
		_ = s.rlog.Close()
	})
}

func (s *Server) leaderHint() string {
	l := s.leader.Load()
	if l == 0 {
		return ""
	}
	if l == s.cfg.ID {
		return s.Addr()
	}
	return s.cfg.Peers[l]
}

func (s *Server) isLeader() bool { return s.leader.Load() == s.cfg.ID }

// run is the only goroutine that touches the raft node and the machine.
func (s *Server) run() {
	defer close(s.done)
	ticker := time.NewTicker(s.cfg.Tick)
	defer ticker.Stop()
	for {
		// Readies first: at start, a fresh replica's bootstrap entries are
		// applied (and a lone voter elects itself) before any request.
		for s.rn.HasReady() {
			if err := s.handleReady(); err != nil {
				s.log.Error("kronos replica stopping: storage failed", "err", err)
				s.failAll()
				return
			}
		}
		select {
		case <-s.stopc:
			s.failAll()
			return
		case <-ticker.C:
			s.rn.Tick()
		case p := <-s.propc:
			s.propose(p)
		case r := <-s.readc:
			s.startRead(r)
		case m := <-s.recvc:
			_ = s.rn.Step(m)
		}
	}
}

// propose batches queued mutations into one log entry (group commit).
func (s *Server) propose(first *proposal) {
	batch := &pb.Batch{}
	ps := []*proposal{first}
	for len(ps) < s.cfg.BatchMax {
		select {
		case p := <-s.propc:
			ps = append(ps, p)
			continue
		default:
		}
		break
	}
	if !s.isLeader() {
		for _, p := range ps {
			p.reply <- errReply(p.cmd, s.notLeader())
		}
		return
	}
	// A proposal id routes the reply. It is the term and a counter of this
	// leader's proposals in it: only one replica leads a term, so ids never
	// repeat — not even after a restart, when a replica may lead again
	// while it still applies entries proposed in its previous life (an id
	// of node id and a counter restarting at zero could then hand an old
	// entry's reply to a new request). apply also checks the command.
	term := s.rn.BasicStatus().GetTerm()
	if term != s.propTerm {
		s.propTerm, s.propSeq = term, 0
	}
	for _, p := range ps {
		s.propSeq++
		p.cmd.Proposal = term<<32 | s.propSeq&(1<<32-1)
		s.waiters[p.cmd.Proposal] = p
		batch.Commands = append(batch.Commands, p.cmd)
	}
	data, err := proto.Marshal(batch)
	if err == nil {
		err = s.rn.Propose(data)
	}
	if err != nil {
		for _, p := range ps {
			delete(s.waiters, p.cmd.Proposal)
			p.reply <- errReply(p.cmd, s.notLeader())
		}
	}
}

func (s *Server) notLeader() *pb.Error {
	return &pb.Error{Code: pb.ErrorCode_NOT_LEADER, Message: "kronos: not the leader", LeaderHint: s.leaderHint()}
}

// startRead answers what the local copy can; the rest wait for a ReadIndex
// round so a CONCURRENT or UNKNOWN answer reflects every acknowledged write.
func (s *Server) startRead(r *readReq) {
	reads := []*readReq{r}
	for len(reads) < s.cfg.BatchMax {
		select {
		case x := <-s.readc:
			reads = append(reads, x)
			continue
		default:
		}
		break
	}
	var need []*readReq
	for _, r := range reads {
		resp := s.mach.Query(r.req)
		if resp.Error != nil || ordered(resp.Orders) {
			r.reply <- resp
			continue
		}
		need = append(need, r)
	}
	if len(need) == 0 {
		return
	}
	if !s.isLeader() {
		for _, r := range need {
			resp := s.mach.Query(r.req)
			for i, o := range resp.Orders {
				if o != pb.Order_BEFORE && o != pb.Order_AFTER {
					resp.Orders[i] = pb.Order_UNRESOLVED
				}
			}
			resp.LeaderHint = s.leaderHint()
			r.reply <- resp
		}
		return
	}
	s.nextPID++
	ctx := strconv.FormatUint(s.nextPID, 10)
	s.reads[ctx] = need
	s.rn.ReadIndex([]byte(ctx))
}

func ordered(os []pb.Order) bool {
	for _, o := range os {
		if o != pb.Order_BEFORE && o != pb.Order_AFTER {
			return false
		}
	}
	return true
}

func (s *Server) handleReady() error {
	rd := s.rn.Ready()
	if rd.HardState != nil {
		s.term.Store(rd.HardState.GetTerm())
	}
	if rd.SoftState != nil {
		if old := s.leader.Swap(rd.SoftState.Lead); old != rd.SoftState.Lead && rd.SoftState.Lead != 0 {
			s.log.Info("kronos leader", "leader", rd.SoftState.Lead, "term", s.term.Load())
		}
		if rd.SoftState.Lead != s.cfg.ID {
			s.failReads()
		}
	}
	if err := s.rlog.Save(rd.HardState, rd.Entries, rd.Snapshot); err != nil {
		return err
	}
	if rd.Snapshot != nil && !raft.IsEmptySnap(rd.Snapshot) {
		m, err := RestoreMachine(s.cfg.Graph, SessionsMax, rd.Snapshot.GetData())
		if err != nil {
			return err
		}
		s.mach = m
		s.mach.SetApplied(rd.Snapshot.GetMetadata().GetIndex())
		s.conf = rd.Snapshot.GetMetadata().GetConfState()
		s.snaps.From(s.mach.Applied())
	}
	for _, m := range rd.Messages {
		s.peers.Send(m)
	}
	for _, e := range rd.CommittedEntries {
		s.apply(e)
	}
	for _, rs := range rd.ReadStates {
		ctx := string(rs.RequestCtx)
		if reads, ok := s.reads[ctx]; ok {
			delete(s.reads, ctx)
			s.waiting = append(s.waiting, pendingRead{index: rs.Index, reads: reads})
		}
	}
	s.answerReads()
	s.rn.Advance(rd)
	s.maybeCampaign()
	s.publishStats()
	return s.snaps.Maybe(s.rlog, s.mach.Applied(), s.conf, s.mach.Snapshot)
}

func (s *Server) apply(e *raftpb.Entry) {
	switch e.GetType() {
	case raftpb.EntryType_EntryConfChange:
		cc := &raftpb.ConfChange{}
		if err := proto.Unmarshal(e.GetData(), cc); err == nil {
			s.conf = s.rn.ApplyConfChange(cc)
		}
	case raftpb.EntryType_EntryConfChangeV2:
		cc := &raftpb.ConfChangeV2{}
		if err := proto.Unmarshal(e.GetData(), cc); err == nil {
			s.conf = s.rn.ApplyConfChange(cc)
		}
	case raftpb.EntryType_EntryNormal:
		if len(e.GetData()) == 0 {
			break
		}
		batch := &pb.Batch{}
		if err := proto.Unmarshal(e.GetData(), batch); err != nil {
			panic(fmt.Sprintf("kronos: corrupt committed entry %d: %v", e.GetIndex(), err))
		}
		for _, c := range batch.Commands {
			reply := s.mach.Apply(e.GetIndex(), c)
			if p, ok := s.waiters[c.Proposal]; ok && proto.Equal(p.cmd, c) {
				delete(s.waiters, c.Proposal)
				p.reply <- reply
			}
		}
	}
	s.mach.SetApplied(e.GetIndex())
}

func (s *Server) answerReads() {
	keep := s.waiting[:0]
	for _, w := range s.waiting {
		if w.index > s.mach.Applied() {
			keep = append(keep, w)
			continue
		}
		for _, r := range w.reads {
			r.reply <- s.mach.Query(r.req)
		}
	}
	s.waiting = keep
}

func (s *Server) failReads() {
	for ctx, reads := range s.reads {
		for _, r := range reads {
			r.reply <- &pb.QueryOrderResponse{Error: s.notLeader()}
		}
		delete(s.reads, ctx)
	}
	for _, w := range s.waiting {
		for _, r := range w.reads {
			r.reply <- &pb.QueryOrderResponse{Error: s.notLeader()}
		}
	}
	s.waiting = nil
}

// failAll answers every waiter: their commands may or may not commit, so the
// client retries with the same session sequence (exactly-once).
func (s *Server) failAll() {
	for id, p := range s.waiters {
		p.reply <- errReply(p.cmd, &pb.Error{Code: pb.ErrorCode_SHUTTING_DOWN, Message: ErrStopped.Error()})
		delete(s.waiters, id)
	}
	s.failReads()
}

func (s *Server) publishStats() {
	st := s.mach.Graph().Stats()
	s.statsMu.Lock()
	s.stats = &pb.StatsResponse{Events: st.Events, Edges: st.Edges, NextId: st.NextID, Created: st.Created,
		Collected: st.Collected, AppliedIndex: s.mach.Applied(), NodeId: s.cfg.ID, LeaderId: s.leader.Load(),
		LeaderHint: s.leaderHint(), Term: s.term.Load(), IsLeader: s.isLeader(), ClockEvents: st.ClockEvents}
	s.statsMu.Unlock()
}

type quietLogger struct{ l *slog.Logger }

func (q quietLogger) Debug(v ...any)                 {}
func (q quietLogger) Debugf(format string, v ...any) {}
func (q quietLogger) Info(v ...any)                  {}
func (q quietLogger) Infof(format string, v ...any)  { q.l.Debug(fmt.Sprintf(format, v...)) }
func (q quietLogger) Warning(v ...any)               { q.l.Warn(fmt.Sprint(v...)) }
func (q quietLogger) Warningf(format string, v ...any) {
	q.l.Warn(fmt.Sprintf(format, v...))
}
func (q quietLogger) Error(v ...any)                 { q.l.Error(fmt.Sprint(v...)) }
func (q quietLogger) Errorf(format string, v ...any) { q.l.Error(fmt.Sprintf(format, v...)) }
func (q quietLogger) Fatal(v ...any)                 { panic(fmt.Sprint(v...)) }
func (q quietLogger) Fatalf(format string, v ...any) { panic(fmt.Sprintf(format, v...)) }
func (q quietLogger) Panic(v ...any)                 { panic(fmt.Sprint(v...)) }
func (q quietLogger) Panicf(format string, v ...any) { panic(fmt.Sprintf(format, v...)) }
