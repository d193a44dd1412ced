package kv

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/weft-db/weft/internal/kv/kvcore"
)

// latencyBucketsNs are the detection-latency histogram's upper bounds.
var latencyBucketsNs = []uint64{1e6, 5e6, 10e6, 25e6, 50e6, 100e6, 250e6, 500e6, 1e9, 2.5e9, 5e9, 10e9}

// latencyHist is a cumulative histogram in Prometheus' shape.
type latencyHist struct {
	counts [13]uint64 // per bucket, the last is +Inf
	sum    uint64
	n      uint64
}

func (h *latencyHist) add(ns uint64) {
	i := 0
	for i < len(latencyBucketsNs) && ns > latencyBucketsNs[i] {
		i++
	}
	h.counts[i]++
	h.sum += ns
	h.n++
}

// Handler is the watcher's HTTP API:
//
//	GET /v1/monitor/violations  recent violations: cut, since, latency, rollback
//	GET /v1/monitor/rollbacks   recent rollbacks
//	GET /v1/monitor/stats       counters (WatcherStats)
//	GET /metrics                the counters in Prometheus' text format
//	GET /healthz
func (w *Watcher) Handler() http.Handler {
	mux := http.NewServeMux()
	js := func(f func() any) http.HandlerFunc {
		return func(rw http.ResponseWriter, _ *http.Request) {
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(f()); err != nil {
				writeError(rw, http.StatusInternalServerError, kvcore.ErrorBody{Code: kvcore.CodeInternal, Message: err.Error()})
				return
			}
			rw.Header().Set("Content-Type", "application/json")
			rw.Write(buf.Bytes())
		}
	}
	mux.Handle("GET /v1/monitor/violations", js(func() any {
		return map[string]any{"violations": nonNil(w.Violations())}
	}))
	mux.Handle("GET /v1/monitor/rollbacks", js(func() any {
		return map[string]any{"rollbacks": nonNil(w.Rollbacks())}
	}))
	mux.Handle("GET /v1/monitor/stats", js(func() any { return w.Stats() }))
	mux.Handle("GET /healthz", js(func() any { return map[string]bool{"ok": true} }))
	mux.HandleFunc("GET /metrics", func(rw http.ResponseWriter, _ *http.Request) {
		rw.Header().Set("Content-Type", "text/plain; version=0.0.4")
		rw.Write([]byte(w.Metrics()))
	})
	mux.HandleFunc("/", func(rw http.ResponseWriter, r *http.Request) {
		writeError(rw, http.StatusNotFound, kvcore.ErrorBody{Code: kvcore.CodeNotFound, Message: fmt.Sprintf("no such endpoint: %s %s", r.Method, r.URL.Path)})
	})
	return mux
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// Metrics renders the counters in Prometheus' text exposition format.
func (w *Watcher) Metrics() string {
	w.mu.Lock()
	st, h := w.stats, w.hist
	w.mu.Unlock()
	var b strings.Builder
	counter := func(name, help string, vals []uint64) {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s counter\n", name, help, name)
		for i, v := range vals {
			fmt.Fprintf(&b, "%s{server=\"%d\"} %d\n", name, i, v)
		}
	}
	scalar := func(name, typ, help string, v uint64) {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n%s %d\n", name, help, name, typ, name, v)
	}
	counter("weft_monitor_candidates_total", "Candidates stepped into the monitors, per kv server.", st.Candidates)
	counter("weft_monitor_missed_candidates_total", "Candidates a server's buffer dropped before the watcher read them.", st.Missed)
	counter("weft_monitor_fetch_errors_total", "Failed candidate fetches, per kv server.", st.FetchErrors)
	counter("weft_monitor_server_restarts_total", "New server incarnations seen.", st.Restarts)
	scalar("weft_monitor_step_errors_total", "counter", "Candidates refused as malformed or out of order.", st.StepErrors)
	scalar("weft_monitor_stalls_total", "counter", "Times a server's candidates waited on a full monitor queue.", st.Stalls)
	scalar("weft_monitor_resets_total", "counter", "Monitor rebuilds after restarts, rollbacks or deadlock.", st.Resets)
	scalar("weft_monitor_violations_total", "counter", "Violations reported.", st.Violations)
	scalar("weft_monitor_rollbacks_total", "counter", "Rollbacks completed.", st.Rollbacks)
	scalar("weft_monitor_rollback_failures_total", "counter", "Rollbacks attempted that failed.", st.RollbackFails)
	scalar("weft_monitor_generation", "gauge", "The rollback generation in force.", st.Gen)
	name := "weft_monitor_detection_latency_seconds"
	fmt.Fprintf(&b, "# HELP %s Time from the PUT completing a violation to its detection.\n# TYPE %s histogram\n", name, name)
	cum := uint64(0)
	for i, ub := range latencyBucketsNs {
		cum += h.counts[i]
		fmt.Fprintf(&b, "%s_bucket{le=\"%g\"} %d\n", name, float64(ub)/1e9, cum)
	}
	cum += h.counts[len(latencyBucketsNs)]
	fmt.Fprintf(&b, "%s_bucket{le=\"+Inf\"} %d\n%s_sum %g\n%s_count %d\n", name, cum, name, float64(h.sum)/1e9, name, h.n)
	return b.String()
}
