package engine

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	"google.golang.org/grpc"

	"github.com/weft-db/weft/internal/kronos"
	"github.com/weft-db/weft/internal/order"
	"github.com/weft-db/weft/internal/store"
)

// LocalClusterConfig shapes a cluster whose roles run in this process, each
// behind its own gRPC server on loopback: the cluster protocol is exercised
// whole, without processes (tests and benchmarks).
type LocalClusterConfig struct {
	Gatekeepers, Shards int
	// Epoch of the configuration [1].
	Epoch uint64
	// Store is shared by every role [nil: an in-memory Pebble store, closed
	// with the cluster].
	Store store.Store
	// Oracle is the Kronos every role asks [nil: an in-process Kronos,
	// order.Local].
	Oracle order.Oracle
	// AnnounceEvery is the gatekeepers' τ [GatekeeperConfig's default].
	AnnounceEvery time.Duration
	// HistoryRetention and GCEvery are the gatekeepers' [GatekeeperConfig's
	// defaults].
	HistoryRetention, GCEvery time.Duration
	Log                       *slog.Logger
}

// LocalCluster is a running LocalClusterConfig.
type LocalCluster struct {
	Gatekeepers []*ClusterGatekeeper
	Shards      []*ShardServer
	// Oracle is the Kronos the roles ask (an *order.Local unless given).
	Oracle  order.Oracle
	closers []func() error // in reverse order of start
}

// StartLocalCluster starts the shards, then the gatekeepers.
func StartLocalCluster(cfg LocalClusterConfig) (c *LocalCluster, err error) {
	if cfg.Gatekeepers < 1 || cfg.Shards < 1 {
		return nil, fmt.Errorf("engine: a cluster of %d gatekeepers and %d shards", cfg.Gatekeepers, cfg.Shards)
	}
	if cfg.Epoch == 0 {
		cfg.Epoch = 1
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	c = &LocalCluster{Oracle: cfg.Oracle}
	defer func() {
		if err != nil {
			c.Close()
		}
	}()
	if cfg.Store == nil {
		ecfg := DefaultConfig()
		ecfg.Sync, ecfg.Shards = false, cfg.Shards
		st, err := openStore(ecfg, cfg.Log)
		if err != nil {
			return nil, err
		}
		cfg.Store = st
		c.closers = append(c.closers, st.Close)
	}
	if c.Oracle == nil {
		if c.Oracle, err = order.NewLocal(kronos.DefaultConfig()); err != nil {
			return nil, err
		}
	}
	listen := func() (net.Listener, *grpc.Server, error) {
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, nil, err
		}
		srv := grpc.NewServer(ClusterServerOptions()...)
		c.closers = append(c.closers, func() error { srv.Stop(); return nil })
		return lis, srv, nil
	}
	gkLis, gkSrv := make([]net.Listener, cfg.Gatekeepers), make([]*grpc.Server, cfg.Gatekeepers)
	shLis, shSrv := make([]net.Listener, cfg.Shards), make([]*grpc.Server, cfg.Shards)
	var gkAddrs, shardAddrs []string
	for i := range gkLis {
		if gkLis[i], gkSrv[i], err = listen(); err != nil {
			return nil, err
		}
		gkAddrs = append(gkAddrs, gkLis[i].Addr().String())
	}
	for i := range shLis {
		if shLis[i], shSrv[i], err = listen(); err != nil {
			return nil, err
		}
		shardAddrs = append(shardAddrs, shLis[i].Addr().String())
	}
	for i := range cfg.Shards {
		links, err := DialShardLinks(i, gkAddrs, shardAddrs)
		if err != nil {
			return nil, err
		}
		c.closers = append(c.closers, func() error { links.Close(); return nil })
		s, err := NewShardServer(ShardConfig{ID: i, Shards: cfg.Shards, Gatekeepers: cfg.Gatekeepers, Epoch: cfg.Epoch,
			Store: cfg.Store, Oracle: c.Oracle, Log: cfg.Log, RequestNop: links.RequestNop, Programs: links})
		if err != nil {
			return nil, err
		}
		c.closers = append(c.closers, s.Close)
		s.Register(shSrv[i])
		go shSrv[i].Serve(shLis[i])
		c.Shards = append(c.Shards, s)
	}
	for i := range cfg.Gatekeepers {
		g, err := NewClusterGatekeeper(GatekeeperConfig{ID: i, Gatekeepers: cfg.Gatekeepers, Shards: cfg.Shards,
			Epoch: cfg.Epoch, Store: cfg.Store, Oracle: c.Oracle, ShardAddrs: shardAddrs, PeerAddrs: gkAddrs,
			AnnounceEvery: cfg.AnnounceEvery, HistoryRetention: cfg.HistoryRetention, GCEvery: cfg.GCEvery, Log: cfg.Log})
		if err != nil {
			return nil, err
		}
		c.closers = append(c.closers, g.Close)
		g.Register(gkSrv[i])
		go gkSrv[i].Serve(gkLis[i])
		c.Gatekeepers = append(c.Gatekeepers, g)
	}
	return c, nil
}

// Close stops every role (gatekeepers first) and the store it made.
func (c *LocalCluster) Close() error {
	var errs []error
	for i := len(c.closers) - 1; i >= 0; i-- {
		errs = append(errs, c.closers[i]())
	}
	c.closers = nil
	return errors.Join(errs...)
}

// Announces is the number of clock announcements the gatekeepers made
// (answered by a peer).
func (c *LocalCluster) Announces() uint64 {
	var n uint64
	for _, g := range c.Gatekeepers {
		n += g.announces.Load()
	}
	return n
}
