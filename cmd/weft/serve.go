package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/weft-db/weft/internal/api"
	"github.com/weft-db/weft/internal/engine"
	"github.com/weft-db/weft/internal/roles"
)

func init() { subcommands = append(subcommands, newServeCmd) }

func newServeCmd() *cobra.Command {
	cfg := engine.DefaultConfig()
	acfg := api.DefaultConfig()
	var (
		inMemory, demo  bool
		shutdownTimeout time.Duration
		cpuProfile      string
		gc              gcFlags
		dg              = roles.DefaultDgraphConfig()
	)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run Weft in one process (every role, embedded store), serving gRPC and HTTP/JSON",
		Long: `Run an embedded Weft: gatekeepers, shards, Kronos and the Pebble store in one
process, serving the gRPC API (weft.v1.Weft) and the HTTP/JSON API
(docs/api.md; its OpenAPI description is served at /openapi.yaml), with
Prometheus metrics at /metrics.

  weft serve --demo                     # data in weft-data/serve, a demo graph
  curl -s localhost:7580/v1/status

SIGINT or SIGTERM stops accepting requests, lets those in flight finish (up
to --shutdown-timeout) and closes the store.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch {
			case cfg.Store == engine.StorePostgres:
				if cfg.PostgresURL == "" {
					return errors.New("serve: --store postgres needs --postgres-url")
				}
			case inMemory:
				cfg.DataDir = ""
			case cfg.DataDir == "":
				return errors.New("serve: --data-dir is empty (use --in-memory for a store that is not kept)")
			}
			cfg.Logger, acfg.Logger = slog.Default(), slog.Default()
			gc.apply()
			if err := cfg.Validate(); err != nil {
				return err
			}
			if err := acfg.Validate(); err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			if cpuProfile != "" {
				f, err := os.Create(cpuProfile)
				if err != nil {
					return err
				}
				if err := pprof.StartCPUProfile(f); err != nil {
					f.Close()
					return err
				}
				defer func() { pprof.StopCPUProfile(); f.Close() }()
			}
			return serve(ctx, cmd, cfg, acfg, demo, shutdownTimeout, &dg)
		},
	}
	f := cmd.Flags()
	f.StringVar(&acfg.GRPCAddr, "grpc-addr", acfg.GRPCAddr, "gRPC listen address (\"\": no gRPC)")
	f.StringVar(&acfg.HTTPAddr, "http-addr", acfg.HTTPAddr, "HTTP/JSON listen address (\"\": no HTTP)")
	f.Int64Var(&acfg.RequestBytesMax, "request-bytes-max", acfg.RequestBytesMax, "largest HTTP request body or gRPC message, in bytes")
	f.StringVar(&cfg.DataDir, "data-dir", "weft-data/serve", "the store's directory")
	f.StringVar(&cfg.Store, "store", cfg.Store, `backing store: "pebble" (embedded, in --data-dir) or "postgres" (at --postgres-url; gatekeepers of several processes can share it)`)
	f.StringVar(&cfg.PostgresURL, "postgres-url", "", "PostgreSQL connection string for --store postgres, e.g. postgres://weft@db:5432/weft (password: PGPASSWORD or ~/.pgpass)")
	f.StringVar(&cfg.PostgresSchema, "postgres-schema", cfg.PostgresSchema, "schema holding the PostgreSQL store's tables (created if missing)")
	f.BoolVar(&inMemory, "in-memory", false, "keep the store in memory (tests and demos: nothing survives a restart)")
	f.BoolVar(&cfg.Sync, "sync", cfg.Sync, "fsync every commit group before acknowledging; false can lose acknowledged commits on a crash")
	f.IntVar(&cfg.Gatekeepers, "gatekeepers", 0, "gatekeepers (1..64; 0: one per four CPUs, at least one)")
	f.IntVar(&cfg.Shards, "shards", 0, "shards vertices are hashed to (1..1024; fixed when the store is created; 0: the store's, or for a new store one per two CPUs, at least one)")
	f.DurationVar(&cfg.HistoryRetention, "history-retention", cfg.HistoryRetention, "keep old versions readable at least this long")
	f.BoolVar(&cfg.KeepHistory, "keep-history", cfg.KeepHistory, "never garbage-collect old versions")
	f.DurationVar(&cfg.GCEvery, "gc-every", cfg.GCEvery, "how often the garbage-collection watermark advances")
	f.IntVar(&cfg.ProgramsMax, "programs-max", cfg.ProgramsMax, "node programs in flight per gatekeeper before OVERLOADED")
	f.IntVar(&cfg.OracleCacheMax, "oracle-cache-max", cfg.OracleCacheMax, "each shard's cache of Kronos answers, in pairs")
	f.Int64Var(&cfg.StoreCacheBytes, "store-cache-bytes", cfg.StoreCacheBytes, "the embedded store's (Pebble's) block cache in bytes (commits read vertex records and last-access stamps through it; the graph itself is held in memory by the shards)")
	f.BoolVar(&demo, "demo", false, "load the demo graph (50 vertices: people, cities, companies, topics) unless it is loaded already")
	f.DurationVar(&shutdownTimeout, "shutdown-timeout", 10*time.Second, "on SIGINT/SIGTERM, how long requests in flight may take to finish")
	f.StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile (go tool pprof) of the server from serving until it stops to this file")
	gc.register(f)
	registerDgraphFlags(f, &dg)
	return cmd
}

func serve(ctx context.Context, cmd *cobra.Command, cfg engine.Config, acfg api.Config, demo bool, shutdownTimeout time.Duration, dg *roles.DgraphConfig) (err error) {
	db, err := engine.Open(cfg)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, db.Close()) }()
	if demo {
		loaded, err := api.LoadDemo(ctx, db)
		if err != nil {
			return err
		}
		slog.Info("demo graph", "loaded", loaded, "already_present", !loaded)
	}
	acfg.DgraphHTTPAddr = dg.HTTPAddr // the console's DQL editor forwards there
	srv, err := api.NewServer(db, acfg)
	if err != nil {
		return err
	}
	if err := srv.Start(); err != nil {
		return err
	}
	dsrv, err := dg.Start(ctx, db)
	if err != nil {
		sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
		defer cancel()
		srv.Stop(sctx)
		return err
	}
	where := cfg.DataDir
	switch {
	case cfg.Store == engine.StorePostgres:
		where = "postgres schema " + cfg.PostgresSchema
	case where == "":
		where = "memory"
	}
	fmt.Fprintf(cmd.OutOrStdout(), "weft serving gRPC on %s, HTTP on %s (store: %s)\n", orOff(srv.GRPCAddr()), orOff(srv.HTTPAddr()), where)
	if dsrv != nil {
		fmt.Fprintf(cmd.OutOrStdout(), "weft serving Dgraph's API: gRPC on %s, HTTP on %s (ACL %s)\n",
			orOff(dsrv.GRPCAddr), orOff(dsrv.HTTPAddr), map[bool]string{true: "on", false: "off"}[dsrv.ACL])
	}
	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-srv.Err():
	case serveErr = <-dsrv.Errs():
	}
	slog.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	dsrv.Stop(sctx)
	srv.Stop(sctx)
	return serveErr
}

func orOff(addr string) string { return roles.OrOff(addr) }
