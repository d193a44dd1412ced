package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/weft-db/weft/internal/gatekeeper"
	"github.com/weft-db/weft/internal/nodeprog"
	"github.com/weft-db/weft/internal/order"
	"github.com/weft-db/weft/internal/store"
	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/value"
	"github.com/weft-db/weft/internal/vclock"
	pb "github.com/weft-db/weft/internal/wire/clusterpb"
)

// GatekeeperConfig configures one gatekeeper of a cluster running in its own
// process.
type GatekeeperConfig struct {
	ID, Gatekeepers, Shards int
	// Epoch is the configuration epoch; stamps carry it.
	Epoch uint64
	// Store is the shared backing store (PostgreSQL for processes on
	// several machines) and Oracle the cluster's Kronos (order.Remote).
	Store  store.Store
	Oracle order.Oracle
	// ShardAddrs are the shard processes' addresses (one per shard, in
	// order); PeerAddrs the gatekeepers' (one per gatekeeper; this one's is
	// not dialled).
	ShardAddrs, PeerAddrs []string
	// AnnounceEvery is τ: how often the clock goes to the peers when
	// nothing waits for them [10ms]. Answers waiting for stability make
	// the gatekeeper announce at once.
	AnnounceEvery time.Duration
	// InflightMax bounds the FIFO slots not yet delivered: transactions stamped
	// and not yet resolved, resolved ones queued behind them, and queued NOPs
	// (at most one per shard). BeginCommit beyond it answers ErrOverloaded.
	InflightMax int
	// ProgramsMax bounds node programs in flight [DefaultConfig's].
	ProgramsMax int
	// ConnectTimeout bounds the wait for every shard to accept its FIFO
	// stream at start [30s].
	ConnectTimeout time.Duration
	// HistoryRetention and GCEvery: old versions stay readable at least
	// HistoryRetention; the low clock goes to the shards every GCEvery
	// [DefaultConfig's].
	HistoryRetention, GCEvery time.Duration
	// Lease, if set, says whether the gatekeeper's process holds its lease
	// from the coordinator (nil: it may serve; an error: it must not, e.g.
	// coord.ErrLeaseExpired). The gatekeeper asks it before it takes a
	// call, again before it acknowledges a commit, and before it answers a
	// read, a snapshot or a program (docs/cluster.md, "Leases"). nil: no
	// lease (a cluster without a coordinator, as in the engine's tests).
	Lease func() error
	Log   *slog.Logger
	// plants are bugs planted in the shell on purpose (tests only).
	plants gatekeeper.Plants
}

// ClusterGatekeeper is one gatekeeper process's engine. It implements API,
// so the gRPC and HTTP front ends of weft serve serve it unchanged: reads go
// to the shard processes at snapshot stamps, commits run on the shared store
// and their writes go to the shards over FIFO streams, one-vertex programs
// run on their vertex's shard. Every answer waits until every peer
// gatekeeper has merged the stamp it depends on (gatekeeper.Config.PeerAck,
// docs/cluster.md), which keeps real-time order across processes.
//
// Stamping, commits, resolve and hand-off, NOPs, stability, programs and
// moves run in the gatekeeper's shell (gatekeeper.Shell, the one weft serve
// and the simulation run), alone in its process (no Group: peers' clocks
// come by announces) over gRPC links (clusterEnv). What is here is the
// process: links, leases, drain, and the wait for the shell's answers.
type ClusterGatekeeper struct {
	pb.UnimplementedGatekeeperServer
	cfg   GatekeeperConfig
	log   *slog.Logger
	reg   *nodeprog.Registry
	shell *gatekeeper.Shell

	shards []*shardLink
	peers  []*peerLink // nil at this gatekeeper's index

	stop     chan struct{}
	stopOnce sync.Once
	errMu    sync.Mutex
	err      error
	wg       sync.WaitGroup

	// Garbage collection (cluster_gc.go): keys of reads held at their
	// stamps in the shell, clock samples for the retention (gcLoop's
	// only), the last low sent (guarded by the shell's lock: written by
	// InflightMinThen's publish, read by HoldRead's readable).
	nextRead atomic.Uint64
	samples  []clockSample
	lowSent  vclock.Clock

	// finishes queues the Finish calls for the shards (finisher), bounded:
	// a shard that misses one keeps a program's record until its runner's
	// bound evicts it.
	finishes chan finishReq

	// inflight counts commits between their start and their outcome;
	// draining refuses new ones (Drain).
	inflightMu sync.Mutex
	draining   bool
	inflight   sync.WaitGroup

	// place is the placement directory as this gatekeeper knows it: read
	// from the store at start and after a commit finds a unit moved,
	// switched at once by its own moves (cluster_moves.go).
	place *gatekeeper.DirCopy

	commits, aborts, programs, announces, kronosCleanups, moves, forwards atomic.Uint64
}

type shardLink struct {
	conn   *grpc.ClientConn
	client pb.ShardClient
	stream pb.Shard_DeliverClient
	// noBatch is set once the shard answered ReadBatch with Unimplemented:
	// it is read vertex by vertex (cluster_batch.go).
	noBatch atomic.Bool
	// Reachability (cluster_lease.go): the instant (Unix ns) of the first
	// FIFO message not yet acknowledged, and of the first read failure
	// since the last success; 0: none.
	unacked, readFailing atomic.Int64
}

type peerLink struct {
	id     int
	conn   *grpc.ClientConn
	client pb.GatekeeperClient
	kick   chan struct{} // one pending announce
}

var _ API = (*ClusterGatekeeper)(nil)

// NewClusterGatekeeper dials the shards and peers and starts announcing.
func NewClusterGatekeeper(cfg GatekeeperConfig) (*ClusterGatekeeper, error) {
	switch {
	case cfg.Gatekeepers < 1 || cfg.ID < 0 || cfg.ID >= cfg.Gatekeepers || len(cfg.PeerAddrs) != cfg.Gatekeepers:
		return nil, fmt.Errorf("engine: gatekeeper %d of %d with %d peer addresses", cfg.ID, cfg.Gatekeepers, len(cfg.PeerAddrs))
	case cfg.Shards < 1 || len(cfg.ShardAddrs) != cfg.Shards:
		return nil, fmt.Errorf("engine: %d shards with %d addresses", cfg.Shards, len(cfg.ShardAddrs))
	case cfg.Epoch == 0 || cfg.Store == nil || cfg.Oracle == nil:
		return nil, errors.New("engine: a gatekeeper needs its epoch, a store and an oracle")
	}
	if cfg.AnnounceEvery <= 0 {
		cfg.AnnounceEvery = 10 * time.Millisecond
	}
	if cfg.InflightMax <= 0 {
		cfg.InflightMax = 1 << 14
	}
	if cfg.ProgramsMax <= 0 {
		cfg.ProgramsMax = DefaultConfig().ProgramsMax
	}
	if cfg.ConnectTimeout <= 0 {
		cfg.ConnectTimeout = 30 * time.Second
	}
	if cfg.GCEvery <= 0 {
		cfg.GCEvery = DefaultConfig().GCEvery
	}
	if cfg.HistoryRetention <= 0 {
		cfg.HistoryRetention = DefaultConfig().HistoryRetention
	}
	log := cfg.Log
	if log == nil {
		log = slog.Default()
	}
	fctx, cancel := context.WithTimeout(context.Background(), cfg.ConnectTimeout)
	err := RaiseFence(fctx, cfg.Store, cfg.Epoch)
	if err == nil {
		err = pinBase(fctx, cfg.Store, cfg.Shards)
	}
	cancel()
	if err != nil {
		return nil, err
	}
	cfg.Oracle = &order.Counting{Oracle: cfg.Oracle} // Status reports this gatekeeper's Kronos calls
	g := &ClusterGatekeeper{cfg: cfg, log: log.With("role", "gatekeeper", "gatekeeper", cfg.ID), reg: nodeprog.Builtins(),
		stop: make(chan struct{}), finishes: make(chan finishReq, finishQueue), place: gatekeeper.NewDirCopy(nil, cfg.plants)}
	if err := g.reloadDirectory(); err != nil {
		return nil, fmt.Errorf("engine: reading the placement directory: %w", err)
	}
	g.shell = gatekeeper.NewShell(gatekeeper.ShellConfig{
		Core: gatekeeper.Config{ID: uint32(cfg.ID), Gatekeepers: cfg.Gatekeepers, Shards: cfg.Shards,
			Epoch: cfg.Epoch, InflightMax: cfg.InflightMax, PeerAck: true},
		Store: cfg.Store, Oracle: cfg.Oracle, Env: clusterEnv{g}, Placement: g.place,
		Registry: g.reg, ProgramsMax: cfg.ProgramsMax, Fence: true, Plants: cfg.plants,
		Failed: func(err error) {
			g.fail(fmt.Errorf("the outcome of a commit is unknown (a new epoch rebuilds the shards from the store): %w", err))
		},
		Serving: g.leaseOK, // commits taken and acknowledged only inside the lease
	})
	for i, addr := range cfg.ShardAddrs {
		conn, err := dialCluster(addr)
		if err != nil {
			g.Close()
			return nil, err
		}
		l := &shardLink{conn: conn, client: pb.NewShardClient(conn)}
		g.shards = append(g.shards, l)
		if err := waitReady(conn, cfg.ConnectTimeout); err != nil {
			g.Close()
			return nil, fmt.Errorf("engine: shard %d at %s: %w", i, addr, err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		if l.stream, err = l.client.Deliver(ctx); err != nil {
			cancel()
			g.Close()
			return nil, fmt.Errorf("engine: FIFO stream to shard %d: %w", i, err)
		}
		g.wg.Add(1)
		go g.drainAcks(i, l, cancel)
	}
	for j, addr := range cfg.PeerAddrs {
		if j == cfg.ID {
			g.peers = append(g.peers, nil)
			continue
		}
		conn, err := dialCluster(addr)
		if err != nil {
			g.Close()
			return nil, err
		}
		p := &peerLink{id: j, conn: conn, client: pb.NewGatekeeperClient(conn), kick: make(chan struct{}, 1)}
		g.peers = append(g.peers, p)
		g.wg.Add(1)
		go g.announcer(p)
	}
	g.wg.Add(4)
	go g.finisher()
	go g.ticker()
	go g.gcLoop()
	go g.releaseLoop()
	return g, nil
}

func dialCluster(addr string) (*grpc.ClientConn, error) {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, fmt.Errorf("engine: dial %s: %w", addr, err)
	}
	return conn, nil
}

// waitReady waits until conn is connected (a shard process may start after
// the gatekeeper), or timeout.
func waitReady(conn *grpc.ClientConn, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	conn.Connect()
	for {
		st := conn.GetState()
		if st == connectivity.Ready {
			return nil
		}
		if !conn.WaitForStateChange(ctx, st) {
			return fmt.Errorf("not reachable within %v (state %v)", timeout, st)
		}
	}
}

// Register adds the gatekeeper's peer service to a gRPC server.
func (g *ClusterGatekeeper) Register(s *grpc.Server) { pb.RegisterGatekeeperServer(s, g) }

// Close stops the gatekeeper; calls waiting fail with ErrClosed.
func (g *ClusterGatekeeper) Close() error {
	g.fail(nil)
	for _, l := range g.shards {
		l.conn.Close()
	}
	for _, p := range g.peers {
		if p != nil {
			p.conn.Close()
		}
	}
	g.wg.Wait()
	return g.Err()
}

// enterCommit counts a commit in, unless the gatekeeper is draining.
func (g *ClusterGatekeeper) enterCommit() bool {
	g.inflightMu.Lock()
	defer g.inflightMu.Unlock()
	if g.draining {
		return false
	}
	g.inflight.Add(1)
	return true
}

// Drain refuses new commits and waits until every commit in flight has its
// outcome on the store (committed or not), or ctx ends. A gatekeeper leaving
// its configuration epoch drains before it acknowledges the next one, so no
// commit of the old epoch reaches the store after the new epoch's shards
// read it (docs/cluster.md, failover). Reads and programs are not waited
// for: they change nothing.
func (g *ClusterGatekeeper) Drain(ctx context.Context) error {
	g.inflightMu.Lock()
	g.draining = true
	g.inflightMu.Unlock()
	done := make(chan struct{})
	go func() { g.inflight.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("engine: commits still in flight after the drain's deadline: %w", ctx.Err())
	}
}

// Counters returns the commits, aborts and programs (reads included) this
// gatekeeper has answered since it started.
func (g *ClusterGatekeeper) Counters() (commits, aborts, programs uint64) {
	return g.commits.Load(), g.aborts.Load(), g.programs.Load()
}

// Err is the error that stopped the gatekeeper (nil: running or closed).
func (g *ClusterGatekeeper) Err() error {
	g.errMu.Lock()
	defer g.errMu.Unlock()
	return g.err
}

// fail stops the gatekeeper (err nil: a clean stop). A broken FIFO stream
// is fatal: the coordinator replaces the gatekeeper in a new epoch
// (dissertation §4.6) rather than risk a gap in the channel.
func (g *ClusterGatekeeper) fail(err error) {
	g.stopOnce.Do(func() {
		if err != nil {
			g.errMu.Lock()
			g.err = err
			g.errMu.Unlock()
			g.log.Error("gatekeeper stopped", "err", err)
		}
		close(g.stop)
	})
}

// check refuses a call when the gatekeeper stopped or its lease lapsed.
func (g *ClusterGatekeeper) check() error {
	if err := g.alive(); err != nil {
		return err
	}
	return g.leaseOK()
}

// alive refuses a call when the gatekeeper stopped (the peer protocol asks
// only this: announces and NOPs go on while the lease lapsed, so peers are
// not held up by a gatekeeper that refuses its own clients).
func (g *ClusterGatekeeper) alive() error {
	select {
	case <-g.stop:
		if err := g.Err(); err != nil {
			return fmt.Errorf("%w: %v", ErrClosed, err)
		}
		return ErrClosed
	default:
		return nil
	}
}

func (g *ClusterGatekeeper) drainAcks(i int, l *shardLink, cancel context.CancelFunc) {
	defer g.wg.Done()
	defer cancel()
	go func() { <-g.stop; cancel() }()
	for {
		if _, err := l.stream.Recv(); err != nil {
			g.fail(fmt.Errorf("FIFO stream to shard %d: %w", i, err))
			return
		}
		l.unacked.Store(0)
	}
}

// clusterEnv is a cluster gatekeeper's links for its shell: FIFO streams
// to the shard processes, Hop and Finish calls, announces to the peers.
// Work after a yield point goes on at once, on the same goroutine.
type clusterEnv struct{ g *ClusterGatekeeper }

func (e clusterEnv) Go(_ gatekeeper.Point, _, _ int, next gatekeeper.Step) { next.Run() }

// Deliver sends an entry down the shard's FIFO stream. The shell calls it
// with its lock held, so sends never interleave (and the low, sent under
// the same lock, keeps its place among them). A broken stream stops the
// gatekeeper (fail).
func (e clusterEnv) Deliver(sh uint32, en gatekeeper.Entry) {
	l := e.g.shards[sh]
	l.unacked.CompareAndSwap(0, time.Now().UnixNano())
	if err := l.stream.Send(&pb.Entries{Gatekeeper: uint32(e.g.cfg.ID),
		Entries: [][]byte{gatekeeper.AppendEntry(nil, en)}}); err != nil {
		e.g.fail(fmt.Errorf("FIFO stream to shard %d: %w", sh, err))
	}
}

// Batch sends a program's start batch to its shard, in the background
// (the shell's lock is held); a shard that cannot take it ends the
// program. At most ProgramsMax programs start at once, each with a batch
// per shard at most.
func (e clusterEnv) Batch(stamp vclock.Stamp, b nodeprog.Batch) {
	g := e.g
	data, err := json.Marshal(b)
	if err != nil {
		panic(fmt.Sprintf("engine: a program batch does not encode: %v", err)) // plain data
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), hopTimeout)
		defer cancel()
		_, err := g.shards[b.Shard].client.Hop(ctx, &pb.HopRequest{Gatekeeper: uint32(g.cfg.ID), Stamp: txn.EncodeStamp(stamp), Batch: data})
		if err != nil {
			g.shell.Cancel(b.Prog, fromShard(err))
		}
	}()
}

// hopTimeout bounds a start batch's call to its shard.
const hopTimeout = 30 * time.Second

// Finish queues the shard's release of program prog (finisher).
func (e clusterEnv) Finish(sh int, prog nodeprog.ProgID) {
	select {
	case e.g.finishes <- finishReq{shard: sh, prog: prog}:
	default: // full: the shard's runner bound evicts the record
	}
}

// Noted drops the note: the shards learn this gatekeeper's progress from
// the FIFO stream (NOPs), not from notes.
func (clusterEnv) Noted(int, *vclock.Clock) {}

// Announce sends the clock to every peer soon (answers wait for them).
func (e clusterEnv) Announce() { e.g.kickAll() }

// finishReq is a program's release on one shard.
type finishReq struct {
	shard int
	prog  nodeprog.ProgID
}

// finishQueue bounds the releases waiting for their shards.
const finishQueue = 4096

// finisher tells shards to release programs, one call at a time.
func (g *ClusterGatekeeper) finisher() {
	defer g.wg.Done()
	for {
		select {
		case <-g.stop:
			return
		case r := <-g.finishes:
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_, _ = g.shards[r.shard].client.Finish(ctx, &pb.FinishRequest{Program: uint64(r.prog)})
			cancel()
		}
	}
}

func (g *ClusterGatekeeper) kickAll() {
	for _, p := range g.peers {
		if p != nil {
			select {
			case p.kick <- struct{}{}:
			default:
			}
		}
	}
}

// ticker announces every τ.
func (g *ClusterGatekeeper) ticker() {
	defer g.wg.Done()
	t := time.NewTicker(g.cfg.AnnounceEvery)
	defer t.Stop()
	for {
		select {
		case <-g.stop:
			return
		case <-t.C:
			g.kickAll()
		}
	}
}

// announcer sends this gatekeeper's clock to peer p whenever kicked, one
// call at a time, and merges the clock p answers with.
func (g *ClusterGatekeeper) announcer(p *peerLink) {
	defer g.wg.Done()
	for {
		select {
		case <-g.stop:
			return
		case <-p.kick:
		}
		c := g.shell.Clock()
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		resp, err := p.client.Announce(ctx, &pb.AnnounceRequest{From: uint32(g.cfg.ID), Clock: clockPB(c)})
		cancel()
		if err != nil {
			continue // the next tick retries; answers wait meanwhile
		}
		g.announces.Add(1)
		g.shell.PeerClock(uint32(p.id), clockFromPB(resp.GetClock()))
	}
}

func clockPB(c vclock.Clock) *pb.Clock { return &pb.Clock{Epoch: c.Epoch, Counters: c.Counters} }

func clockFromPB(c *pb.Clock) vclock.Clock {
	return vclock.Clock{Epoch: c.GetEpoch(), Counters: c.GetCounters()}
}

// Announce implements the peer protocol (cluster.proto).
func (g *ClusterGatekeeper) Announce(_ context.Context, req *pb.AnnounceRequest) (*pb.AnnounceResponse, error) {
	if err := g.alive(); err != nil {
		return nil, err
	}
	if int(req.GetFrom()) >= g.cfg.Gatekeepers || int(req.GetFrom()) == g.cfg.ID {
		return nil, fmt.Errorf("%w: announce from gatekeeper %d", ErrBadRequest, req.GetFrom())
	}
	g.shell.PeerClock(req.GetFrom(), clockFromPB(req.GetClock()))
	return &pb.AnnounceResponse{Clock: clockPB(g.shell.Clock())}, nil
}

// RequestNop implements the shards' request (cluster.proto).
func (g *ClusterGatekeeper) RequestNop(_ context.Context, req *pb.NopRequest) (*pb.NopResponse, error) {
	if err := g.alive(); err != nil {
		return nil, err
	}
	if int(req.GetShard()) >= g.cfg.Shards {
		return nil, fmt.Errorf("%w: NOP for shard %d", ErrBadRequest, req.GetShard())
	}
	g.shell.RequestNop(req.GetShard(), clockFromPB(req.GetClock()), false)
	return &pb.NopResponse{}, nil
}

// stable waits until every peer has merged s (a stamp of this gatekeeper).
func (g *ClusterGatekeeper) stable(ctx context.Context, s vclock.Stamp) error {
	ch := make(chan struct{})
	g.shell.Answer(s, func() { close(ch) })
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err() // the hold is released later and finds no one
	case <-g.stop:
		return g.check()
	}
}

// stampStable takes a fresh stamp and waits until it is stable.
func (g *ClusterGatekeeper) stampStable(ctx context.Context) (vclock.Stamp, error) {
	var s vclock.Stamp
	g.shell.Stamp(func(st vclock.Stamp) { s = st }) // at once: no group to sync with
	return s, g.stable(ctx, s)
}

// Begin implements API: the snapshot is answered once stable, so reads at it
// through any gatekeeper are in real-time order.
func (g *ClusterGatekeeper) Begin(ctx context.Context) (Snapshot, error) {
	if err := g.check(); err != nil {
		return Snapshot{}, err
	}
	s, err := g.stampStable(ctx)
	if err != nil {
		return Snapshot{}, err
	}
	if err := g.leaseOK(); err != nil {
		return Snapshot{}, err
	}
	return encodeSnapshot(s), nil
}

// snapshot resolves a snapshot token (empty: a fresh stable stamp).
func (g *ClusterGatekeeper) snapshot(ctx context.Context, snap *Snapshot) (vclock.Stamp, error) {
	if snap == nil || snap.Token == "" {
		return g.stampStable(ctx)
	}
	s, err := decodeSnapshot(*snap, g.cfg.Gatekeepers)
	if err != nil {
		return s, err
	}
	if s.Clock.Epoch != g.cfg.Epoch || len(s.Clock.Counters) != g.cfg.Gatekeepers {
		return s, fmt.Errorf("%w: the snapshot is from another epoch of the cluster", ErrSnapshotTooOld)
	}
	return s, nil
}

// heldSnapshot resolves a snapshot (as snapshot) and holds it in flight
// until release, so the shards keep its versions.
func (g *ClusterGatekeeper) heldSnapshot(ctx context.Context, snap *Snapshot) (vclock.Stamp, func(), error) {
	s, err := g.snapshot(ctx, snap)
	if err != nil {
		return s, nil, err
	}
	release, err := g.holdRead(s)
	return s, release, err
}

func (g *ClusterGatekeeper) shardOf(h string) int { return int(g.place.Dir().ShardOf(h)) }

// readVertex resolves ref at s and reads the vertex (req says what of it).
func (g *ClusterGatekeeper) readVertex(ctx context.Context, s vclock.Stamp, ref VertexRef, req *pb.ReadRequest) (
	h string, aliasRead *txn.Read, resp *pb.ReadResponse, err error) {
	if err := txn.ValidName("vertex", ref.Name, txn.HandleLenMax); err != nil {
		return "", nil, nil, err
	}
	stamp := txn.EncodeStamp(s)
	h = ref.Name
	if ref.Alias {
		a, err := g.readFollowing(ctx, &pb.ReadRequest{Stamp: stamp, Name: ref.Name, Alias: true})
		if err != nil {
			return "", nil, nil, err
		}
		h, aliasRead = a.GetHandle(), &txn.Read{Vertex: ref.Name, Alias: true, Version: a.GetVersion()}
		if h == "" {
			return "", aliasRead, nil, nil
		}
	}
	req.Stamp, req.Name = stamp, h
	if resp, err = g.readFollowing(ctx, req); err != nil {
		return "", nil, nil, err
	}
	return h, aliasRead, resp, nil
}

// readFollowing sends req to the shard of its name by the directory and
// follows the shards' forwarding answers (a unit that moved).
func (g *ClusterGatekeeper) readFollowing(ctx context.Context, req *pb.ReadRequest) (*pb.ReadResponse, error) {
	sh := g.shardOf(req.GetName())
	for range forwardsMax {
		resp, err := g.shards[sh].client.Read(ctx, req)
		g.shards[sh].noteRead(err)
		if err != nil {
			return nil, fromShard(err)
		}
		if !resp.GetMoved() {
			if err := g.leaseOK(); err != nil {
				return nil, err
			}
			return resp, nil
		}
		if sh, err = g.forwardTo(resp.GetMovedTo()); err != nil {
			return nil, err
		}
	}
	return nil, fmt.Errorf("engine: %q forwarded more than %d times", req.GetName(), forwardsMax)
}

// forwardTo checks a shard's forwarding answer and counts it.
func (g *ClusterGatekeeper) forwardTo(to uint32) (int, error) {
	if int(to) >= len(g.shards) {
		return 0, fmt.Errorf("engine: a shard forwarded a read to shard %d of %d", to, len(g.shards))
	}
	g.forwards.Add(1)
	return int(to), nil
}

// fromShard classifies a shard's error for the front end.
func fromShard(err error) error {
	return fmt.Errorf("%w: shard: %v", ErrOverloaded, err) // retryable: the client tries again
}

// GetVertex implements API.
func (g *ClusterGatekeeper) GetVertex(ctx context.Context, snap Snapshot, ref VertexRef, opts ReadOptions) (*Vertex, error) {
	if err := g.check(); err != nil {
		return nil, err
	}
	s, release, err := g.heldSnapshot(ctx, &snap)
	if err != nil {
		return nil, err
	}
	defer release()
	max := opts.EdgesMax
	if max <= 0 {
		max = EdgesMaxDefault
	}
	h, aliasRead, r, err := g.readVertex(ctx, s, ref, &pb.ReadRequest{Props: opts.Props, Edges: opts.Edges,
		Aliases: opts.Aliases, EdgesMax: uint32(max)})
	if err == nil {
		err = g.leaseOK() // a read answered only inside the lease (an alias that resolved to nothing included)
	}
	if err != nil {
		return nil, err
	}
	out := &Vertex{Handle: h, AliasRead: aliasRead}
	if r == nil {
		return out, nil
	}
	if err := vertexFromPB(out, r); err != nil {
		return nil, err
	}
	return out, nil
}

// vertexFromPB fills out (its Handle set) from a shard's answer to a read
// of that vertex.
func vertexFromPB(out *Vertex, r *pb.ReadResponse) error {
	h := out.Handle
	out.Read = txn.Read{Vertex: h, Version: r.GetVersion()}
	out.Exists, out.EdgesTruncated, out.Aliases = r.GetExists(), r.GetEdgesTruncated(), r.GetAliases()
	var err error
	if out.Props, err = propsFromPB(r.GetProps()); err != nil {
		return err
	}
	for _, e := range r.GetEdges() {
		ed, err := edgeFromPB(h, e)
		if err != nil {
			return err
		}
		out.Edges = append(out.Edges, ed)
	}
	return nil
}

// GetEdge implements API.
func (g *ClusterGatekeeper) GetEdge(ctx context.Context, snap Snapshot, src VertexRef, edge string) (*Edge, error) {
	if err := g.check(); err != nil {
		return nil, err
	}
	if err := txn.ValidName("edge", edge, txn.HandleLenMax); err != nil {
		return nil, err
	}
	s, release, err := g.heldSnapshot(ctx, &snap)
	if err != nil {
		return nil, err
	}
	defer release()
	h, aliasRead, r, err := g.readVertex(ctx, s, src, &pb.ReadRequest{Edge: edge})
	if err == nil {
		err = g.leaseOK() // a read answered only inside the lease (an alias that resolved to nothing included)
	}
	if err != nil {
		return nil, err
	}
	out := &Edge{Handle: edge, Src: h, AliasRead: aliasRead}
	if r == nil {
		return out, nil
	}
	out.Read = txn.Read{Vertex: h, Version: r.GetVersion()}
	if r.GetExists() && len(r.GetEdges()) == 1 {
		got, err := edgeFromPB(h, r.GetEdges()[0])
		if err != nil {
			return nil, err
		}
		got.Read, got.AliasRead = out.Read, aliasRead
		return &got, nil
	}
	return out, nil
}

func propsFromPB(ps []*pb.Prop) (map[string]value.Value, error) {
	if len(ps) == 0 {
		return nil, nil
	}
	m := make(map[string]value.Value, len(ps))
	for _, p := range ps {
		v, rest, err := value.Decode(p.GetValue())
		if err != nil || len(rest) != 0 {
			return nil, fmt.Errorf("engine: a shard sent a malformed value for %q", p.GetKey())
		}
		m[p.GetKey()] = v
	}
	return m, nil
}

func edgeFromPB(src string, e *pb.Edge) (Edge, error) {
	props, err := propsFromPB(e.GetProps())
	return Edge{Handle: e.GetHandle(), Src: src, Dst: e.GetDst(), Exists: true, Props: props}, err
}

// Commit implements API: stamp, execute on the shared store, order after
// the last accesses (Kronos when concurrent), commit durably, hand the
// writes to the shards, and answer once they are handed and the stamp is
// stable.
func (g *ClusterGatekeeper) Commit(ctx context.Context, reads []txn.Read, ops []txn.Op) (*CommitResult, error) {
	if err := g.check(); err != nil {
		return nil, err
	}
	if len(ops) == 0 {
		return nil, fmt.Errorf("%w: a commit needs at least one operation (read-only transactions need no commit)", ErrBadRequest)
	}
	if !g.enterCommit() {
		return nil, fmt.Errorf("%w: the gatekeeper is leaving its configuration epoch", ErrOverloaded)
	}
	// Drain waits for the outcome on the store, not for the answer (which
	// may wait for peers' clocks).
	leave := sync.OnceFunc(g.inflight.Done)
	defer leave()
	for attempt := 0; ; attempt++ {
		res, err := g.commitOnce(ctx, reads, ops, leave)
		if errors.Is(err, gatekeeper.ErrUnitMoved) && attempt < commitMovedRetries {
			// Routed by a stale directory: nothing was written.
			if rerr := g.reloadDirectory(); rerr != nil {
				return nil, mapStoreErr(rerr)
			}
			continue
		}
		return res, err
	}
}

// commitMovedRetries bounds how often Commit re-executes a transaction
// that routed a unit by a directory older than its move.
const commitMovedRetries = 3

// commitOnce is one attempt of Commit, run by the shell; it calls leave
// once the outcome on the store is known, if it committed.
func (g *ClusterGatekeeper) commitOnce(ctx context.Context, reads []txn.Read, ops []txn.Op, leave func()) (*CommitResult, error) {
	type outcome struct {
		res *txn.Result
		ts  vclock.Stamp
		err error
	}
	ch := make(chan outcome, 1)
	var durable atomic.Bool
	g.shell.Commit(ctx, reads, ops, func(vclock.Stamp) { durable.Store(true); leave() },
		func(res *txn.Result, ts vclock.Stamp, err error) { ch <- outcome{res, ts, err} })
	var o outcome
	select {
	case o = <-ch:
	case <-g.stop:
		select {
		case o = <-ch:
		default:
			if !durable.Load() {
				return nil, g.check()
			}
			// Durable on the store: a new epoch's shards rebuild it. The
			// client cannot know whether it committed: unavailable.
			return nil, fmt.Errorf("%w: the gatekeeper stopped after the commit was durable: %v", ErrClosed, g.Err())
		}
	}
	if errors.Is(o.err, gatekeeper.ErrUnacknowledged) {
		// Durable, but acknowledged only inside the lease (the shell
		// asked): an answer sent now might follow a new epoch's writes.
		// The outcome is unknown to the client: unavailable.
		return nil, fmt.Errorf("%w: %v", ErrClosed, o.err)
	}
	if o.err != nil {
		if !o.ts.IsZero() {
			g.aborts.Add(1)
		}
		return nil, mapClusterErr(o.err)
	}
	g.commits.Add(1)
	return &CommitResult{Handles: o.res.Handles, Snapshot: encodeSnapshot(o.ts)}, nil
}

// mapClusterErr maps a shell's error for the front end: ErrUnitMoved as it
// is (Commit retries it), the fence's and the core's to the API's, the
// store's by mapStoreErr.
func mapClusterErr(err error) error {
	switch {
	case errors.Is(err, gatekeeper.ErrUnitMoved):
		return err
	case errors.Is(err, gatekeeper.ErrFenced):
		return fmt.Errorf("%w: %v", ErrFenced, err)
	case errors.Is(err, gatekeeper.ErrOverloaded):
		return fmt.Errorf("%w: %v", ErrOverloaded, err)
	}
	return mapStoreErr(err)
}

// Run implements API: one-vertex programs run on their vertex's shard; the
// others are coordinated here, their batches hopping between the shard
// processes; whole-snapshot analyses run here over the shards' copies
// (Scan).
func (g *ClusterGatekeeper) Run(ctx context.Context, program string, params json.RawMessage, at *Snapshot) (json.RawMessage, error) {
	if err := g.check(); err != nil {
		return nil, err
	}
	isProg, params, err := lookupProgram(g.reg, program, params)
	if err != nil {
		return nil, err
	}
	if !isProg {
		g.programs.Add(1)
		s, release, err := g.heldSnapshot(ctx, at)
		if err != nil {
			return nil, err
		}
		defer release()
		res, err := g.analyze(ctx, program, params, s)
		if err != nil {
			return nil, mapProgErr(err)
		}
		if err := g.leaseOK(); err != nil {
			return nil, err
		}
		return encodeResult(program, res)
	}
	comp, err := g.reg.Compile(program, params)
	if err != nil {
		return nil, mapProgErr(err)
	}
	g.programs.Add(1)
	s, release, err := g.heldSnapshot(ctx, at)
	if err != nil {
		return nil, err
	}
	defer release()
	if !nodeprog.IsLocal(comp) {
		res, err := g.runProgram(ctx, program, comp, params, s)
		if err != nil {
			return nil, mapProgErr(err)
		}
		if err := g.leaseOK(); err != nil {
			return nil, err
		}
		return encodeResult(program, res)
	}
	h, err := nodeprog.LocalStart(comp)
	if err != nil {
		return nil, mapProgErr(err)
	}
	req := &pb.RunRequest{Stamp: txn.EncodeStamp(s), Program: program, ParamsJson: string(params)}
	sh := g.shardOf(h.To)
	for range forwardsMax {
		resp, err := g.shards[sh].client.Run(ctx, req)
		g.shards[sh].noteRead(err)
		if err != nil {
			return nil, fromShard(err)
		}
		if !resp.GetMoved() {
			if err := g.leaseOK(); err != nil {
				return nil, err
			}
			return json.RawMessage(resp.GetResultJson()), nil
		}
		if sh, err = g.forwardTo(resp.GetMovedTo()); err != nil {
			return nil, err
		}
	}
	return nil, fmt.Errorf("engine: program start %q forwarded more than %d times", h.To, forwardsMax)
}

// runProgram coordinates a program at stamp s in the shell: its start
// batches go to their shards (clusterEnv.Batch), the shards' reports come
// back (Report), and the result is gathered there.
func (g *ClusterGatekeeper) runProgram(ctx context.Context, name string, comp nodeprog.Compiled, params json.RawMessage, s vclock.Stamp) (any, error) {
	return awaitProgram(ctx, g.shell, name, comp, params, &s, g.stop, g.check)
}

// Report implements a shard's report on a program batch (cluster.proto).
func (g *ClusterGatekeeper) Report(_ context.Context, req *pb.ReportRequest) (*pb.ReportResponse, error) {
	if err := g.alive(); err != nil {
		return nil, err
	}
	var hdr struct {
		Prog nodeprog.ProgID `json:"prog"`
	}
	if err := json.Unmarshal(req.GetReport(), &hdr); err != nil {
		return nil, fmt.Errorf("%w: report: %v", ErrBadRequest, err)
	}
	sentTo := make([]nodeprog.Batch, 0, len(req.GetSentTo()))
	for _, sh := range req.GetSentTo() {
		if int(sh) >= g.cfg.Shards {
			return nil, fmt.Errorf("%w: report names shard %d", ErrBadRequest, sh)
		}
		sentTo = append(sentTo, nodeprog.Batch{Prog: hdr.Prog, Shard: int(sh)})
	}
	g.shell.ReportData(hdr.Prog, req.GetReport(), sentTo)
	return &pb.ReportResponse{}, nil
}

// Programs implements API: the node programs (whole-snapshot analyses do
// not run on a cluster yet).
func (g *ClusterGatekeeper) Programs() []ProgramInfo { return programsOf(g.reg) }

func programsOf(reg *nodeprog.Registry) []ProgramInfo {
	var out []ProgramInfo
	for _, n := range reg.Programs() {
		out = append(out, programInfo(reg, n, "program"))
	}
	return out
}

// programInfo describes the registered program or analysis name.
func programInfo(reg *nodeprog.Registry, name, kind string) ProgramInfo {
	ps := []ProgramParam{}
	for _, p := range reg.Params(name) {
		ps = append(ps, ProgramParam{Name: p.Name, Type: p.Type})
	}
	return ProgramInfo{Name: name, Description: programDoc(name), Kind: kind, Params: ps}
}

// Status implements API: this gatekeeper's counters, and the graph's size
// summed over the shard processes' (each as of its last round).
func (g *ClusterGatekeeper) Status(ctx context.Context) (*Status, error) {
	if err := g.check(); err != nil {
		return nil, err
	}
	st := &Status{Gatekeepers: g.cfg.Gatekeepers, Shards: g.cfg.Shards, Epoch: g.cfg.Epoch,
		Commits: g.commits.Load(), Aborts: g.aborts.Load(), Programs: g.programs.Load()}
	st.KronosCalls, _ = g.cfg.Oracle.(*order.Counting).Calls()
	for i, l := range g.shards {
		r, err := l.client.Status(ctx, &pb.StatusRequest{})
		if err != nil {
			return nil, fmt.Errorf("%w: status of shard %d: %v", ErrOverloaded, i, err)
		}
		st.Vertices += int64(r.GetVertices())
		st.Edges += int64(r.GetEdges())
	}
	return st, nil
}
