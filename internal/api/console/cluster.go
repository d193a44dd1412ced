package console

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// ClusterSource answers what the console's cluster view shows: the
// members, slots and epochs. A gatekeeper of a coordinated cluster builds
// it from the coordinator's status; `weft serve` from its own engine.
type ClusterSource func(ctx context.Context) (*ClusterView, error)

// ClusterView is GET /console/cluster.json's answer.
type ClusterView struct {
	// Mode is "cluster" (a coordinator's view) or "process" (one server's
	// own view: `weft serve`, or a fixed cluster's gatekeeper).
	Mode        string       `json:"mode"`
	Coordinator *Coordinator `json:"coordinator,omitempty"`
	Epoch       uint64       `json:"epoch"`
	ActiveEpoch uint64       `json:"active_epoch"`
	Members     []Member     `json:"members"`
	Slots       []Slot       `json:"slots"`
	Epochs      []Epoch      `json:"epochs"`
	// At is when the members' metrics were read (Unix seconds).
	At float64 `json:"at"`
}

// Coordinator is the coordinator replica that answered, and its leader.
type Coordinator struct {
	Replica       uint64 `json:"replica"`
	Leader        uint64 `json:"leader"`
	LeaderAddress string `json:"leader_address"`
	Term          uint64 `json:"term"`
	Applied       uint64 `json:"applied"`
}

// Member is one process of the cluster (or, in a process view, the
// process itself).
type Member struct {
	ID    uint64 `json:"id"`
	Name  string `json:"name"`
	Role  string `json:"role"`
	State string `json:"state"`
	// Slot is the slot held; -1: none.
	Slot    int32  `json:"slot"`
	Address string `json:"address"`
	// HTTP is the member's HTTP address (its /metrics), "" if none.
	HTTP string `json:"http"`
	Live bool   `json:"live"`
	// HeartbeatAgeMs is the time since its last heartbeat (-1: unknown).
	HeartbeatAgeMs int64 `json:"heartbeat_age_ms"`
	// Load is what it last reported with a heartbeat (vertices, edges,
	// commits_per_sec, …).
	Load map[string]float64 `json:"load,omitempty"`
	// Metrics are its API counters, read from its /metrics (gatekeepers
	// and `weft serve`); MetricsError says why they are missing.
	Metrics      *Sample `json:"metrics,omitempty"`
	MetricsError string  `json:"metrics_error,omitempty"`
	// Self marks the process answering: its metrics come from
	// Options.Gather rather than over HTTP.
	Self bool `json:"self"`
}

// Sample is a member's cumulative counters at ClusterView.At; the console
// charts their rates between two samples.
type Sample struct {
	Requests     float64 `json:"requests"`
	Errors       float64 `json:"errors"`
	LatencySum   float64 `json:"latency_sum"`
	LatencyCount float64 `json:"latency_count"`
	KronosCalls  float64 `json:"kronos_calls"`
	Commits      float64 `json:"commits"`
	Aborts       float64 `json:"aborts"`
	Programs     float64 `json:"programs"`
}

// Slot is a gatekeeper or shard slot and its holder (0: vacant).
type Slot struct {
	Role       string `json:"role"`
	Index      int32  `json:"index"`
	Holder     uint64 `json:"holder"`
	SinceEpoch uint64 `json:"since_epoch"`
}

// Epoch is one configuration: which member held which slot.
type Epoch struct {
	Epoch       uint64   `json:"epoch"`
	ActiveEpoch uint64   `json:"active_epoch"`
	Gatekeepers []uint64 `json:"gatekeepers"` // by slot; 0: vacant
	Shards      []uint64 `json:"shards"`
}

// Bounds on the cluster view's work per request.
const (
	clusterTimeout   = 3 * time.Second
	scrapeTimeout    = time.Second
	scrapeParallel   = 8
	scrapeBytesMax   = 4 << 20
	clusterScrapeMax = 64 // members scraped per request; the rest say so
)

// cluster answers GET /console/cluster.json.
func (h *handler) cluster(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		http.Error(w, "GET only", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-cache")
	if h.opts.Cluster == nil {
		w.WriteHeader(http.StatusServiceUnavailable)
		w.Write([]byte(`{"error":{"code":"UNAVAILABLE","message":"this server has no cluster view","retryable":false}}` + "\n"))
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), clusterTimeout)
	defer cancel()
	v, err := h.opts.Cluster(ctx)
	if err != nil {
		w.WriteHeader(http.StatusServiceUnavailable)
		json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": "UNAVAILABLE",
			"message": "the cluster's status: " + err.Error(), "retryable": true}})
		return
	}
	h.fillMetrics(ctx, v)
	v.At = float64(time.Now().UnixMilli()) / 1000
	json.NewEncoder(w).Encode(v)
}

// fillMetrics reads the metrics of every live member that serves the API
// (gatekeepers and the process itself), at most scrapeParallel at a time.
func (h *handler) fillMetrics(ctx context.Context, v *ClusterView) {
	sem := make(chan struct{}, scrapeParallel)
	var wg sync.WaitGroup
	scraped := 0
	for i := range v.Members {
		m := &v.Members[i]
		switch {
		case m.Self && h.opts.Gather != nil:
			fams, err := h.opts.Gather.Gather()
			m.setMetrics(fams, err)
			continue
		case !m.Live || m.HTTP == "" || (m.Role != "gatekeeper" && !m.Self):
			continue
		case scraped == clusterScrapeMax:
			m.MetricsError = fmt.Sprintf("not read: more than %d members", clusterScrapeMax)
			continue
		}
		scraped++
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			fams, err := h.scrape(ctx, m.HTTP)
			m.setMetrics(fams, err)
		}()
	}
	wg.Wait()
}

func (m *Member) setMetrics(fams []*dto.MetricFamily, err error) {
	if err != nil {
		m.MetricsError = err.Error()
		return
	}
	m.Metrics = sampleOf(fams)
}

// scrape reads one member's /metrics. The address comes from the
// cluster's own membership, never from the request.
func (h *handler) scrape(ctx context.Context, addr string) ([]*dto.MetricFamily, error) {
	ctx, cancel := context.WithTimeout(ctx, scrapeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/plain")
	resp, err := h.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s/metrics: %s", addr, resp.Status)
	}
	var p expfmt.TextParser
	byName, err := p.TextToMetricFamilies(io.LimitReader(resp.Body, scrapeBytesMax))
	if err != nil {
		return nil, fmt.Errorf("%s/metrics: %w", addr, err)
	}
	return toSlice(byName), nil
}

func toSlice(byName map[string]*dto.MetricFamily) []*dto.MetricFamily {
	out := make([]*dto.MetricFamily, 0, len(byName))
	for _, f := range byName {
		out = append(out, f)
	}
	return out
}

// sampleOf sums the counters the cluster view charts. Pure.
func sampleOf(fams []*dto.MetricFamily) *Sample {
	s := &Sample{}
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			switch f.GetName() {
			case "weft_requests_total":
				v := m.GetCounter().GetValue()
				s.Requests += v
				if !hasLabel(m, "code", "OK") {
					s.Errors += v
				}
			case "weft_request_duration_seconds":
				s.LatencySum += m.GetHistogram().GetSampleSum()
				s.LatencyCount += float64(m.GetHistogram().GetSampleCount())
			case "weft_engine_kronos_calls_total":
				s.KronosCalls += valueOf(m)
			case "weft_engine_commits_total":
				s.Commits += valueOf(m)
			case "weft_engine_aborts_total":
				s.Aborts += valueOf(m)
			case "weft_engine_programs_total":
				s.Programs += valueOf(m)
			}
		}
	}
	return s
}

func valueOf(m *dto.Metric) float64 {
	if c := m.GetCounter(); c != nil {
		return c.GetValue()
	}
	return m.GetGauge().GetValue()
}

func hasLabel(m *dto.Metric, name, value string) bool {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue() == value
		}
	}
	return false
}
