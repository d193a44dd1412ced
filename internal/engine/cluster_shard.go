package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"

	"github.com/weft-db/weft/internal/gatekeeper"
	"github.com/weft-db/weft/internal/graph"
	"github.com/weft-db/weft/internal/nodeprog"
	"github.com/weft-db/weft/internal/order"
	"github.com/weft-db/weft/internal/shard"
	"github.com/weft-db/weft/internal/store"
	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/value"
	"github.com/weft-db/weft/internal/vclock"
	pb "github.com/weft-db/weft/internal/wire/clusterpb"
)

// ShardConfig configures one shard of a cluster running in its own process.
type ShardConfig struct {
	// ID is this shard's number among Shards; Gatekeepers is the number of
	// gatekeeper processes (FIFO channels into the shard).
	ID, Shards, Gatekeepers int
	// Epoch is the configuration epoch (the coordinator's): the shard
	// rebuilds its partition from the store at the epoch's start and
	// refuses stamps of other epochs.
	Epoch uint64
	// Store is the shared backing store the partition is rebuilt from.
	Store store.Store
	// Oracle is the cluster's Kronos (order.Remote); OracleCacheMax bounds
	// the shard's cache of its answers.
	Oracle         order.Oracle
	OracleCacheMax int
	// RequestNop asks gatekeeper gk to send this shard an entry past clock
	// (a NOP when it has nothing else); it must not block. Nil: the shard
	// waits for entries to arrive on their own.
	RequestNop func(gk int, clock vclock.Clock)
	// Programs carries node programs' reports and hops to the gatekeepers
	// and the other shards. Nil: programs that hop fail.
	Programs ProgramLinks
	// TasksMax bounds queued reads; KeepHistory keeps old versions.
	TasksMax    int
	KeepHistory bool
	Log         *slog.Logger
}

// ProgramLinks are a shard's calls to the rest of the cluster for node
// programs. Each returns once the receiver has the message.
type ProgramLinks interface {
	Report(ctx context.Context, gk int, report []byte, sentTo []uint32) error
	Hop(ctx context.Context, shard, gk int, stamp, batch []byte) error
}

// outMsg is a report or a hop waiting to be sent, in the order the shard
// produced them: a report reaches the coordinator before the batches it
// announces can (so a program that ends early releases its state on every
// shard it reached).
type outMsg struct {
	gk     int
	report []byte
	sentTo []uint32
	shard  int // hop: destination; stamp and batch set
	stamp  []byte
	batch  []byte
}

// outboxMax bounds reports and hops waiting to be sent; the shard waits
// when it is full.
const outboxMax = 4096

// ShardServer is one shard process's engine: the same shard node weft serve
// runs (scheduling core, multi-version partition, alias index), fed by the
// gatekeepers' FIFO streams and asked for reads over the cluster protocol
// (internal/wire/clusterpb, docs/cluster.md). One-vertex programs run here
// (Run); others run batch by batch (Hop), reporting to their gatekeeper.
type ShardServer struct {
	pb.UnimplementedShardServer
	cfg  ShardConfig
	node *shardNode
	reg  *nodeprog.Registry
	log  *slog.Logger

	stop    atomic.Bool
	errMu   sync.Mutex
	err     error // the fatal error that stopped the shard
	stopped chan struct{}
	loopWG  sync.WaitGroup

	outbox chan outMsg
	outWG  sync.WaitGroup

	// dir is the placement directory read at the rebuild.
	dir *txn.Directory

	applies atomic.Uint64
	// reads and readBatches count the Read and ReadBatch calls answered
	// (ReadCalls): how tests and benchmarks see the network cost of reads.
	reads, readBatches atomic.Uint64
	deliverMu          sync.Mutex
	delivered          []uint64 // per gatekeeper: highest in-order sequence number pushed

	// Garbage collection (cluster_gc.go): every gatekeeper's latest low
	// clock, and the watermark collected below.
	gcMu sync.Mutex
	lows []vclock.Clock
	wm   vclock.Clock
}

// NewShardServer rebuilds the shard's partition from the store and starts
// it.
func NewShardServer(cfg ShardConfig) (*ShardServer, error) {
	switch {
	case cfg.Shards < 1 || cfg.ID < 0 || cfg.ID >= cfg.Shards:
		return nil, fmt.Errorf("engine: shard %d of %d", cfg.ID, cfg.Shards)
	case cfg.Gatekeepers < 1 || cfg.Gatekeepers > txn.GatekeepersMax:
		return nil, fmt.Errorf("engine: %d gatekeepers", cfg.Gatekeepers)
	case cfg.Epoch == 0:
		return nil, errors.New("engine: a shard needs its configuration epoch")
	case cfg.Store == nil || cfg.Oracle == nil:
		return nil, errors.New("engine: a shard needs a store and an oracle")
	}
	if cfg.TasksMax <= 0 {
		cfg.TasksMax = DefaultConfig().ShardTasksMax
	}
	if cfg.OracleCacheMax <= 0 {
		cfg.OracleCacheMax = DefaultConfig().OracleCacheMax
	}
	log := cfg.Log
	if log == nil {
		log = slog.Default()
	}
	s := &ShardServer{cfg: cfg, log: log.With("role", "shard", "shard", cfg.ID), stopped: make(chan struct{}),
		delivered: make([]uint64, cfg.Gatekeepers), reg: nodeprog.Builtins(), lows: make([]vclock.Clock, cfg.Gatekeepers)}
	ecfg := Config{Gatekeepers: cfg.Gatekeepers, KeepHistory: cfg.KeepHistory, ShardTasksMax: cfg.TasksMax}
	var err error
	if s.node, err = newShardNodeWith(s, s.reg, cfg.ID, ecfg, order.NewResolver(cfg.Oracle, cfg.OracleCacheMax)); err != nil {
		return nil, err
	}
	// The fence first: a commit of an older epoch either is in the store
	// the rebuild reads, or never commits.
	fctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	err = RaiseFence(fctx, cfg.Store, cfg.Epoch)
	cancel()
	if err != nil {
		return nil, err
	}
	if err := s.recover(); err != nil {
		return nil, fmt.Errorf("engine: shard %d rebuilding from the store: %w", cfg.ID, err)
	}
	s.node.Publish()
	s.outbox = make(chan outMsg, outboxMax)
	s.outWG.Add(1)
	go s.send()
	s.loopWG.Add(1)
	go func() {
		defer s.loopWG.Done()
		s.node.Loop()
	}()
	st := s.node.G.Counts()
	s.log.Info("shard serving", "epoch", cfg.Epoch, "vertices", st.Vertices, "edges", st.Edges)
	return s, nil
}

func (s *ShardServer) recover() error {
	t, err := s.cfg.Store.Begin()
	if err != nil {
		return err
	}
	defer t.Discard()
	w := vclock.Stamp{Clock: vclock.New(s.cfg.Epoch, s.cfg.Gatekeepers)}
	dir, err := gatekeeper.ReadDirectory(t, s.cfg.Shards)
	if err != nil {
		return err
	}
	// The shard's directory stays the one read here: for a unit it never
	// held, a stale home still leads to the shard the unit left, whose
	// forwarding pointer names the next (shard.Units.Locate).
	s.node.Units = shard.RecoveredUnits(uint32(s.cfg.ID), dir, w)
	s.node.Dir = func() *txn.Directory { return dir }
	s.dir = dir
	mine := s.node.Partition()
	return shard.Recover(t, w, func(h string) shard.Partition {
		if int(dir.ShardOf(h)) == s.cfg.ID {
			return mine
		}
		return shard.Partition{}
	})
}

// Register adds the shard's service to a gRPC server.
func (s *ShardServer) Register(g *grpc.Server) { pb.RegisterShardServer(g, s) }

// Close stops the shard; reads waiting fail with ErrClosed.
func (s *ShardServer) Close() error {
	s.Fail(nil)
	s.node.Wake()
	s.loopWG.Wait()
	close(s.outbox) // the loop, its only sender, has returned
	s.outWG.Wait()
	return s.Err()
}

// send delivers the outbox in order until it closes. A message that cannot
// be delivered is dropped: its program fails at its gatekeeper (the
// caller's deadline), and a new epoch replaces what is unreachable.
func (s *ShardServer) send() {
	defer s.outWG.Done()
	for m := range s.outbox {
		if s.stop.Load() || s.cfg.Programs == nil {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		var err error
		if m.report != nil {
			err = s.cfg.Programs.Report(ctx, m.gk, m.report, m.sentTo)
		} else {
			err = s.cfg.Programs.Hop(ctx, m.shard, m.gk, m.stamp, m.batch)
		}
		cancel()
		if err != nil {
			s.log.Warn("node program message lost", "gatekeeper", m.gk, "to_shard", m.shard, "err", err)
		}
	}
}

// Err returns the error that stopped the shard (nil when running or closed
// cleanly).
func (s *ShardServer) Err() error {
	s.errMu.Lock()
	defer s.errMu.Unlock()
	return s.err
}

// shard.Host, for a shard process.

func (s *ShardServer) RequestNop(gk, _ int, c vclock.Clock) bool {
	if s.cfg.RequestNop != nil {
		s.cfg.RequestNop(gk, c)
	}
	return false
}

// notes are a single-process shortcut (gatekeeper.Core.Note): none here.
func (s *ShardServer) Notes(int, int) (*vclock.Clock, *vclock.Clock) { return nil, nil }

func (s *ShardServer) Report(gk int, rep nodeprog.Report, sentTo []nodeprog.Batch) {
	b, err := json.Marshal(rep)
	if err != nil {
		s.log.Error("encoding a program report", "err", err)
		return
	}
	m := outMsg{gk: gk, report: b}
	for _, x := range sentTo {
		m.sentTo = append(m.sentTo, uint32(x.Shard))
	}
	s.outbox <- m
}

func (s *ShardServer) SendHop(gk int, stamp vclock.Stamp, b nodeprog.Batch) {
	data, err := json.Marshal(b)
	if err != nil {
		s.Report(gk, nodeprog.FailReport(b, s.cfg.ID, fmt.Errorf("%w: encoding a batch: %v", nodeprog.ErrFailed, err)), nil)
		return
	}
	s.outbox <- outMsg{gk: gk, shard: b.Shard, stamp: txn.EncodeStamp(stamp), batch: data}
}

func (s *ShardServer) ShardOf(h string) int { return int(s.dir.ShardOf(h)) }
func (s *ShardServer) Applied()             { s.applies.Add(1) }
func (s *ShardServer) Stopping() bool       { return s.stop.Load() }

// Fail stops the shard; err nil is a clean stop.
func (s *ShardServer) Fail(err error) {
	s.errMu.Lock()
	defer s.errMu.Unlock()
	if s.stop.Load() {
		return
	}
	if err != nil {
		s.err = err
		s.log.Error("shard stopped", "err", err)
	}
	s.stop.Store(true)
	close(s.stopped)
	s.node.Wake()
}

func (s *ShardServer) check() error {
	if !s.stop.Load() {
		return nil
	}
	if err := s.Err(); err != nil {
		return fmt.Errorf("%w: %v", ErrClosed, err)
	}
	return ErrClosed
}

// Deliver implements the FIFO stream of one gatekeeper (cluster.proto).
func (s *ShardServer) Deliver(stream pb.Shard_DeliverServer) error {
	for {
		msg, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := s.check(); err != nil {
			return err
		}
		gk := int(msg.GetGatekeeper())
		if gk >= s.cfg.Gatekeepers {
			return fmt.Errorf("engine: entries from gatekeeper %d of %d", gk, s.cfg.Gatekeepers)
		}
		for _, b := range msg.GetEntries() {
			e, err := gatekeeper.DecodeEntry(b)
			if err != nil {
				return err
			}
			if int(e.GK) != gk || e.Stamp.Clock.Epoch != s.cfg.Epoch || len(e.Stamp.Clock.Counters) != s.cfg.Gatekeepers {
				return fmt.Errorf("engine: entry %d of gatekeeper %d at %s does not belong on gatekeeper %d's stream in epoch %d",
					e.Seq, e.GK, e.Stamp, gk, s.cfg.Epoch)
			}
			for _, op := range e.Ops {
				if int(op.Shard) != s.cfg.ID {
					return fmt.Errorf("engine: entry %d of gatekeeper %d carries an operation for shard %d", e.Seq, gk, op.Shard)
				}
			}
			s.node.Push(e)
			s.deliverMu.Lock()
			if e.Seq == s.delivered[gk]+1 {
				s.delivered[gk] = e.Seq
			}
			s.deliverMu.Unlock()
		}
		if low := msg.GetLow(); low != nil {
			if err := s.noteLow(gk, clockFromPB(low)); err != nil {
				return err
			}
		}
		s.deliverMu.Lock()
		ack := s.delivered[gk]
		s.deliverMu.Unlock()
		if err := stream.Send(&pb.Delivered{Seq: ack}); err != nil {
			return err
		}
	}
}

// stampOf decodes a request's stamp, which must be of this shard's epoch
// and configuration.
func (s *ShardServer) stampOf(b []byte) (vclock.Stamp, error) {
	st, err := txn.DecodeStamp(b)
	if err != nil || st.IsZero() {
		return st, fmt.Errorf("%w: read stamp", ErrBadRequest)
	}
	if st.Clock.Epoch != s.cfg.Epoch || len(st.Clock.Counters) != s.cfg.Gatekeepers {
		return st, fmt.Errorf("%w: the stamp is from another epoch or configuration", ErrSnapshotTooOld)
	}
	s.gcMu.Lock()
	wm := s.wm
	s.gcMu.Unlock()
	if wm.Counters != nil && !vclock.LessEq(wm, st.Clock) {
		return st, fmt.Errorf("%w: the stamp is below the shard's garbage-collection watermark", ErrSnapshotTooOld)
	}
	return st, nil
}

// noteLow records gatekeeper gk's low clock and, once every gatekeeper has
// sent one, collects the versions below the minimum of the lows and the
// shard's queue positions (cluster_gc.go).
func (s *ShardServer) noteLow(gk int, low vclock.Clock) error {
	if low.Epoch != s.cfg.Epoch || len(low.Counters) != s.cfg.Gatekeepers {
		return fmt.Errorf("engine: gatekeeper %d sent a low clock %v of another epoch or configuration", gk, low)
	}
	if s.cfg.KeepHistory {
		return nil
	}
	s.gcMu.Lock()
	defer s.gcMu.Unlock()
	s.lows[gk] = low
	var wm vclock.Clock
	for _, l := range s.lows {
		if l.Counters == nil {
			return nil // not every gatekeeper has spoken yet
		}
		minInto(&wm, l)
	}
	if !s.node.Positions(&wm) {
		return nil // a queue that never moved: nothing is safe yet
	}
	if s.wm.Counters != nil && (vclock.LessEq(wm, s.wm) || !vclock.LessEq(s.wm, wm)) {
		return nil // not advanced past the last watermark in every entry
	}
	s.wm = wm
	s.node.Push(shard.GCMsg{Watermark: vclock.Stamp{Clock: wm}})
	return nil
}

// readAt runs fn on the shard at st once it can, and waits for it. With a
// name, fn runs only if the name's unit was here at st; else the answer is
// a *shard.MovedError naming the shard to ask.
func (s *ShardServer) readAt(ctx context.Context, st vclock.Stamp, name string, fn func(r *reader)) error {
	w := shard.NewWaiter()
	s.node.Push(shard.ReadMsg{Stamp: st, Fn: fn, W: w, Name: name})
	select {
	case <-w.Ch:
		err := w.Err
		shard.PutWaiter(w)
		return shardErr(err)
	case <-ctx.Done():
		return ctx.Err() // the shard may still use w: it is not reused
	case <-s.stopped:
		return s.check()
	}
}

// Read implements a read at a stamp (cluster.proto).
func (s *ShardServer) Read(ctx context.Context, req *pb.ReadRequest) (*pb.ReadResponse, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	st, err := s.stampOf(req.GetStamp())
	if err != nil {
		return nil, err
	}
	name := req.GetName()
	if err := txn.ValidName("vertex", name, txn.HandleLenMax); err != nil {
		return nil, err
	}
	s.reads.Add(1)
	resp := &pb.ReadResponse{}
	err = s.readAt(ctx, st, name, func(r *reader) { readOne(r, st, name, req, resp) })
	if mv, ok := err.(*shard.MovedError); ok {
		return &pb.ReadResponse{Moved: true, MovedTo: uint32(mv.Shard)}, nil
	}
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// readOne answers a read of name (an alias with req.Alias) at st into resp:
// Read's answer, and each of ReadBatch's.
func readOne(r *reader, st vclock.Stamp, name string, req *pb.ReadRequest, resp *pb.ReadResponse) {
	if req.GetAlias() {
		h, _ := r.S.Alias.Resolve(name, st, r.Ord)
		resp.Handle = h
		resp.Version = txn.EncodeStamp(r.S.Alias.LastWrite(name, st, r.Ord))
		return
	}
	resp.Handle = name
	resp.Version = txn.EncodeStamp(r.S.G.LastWrite(name, st, r.Ord))
	view, ok := r.S.G.View(name, st, r.Ord)
	if !ok {
		return
	}
	resp.Exists = true
	fillRead(resp, view, req)
}

// ReadCalls returns the Read and ReadBatch calls this shard has answered
// since it started.
func (s *ShardServer) ReadCalls() (reads, batches uint64) {
	return s.reads.Load(), s.readBatches.Load()
}

// Run implements a one-vertex program at a stamp (cluster.proto).
func (s *ShardServer) Run(ctx context.Context, req *pb.RunRequest) (*pb.RunResponse, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	st, err := s.stampOf(req.GetStamp())
	if err != nil {
		return nil, err
	}
	name := req.GetProgram()
	comp, err := s.reg.Compile(name, []byte(req.GetParamsJson()))
	if err != nil {
		return nil, mapProgErr(err)
	}
	if !nodeprog.IsLocal(comp) {
		return nil, fmt.Errorf("%w: %s reads more than one vertex: it runs through a gatekeeper", ErrBadRequest, name)
	}
	h, err := nodeprog.LocalStart(comp)
	if err != nil {
		return nil, mapProgErr(err)
	}
	if err := txn.ValidName("vertex", h.To, txn.HandleLenMax); err != nil {
		return nil, err
	}
	var res any
	var progErr error
	err = s.readAt(ctx, st, h.To, func(r *reader) { res, progErr = nodeprog.RunLocal(comp, name, h, r.Lookup(st)) })
	if mv, ok := err.(*shard.MovedError); ok {
		return &pb.RunResponse{Moved: true, MovedTo: uint32(mv.Shard)}, nil
	}
	if err != nil {
		return nil, err
	}
	if progErr != nil {
		return nil, mapProgErr(progErr)
	}
	b, err := encodeResult(name, res)
	if err != nil {
		return nil, err
	}
	return &pb.RunResponse{ResultJson: string(b)}, nil
}

// fillRead copies what req asks of a vertex view into resp.
func fillRead(resp *pb.ReadResponse, view graph.VertexView, req *pb.ReadRequest) {
	if e := req.GetEdge(); e != "" {
		if ev, found := view.Edge(e); found {
			resp.Edges = append(resp.Edges, edgePB(ev))
		}
		return
	}
	if req.GetProps() {
		for k, v := range view.Props() {
			resp.Props = append(resp.Props, &pb.Prop{Key: k, Value: value.Append(nil, v)})
		}
	}
	if req.GetAliases() {
		for a := range view.Aliases() {
			resp.Aliases = append(resp.Aliases, a)
		}
	}
	if req.GetEdges() {
		max := int(req.GetEdgesMax())
		if max <= 0 {
			max = EdgesMaxDefault
		}
		for e := range view.Edges() {
			if len(resp.Edges) == max {
				resp.EdgesTruncated = true
				break
			}
			resp.Edges = append(resp.Edges, edgePB(e))
		}
	}
}

func edgePB(e graph.EdgeView) *pb.Edge {
	out := &pb.Edge{Handle: e.Handle(), Dst: e.Dst()}
	for k, v := range e.Props() {
		out.Props = append(out.Props, &pb.Prop{Key: k, Value: value.Append(nil, v)})
	}
	return out
}

// wireHopMsg is a batch that arrived over the network: the shard loop
// decodes it (its runner compiles the program on first sight).
type wireHopMsg struct {
	gk    int
	stamp vclock.Stamp
	data  []byte
}

// Hop implements a program batch's arrival (cluster.proto).
func (s *ShardServer) Hop(_ context.Context, req *pb.HopRequest) (*pb.HopResponse, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	st, err := s.stampOf(req.GetStamp())
	if err != nil {
		return nil, err
	}
	if int(req.GetGatekeeper()) >= s.cfg.Gatekeepers {
		return nil, fmt.Errorf("%w: batch of gatekeeper %d", ErrBadRequest, req.GetGatekeeper())
	}
	s.node.Push(shard.WireHopMsg{GK: int(req.GetGatekeeper()), Stamp: st, Data: req.GetBatch()})
	return &pb.HopResponse{}, nil
}

// Finish implements a finished program's release (cluster.proto).
func (s *ShardServer) Finish(_ context.Context, req *pb.FinishRequest) (*pb.FinishResponse, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	s.node.Push(shard.FinishMsg{Prog: nodeprog.ProgID(req.GetProgram())})
	return &pb.FinishResponse{}, nil
}

// Status implements the shard's status (cluster.proto).
func (s *ShardServer) Status(context.Context, *pb.StatusRequest) (*pb.StatusResponse, error) {
	st := s.node.Stats()
	out := &pb.StatusResponse{Shard: uint32(s.cfg.ID), Epoch: s.cfg.Epoch, Vertices: uint64(st.Vertices),
		Edges: uint64(st.Edges), Applied: s.applies.Load(), Versions: uint64(st.Versions),
		Reads: s.reads.Load(), ReadBatches: s.readBatches.Load()}
	s.gcMu.Lock()
	if s.wm.Counters != nil {
		out.Watermark = clockPB(s.wm)
	}
	s.gcMu.Unlock()
	s.deliverMu.Lock()
	out.Delivered = append(out.Delivered, s.delivered...)
	s.deliverMu.Unlock()
	return out, nil
}
