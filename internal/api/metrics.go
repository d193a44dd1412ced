package api

import (
	"context"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/weft-db/weft/internal/engine"
	"github.com/weft-db/weft/internal/wire/apicode"
)

// Metrics holds the front ends' Prometheus metrics in a registry of its own
// (not the global one, so tests and embedders can run several servers):
//
//	weft_requests_total{api, op, code}            requests by face, operation and error code ("OK" on success)
//	weft_request_duration_seconds{api, op, code}  their latency
//	weft_engine_*                                  the engine's Status, read at scrape time
//
// plus the Go runtime and process collectors. A nil *Metrics records nothing.
type Metrics struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	// errs logs the errors answered (nil: none; NewServer sets it).
	errs *errorLog
}

// statusTimeout bounds the engine Status call of one scrape.
const statusTimeout = 2 * time.Second

// NewMetrics returns metrics that also export db's Status (nil db: none).
func NewMetrics(db engine.API) *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "weft_requests_total",
			Help: "API requests by face (grpc, http), operation and error code (OK on success).",
		}, []string{"api", "op", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "weft_request_duration_seconds",
			Help: "API request latency by face, operation and error code.",
			// 50µs to ~13s: commits are sub-millisecond, long node programs take seconds.
			Buckets: prometheus.ExponentialBuckets(50e-6, 4, 10),
		}, []string{"api", "op", "code"}),
	}
	m.reg.MustRegister(m.requests, m.latency,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if db != nil {
		m.reg.MustRegister(statusCollector{db: db})
	}
	return m
}

func (m *Metrics) observe(api, op string, code apicode.Code, err error, d time.Duration) {
	if m == nil {
		return
	}
	m.errs.answered(api, op, code, err)
	m.requests.WithLabelValues(api, op, string(code)).Inc()
	m.latency.WithLabelValues(api, op, string(code)).Observe(d.Seconds())
}

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// Registry is where the metrics live, for embedders adding their own.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// statusCollector exports engine.Status at scrape time.
type statusCollector struct{ db engine.API }

var (
	descUp          = prometheus.NewDesc("weft_engine_up", "1 when the engine answered Status at this scrape, else 0.", nil, nil)
	descGatekeepers = prometheus.NewDesc("weft_engine_gatekeepers", "Gatekeepers running.", nil, nil)
	descShards      = prometheus.NewDesc("weft_engine_shards", "Shards vertices are hashed to.", nil, nil)
	descVertices    = prometheus.NewDesc("weft_engine_vertices", "Live vertices.", nil, nil)
	descEdges       = prometheus.NewDesc("weft_engine_edges", "Live edges.", nil, nil)
	descEpoch       = prometheus.NewDesc("weft_engine_epoch", "Current epoch.", nil, nil)
	descCommits     = prometheus.NewDesc("weft_engine_commits_total", "Committed transactions.", nil, nil)
	descAborts      = prometheus.NewDesc("weft_engine_aborts_total", "Aborted transactions.", nil, nil)
	descPrograms    = prometheus.NewDesc("weft_engine_programs_total", "Node programs run.", nil, nil)
	descKronos      = prometheus.NewDesc("weft_engine_kronos_calls_total", "Calls to the Kronos ordering oracle.", nil, nil)
)

func (statusCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descUp, descGatekeepers, descShards, descVertices, descEdges,
		descEpoch, descCommits, descAborts, descPrograms, descKronos} {
		ch <- d
	}
}

func (c statusCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), statusTimeout)
	defer cancel()
	st, err := c.db.Status(ctx)
	if err != nil || st == nil {
		ch <- prometheus.MustNewConstMetric(descUp, prometheus.GaugeValue, 0)
		return
	}
	ch <- prometheus.MustNewConstMetric(descUp, prometheus.GaugeValue, 1)
	gauge := func(d *prometheus.Desc, v float64) { ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v) }
	counter := func(d *prometheus.Desc, v uint64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v))
	}
	gauge(descGatekeepers, float64(st.Gatekeepers))
	gauge(descShards, float64(st.Shards))
	gauge(descVertices, float64(st.Vertices))
	gauge(descEdges, float64(st.Edges))
	gauge(descEpoch, float64(st.Epoch))
	counter(descCommits, st.Commits)
	counter(descAborts, st.Aborts)
	counter(descPrograms, st.Programs)
	counter(descKronos, st.KronosCalls)
}
