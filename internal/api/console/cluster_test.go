package console

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
)

// metricsText is a gatekeeper's /metrics as the API's registry writes it.
const metricsText = `# TYPE weft_requests_total counter
weft_requests_total{api="grpc",code="OK",op="commit"} 40
weft_requests_total{api="http",code="OK",op="get_vertex"} 7
weft_requests_total{api="grpc",code="ABORTED",op="commit"} 3
# TYPE weft_request_duration_seconds histogram
weft_request_duration_seconds_bucket{api="grpc",op="commit",le="+Inf"} 43
weft_request_duration_seconds_sum{api="grpc",op="commit"} 0.5
weft_request_duration_seconds_count{api="grpc",op="commit"} 43
weft_request_duration_seconds_bucket{api="http",op="get_vertex",le="+Inf"} 7
weft_request_duration_seconds_sum{api="http",op="get_vertex"} 0.25
weft_request_duration_seconds_count{api="http",op="get_vertex"} 7
# TYPE weft_engine_kronos_calls_total counter
weft_engine_kronos_calls_total 5
# TYPE weft_engine_commits_total counter
weft_engine_commits_total 40
# TYPE weft_engine_aborts_total counter
weft_engine_aborts_total 3
# TYPE weft_engine_programs_total counter
weft_engine_programs_total 2
# TYPE weft_other_total counter
weft_other_total 99
`

func TestSampleOf(t *testing.T) {
	var p expfmt.TextParser
	byName, err := p.TextToMetricFamilies(strings.NewReader(metricsText))
	if err != nil {
		t.Fatal(err)
	}
	got := *sampleOf(toSlice(byName))
	want := Sample{Requests: 50, Errors: 3, LatencySum: 0.75, LatencyCount: 50, KronosCalls: 5, Commits: 40, Aborts: 3, Programs: 2}
	if got != want {
		t.Fatalf("sampleOf = %+v, want %+v", got, want)
	}
}

// TestClusterJSON serves a view of four members and checks whose metrics
// the handler read: the live gatekeeper's over HTTP, the answering
// process's from its registry, and neither the shard's nor the failed
// gatekeeper's (whose address, were it read, would fail the test).
func TestClusterJSON(t *testing.T) {
	gk := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(metricsText))
	}))
	defer gk.Close()
	planted := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("read the metrics of a member that is not a live gatekeeper: %s", r.URL)
	}))
	defer planted.Close()
	addr := func(s *httptest.Server) string { return strings.TrimPrefix(s.URL, "http://") }

	reg := prometheus.NewRegistry()
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "weft_engine_commits_total", Help: "x"})
	c.Add(11)
	reg.MustRegister(c)
	source := func(ctx context.Context) (*ClusterView, error) {
		return &ClusterView{Mode: "cluster", Epoch: 3, ActiveEpoch: 3, Members: []Member{
			{ID: 1, Name: "gk-0", Role: "gatekeeper", Live: true, HTTP: addr(gk)},
			{ID: 2, Name: "gk-1", Role: "gatekeeper", Live: true, Self: true, HTTP: "127.0.0.1:1"},
			{ID: 3, Name: "shard-0", Role: "shard", Live: true, HTTP: addr(planted)},
			{ID: 4, Name: "gk-old", Role: "gatekeeper", Live: false, HTTP: addr(planted)},
			{ID: 5, Name: "gk-2", Role: "gatekeeper", Live: true, HTTP: "127.0.0.1:1"},
		}}, nil
	}
	srv := httptest.NewServer(Handler(Options{Cluster: source, Gather: reg}))
	defer srv.Close()
	resp, err := http.Get(srv.URL + Prefix + "cluster.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %s", resp.Status)
	}
	var v ClusterView
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		t.Fatal(err)
	}
	if v.At == 0 || len(v.Members) != 5 {
		t.Fatalf("view %+v", v)
	}
	m := v.Members
	if m[0].Metrics == nil || m[0].Metrics.Requests != 50 || m[0].Metrics.KronosCalls != 5 {
		t.Errorf("gk-0's metrics %+v (%s)", m[0].Metrics, m[0].MetricsError)
	}
	if m[1].Metrics == nil || m[1].Metrics.Commits != 11 {
		t.Errorf("the answering member's metrics %+v (%s)", m[1].Metrics, m[1].MetricsError)
	}
	if m[2].Metrics != nil || m[3].Metrics != nil {
		t.Errorf("a shard's or a failed member's metrics were read: %+v %+v", m[2].Metrics, m[3].Metrics)
	}
	if m[4].Metrics != nil || m[4].MetricsError == "" {
		t.Errorf("an unreachable gatekeeper: metrics %+v, error %q", m[4].Metrics, m[4].MetricsError)
	}
}

func TestClusterJSONErrors(t *testing.T) {
	for name, opts := range map[string]Options{
		"no source": {},
		"failing":   {Cluster: func(context.Context) (*ClusterView, error) { return nil, errors.New("no coordinator answers") }},
	} {
		srv := httptest.NewServer(Handler(opts))
		resp, err := http.Get(srv.URL + Prefix + "cluster.json")
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			Error struct{ Code, Message string }
		}
		json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		srv.Close()
		if resp.StatusCode != http.StatusServiceUnavailable || body.Error.Code != "UNAVAILABLE" || body.Error.Message == "" {
			t.Errorf("%s: %s %+v", name, resp.Status, body)
		}
	}
	srv := httptest.NewServer(Handler(Options{}))
	defer srv.Close()
	resp, err := http.Post(srv.URL+Prefix+"cluster.json", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST: %s", resp.Status)
	}
}
