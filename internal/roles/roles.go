package roles

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/weft-db/weft/internal/coord"
	"github.com/weft-db/weft/internal/engine"
	"github.com/weft-db/weft/internal/order"
	"github.com/weft-db/weft/internal/store"
	pb "github.com/weft-db/weft/internal/wire/clusterpb"
	"github.com/weft-db/weft/internal/wire/coordclient"
	coordpb "github.com/weft-db/weft/internal/wire/coordpb"
)

// Config is what a gatekeeper or shard process brings to the cluster; the
// rest (its slot, the other members' addresses, the epoch) comes from the
// coordinator.
type Config struct {
	// Coord reaches the coordinator group.
	Coord *coordclient.Client
	// Name labels the process (e.g. "shard-2"); Listener serves the
	// cluster protocol (internal/wire/clusterpb) on Listener.Addr() across
	// epochs.
	Name     string
	Listener net.Listener
	// EpochBase is added to the coordinator's epoch to make the vector
	// clocks' epoch: every process of the cluster is given the same, larger
	// than any epoch the store has seen (weft cluster up: the time it ran).
	EpochBase uint64
	// Store is the shared backing store, Oracle the Kronos group.
	Store  store.Store
	Oracle order.Oracle
	// Heartbeat is the interval of heartbeats [100ms]; DrainTimeout bounds
	// a gatekeeper's wait for its in-flight commits when it leaves an epoch
	// [800ms]: past it the member acknowledges anyway, and the store's
	// epoch fence refuses whatever of the old epoch has not committed.
	Heartbeat, DrainTimeout time.Duration
	// HTTPAddress, for a shard, is where its /healthz and /metrics are
	// served (shown in the coordinator's status); optional.
	HTTPAddress string
	// Stats, if set, receives the member's gauges at every heartbeat
	// (for /metrics).
	Stats *Stats
	// UnreachableAfter is how long a peer the member needs (a gatekeeper's
	// shard) must fail it, while its lease holds, before the member reports
	// the peer unreachable to the coordinator [DefaultUnreachableAfter].
	UnreachableAfter time.Duration
	// DialVia, for a gatekeeper, maps shard addresses (as the coordinator
	// lists them) to the addresses it dials instead — a proxy in front of
	// each shard, per gatekeeper (fault tests cut one gatekeeper from one
	// shard this way). Optional.
	DialVia map[string]string
	// PlantIgnoreLease is a planted bug for fault tests only: the member
	// serves on after its lease lapsed (coord.LeaseState.PlantIgnoreExpiry).
	PlantIgnoreLease bool
	Log              *slog.Logger
}

// Stats holds a member's latest gauges (the load it reports with its
// heartbeats: serving, slot, epoch and the engine's own).
type Stats struct {
	v atomic.Pointer[map[string]float64]
}

// Latest returns the latest gauges (nil before the first heartbeat).
func (s *Stats) Latest() map[string]float64 {
	if p := s.v.Load(); p != nil {
		return *p
	}
	return nil
}

func (s *Stats) set(m map[string]float64) {
	if s != nil {
		s.v.Store(&m)
	}
}

func (c *Config) check() error {
	switch {
	case c.Coord == nil || c.Listener == nil || c.Name == "":
		return errors.New("roles: a member needs the coordinator, a listener and a name")
	case c.EpochBase == 0 || c.Store == nil || c.Oracle == nil:
		return errors.New("roles: a member needs an epoch base, the store and the oracle")
	}
	if c.DrainTimeout <= 0 {
		c.DrainTimeout = 800 * time.Millisecond
	}
	if c.Log == nil {
		c.Log = slog.Default()
	}
	return nil
}

func addrs(eps []*coordpb.Endpoint) []string {
	out := make([]string, len(eps))
	for i, e := range eps {
		out[i] = e.GetAddress()
	}
	return out
}

// waitShards waits until every shard at addrs serves epoch, or timeout.
func waitShards(ctx context.Context, addrs []string, epoch uint64, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for i, a := range addrs {
		conn, err := grpc.NewClient(a, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			return err
		}
		c := pb.NewShardClient(conn)
		for {
			st, err := c.Status(ctx, &pb.StatusRequest{}, grpc.WaitForReady(true))
			if err == nil && st.GetEpoch() == epoch {
				break
			}
			select {
			case <-ctx.Done():
				conn.Close()
				return fmt.Errorf("roles: shard %d at %s does not serve clock epoch %d (last answer: epoch %d, %v)",
					i, a, epoch, st.GetEpoch(), err)
			case <-time.After(20 * time.Millisecond):
			}
		}
		conn.Close()
	}
	return nil
}

// untilDone waits for the member (done) or for the role's gRPC server to
// fail (errs: then the member is cancelled and waited for).
func untilDone(done, errs <-chan error, cancel context.CancelFunc, role string) error {
	select {
	case err := <-done:
		return err
	case err := <-errs:
		cancel()
		<-done
		return fmt.Errorf("roles: serving the %s protocol: %w", role, err)
	}
}

// serve runs srv on l until ctx ends.
func serve(ctx context.Context, srv *grpc.Server, l net.Listener) chan error {
	errs := make(chan error, 1)
	go func() { errs <- srv.Serve(l) }()
	go func() { <-ctx.Done(); srv.Stop() }()
	return errs
}

// RunShard runs a shard process: it registers with the coordinator (as a
// backup until it holds a slot) and, in every active epoch in which it holds
// shard slot i, rebuilds partition i from the store and serves it. It
// returns nil when ctx ends, or the reason it had to stop (fenced).
func RunShard(ctx context.Context, cfg Config) error {
	if err := cfg.check(); err != nil {
		return err
	}
	log := cfg.Log.With("role", "shard", "name", cfg.Name)
	front := &shardFront{}
	srv := grpc.NewServer(engine.ClusterServerOptions()...)
	pb.RegisterShardServer(srv, front)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := serve(ctx, srv, cfg.Listener)
	build := func(ctx context.Context, conf *coordpb.Config, slot int, epoch uint64, lease *coord.LeaseState) (*epochEngine, error) {
		links, err := engine.DialShardLinks(slot, addrs(conf.GetGatekeepers()), addrs(conf.GetShards()))
		if err != nil {
			return nil, err
		}
		s, err := engine.NewShardServer(engine.ShardConfig{ID: slot, Shards: len(conf.GetShards()),
			Gatekeepers: len(conf.GetGatekeepers()), Epoch: epoch, Store: cfg.Store, Oracle: cfg.Oracle,
			RequestNop: links.RequestNop, Programs: links, Log: log})
		if err != nil {
			links.Close()
			return nil, err
		}
		return &epochEngine{
			install: func() { front.setLeased(s, lease) },
			load:    shardLoad(s),
			err:     s.Err,
			stop: func() error {
				front.setLeased(nil, nil)
				err := s.Close()
				links.Close()
				if err != nil {
					log.Warn("the epoch's shard had stopped", "err", err)
				}
				return nil
			},
		}, nil
	}
	done := make(chan error, 1)
	go func() {
		// A shard whose engine stopped on an error leaves its slot at once.
		done <- runMember(ctx, cfg.Coord, coord.MemberConfig{Name: cfg.Name, Role: coordpb.Role_SHARD,
			Address: cfg.Listener.Addr().String(), HTTPAddress: cfg.HTTPAddress, Interval: cfg.Heartbeat},
			cfg.EpochBase, build, 0, cfg.Stats, cfg.leaseConfig(), log)
	}()
	return untilDone(done, errs, cancel, "shard")
}

// Gatekeeper is a gatekeeper process's engine across epochs: API serves the
// Weft API (an engine.Switch: between epochs calls fail with a retryable
// error).
type Gatekeeper struct {
	API *engine.Switch
	cfg Config
	// AnnounceEvery is τ for every epoch's gatekeeper.
	AnnounceEvery time.Duration
}

// NewGatekeeper returns a gatekeeper whose API can be served before Run.
func NewGatekeeper(cfg Config, announceEvery time.Duration) (*Gatekeeper, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	return &Gatekeeper{API: engine.NewSwitch("the gatekeeper holds no slot in an active configuration epoch yet"),
		cfg: cfg, AnnounceEvery: announceEvery}, nil
}

// Run registers the gatekeeper (apiAddr and httpAddr are its Weft API's
// addresses, shown to clients through the coordinator) and, in every active
// epoch in which it holds gatekeeper slot i, serves as gatekeeper i. It
// returns nil when ctx ends, or the reason it had to stop (fenced, or its
// in-flight commits did not drain in time).
func (g *Gatekeeper) Run(ctx context.Context, apiAddr, httpAddr string) error {
	cfg := g.cfg
	log := cfg.Log.With("role", "gatekeeper", "name", cfg.Name)
	front := &gatekeeperFront{}
	srv := grpc.NewServer(engine.ClusterServerOptions()...)
	pb.RegisterGatekeeperServer(srv, front)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := serve(ctx, srv, cfg.Listener)
	build := func(ctx context.Context, conf *coordpb.Config, slot int, epoch uint64, lease *coord.LeaseState) (*epochEngine, error) {
		// The FIFO streams open only to shards serving this epoch (a
		// stream refused by a shard still rebuilding would stop the
		// gatekeeper for the whole epoch).
		shardAddrs := dialVia(addrs(conf.GetShards()), cfg.DialVia)
		if err := waitShards(ctx, shardAddrs, epoch, 30*time.Second); err != nil {
			return nil, err
		}
		gk, err := engine.NewClusterGatekeeper(engine.GatekeeperConfig{ID: slot, Gatekeepers: len(conf.GetGatekeepers()),
			Shards: len(conf.GetShards()), Epoch: epoch, Store: cfg.Store, Oracle: cfg.Oracle,
			ShardAddrs: shardAddrs, PeerAddrs: addrs(conf.GetGatekeepers()), AnnounceEvery: g.AnnounceEvery,
			ConnectTimeout: 5 * time.Second, Lease: leaseErr(lease), Log: log})
		if err != nil {
			return nil, err
		}
		shards := conf.GetShards()
		return &epochEngine{
			install: func() {
				front.set(gk, true)
				g.API.Set(leasedGatekeeper{ClusterGatekeeper: gk, lease: lease})
			},
			load:   gatekeeperLoad(gk),
			err:    gk.Err,
			stalls: func() map[uint64]time.Time { return byMember(gk.ShardStalls(), shards) },
			stop: func() error {
				g.API.Clear(fmt.Sprintf("the gatekeeper is moving to configuration epoch > %d", epoch-cfg.EpochBase))
				// The drain spares commits in flight a needless abort; it
				// is not what keeps an old epoch's commit out of the new
				// epoch's shards (the store's epoch fence does), so one
				// that does not finish in time (say, waiting for a commit
				// lock held by a stopped process) is left to the fence.
				dctx, dcancel := context.WithTimeout(context.Background(), cfg.DrainTimeout)
				if err := gk.Drain(dctx); err != nil {
					log.Warn("leaving the epoch with commits in flight: the epoch fence decides them", "err", err)
				}
				dcancel()
				front.set(nil, false)
				gk.Close()
				return nil
			},
		}, nil
	}
	done := make(chan error, 1)
	go func() {
		// A gatekeeper's engine stops when a FIFO stream breaks (a shard
		// died): the new epoch that replaces the shard rebuilds it, so it
		// waits for one before leaving its slot.
		done <- runMember(ctx, cfg.Coord, coord.MemberConfig{Name: cfg.Name, Role: coordpb.Role_GATEKEEPER,
			Address: cfg.Listener.Addr().String(), APIAddress: apiAddr, HTTPAddress: httpAddr, Interval: cfg.Heartbeat},
			cfg.EpochBase, build, 5*time.Second, cfg.Stats, cfg.leaseConfig(), log)
	}()
	return untilDone(done, errs, cancel, "gatekeeper")
}

// rate turns a counter into a per-second rate between calls.
type rate struct {
	last uint64
	at   time.Time
}

func (r *rate) per(now time.Time, n uint64) float64 {
	d := now.Sub(r.at).Seconds()
	v := 0.0
	if !r.at.IsZero() && d > 0 && n >= r.last {
		v = float64(n-r.last) / d
	}
	r.last, r.at = n, now
	return v
}

// gatekeeperLoad reports commits, aborts and programs per second.
func gatekeeperLoad(gk *engine.ClusterGatekeeper) func() map[string]float64 {
	var mu sync.Mutex
	var c, a, p rate
	return func() map[string]float64 {
		mu.Lock()
		defer mu.Unlock()
		commits, aborts, programs := gk.Counters()
		now := time.Now()
		return map[string]float64{"commits_per_sec": c.per(now, commits), "aborts_per_sec": a.per(now, aborts),
			"programs_per_sec": p.per(now, programs)}
	}
}

// shardLoad reports the partition's size and transactions applied per
// second.
func shardLoad(s *engine.ShardServer) func() map[string]float64 {
	var mu sync.Mutex
	var applied rate
	return func() map[string]float64 {
		mu.Lock()
		defer mu.Unlock()
		st, err := s.Status(context.Background(), &pb.StatusRequest{})
		if err != nil {
			return nil
		}
		return map[string]float64{"vertices": float64(st.GetVertices()), "edges": float64(st.GetEdges()),
			"versions": float64(st.GetVersions()), "applied_per_sec": applied.per(time.Now(), st.GetApplied())}
	}
}

// byMember keys a gatekeeper's shard stalls by the shards' member ids.
func byMember(stalls []time.Time, shards []*coordpb.Endpoint) map[uint64]time.Time {
	out := make(map[uint64]time.Time, len(stalls))
	for i, t := range stalls {
		if i < len(shards) && shards[i].GetMember() != 0 {
			out[shards[i].GetMember()] = t
		}
	}
	return out
}

// dialVia maps each address through via (an address not in it is dialled
// as it is).
func dialVia(as []string, via map[string]string) []string {
	for i, a := range as {
		if v, ok := via[a]; ok {
			as[i] = v
		}
	}
	return as
}
