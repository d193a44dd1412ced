package api

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"google.golang.org/grpc"

	"github.com/weft-db/weft/internal/api/console"
	"github.com/weft-db/weft/internal/engine"
)

// Config configures the network front ends of `weft serve`.
type Config struct {
	// GRPCAddr is the gRPC listen address (default 127.0.0.1:7500; empty: no gRPC).
	GRPCAddr string
	// HTTPAddr is the HTTP/JSON listen address (default 127.0.0.1:7580; empty: no HTTP).
	HTTPAddr string
	// RequestBytesMax bounds one HTTP body or gRPC message in bytes (default 16 MiB).
	RequestBytesMax int64
	// DgraphHTTPAddr is the Dgraph face's HTTP address the web console's DQL
	// editor forwards to (default ""; empty: the face is off).
	DgraphHTTPAddr string
	// Cluster answers the web console's cluster view (default nil: this
	// process's own gatekeepers and shards, from the engine's Status).
	Cluster console.ClusterSource
	// Logger receives operational logs (default: discard).
	Logger *slog.Logger
}

// DefaultConfig returns the defaults documented on Config.
func DefaultConfig() Config {
	return Config{GRPCAddr: "127.0.0.1:7500", HTTPAddr: "127.0.0.1:7580", RequestBytesMax: RequestBytesMaxDefault}
}

// Validate reports the first bad field.
func (c *Config) Validate() error {
	switch {
	case c.GRPCAddr == "" && c.HTTPAddr == "":
		return errors.New("api: neither a gRPC nor an HTTP address")
	case c.RequestBytesMax < 1<<10 || c.RequestBytesMax > 1<<30:
		return fmt.Errorf("api: RequestBytesMax %d out of range [1 KiB, 1 GiB]", c.RequestBytesMax)
	}
	return nil
}

// Server serves one engine.API over gRPC and HTTP. Start, then Stop once.
type Server struct {
	cfg      Config
	log      *slog.Logger
	grpc     *grpc.Server
	http     *http.Server
	grpcLis  net.Listener
	httpLis  net.Listener
	Metrics  *Metrics
	serveErr chan error
}

// NewServer builds the front ends over db; nothing listens before Start.
func NewServer(db engine.API, cfg Config) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	m := NewMetrics(db)
	m.errs = newErrorLog(log, time.Now)
	s := &Server{cfg: cfg, log: log, Metrics: m, serveErr: make(chan error, 2)}
	s.grpc = NewGRPCServer(db, m, grpc.MaxRecvMsgSize(int(cfg.RequestBytesMax)))
	s.http = &http.Server{
		Handler:           NewHTTPHandler(db, m, HTTPOptions{BodyMax: cfg.RequestBytesMax, DgraphHTTP: cfg.DgraphHTTPAddr, Cluster: cfg.Cluster}),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	return s, nil
}

// Start listens on the configured addresses and serves in the background.
func (s *Server) Start() error {
	var err error
	if s.cfg.GRPCAddr != "" {
		if s.grpcLis, err = net.Listen("tcp", s.cfg.GRPCAddr); err != nil {
			return fmt.Errorf("api: gRPC listen: %w", err)
		}
		go func() { s.serveErr <- s.grpc.Serve(s.grpcLis) }()
	}
	if s.cfg.HTTPAddr != "" {
		if s.httpLis, err = net.Listen("tcp", s.cfg.HTTPAddr); err != nil {
			s.grpc.Stop()
			return fmt.Errorf("api: HTTP listen: %w", err)
		}
		go func() {
			if err := s.http.Serve(s.httpLis); !errors.Is(err, http.ErrServerClosed) {
				s.serveErr <- err
			}
		}()
	}
	s.log.Info("weft api serving", "grpc", s.GRPCAddr(), "http", s.HTTPAddr())
	return nil
}

// Err delivers the first error that stopped a listener while serving.
func (s *Server) Err() <-chan error { return s.serveErr }

// GRPCAddr is the gRPC listener's address ("" when gRPC is off).
func (s *Server) GRPCAddr() string { return addrOf(s.grpcLis) }

// HTTPAddr is the HTTP listener's address ("" when HTTP is off).
func (s *Server) HTTPAddr() string { return addrOf(s.httpLis) }

func addrOf(l net.Listener) string {
	if l == nil {
		return ""
	}
	return l.Addr().String()
}

// Stop stops accepting, lets requests in flight finish until ctx is done,
// then cuts the rest off.
func (s *Server) Stop(ctx context.Context) {
	done := make(chan struct{})
	go func() {
		s.grpc.GracefulStop()
		close(done)
	}()
	if s.httpLis != nil {
		if err := s.http.Shutdown(ctx); err != nil {
			s.http.Close()
		}
	}
	select {
	case <-done:
	case <-ctx.Done():
		s.grpc.Stop()
		<-done
	}
}
