package coord

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/weft-db/weft/internal/raftlog"
	pb "github.com/weft-db/weft/internal/wire/coordpb"
)

// ServerConfig configures one coordinator replica process.
type ServerConfig struct {
	// ID is this replica's raft id (1..n). Default 1.
	ID uint64
	// Addr serves the Coord API and the raft transport (gRPC). Default
	// 127.0.0.1:7600; port 0 picks a free port.
	Addr string
	// HTTPAddr serves /healthz, /metrics and the /status page; "" disables.
	// Default 127.0.0.1:7610.
	HTTPAddr string
	// Peers maps every replica's id to its Addr, this one included. Empty
	// means a group of one.
	Peers map[uint64]string
	// DataDir holds the raft log and snapshots. Required.
	DataDir string
	// Sync fsyncs each log write before it is acknowledged (see
	// raftlog). Default true.
	Sync bool
	// Tick is the raft tick. Default 10ms.
	Tick time.Duration
	// ElectionTicks and HeartbeatTicks count Ticks. Default 20 and 2.
	ElectionTicks, HeartbeatTicks int
	// SuspectAfter declares a member failed after this long without its
	// heartbeat. Must exceed 2*ElectionTicks*Tick. Default 1s.
	SuspectAfter time.Duration
	// Gatekeepers and Shards: slot counts the leader grows the configuration
	// to. Default 0.
	Gatekeepers, Shards int32
	// ProposalsMax bounds queued requests, and proposals awaiting their
	// commit; full answers OVERLOADED. Default 1024.
	ProposalsMax int
	// WatchersMax bounds concurrent Watch streams. Default 1024.
	WatchersMax int
	// SnapshotEvery takes a snapshot after this many applied entries. Default 10000.
	SnapshotEvery uint64
	// Lease is how long a member may serve after sending a heartbeat the
	// serving leader answered (docs/cluster.md, "Leases"). Default 500ms;
	// 0 means half of SuspectAfter.
	Lease time.Duration
	// MaxDrift bounds the clock drift the leases allow for: over an
	// interval of up to SuspectAfter, a member's and a coordinator's
	// clocks' errors sum to at most MaxDrift. A slot is taken from its
	// holder only Lease + MaxDrift after its last grant. Lease + MaxDrift
	// must stay below SuspectAfter. Default 100ms; 0 with Lease 0 means a
	// tenth of SuspectAfter.
	MaxDrift time.Duration
}

// DefaultServerConfig returns the documented defaults.
func DefaultServerConfig() ServerConfig {
	return ServerConfig{ID: 1, Addr: "127.0.0.1:7600", HTTPAddr: "127.0.0.1:7610", Sync: true,
		Tick: 10 * time.Millisecond, ElectionTicks: 20, HeartbeatTicks: 2, SuspectAfter: time.Second,
		ProposalsMax: 1024, WatchersMax: 1024, SnapshotEvery: 10000, Lease: DefaultLease, MaxDrift: DefaultMaxDrift}
}

// nodeConfig derives the core's configuration.
func (c ServerConfig) nodeConfig() NodeConfig {
	nc := NodeConfig{ID: c.ID, ElectionTicks: c.ElectionTicks, HeartbeatTicks: c.HeartbeatTicks,
		Gatekeepers: c.Gatekeepers, Shards: c.Shards, Seed: time.Now().UnixNano()}
	if c.Tick > 0 {
		nc.SuspectTicks = int64(c.SuspectAfter / c.Tick)
	}
	nc.Tick, nc.Lease = c.Tick, c.leaseRule()
	for _, id := range raftlog.IDs(c.ID, c.Peers) {
		nc.Peers = append(nc.Peers, id)
	}
	return nc
}

// leaseRule is the configured lease, or the one derived from SuspectAfter.
func (c ServerConfig) leaseRule() LeaseRule {
	if c.Lease == 0 {
		md := c.MaxDrift
		if md == 0 {
			md = c.SuspectAfter / 10
		}
		return LeaseRule{Lease: c.SuspectAfter / 2, MaxDrift: md}
	}
	return LeaseRule{Lease: c.Lease, MaxDrift: c.MaxDrift}
}

// Validate reports a configuration error.
func (c ServerConfig) Validate() error {
	switch {
	case c.DataDir == "":
		return errors.New("coord: a data directory is required")
	case c.Tick <= 0:
		return errors.New("coord: Tick must be positive")
	case c.ProposalsMax <= 0 || c.WatchersMax <= 0 || c.SnapshotEvery == 0:
		return errors.New("coord: ProposalsMax, WatchersMax and SnapshotEvery must be positive")
	case c.SuspectAfter <= 2*time.Duration(c.ElectionTicks)*c.Tick:
		// A new leader must be elected and found by the members before they
		// are suspected, or a coordinator failover would fail them.
		return fmt.Errorf("coord: SuspectAfter %v must exceed 2 × ElectionTicks × Tick = %v",
			c.SuspectAfter, 2*time.Duration(c.ElectionTicks)*c.Tick)
	}
	if len(c.Peers) > 0 {
		if _, ok := c.Peers[c.ID]; !ok {
			return fmt.Errorf("coord: peers do not include this replica's id %d", c.ID)
		}
	}
	return c.nodeConfig().Validate()
}

// ErrStopped is returned to requests in flight when the server stops.
var ErrStopped = errors.New("coord: server stopped")

type request struct {
	cmd   *pb.Command
	hb    *pb.HeartbeatRequest
	reply chan proto.Message
}

// Server is a coordinator replica: the Node core driven by a run loop, its
// log in raftlog, served over gRPC and HTTP. Only the run loop goroutine
// touches the Node.
type Server struct {
	pb.UnimplementedCoordServer
	pb.UnimplementedCoordRaftServer

	cfg  ServerConfig
	log  *slog.Logger
	rlog *raftlog.Log
	node *Node

	lis     net.Listener
	gsrv    *grpc.Server
	httpSrv *http.Server
	httpLis net.Listener
	peers   raftlog.Peers
	metrics *metrics

	reqc  chan *request
	recvc chan *raftpb.Message
	stopc chan struct{}
	done  chan struct{}
	once  sync.Once

	waiters map[uint64]*request
	snaps   raftlog.Compactor
	pubKey  pubKey

	pubMu    sync.Mutex
	status   *pb.StatusResponse
	changed  chan struct{} // closed when status.Config changes
	ages     map[uint64]uint64
	loads    map[uint64]*pb.Load
	watchers int
}

// NewServer creates a replica; Start opens its log and serves.
func NewServer(cfg ServerConfig, log *slog.Logger) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.Default()
	}
	return &Server{cfg: cfg, log: log.With("role", "coord", "node", cfg.ID),
		reqc: make(chan *request, cfg.ProposalsMax), recvc: make(chan *raftpb.Message, 4096),
		stopc: make(chan struct{}), done: make(chan struct{}), waiters: map[uint64]*request{},
		snaps:  raftlog.Compactor{Every: cfg.SnapshotEvery},
		status: &pb.StatusResponse{NodeId: cfg.ID}, changed: make(chan struct{}), metrics: newMetrics()}, nil
}

// Start opens the log, restores the state, listens and runs.
func (s *Server) Start() error {
	rl, lis, err := raftlog.OpenAndListen(s.cfg.DataDir, raftlog.Options{Sync: s.cfg.Sync}, s.cfg.Addr,
		func(l *raftlog.Log) error { s.rlog = l; return s.restore() })
	if err != nil {
		return err
	}
	s.lis = lis
	if s.cfg.HTTPAddr != "" {
		if s.httpLis, err = net.Listen("tcp", s.cfg.HTTPAddr); err != nil {
			s.lis.Close()
			rl.Close()
			return err
		}
		s.httpSrv = &http.Server{Handler: s.httpHandler(), ReadHeaderTimeout: 5 * time.Second}
		go func() { _ = s.httpSrv.Serve(s.httpLis) }()
	}
	s.gsrv = grpc.NewServer()
	pb.RegisterCoordServer(s.gsrv, s)
	pb.RegisterCoordRaftServer(s.gsrv, s)
	s.peers = raftlog.NewPeers(s.cfg.ID, s.cfg.Peers, s.log, openRaft)
	go func() { _ = s.gsrv.Serve(s.lis) }()
	go s.run()
	s.log.Info("coord replica serving", "addr", s.Addr(), "http", s.HTTPAddr(), "peers", len(s.cfg.Peers),
		"gatekeepers", s.cfg.Gatekeepers, "shards", s.cfg.Shards)
	return nil
}

func (s *Server) restore() error {
	snap, err := s.rlog.Mem.Snapshot()
	if err != nil {
		return err
	}
	mach := NewMachine()
	var conf *raftpb.ConfState
	if len(snap.GetData()) > 0 {
		if mach, err = RestoreMachine(snap.GetData()); err != nil {
			return err
		}
		conf = snap.GetMetadata().GetConfState()
	}
	mach.SetApplied(snap.GetMetadata().GetIndex())
	s.snaps.From(mach.Applied())
	s.node, err = NewNode(s.cfg.nodeConfig(), s.rlog.Mem, mach, conf)
	return err
}

// Addr returns the gRPC address.
func (s *Server) Addr() string { return s.lis.Addr().String() }

// HTTPAddr returns the HTTP address ("" if disabled).
func (s *Server) HTTPAddr() string {
	if s.httpLis == nil {
		return ""
	}
	return s.httpLis.Addr().String()
}

// Stop stops serving and closes the log. Requests in flight fail.
func (s *Server) Stop() {
	s.once.Do(func() {
		close(s.stopc)
		<-s.done
		if s.httpSrv != nil {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			_ = s.httpSrv.Shutdown(ctx)
			cancel()
		}
		s.gsrv.Stop()
		s.peers.Stop()
		_ = s.rlog.Close()
	})
}

// run is the only goroutine that touches the Node.
func (s *Server) run() {
	defer close(s.done)
	ticker := time.NewTicker(s.cfg.Tick)
	defer ticker.Stop()
	for {
		if err := s.drain(); err != nil {
			s.log.Error("coord replica stopping: storage failed", "err", err)
			s.failAll(pb.ErrorCode_SHUTTING_DOWN, err.Error())
			return
		}
		select {
		case <-s.stopc:
			s.failAll(pb.ErrorCode_SHUTTING_DOWN, ErrStopped.Error())
			return
		case <-ticker.C:
			s.node.Tick()
			if s.node.Now()%agesEvery == 0 {
				s.publishAges()
			}
		case r := <-s.reqc:
			s.handle(r)
		case m := <-s.recvc:
			if err := s.node.Step(m); err != nil {
				s.log.Debug("raft step", "err", err)
			}
		}
	}
}

func (s *Server) handle(r *request) {
	if len(s.waiters) >= s.cfg.ProposalsMax {
		if r.hb != nil {
			r.reply <- &pb.HeartbeatResponse{Error: &pb.Error{Code: pb.ErrorCode_OVERLOADED, Message: "coord: too many requests in flight"}}
			return
		}
		r.reply <- &pb.Error{Code: pb.ErrorCode_OVERLOADED, Message: "coord: too many proposals in flight"}
		return
	}
	if r.hb != nil {
		// A reply granting a lease waits for raft to confirm the
		// leadership (Node.Heartbeat); it comes back as a Result.
		resp, id := s.node.Heartbeat(r.hb)
		if resp == nil {
			s.waiters[id] = r
			return
		}
		s.withHint(resp.GetError())
		s.metrics.heartbeats.WithLabelValues(resp.GetError().GetCode().String()).Inc()
		r.reply <- resp
		return
	}
	p, err := s.node.Propose(r.cmd)
	if err != nil {
		e := s.node.NotServingError()
		if e == nil {
			e = &pb.Error{Code: pb.ErrorCode_OVERLOADED, Message: err.Error()}
		}
		r.reply <- s.withHint(e)
		return
	}
	s.waiters[p] = r
}

// withHint fills a NOT_LEADER error's leader address.
func (s *Server) withHint(e *pb.Error) *pb.Error {
	if e != nil && e.Code == pb.ErrorCode_NOT_LEADER {
		if l, _ := s.node.Leader(); l != 0 && l != s.cfg.ID {
			e.LeaderHint = s.cfg.Peers[l]
		}
	}
	return e
}

// drain handles every Ready: persist, then send, then apply and answer.
func (s *Server) drain() error {
	for s.node.HasReady() {
		rd := s.node.Ready()
		if err := s.rlog.Save(rd.HardState, rd.Entries, rd.Snapshot); err != nil {
			return err
		}
		for _, m := range rd.Messages {
			s.peers.Send(m)
		}
		wasServing := s.node.Serving()
		results, err := s.node.Advance(rd)
		if err != nil {
			return err
		}
		if rd.Snapshot != nil && !raft.IsEmptySnap(rd.Snapshot) {
			s.snaps.From(rd.Snapshot.GetMetadata().GetIndex()) // a leader's snapshot: ours counts from it
		}
		for _, res := range results {
			if w, ok := s.waiters[res.Proposal]; ok {
				delete(s.waiters, res.Proposal)
				if hb, ok := res.Reply.(*pb.HeartbeatResponse); ok {
					s.withHint(hb.GetError())
					s.metrics.heartbeats.WithLabelValues(hb.GetError().GetCode().String()).Inc()
				}
				w.reply <- res.Reply
			}
		}
		if wasServing && !s.node.Serving() {
			// Their commands may still commit; every command is idempotent,
			// so the client retries at the new leader.
			s.failAll(pb.ErrorCode_NOT_LEADER, "coord: leadership lost")
		}
		m := s.node.Machine()
		if err := s.snaps.Maybe(s.rlog, m.Applied(), s.node.ConfState(), m.Snapshot); err != nil {
			return err
		}
	}
	lead, term := s.node.Leader()
	if k := (pubKey{s.node.Machine().Applied(), lead, term, s.node.Serving()}); k != s.pubKey {
		s.pubKey = k
		s.publish()
	}
	return nil
}

// pubKey is what the published status depends on: it is rebuilt only when
// one of these changes, not on every heartbeat.
type pubKey struct {
	applied, lead, term uint64
	serving             bool
}

func (s *Server) failAll(code pb.ErrorCode, msg string) {
	for p, w := range s.waiters {
		w.reply <- s.withHint(&pb.Error{Code: code, Message: msg})
		delete(s.waiters, p)
	}
}

// publish makes the applied state visible to Status, Watch and the HTTP
// pages, which run on other goroutines.
func (s *Server) publish() {
	m := s.node.Machine()
	st := m.State()
	lead, term := s.node.Leader()
	hint := ""
	if lead == s.cfg.ID {
		hint = s.Addr()
	} else if lead != 0 {
		hint = s.cfg.Peers[lead]
	}
	resp := &pb.StatusResponse{NodeId: s.cfg.ID, LeaderId: lead, LeaderHint: hint, Term: term,
		IsLeader: s.node.Serving(), AppliedIndex: m.Applied(), Config: m.Config(), Members: st.Members,
		Slots: st.Slots, Promotions: st.Promotions, History: st.History}

	s.metrics.set(resp)
	s.publishAges() // members may have joined or left the detector
	s.logChanges(s.status, resp)
	s.pubMu.Lock()
	defer s.pubMu.Unlock()
	if !proto.Equal(s.status.GetConfig(), resp.Config) {
		close(s.changed)
		s.changed = make(chan struct{})
	}
	s.status = resp
}

// agesEvery is how often, in ticks, the heartbeat ages shown by Status are
// refreshed (they change every tick; the rest of the status only on apply).
const agesEvery = 10

func (s *Server) publishAges() {
	var ages map[uint64]uint64
	if a := s.node.HeartbeatAges(); a != nil {
		ages = make(map[uint64]uint64, len(a))
		for id, t := range a {
			ages[id] = uint64(time.Duration(t) * s.cfg.Tick / time.Millisecond)
		}
	}
	var loads map[uint64]*pb.Load
	if l := s.node.Loads(); l != nil {
		loads = make(map[uint64]*pb.Load, len(l))
		for id, v := range l {
			loads[id] = &pb.Load{Values: v}
		}
	}
	s.pubMu.Lock()
	s.ages, s.loads = ages, loads
	s.pubMu.Unlock()
}

// statusNow returns a copy of the published status with the heartbeat ages.
func (s *Server) statusNow() *pb.StatusResponse {
	s.pubMu.Lock()
	defer s.pubMu.Unlock()
	st := proto.Clone(s.status).(*pb.StatusResponse)
	if st.IsLeader {
		st.HeartbeatAgeMs, st.Load = s.ages, s.loads
	}
	return st
}

// logChanges logs leadership changes on every replica, and membership
// changes (registrations, failures, promotions, epochs) on the serving
// leader only, so each is logged once. old is only read by the run loop
// (publish replaces it under pubMu; nobody mutates it).
func (s *Server) logChanges(old, cur *pb.StatusResponse) {
	if old.LeaderId != cur.LeaderId && cur.LeaderId != 0 {
		s.log.Info("coordinator leader", "leader", cur.LeaderId, "term", cur.Term)
	}
	if !cur.IsLeader || old.GetConfig() == nil {
		return
	}
	was := map[uint64]*pb.Member{}
	for _, mb := range old.Members {
		was[mb.Id] = mb
	}
	for _, mb := range cur.Members {
		prev, ok := was[mb.Id]
		switch {
		case !ok && mb.Live:
			s.log.Info("member registered", "member", mb.Id, "name", mb.Name, "member_role", roleName(mb.Role),
				"slot", mb.Slot, "addr", mb.Address, "epoch", cur.Config.Epoch)
		case ok && prev.Live && !mb.Live:
			s.log.Warn("member failed: fenced", "member", mb.Id, "name", mb.Name, "member_role", roleName(mb.Role),
				"epoch", mb.FailedEpoch)
		}
	}
	var lastEpoch uint64
	if n := len(old.Promotions); n > 0 {
		lastEpoch = old.Promotions[n-1].Epoch
	}
	for _, p := range cur.Promotions {
		if p.Epoch > lastEpoch && p.Failed != 0 {
			s.log.Warn("backup promoted", "member", p.Promoted, "member_role", roleName(p.Role), "slot", p.Slot,
				"failed", p.Failed, "epoch", p.Epoch)
		}
	}
	if o, c := old.Config, cur.Config; o.Epoch != c.Epoch || o.ActiveEpoch != c.ActiveEpoch {
		s.log.Info("configuration", "epoch", c.Epoch, "active_epoch", c.ActiveEpoch,
			"gatekeepers", len(c.Gatekeepers), "shards", len(c.Shards))
	}
}

func (s *Server) published() (*pb.StatusResponse, chan struct{}) {
	s.pubMu.Lock()
	defer s.pubMu.Unlock()
	return s.status, s.changed
}

// The gRPC service.

func (s *Server) submit(ctx context.Context, r *request) (proto.Message, *pb.Error, error) {
	r.reply = make(chan proto.Message, 1)
	select {
	case s.reqc <- r:
	case <-s.stopc:
		return nil, &pb.Error{Code: pb.ErrorCode_SHUTTING_DOWN, Message: ErrStopped.Error()}, nil
	default:
		return nil, &pb.Error{Code: pb.ErrorCode_OVERLOADED, Message: "coord: request queue full"}, nil
	}
	select {
	case m := <-r.reply:
		if e, ok := m.(*pb.Error); ok {
			return nil, e, nil
		}
		return m, nil, nil
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	case <-s.done:
		return nil, &pb.Error{Code: pb.ErrorCode_SHUTTING_DOWN, Message: ErrStopped.Error()}, nil
	}
}

// Register adds a member (idempotent by name and token).
func (s *Server) Register(ctx context.Context, req *pb.RegisterRequest) (*pb.RegisterResponse, error) {
	m, e, err := s.submit(ctx, &request{cmd: &pb.Command{Op: &pb.Command_Register{Register: req}}})
	if err != nil || e != nil {
		return &pb.RegisterResponse{Error: e}, err
	}
	return m.(*pb.RegisterResponse), nil
}

// Heartbeat records a member's liveness on the leader.
func (s *Server) Heartbeat(ctx context.Context, req *pb.HeartbeatRequest) (*pb.HeartbeatResponse, error) {
	m, e, err := s.submit(ctx, &request{hb: req})
	if err != nil || e != nil {
		return &pb.HeartbeatResponse{Error: e}, err
	}
	return m.(*pb.HeartbeatResponse), nil
}

// AckEpoch records that a member moved to an epoch, once committed.
func (s *Server) AckEpoch(ctx context.Context, req *pb.AckEpochRequest) (*pb.AckEpochResponse, error) {
	m, e, err := s.submit(ctx, &request{cmd: &pb.Command{Op: &pb.Command_Ack{Ack: req}}})
	if err != nil || e != nil {
		return &pb.AckEpochResponse{Error: e}, err
	}
	return m.(*pb.AckEpochResponse), nil
}

// AddSlot grows a role's slots (elasticity).
func (s *Server) AddSlot(ctx context.Context, req *pb.AddSlotRequest) (*pb.AddSlotResponse, error) {
	m, e, err := s.submit(ctx, &request{cmd: &pb.Command{Op: &pb.Command_AddSlot{AddSlot: req}}})
	if err != nil || e != nil {
		return &pb.AddSlotResponse{Error: e}, err
	}
	return m.(*pb.AddSlotResponse), nil
}

// Status reports this replica's applied view (any replica answers; a
// follower's view may lag the leader's).
func (s *Server) Status(context.Context, *pb.StatusRequest) (*pb.StatusResponse, error) {
	return s.statusNow(), nil
}

// Watch streams this replica's configuration: the current one, then every
// change. Configurations are committed ones, so a follower's stream lags but
// never shows what the leader will not.
func (s *Server) Watch(req *pb.WatchRequest, st grpc.ServerStreamingServer[pb.Config]) error {
	s.pubMu.Lock()
	if s.watchers >= s.cfg.WatchersMax {
		s.pubMu.Unlock()
		return status.Error(codes.ResourceExhausted, "coord: too many watchers")
	}
	s.watchers++
	s.pubMu.Unlock()
	defer func() {
		s.pubMu.Lock()
		s.watchers--
		s.pubMu.Unlock()
	}()
	var sent *pb.Config
	for {
		cur, changed := s.published()
		if c := cur.GetConfig(); c != nil && !proto.Equal(c, sent) && c.GetEpoch() >= req.GetAfterEpoch() {
			if err := st.Send(c); err != nil {
				return err
			}
			sent = c
		}
		select {
		case <-changed:
		case <-st.Context().Done():
			return st.Context().Err()
		case <-s.stopc:
			return status.Error(codes.Unavailable, ErrStopped.Error())
		}
	}
}

// Send receives a peer's raft message stream.
func (s *Server) Send(st grpc.ClientStreamingServer[pb.RaftEnvelope, pb.RaftAck]) error {
	return raftlog.ServeStream(st, &pb.RaftAck{}, s.recvc, s.stopc, ErrStopped)
}

// openRaft makes the raft message stream to a peer replica.
func openRaft(ctx context.Context, conn *grpc.ClientConn) (func([]byte) error, error) {
	st, err := pb.NewCoordRaftClient(conn).Send(ctx)
	if err != nil {
		return nil, err
	}
	return func(b []byte) error { return st.Send(&pb.RaftEnvelope{Message: b}) }, nil
}
