// Package opshttp serves a process role's operational HTTP endpoints —
// GET /healthz and GET /metrics (Prometheus) — for the roles that have no
// HTTP API of their own (weft shard, weft kronos). Gauges come from a
// function read at scrape time, so the role keeps one source of truth.
package opshttp

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"sort"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Config describes what a role exports.
type Config struct {
	// Namespace prefixes every gauge, e.g. "weft_shard".
	Namespace string
	// Gauges returns the role's gauges by name (a scrape turns each into
	// namespace_name); nil or an empty map exports none.
	Gauges func() map[string]float64
	// Healthy says whether /healthz answers 200 (else 503) and why.
	Healthy func() (ok bool, detail string)
}

// Server is a running operational HTTP server.
type Server struct {
	srv *http.Server
	lis net.Listener
}

// Start listens on addr and serves until Stop.
func Start(addr string, cfg Config) (*Server, error) {
	if cfg.Namespace == "" || cfg.Healthy == nil {
		return nil, errors.New("opshttp: a namespace and a health function are required")
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		gauges{cfg})
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		ok, detail := cfg.Healthy()
		w.Header().Set("Content-Type", "application/json")
		status := "ok"
		if !ok {
			status = "unavailable"
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		_ = json.NewEncoder(w).Encode(map[string]string{"status": status, "detail": detail})
	})
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &Server{srv: &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}, lis: lis}
	go s.srv.Serve(lis)
	return s, nil
}

// Addr is the address served.
func (s *Server) Addr() string { return s.lis.Addr().String() }

// Stop shuts the server down.
func (s *Server) Stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = s.srv.Shutdown(ctx)
}

// gauges exports Config.Gauges at scrape time.
type gauges struct{ cfg Config }

func (g gauges) Describe(chan<- *prometheus.Desc) {} // unchecked: the names come from the role

func (g gauges) Collect(ch chan<- prometheus.Metric) {
	if g.cfg.Gauges == nil {
		return
	}
	vals := g.cfg.Gauges()
	names := make([]string, 0, len(vals))
	for n := range vals {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		d := prometheus.NewDesc(g.cfg.Namespace+"_"+n, n+" (see docs/operations.md)", nil, nil)
		if m, err := prometheus.NewConstMetric(d, prometheus.GaugeValue, vals[n]); err == nil {
			ch <- m
		}
	}
}
