package roles

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"google.golang.org/grpc"

	kc "github.com/weft-db/weft/client/kronos"
	"github.com/weft-db/weft/internal/api"
	"github.com/weft-db/weft/internal/engine"
	"github.com/weft-db/weft/internal/opshttp"
	"github.com/weft-db/weft/internal/order"
	"github.com/weft-db/weft/internal/store"
	"github.com/weft-db/weft/internal/wire/coordclient"
)

// ProcessConfig is what a gatekeeper or shard process is given on its
// command line (weft gatekeeper, weft shard): what every process of a
// cluster must agree on, and its own addresses. With Coord the process is
// a member the coordinator gives a slot (Run*, internal/roles' member);
// without, it holds slot ID of a fixed cluster of Gatekeepers and Shards.
type ProcessConfig struct {
	// ID is this process's slot (0-based), Gatekeepers and Shards the
	// cluster's size, GatekeeperAddrs and ShardAddrs every one's cluster
	// protocol address in slot order: the fixed cluster only.
	ID, Gatekeepers, Shards     int
	GatekeeperAddrs, ShardAddrs []string
	// Epoch is the cluster's configuration epoch (the same on every
	// process; larger after a restart); with Coord, the base the
	// coordinator's epochs are added to. Required.
	Epoch uint64
	// Listen is the cluster protocol's address (internal/wire/clusterpb).
	Listen string
	// Kronos and Coord are the Kronos and coordinator replicas' addresses.
	Kronos, Coord []string
	// Name labels the process in the coordinator's status (default:
	// role-Listen); HTTPAddr is a shard's /healthz and /metrics ("": off).
	Name, HTTPAddr string
	// Store is the store every process of the cluster shares.
	Store engine.Config
	// UnreachableAfter, DialVia and PlantIgnoreLease are Config's.
	UnreachableAfter time.Duration
	DialVia          map[string]string
	PlantIgnoreLease bool
	// Out receives the ready lines (a launcher waits for " serving on ").
	Out io.Writer
}

// GatekeeperFront is what a gatekeeper process serves to clients: the
// Weft API, its clock's announce period τ, and Dgraph's face.
type GatekeeperFront struct {
	API           api.Config
	AnnounceEvery time.Duration
	Dgraph        DgraphConfig
}

// Check validates pc for role ("gatekeeper" or "shard"), fills in the
// defaults, and sizes the store for a fixed cluster.
func (pc *ProcessConfig) Check(role string) error {
	switch {
	case pc.Epoch == 0:
		return fmt.Errorf("%s: --epoch is required (the same on every process; larger after a restart)", role)
	case len(pc.Coord) > 0 && pc.Store.PostgresURL == "":
		return fmt.Errorf("%s: --postgres-url is required (the store every process of the cluster shares)", role)
	case len(pc.Coord) > 0:
		if pc.Name == "" {
			pc.Name = role + "-" + pc.Listen
		}
		return nil
	case len(pc.GatekeeperAddrs) != pc.Gatekeepers:
		return fmt.Errorf("%s: --gatekeeper-addrs has %d addresses for --gatekeepers %d", role, len(pc.GatekeeperAddrs), pc.Gatekeepers)
	case len(pc.ShardAddrs) != pc.Shards:
		return fmt.Errorf("%s: --shard-addrs has %d addresses for --shards %d", role, len(pc.ShardAddrs), pc.Shards)
	case pc.Store.PostgresURL == "":
		return fmt.Errorf("%s: --postgres-url is required (the store every process of the cluster shares)", role)
	}
	pc.Store.Shards, pc.Store.Gatekeepers = pc.Shards, pc.Gatekeepers
	return nil
}

// open opens the shared store and dials the Kronos group; done closes both.
func (pc *ProcessConfig) open() (st store.Store, oracle order.Remote, done func(), err error) {
	if st, err = engine.OpenStore(pc.Store, slog.Default()); err != nil {
		return nil, order.Remote{}, nil, err
	}
	c, err := kc.Dial(pc.Kronos)
	if err != nil {
		st.Close()
		return nil, order.Remote{}, nil, err
	}
	return st, order.Remote{C: c}, func() { c.Close(); st.Close() }, nil
}

// RunShardProcess runs a shard process until SIGINT/SIGTERM (or, as a
// member, until it must stop: fenced, a backup holds its slot).
func RunShardProcess(ctx context.Context, pc ProcessConfig) error {
	st, oracle, done, err := pc.open()
	if err != nil {
		return err
	}
	defer done()
	if len(pc.Coord) > 0 {
		return runMemberProcess(ctx, &pc, st, oracle, nil)
	}
	links, err := engine.DialShardLinks(pc.ID, pc.GatekeeperAddrs, pc.ShardAddrs)
	if err != nil {
		return err
	}
	defer links.Close()
	s, err := engine.NewShardServer(engine.ShardConfig{ID: pc.ID, Shards: pc.Shards, Gatekeepers: pc.Gatekeepers,
		Epoch: pc.Epoch, Store: st, Oracle: oracle, RequestNop: links.RequestNop, Programs: links, Log: slog.Default()})
	if err != nil {
		return err
	}
	defer s.Close()
	return serveRole(ctx, pc.Out, pc.Listen, fmt.Sprintf("shard %d", pc.ID), s.Register, nil)
}

// RunGatekeeperProcess runs a gatekeeper process serving front until
// SIGINT/SIGTERM (or, as a member, until it must stop).
func RunGatekeeperProcess(ctx context.Context, pc ProcessConfig, front GatekeeperFront) error {
	if err := front.Dgraph.Check(); err != nil {
		return err
	}
	front.API.Logger = slog.Default()
	if err := front.API.Validate(); err != nil {
		return err
	}
	st, oracle, done, err := pc.open()
	if err != nil {
		return err
	}
	defer done()
	if len(pc.Coord) > 0 {
		return runMemberProcess(ctx, &pc, st, oracle, &front)
	}
	return runFixedGatekeeper(ctx, &pc, st, oracle, &front)
}

// runFixedGatekeeper runs slot pc.ID of a fixed cluster's gatekeepers.
func runFixedGatekeeper(ctx context.Context, pc *ProcessConfig, st store.Store, oracle order.Oracle, front *GatekeeperFront) error {
	// The port is taken first; the peer protocol is served once the
	// gatekeeper is built (peers and shards retry meanwhile).
	lis, err := net.Listen("tcp", pc.Listen)
	if err != nil {
		return err
	}
	defer lis.Close()
	gk, err := engine.NewClusterGatekeeper(engine.GatekeeperConfig{ID: pc.ID, Gatekeepers: pc.Gatekeepers, Shards: pc.Shards,
		Epoch: pc.Epoch, Store: st, Oracle: oracle, ShardAddrs: pc.ShardAddrs, PeerAddrs: pc.GatekeeperAddrs,
		AnnounceEvery: front.AnnounceEvery, Log: slog.Default()})
	if err != nil {
		return err
	}
	defer gk.Close()
	srv := grpc.NewServer(engine.ClusterServerOptions()...)
	gk.Register(srv)
	go srv.Serve(lis)
	defer srv.Stop()
	face, err := startAPI(gk, front)
	if err != nil {
		return err
	}
	defer stopAPI(face)
	fmt.Fprintf(pc.Out, "gatekeeper %d serving on %s (Weft gRPC API); HTTP API on %s, cluster protocol on %s\n",
		pc.ID, OrOff(face.GRPCAddr()), OrOff(face.HTTPAddr()), lis.Addr())
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	// Dgraph's face opens its model through the gatekeeper, whose first
	// answers wait for every peer's clock: it starts after the ready line,
	// so that the gatekeepers start together.
	ds, err := front.Dgraph.StartServing(ctx, gk)
	if err != nil {
		if ctx.Err() != nil {
			return nil // stopped while the Dgraph face was opening
		}
		return err
	}
	defer stopDgraph(ds)
	if ds != nil {
		fmt.Fprintf(pc.Out, "gatekeeper %d: %s\n", pc.ID, ds.Describe())
	}
	select {
	case <-ctx.Done():
		return nil
	case err := <-face.Err():
		return err
	case err := <-ds.Errs():
		return fmt.Errorf("gatekeeper: the Dgraph API: %w", err)
	}
}

// startAPI serves the Weft API over db, its web console's DQL editor
// forwarding to the gatekeeper's Dgraph face when it has one.
func startAPI(db engine.API, front *GatekeeperFront) (*api.Server, error) {
	cfg := front.API
	if cfg.DgraphHTTPAddr == "" {
		cfg.DgraphHTTPAddr = front.Dgraph.HTTPAddr
	}
	s, err := api.NewServer(db, cfg)
	if err != nil {
		return nil, err
	}
	if err := s.Start(); err != nil {
		return nil, err
	}
	return s, nil
}

// stopAPI stops the Weft API, letting requests in flight finish for up
// to 5 s.
func stopAPI(s *api.Server) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s.Stop(ctx)
}

// serveRole serves a role's gRPC service on addr until SIGINT/SIGTERM.
func serveRole(ctx context.Context, out io.Writer, addr, name string, register func(*grpc.Server), failed <-chan error) error {
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := grpc.NewServer(engine.ClusterServerOptions()...)
	register(srv)
	errs := make(chan error, 1)
	go func() { errs <- srv.Serve(lis) }()
	fmt.Fprintf(out, "%s serving on %s (cluster protocol)\n", name, lis.Addr())
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	select {
	case <-ctx.Done():
		srv.GracefulStop()
		return nil
	case err := <-errs:
		return err
	case err := <-failed:
		srv.Stop()
		return err
	}
}

// runMemberProcess runs a shard (front nil) or gatekeeper process that registers
// with the coordinator and follows its epochs, until SIGINT/SIGTERM or
// until it must stop (fenced: a backup holds its slot).
func runMemberProcess(ctx context.Context, pc *ProcessConfig, st store.Store, oracle order.Oracle, front *GatekeeperFront) error {
	c, err := coordclient.NewClient(pc.Coord)
	if err != nil {
		return err
	}
	defer c.Close()
	lis, err := net.Listen("tcp", pc.Listen)
	if err != nil {
		return err
	}
	defer lis.Close()
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg := Config{Coord: c, Name: pc.Name, Listener: lis, EpochBase: pc.Epoch, Store: st, Oracle: oracle,
		Log: slog.Default(), Stats: &Stats{}, UnreachableAfter: pc.UnreachableAfter, PlantIgnoreLease: pc.PlantIgnoreLease,
		DialVia: pc.DialVia}
	if pc.PlantIgnoreLease {
		slog.Warn("planted bug: this process serves on after its lease lapsed (--plant-ignore-lease)")
	}
	if front == nil {
		return runMemberShard(ctx, pc, cfg, lis)
	}
	return runMemberGatekeeper(ctx, stop, pc, cfg, lis, front)
}

// runMemberShard serves a member shard's /healthz and /metrics (with
// pc.HTTPAddr) and runs it (RunShard).
func runMemberShard(ctx context.Context, pc *ProcessConfig, cfg Config, lis net.Listener) error {
	if pc.HTTPAddr != "" {
		ops, err := opshttp.Start(pc.HTTPAddr, opshttp.Config{Namespace: "weft_shard", Gauges: cfg.Stats.Latest,
			Healthy: func() (bool, string) {
				if cfg.Stats.Latest()["serving"] == 1 {
					return true, "serving its slot"
				}
				return false, "not serving: a backup, or between configuration epochs"
			}})
		if err != nil {
			return err
		}
		defer ops.Stop()
		cfg.HTTPAddress = ops.Addr()
	}
	fmt.Fprintf(pc.Out, "shard %s serving on %s (cluster protocol); registering with the coordinator at %s\n",
		pc.Name, lis.Addr(), strings.Join(pc.Coord, ","))
	return RunShard(ctx, cfg)
}

// runMemberGatekeeper serves a member gatekeeper's Weft API and Dgraph
// face over its Switch (NewGatekeeper) and runs it; stop ends ctx.
func runMemberGatekeeper(ctx context.Context, stop context.CancelFunc, pc *ProcessConfig, cfg Config, lis net.Listener,
	front *GatekeeperFront) error {
	g, err := NewGatekeeper(cfg, front.AnnounceEvery)
	if err != nil {
		return err
	}
	// The console's cluster view asks the coordinator; its own client
	// keeps those reads apart from registration and heartbeats.
	cc, err := coordclient.NewClient(pc.Coord)
	if err != nil {
		return err
	}
	defer cc.Close()
	var self atomic.Pointer[string]
	fr := *front
	fr.API.Cluster = coordinatedView(cc, &self)
	face, err := startAPI(g.API, &fr)
	if err != nil {
		return err
	}
	defer stopAPI(face)
	selfHTTP := face.HTTPAddr()
	self.Store(&selfHTTP)
	fmt.Fprintf(pc.Out, "gatekeeper %s serving on %s (Weft gRPC API); HTTP API on %s, cluster protocol on %s; registering with the coordinator at %s\n",
		pc.Name, OrOff(face.GRPCAddr()), OrOff(face.HTTPAddr()), lis.Addr(), strings.Join(pc.Coord, ","))
	errs := make(chan error, 1)
	go func() { errs <- g.Run(ctx, face.GRPCAddr(), face.HTTPAddr()) }()
	// Dgraph's face opens its model once the gatekeeper holds a slot in an
	// epoch (the Switch answers); it serves the Switch, so it survives
	// epoch changes as the Weft API does.
	dgErr := make(chan error, 1)
	dgDone := make(chan *DgraphServer, 1)
	go func() {
		ds, err := front.Dgraph.StartServing(ctx, g.API)
		dgDone <- ds
		switch {
		case err != nil:
			if ctx.Err() == nil {
				dgErr <- err
			}
		case ds != nil:
			fmt.Fprintf(pc.Out, "gatekeeper %s: %s\n", pc.Name, ds.Describe())
			if err := <-ds.Errs(); err != nil {
				dgErr <- fmt.Errorf("gatekeeper: the Dgraph API: %w", err)
			}
		}
	}()
	defer func() {
		stop()
		stopDgraph(<-dgDone)
	}()
	select {
	case err := <-errs:
		return err
	case err := <-face.Err():
		stop()
		<-errs
		return err
	case err := <-dgErr:
		stop()
		<-errs
		return err
	}
}
