package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/weft-db/weft/internal/dgraph"
	dgraphapi "github.com/weft-db/weft/internal/dgraph/api"
	"github.com/weft-db/weft/internal/engine"
)

// dgraphFlags are weft serve's (and weft gatekeeper's) flags for Dgraph's
// API (docs/dgraph.md). It is off unless an address is given, so that a
// plain `weft serve` takes no port Dgraph itself might use.
type dgraphFlags struct {
	// cmd names the command in errors ("": serve).
	cmd                string
	httpAddr, grpcAddr string
	secretFile         string
	grootPasswordFile  string
	accessTTL          time.Duration
	refreshTTL         time.Duration
	txnsMax            int
	txnIdle            time.Duration
	placement          string
}

func (d *dgraphFlags) register(f *pflag.FlagSet) {
	def := dgraphapi.DefaultConfig()
	f.StringVar(&d.httpAddr, "dgraph-http", "", `Dgraph's HTTP API (/query, /mutate, /commit, /alter, /login, /admin, /health) on this address, e.g. 127.0.0.1:8080 ("": off)`)
	f.StringVar(&d.grpcAddr, "dgraph-grpc", "", `Dgraph's gRPC API (api.Dgraph, for pydgraph and dgo) on this address, e.g. 127.0.0.1:9080 ("": off)`)
	f.StringVar(&d.secretFile, "acl-secret-file", "", "turns on access control for Dgraph's API: file holding the JWT signing secret (at least 32 bytes)")
	f.StringVar(&d.grootPasswordFile, "acl-groot-password-file", "", `file holding the password the "groot" user gets when first created (default "password", as in Dgraph)`)
	f.DurationVar(&d.accessTTL, "acl-access-ttl", def.ACL.AccessTTL, "lifetime of an access JWT")
	f.DurationVar(&d.refreshTTL, "acl-refresh-ttl", def.ACL.RefreshTTL, "lifetime of a refresh JWT")
	f.IntVar(&d.txnsMax, "dgraph-txns-max", def.TxnsMax, "open Dgraph transactions remembered at once")
	f.DurationVar(&d.txnIdle, "dgraph-txn-idle", def.TxnIdle, "a Dgraph transaction unused this long is forgotten (aborted)")
	f.StringVar(&d.placement, "dgraph-placement", "", `where Dgraph's data lives, chosen when it is first created: "vertex" (a node's data on its vertex) or "predicate" (each predicate's data on one shard); "" opens existing data in its own and creates new data with "vertex"; a placement other than the data's is refused`)
}

// dgraphServer is the running Dgraph face.
type dgraphServer struct {
	grpcAddr, httpAddr string
	acl                bool
	grpc               *grpc.Server
	http               *http.Server
	errc               chan error
}

// start opens the Dgraph model on db and serves its API; nil when off.
func (d *dgraphFlags) start(ctx context.Context, db engine.API) (*dgraphServer, error) {
	if err := d.check(); err != nil || !d.on() {
		return nil, err
	}
	cmd := d.name()
	cfg := dgraphapi.DefaultConfig()
	cfg.TxnsMax, cfg.TxnIdle, cfg.Logger = d.txnsMax, d.txnIdle, slog.Default()
	cfg.ACL.AccessTTL, cfg.ACL.RefreshTTL = d.accessTTL, d.refreshTTL
	if d.secretFile != "" {
		b, err := os.ReadFile(d.secretFile)
		if err != nil {
			return nil, fmt.Errorf("%s: --acl-secret-file: %w", cmd, err)
		}
		cfg.ACL.Secret = []byte(strings.TrimSpace(string(b)))
	}
	if d.grootPasswordFile != "" {
		b, err := os.ReadFile(d.grootPasswordFile)
		if err != nil {
			return nil, fmt.Errorf("%s: --acl-groot-password-file: %w", cmd, err)
		}
		cfg.ACL.GrootPassword = strings.TrimSpace(string(b))
	}
	gcfg := dgraph.DefaultConfig()
	gcfg.Logger, gcfg.Placement = slog.Default(), d.placement
	g, err := dgraph.Open(ctx, db, gcfg)
	if err != nil {
		return nil, err
	}
	srv, err := dgraphapi.New(g, dgraphExecutor(g), cfg)
	if err != nil {
		return nil, err
	}
	if err := srv.Init(ctx); err != nil {
		return nil, fmt.Errorf("%s: creating the groot user: %w", cmd, err)
	}
	ds := &dgraphServer{acl: cfg.ACL.Enabled(), errc: make(chan error, 2)}
	if d.grpcAddr != "" {
		lis, err := net.Listen("tcp", d.grpcAddr)
		if err != nil {
			return nil, fmt.Errorf("%s: --dgraph-grpc: %w", cmd, err)
		}
		ds.grpcAddr = lis.Addr().String()
		ds.grpc = grpc.NewServer(grpc.MaxRecvMsgSize(int(cfg.RequestBytesMax)))
		srv.RegisterGRPC(ds.grpc)
		healthpb.RegisterHealthServer(ds.grpc, health.NewServer())
		go func() { ds.errc <- ds.grpc.Serve(lis) }()
	}
	if d.httpAddr != "" {
		lis, err := net.Listen("tcp", d.httpAddr)
		if err != nil {
			ds.stop(ctx)
			return nil, fmt.Errorf("%s: --dgraph-http: %w", cmd, err)
		}
		ds.httpAddr = lis.Addr().String()
		ds.http = &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
		go func() {
			if err := ds.http.Serve(lis); !errors.Is(err, http.ErrServerClosed) {
				ds.errc <- err
			}
		}()
	}
	return ds, nil
}

func (d *dgraphFlags) name() string {
	if d.cmd == "" {
		return "serve"
	}
	return d.cmd
}

// on reports whether an address turns the Dgraph face on.
func (d *dgraphFlags) on() bool { return d.httpAddr != "" || d.grpcAddr != "" }

// check refuses flags that make no sense together, before anything starts.
func (d *dgraphFlags) check() error {
	if err := dgraph.CheckPlacement(d.placement); err != nil {
		return fmt.Errorf("%s: --dgraph-placement: %w", d.name(), err)
	}
	if !d.on() {
		if d.secretFile != "" {
			return fmt.Errorf("%s: --acl-secret-file needs --dgraph-http or --dgraph-grpc", d.name())
		}
		if d.placement != "" {
			return fmt.Errorf("%s: --dgraph-placement needs --dgraph-http or --dgraph-grpc", d.name())
		}
	}
	return nil
}

// dgraphRetryEvery is how often startServing tries again while the engine
// cannot answer yet.
const dgraphRetryEvery = 200 * time.Millisecond

// startServing is start for an engine that may not answer yet (a
// gatekeeper under a coordinator before its first epoch, or between two:
// engine.Switch answers ErrOverloaded): it tries again until the engine
// answers or ctx ends. Other errors end it.
func (d *dgraphFlags) startServing(ctx context.Context, db engine.API) (*dgraphServer, error) {
	for {
		ds, err := d.start(ctx, db)
		if err == nil || !(errors.Is(err, engine.ErrOverloaded) || errors.Is(err, engine.ErrClosed)) {
			return ds, err
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%s: the Dgraph API never started: %w (last: %v)", d.name(), ctx.Err(), err)
		case <-time.After(dgraphRetryEvery):
		}
	}
}

// describe is the addresses of a running Dgraph face, for the ready line.
func (ds *dgraphServer) describe() string {
	return fmt.Sprintf("Dgraph HTTP API on %s, Dgraph gRPC API on %s", orOff(ds.httpAddr), orOff(ds.grpcAddr))
}

// errs reports a server that stopped by itself (never, when off).
func (ds *dgraphServer) errs() <-chan error {
	if ds == nil {
		return nil
	}
	return ds.errc
}

// stop lets requests in flight finish until ctx ends.
func (ds *dgraphServer) stop(ctx context.Context) {
	if ds == nil {
		return
	}
	if ds.http != nil {
		_ = ds.http.Shutdown(ctx)
	}
	if ds.grpc != nil {
		done := make(chan struct{})
		go func() { ds.grpc.GracefulStop(); close(done) }()
		select {
		case <-done:
		case <-ctx.Done():
			ds.grpc.Stop()
		}
	}
}
