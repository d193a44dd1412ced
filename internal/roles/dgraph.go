package roles

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

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/weft-db/weft/internal/dgraph"
	dgraphapi "github.com/weft-db/weft/internal/dgraph/api"
	"github.com/weft-db/weft/internal/engine"
)

// DgraphConfig is a process's Dgraph face (docs/dgraph.md): weft serve's
// and weft gatekeeper's --dgraph-* and --acl-* flags. It is off unless an
// address is given, so that a plain `weft serve` takes no port Dgraph
// itself might use.
type DgraphConfig struct {
	// Cmd names the command in errors ("": serve).
	Cmd string
	// HTTPAddr and GRPCAddr are where Dgraph's HTTP and gRPC APIs listen
	// ("": that API is off).
	HTTPAddr, GRPCAddr string
	// SecretFile, if set, turns access control on: it holds the JWT
	// signing secret. GrootPasswordFile holds the password "groot" gets
	// when first created ("": Dgraph's "password").
	SecretFile        string
	GrootPasswordFile string
	// AccessTTL and RefreshTTL are the JWTs' lifetimes
	// [dgraphapi.DefaultConfig's].
	AccessTTL, RefreshTTL time.Duration
	// TxnsMax is the open Dgraph transactions remembered at once; TxnIdle
	// forgets (aborts) one unused this long [dgraphapi.DefaultConfig's].
	TxnsMax int
	TxnIdle time.Duration
	// Placement is the Dgraph data's placement when first created
	// ("vertex" or "predicate"; "": existing data's, new data "vertex").
	Placement string
}

// DefaultDgraphConfig returns an off Dgraph face with the API's defaults.
func DefaultDgraphConfig() DgraphConfig {
	def := dgraphapi.DefaultConfig()
	return DgraphConfig{AccessTTL: def.ACL.AccessTTL, RefreshTTL: def.ACL.RefreshTTL, TxnsMax: def.TxnsMax, TxnIdle: def.TxnIdle}
}

// DgraphServer is the running Dgraph face.
type DgraphServer struct {
	// GRPCAddr and HTTPAddr are where it listens ("": off); ACL whether
	// access control is on.
	GRPCAddr, HTTPAddr string
	ACL                bool
	grpc               *grpc.Server
	http               *http.Server
	errc               chan error
}

// Start opens the Dgraph model on db and serves its API; nil when off.
func (d *DgraphConfig) Start(ctx context.Context, db engine.API) (*DgraphServer, error) {
	if err := d.Check(); err != nil || !d.On() {
		return nil, err
	}
	cmd := d.name()
	cfg := dgraphapi.DefaultConfig()
	cfg.TxnsMax, cfg.TxnIdle, cfg.Logger = d.TxnsMax, d.TxnIdle, slog.Default()
	cfg.ACL.AccessTTL, cfg.ACL.RefreshTTL = d.AccessTTL, d.RefreshTTL
	if d.SecretFile != "" {
		b, err := os.ReadFile(d.SecretFile)
		if err != nil {
			return nil, fmt.Errorf("%s: --acl-secret-file: %w", cmd, err)
		}
		cfg.ACL.Secret = []byte(strings.TrimSpace(string(b)))
	}
	if d.GrootPasswordFile != "" {
		b, err := os.ReadFile(d.GrootPasswordFile)
		if err != nil {
			return nil, fmt.Errorf("%s: --acl-groot-password-file: %w", cmd, err)
		}
		cfg.ACL.GrootPassword = strings.TrimSpace(string(b))
	}
	gcfg := dgraph.DefaultConfig()
	gcfg.Logger, gcfg.Placement = slog.Default(), d.Placement
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
	ds := &DgraphServer{ACL: cfg.ACL.Enabled(), errc: make(chan error, 2)}
	if d.GRPCAddr != "" {
		lis, err := net.Listen("tcp", d.GRPCAddr)
		if err != nil {
			return nil, fmt.Errorf("%s: --dgraph-grpc: %w", cmd, err)
		}
		ds.GRPCAddr = lis.Addr().String()
		ds.grpc = grpc.NewServer(grpc.MaxRecvMsgSize(int(cfg.RequestBytesMax)))
		srv.RegisterGRPC(ds.grpc)
		healthpb.RegisterHealthServer(ds.grpc, health.NewServer())
		go func() { ds.errc <- ds.grpc.Serve(lis) }()
	}
	if d.HTTPAddr != "" {
		lis, err := net.Listen("tcp", d.HTTPAddr)
		if err != nil {
			ds.Stop(ctx)
			return nil, fmt.Errorf("%s: --dgraph-http: %w", cmd, err)
		}
		ds.HTTPAddr = lis.Addr().String()
		ds.http = &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
		go func() {
			if err := ds.http.Serve(lis); !errors.Is(err, http.ErrServerClosed) {
				ds.errc <- err
			}
		}()
	}
	return ds, nil
}

func (d *DgraphConfig) name() string {
	if d.Cmd == "" {
		return "serve"
	}
	return d.Cmd
}

// On reports whether an address turns the Dgraph face on.
func (d *DgraphConfig) On() bool { return d.HTTPAddr != "" || d.GRPCAddr != "" }

// Check refuses flags that make no sense together, before anything starts.
func (d *DgraphConfig) Check() error {
	if err := dgraph.CheckPlacement(d.Placement); err != nil {
		return fmt.Errorf("%s: --dgraph-placement: %w", d.name(), err)
	}
	if !d.On() {
		if d.SecretFile != "" {
			return fmt.Errorf("%s: --acl-secret-file needs --dgraph-http or --dgraph-grpc", d.name())
		}
		if d.Placement != "" {
			return fmt.Errorf("%s: --dgraph-placement needs --dgraph-http or --dgraph-grpc", d.name())
		}
	}
	return nil
}

// dgraphRetryEvery is how often startServing tries again while the engine
// cannot answer yet.
const dgraphRetryEvery = 200 * time.Millisecond

// StartServing is Start for an engine that may not answer yet (a
// gatekeeper under a coordinator before its first epoch, or between two:
// engine.Switch answers ErrOverloaded): it tries again until the engine
// answers or ctx ends. Other errors end it.
func (d *DgraphConfig) StartServing(ctx context.Context, db engine.API) (*DgraphServer, error) {
	for {
		ds, err := d.Start(ctx, db)
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

// Describe is the addresses of a running Dgraph face, for the ready line.
func (ds *DgraphServer) Describe() string {
	return fmt.Sprintf("Dgraph HTTP API on %s, Dgraph gRPC API on %s", OrOff(ds.HTTPAddr), OrOff(ds.GRPCAddr))
}

// Errs reports a server that stopped by itself (never, when off).
func (ds *DgraphServer) Errs() <-chan error {
	if ds == nil {
		return nil
	}
	return ds.errc
}

// Stop lets requests in flight finish until ctx ends.
func (ds *DgraphServer) Stop(ctx context.Context) {
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

// stopDgraph stops a Dgraph face, letting requests in flight finish for
// up to 5 s.
func stopDgraph(ds *DgraphServer) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ds.Stop(ctx)
}

// OrOff is addr, or "(off)" for none (the ready lines).
func OrOff(addr string) string {
	if addr == "" {
		return "(off)"
	}
	return addr
}
