package coord

import (
	"encoding/json"
	"fmt"
	"html/template"
	"math"
	"net/http"
	"sort"
	"strings"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"google.golang.org/protobuf/encoding/protojson"

	pb "github.com/weft-db/weft/internal/wire/coordpb"
)

// httpHandler serves:
//
//	GET /healthz      200 {"status":"ok",...} while a leader is known, else 503
//	GET /metrics      Prometheus text format
//	GET /status       an HTML page: members, slots, epochs, promotions
//	GET /status.json  the Status RPC's answer as JSON
func (s *Server) httpHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", s.healthz)
	mux.Handle("GET /metrics", promhttp.HandlerFor(s.metrics.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}))
	mux.HandleFunc("GET /status", s.statusPage)
	mux.HandleFunc("GET /status.json", s.statusJSON)
	return mux
}

func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) {
	st, _ := s.published()
	body := map[string]any{"status": "ok", "role": "coord", "node": st.NodeId, "leader": st.LeaderId,
		"is_leader": st.IsLeader, "epoch": st.GetConfig().GetEpoch(), "active_epoch": st.GetConfig().GetActiveEpoch()}
	code := http.StatusOK
	select {
	case <-s.done:
		body["status"], code = "stopped", http.StatusServiceUnavailable
	default:
		if st.LeaderId == 0 {
			body["status"], code = "no leader", http.StatusServiceUnavailable
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(body)
}

func (s *Server) statusJSON(w http.ResponseWriter, _ *http.Request) {
	st := s.statusNow()
	b, err := protojson.MarshalOptions{EmitUnpopulated: true}.Marshal(st)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

// StatusView is what the status page shows; exported for `weft cluster
// status`, which prints the same tables.
type StatusView struct {
	*pb.StatusResponse
}

// Role names a member's role.
func (StatusView) Role(r pb.Role) string { return roleName(r) }

// Address returns member id's address ("" if unknown).
func (v StatusView) Address(id uint64) string {
	for _, mb := range v.Members {
		if mb.Id == id {
			return mb.Address
		}
	}
	return ""
}

// HeartbeatAge shows the time since member id's last heartbeat, as the
// serving leader saw it ("" elsewhere, or for a failed member).
func (v StatusView) HeartbeatAge(id uint64) string {
	if a, ok := v.HeartbeatAgeMs[id]; ok {
		return fmt.Sprintf("%d ms ago", a)
	}
	return ""
}

// Load shows member id's last reported load as "name=value" pairs in name
// order ("" when it reported none, or off the serving leader).
func (v StatusView) Load(id uint64) string {
	l, ok := v.StatusResponse.Load[id]
	if !ok || len(l.GetValues()) == 0 {
		return ""
	}
	keys := make([]string, 0, len(l.GetValues()))
	for k := range l.GetValues() {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(' ')
		}
		x := l.GetValues()[k]
		if x == math.Trunc(x) && math.Abs(x) < 1e15 {
			fmt.Fprintf(&b, "%s=%d", k, int64(x))
		} else {
			fmt.Fprintf(&b, "%s=%.1f", k, x)
		}
	}
	return b.String()
}

// State names a member's state (slot, backup, live, failed).
func (StatusView) State(mb *pb.Member) string { return memberState(mb) }

var statusTmpl = template.Must(template.New("status").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><meta http-equiv="refresh" content="2"><title>Weft cluster</title>
<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;margin-bottom:1.5em}
td,th{border:1px solid #ccc;padding:.25em .6em;text-align:left}.failed{color:#999}.vacant{color:#b00}</style></head>
<body><h1>Weft cluster</h1>
<p>Coordinator replica {{.NodeId}} · leader {{.LeaderId}} ({{.LeaderHint}}) · term {{.Term}} · applied {{.AppliedIndex}}{{if .IsLeader}} · <b>serving leader</b>{{end}}</p>
<p>Epoch <b>{{.Config.Epoch}}</b>, active epoch <b>{{.Config.ActiveEpoch}}</b>{{if ne .Config.Epoch .Config.ActiveEpoch}} (barrier: waiting for acknowledgements){{end}}</p>
<h2>Slots</h2><table><tr><th>role</th><th>slot</th><th>member</th><th>address</th><th>since epoch</th></tr>
{{range .Slots}}<tr{{if eq .Holder 0}} class="vacant"{{end}}><td>{{$.Role .Role}}</td><td>{{.Index}}</td><td>{{if eq .Holder 0}}vacant{{else}}{{.Holder}}{{end}}</td><td>{{$.Address .Holder}}</td><td>{{.SinceEpoch}}</td></tr>
{{end}}</table>
<h2>Members</h2><table><tr><th>id</th><th>name</th><th>role</th><th>state</th><th>slot</th><th>address</th><th>http</th><th>registered</th><th>acked</th><th>failed</th><th>last heartbeat</th><th>load</th></tr>
{{range .Members}}<tr{{if not .Live}} class="failed"{{end}}><td>{{.Id}}</td><td>{{.Name}}</td><td>{{$.Role .Role}}</td><td>{{$.State .}}</td><td>{{if ge .Slot 0}}{{.Slot}}{{end}}</td><td>{{.Address}}</td><td>{{if .HttpAddress}}<a href="http://{{.HttpAddress}}/metrics">{{.HttpAddress}}</a>{{end}}</td><td>{{.RegisteredEpoch}}</td><td>{{.AckedEpoch}}</td><td>{{if not .Live}}{{.FailedEpoch}}{{end}}</td><td>{{$.HeartbeatAge .Id}}</td><td>{{$.Load .Id}}</td></tr>
{{end}}</table>
<h2>Promotions</h2><table><tr><th>epoch</th><th>role</th><th>slot</th><th>failed member</th><th>promoted member</th></tr>
{{range .Promotions}}<tr><td>{{.Epoch}}</td><td>{{$.Role .Role}}</td><td>{{.Slot}}</td><td>{{if ne .Failed 0}}{{.Failed}}{{end}}</td><td>{{.Promoted}}</td></tr>
{{end}}</table>
<h2>Epochs</h2><table><tr><th>epoch</th><th>active</th><th>gatekeepers</th><th>shards</th></tr>
{{range .History}}<tr><td>{{.Epoch}}</td><td>{{.ActiveEpoch}}</td><td>{{range .Gatekeepers}}{{.Slot}}:{{.Member}} {{end}}</td><td>{{range .Shards}}{{.Slot}}:{{.Member}} {{end}}</td></tr>
{{end}}</table>
<p><a href="/status.json">JSON</a> · <a href="/metrics">metrics</a> · <a href="/healthz">health</a></p>
</body></html>
`))

func (s *Server) statusPage(w http.ResponseWriter, _ *http.Request) {
	st := s.statusNow()
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if err := statusTmpl.Execute(w, StatusView{st}); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
}
