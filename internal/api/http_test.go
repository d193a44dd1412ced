package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/weft-db/weft/internal/api"
	"github.com/weft-db/weft/internal/engine"
	"github.com/weft-db/weft/internal/txn"
)

const seedOps = `{"ops": [
 {"op": "create_vertex", "vertex": "a"},
 {"op": "create_vertex", "vertex": "b"},
 {"op": "create_vertex"},
 {"op": "add_alias", "vertex": "a", "alias": "alice"},
 {"op": "set_vertex_prop", "vertex": "alice", "vertex_alias": true, "key": "name", "value": "Alice"},
 {"op": "set_vertex_prop", "vertex": "a", "key": "age", "value": 42},
 {"op": "set_vertex_prop", "vertex": "a", "key": "score", "value": 3.0},
 {"op": "set_vertex_prop", "vertex": "a", "key": "ok", "value": true},
 {"op": "set_vertex_prop", "vertex": "a", "key": "born", "value": {"$datetime": "1990-05-01T12:00:00.123456789Z"}},
 {"op": "set_vertex_prop", "vertex": "a", "key": "tags", "value": ["x", 1, 2.5, [false]]},
 {"op": "create_edge", "vertex": "a", "edge": "knows", "dst": "b"},
 {"op": "create_edge", "vertex": "a", "dst": "b"},
 {"op": "set_edge_prop", "vertex": "a", "edge": "knows", "key": "weight", "value": 0.5}
]}`

// The whole HTTP flow: begin, commit, read at a snapshot, commit with reads.
func TestHTTPTransactionFlow(t *testing.T) {
	e := newEnv(t)
	res := e.post(t, "/v1/commit", seedOps)
	handles := res["handles"].([]any)
	if len(handles) != 5 || handles[0] != "a" || handles[1] != "b" || handles[3] != "knows" {
		t.Fatalf("handles = %v", handles)
	}
	if res["snapshot"] == "" {
		t.Fatal("no commit snapshot")
	}
	snap := e.post(t, "/v1/begin", "")["snapshot"].(string)
	if snap == "" {
		t.Fatal("empty snapshot")
	}
	// Begin also takes {}.
	e.post(t, "/v1/begin", "{}")

	st, raw, resp := e.do(t, "POST", "/v1/vertex", fmt.Sprintf(`{"snapshot": %q, "vertex": "alice", "vertex_alias": true}`, snap))
	if st != 200 || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("status %d, content type %q", st, resp.Header.Get("Content-Type"))
	}
	if raw["snapshot"] != snap {
		t.Fatalf("answer snapshot %v, want %s", raw["snapshot"], snap)
	}
	v := raw["vertex"].(map[string]any)
	props := v["props"].(map[string]any)
	want := map[string]string{"name": `"Alice"`, "age": "42", "score": "3.0", "ok": "true",
		"born": `{"$datetime":"1990-05-01T12:00:00.123456789Z"}`, "tags": `["x",1,2.5,[false]]`}
	for k, w := range want {
		got, _ := json.Marshal(props[k])
		if k == "score" { // json.Number keeps the literal
			got = []byte(props[k].(json.Number))
		}
		if string(got) != w {
			t.Errorf("prop %s = %s, want %s", k, got, w)
		}
	}
	if v["handle"] != "a" || v["exists"] != true || fmt.Sprint(v["aliases"]) != "[alice]" || len(v["edges"].([]any)) != 2 {
		t.Fatalf("vertex = %v", v)
	}
	edge0 := v["edges"].([]any)[1].(map[string]any)
	if edge0["handle"] != "knows" || edge0["dst"] != "b" || edge0["src"] != "a" || edge0["reads"] != nil {
		t.Fatalf("listed edge = %v", edge0)
	}
	reads := v["reads"].([]any)
	if len(reads) != 2 || reads[0].(map[string]any)["vertex"] != "a" || reads[0].(map[string]any)["version"] == "" ||
		reads[1].(map[string]any)["vertex"] != "alice" || reads[1].(map[string]any)["alias"] != true {
		t.Fatalf("reads = %v", reads)
	}

	// Parts can be left out.
	part := e.post(t, "/v1/vertex", fmt.Sprintf(`{"snapshot": %q, "vertex": "a", "props": false, "edges": false, "aliases": false}`, snap))["vertex"].(map[string]any)
	if len(part["props"].(map[string]any)) != 0 || len(part["edges"].([]any)) != 0 || len(part["aliases"].([]any)) != 0 {
		t.Fatalf("parts not left out: %v", part)
	}
	trunc := e.post(t, "/v1/vertex", `{"vertex": "a", "edges_max": 1}`)["vertex"].(map[string]any)
	if len(trunc["edges"].([]any)) != 1 || trunc["edges_truncated"] != true {
		t.Fatalf("edges_max 1: %v", trunc)
	}

	ed := e.post(t, "/v1/edge", fmt.Sprintf(`{"snapshot": %q, "src": "alice", "src_alias": true, "edge": "knows"}`, snap))
	edge := ed["edge"].(map[string]any)
	if edge["exists"] != true || edge["dst"] != "b" || edge["props"].(map[string]any)["weight"].(json.Number) != "0.5" || len(edge["reads"].([]any)) != 2 {
		t.Fatalf("edge = %v", edge)
	}
	missing := e.post(t, "/v1/vertex", `{"vertex": "nobody"}`)
	if missing["vertex"].(map[string]any)["exists"] != false || missing["snapshot"] == "" {
		t.Fatalf("missing vertex = %v", missing)
	}
	// An unbound alias names no vertex: only the alias's read.
	unbound := e.post(t, "/v1/vertex", `{"vertex": "ghost", "vertex_alias": true}`)["vertex"].(map[string]any)
	if got, _ := json.Marshal(unbound["reads"]); unbound["exists"] != false || string(got) != `[{"alias":true,"version":"","vertex":"ghost"}]` {
		t.Fatalf("unbound alias = %v", unbound)
	}

	// A commit carrying the read succeeds once, then the read is stale.
	readsJSON, _ := json.Marshal(reads)
	body := fmt.Sprintf(`{"reads": %s, "ops": [{"op": "delete_vertex_prop", "vertex": "a", "key": "ok"}]}`, readsJSON)
	e.post(t, "/v1/commit", body)
	st, out, _ := e.do(t, "POST", "/v1/commit", body)
	if code, msg, retry := errOf(t, out); st != 409 || code != "ABORTED" || !retry || !strings.Contains(msg, "changed") {
		t.Fatalf("stale read: %d %v", st, out)
	}
}

func TestHTTPRunProgramsStatusHealth(t *testing.T) {
	e := newEnv(t)
	out := e.post(t, "/v1/run/echo", `{"start": "a", "depth": 2}`)
	if got, _ := json.Marshal(out["result"]); string(got) != `{"depth":2,"start":"a"}` {
		t.Fatalf("echo result = %s", got)
	}
	if got, _ := json.Marshal(e.post(t, "/v1/run/echo", "")["result"]); string(got) != "{}" {
		t.Fatalf("empty params gave %s, want {}", got)
	}
	if got, _ := json.Marshal(e.post(t, "/v1/run/echo", "[1, 2]")["result"]); string(got) != "[1,2]" {
		t.Fatalf("array params gave %s", got)
	}
	snap := e.post(t, "/v1/begin", "")["snapshot"].(string)
	e.post(t, "/v1/run/count?at="+snap, "{}")
	st, body, _ := e.do(t, "POST", "/v1/run/count?at=bogus", "{}")
	if code, _, _ := errOf(t, body); st != 400 || code != "INVALID_ARGUMENT" {
		t.Fatalf("bad at: %d %v", st, body)
	}
	st, body, _ = e.do(t, "POST", "/v1/run/nosuch", "{}")
	if code, _, retry := errOf(t, body); st != 404 || code != "UNKNOWN_PROGRAM" || retry {
		t.Fatalf("unknown program: %d %v", st, body)
	}

	st, progs, _ := e.do(t, "GET", "/v1/programs", "")
	if st != 200 || fmt.Sprint(progs["programs"]) != "[map[description:fake program count kind:program name:count params:[]] map[description:fake program echo kind:program name:echo params:[]]]" {
		t.Fatalf("programs: %d %v", st, progs)
	}
	e.post(t, "/v1/commit", `{"ops": [{"op": "create_vertex", "vertex": "x"}]}`)
	st, status, _ := e.do(t, "GET", "/v1/status", "")
	if st != 200 || status["vertices"] != json.Number("1") || status["commits"] != json.Number("1") {
		t.Fatalf("status: %d %v", st, status)
	}
	for _, k := range []string{"gatekeepers", "shards", "vertices", "edges", "epoch", "commits", "aborts", "programs", "kronos_calls"} {
		if _, ok := status[k]; !ok {
			t.Errorf("status lacks %q", k)
		}
	}
	st, health, _ := e.do(t, "GET", "/healthz", "")
	if st != 200 || health["status"] != "ok" {
		t.Fatalf("healthz: %d %v", st, health)
	}
	e.fake.Inject("Status", engine.ErrClosed)
	st, health, _ = e.do(t, "GET", "/healthz", "")
	if code, _, _ := errOf(t, health); st != 503 || code != "UNAVAILABLE" {
		t.Fatalf("healthz while closing: %d %v", st, health)
	}
}

func TestHTTPMetricsAndOpenAPI(t *testing.T) {
	e := newEnv(t)
	e.post(t, "/v1/begin", "")
	e.do(t, "POST", "/v1/vertex", "{")
	resp, err := e.http.Client().Get(e.http.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		`weft_requests_total{api="http",code="OK",op="begin"} 1`,
		`weft_requests_total{api="http",code="INVALID_ARGUMENT",op="get_vertex"} 1`,
		`weft_request_duration_seconds_bucket{api="http",code="OK",op="begin",le="+Inf"} 1`,
		`weft_engine_up 1`,
		`weft_engine_commits_total 0`,
		`go_goroutines`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	resp, err = e.http.Client().Get(e.http.URL + "/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != string(api.OpenAPI) || len(body) == 0 {
		t.Fatalf("/openapi.yaml: %d, %d bytes", resp.StatusCode, len(body))
	}
}

// docs/openapi.yaml is the published copy of the embedded one, and the spec
// names every route.
func TestOpenAPIDocCopy(t *testing.T) {
	doc, err := os.ReadFile("../../docs/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if string(doc) != string(api.OpenAPI) {
		t.Fatal("docs/openapi.yaml differs from internal/api/openapi.yaml: copy the canonical internal/api/openapi.yaml over it")
	}
	for _, p := range []string{"/v1/begin:", "/v1/vertex:", "/v1/vertices:", "/v1/edge:", "/v1/commit:", "/v1/run/{program}:",
		"/v1/programs:", "/v1/status:", "/v1/placement:", "/v1/move:", "/healthz:", "/metrics:", "/openapi.yaml:"} {
		if !strings.Contains(string(api.OpenAPI), "\n  "+p+"\n") {
			t.Errorf("openapi.yaml has no path %s", p)
		}
	}
}

// Every engine error leaves with its code, HTTP status and retryability.
func TestHTTPErrorMapping(t *testing.T) {
	cases := []struct {
		err    error
		status int
		code   string
		retry  bool
	}{
		{fmt.Errorf("x: %w", engine.ErrAborted), 409, "ABORTED", true},
		{fmt.Errorf("x: %w", engine.ErrSnapshotTooOld), 409, "SNAPSHOT_TOO_OLD", true},
		{engine.ErrOverloaded, 429, "OVERLOADED", true},
		{engine.ErrClosed, 503, "UNAVAILABLE", false},
		{engine.ErrUnknownProgram, 404, "UNKNOWN_PROGRAM", false},
		{fmt.Errorf("op 1: %w", txn.ErrNotFound), 404, "NOT_FOUND", false},
		{fmt.Errorf("op 1: %w", txn.ErrExists), 409, "ALREADY_EXISTS", false},
		{fmt.Errorf("op 1: %w", txn.ErrInvalid), 400, "INVALID_ARGUMENT", false},
		{txn.ErrTooLarge, 413, "TOO_LARGE", false},
		{engine.ErrBadRequest, 400, "INVALID_ARGUMENT", false},
		{context.DeadlineExceeded, 504, "DEADLINE_EXCEEDED", false},
		{context.Canceled, 499, "CANCELLED", false},
		{errors.New("disk on fire"), 500, "INTERNAL", false},
	}
	e := newEnv(t)
	for _, c := range cases {
		for _, call := range []struct{ method, path, body, fake string }{
			{"POST", "/v1/begin", "", "Begin"},
			{"POST", "/v1/vertex", `{"vertex": "a"}`, "GetVertex"},
			{"POST", "/v1/edge", `{"snapshot": "s0", "src": "a", "edge": "e"}`, "GetEdge"},
			{"POST", "/v1/commit", `{"ops": [{"op": "create_vertex", "vertex": "a"}]}`, "Commit"},
			{"POST", "/v1/run/echo", `{}`, "Run"},
			{"GET", "/v1/status", "", "Status"},
		} {
			e.fake.Inject(call.fake, c.err)
			st, out, resp := e.do(t, call.method, call.path, call.body)
			code, msg, retry := errOf(t, out)
			if st != c.status || code != c.code || retry != c.retry || msg != c.err.Error() {
				t.Errorf("%s %s with %v: %d %s %q retryable=%v; want %d %s retryable=%v",
					call.method, call.path, c.err, st, code, msg, retry, c.status, c.code, c.retry)
			}
			if ra := resp.Header.Get("Retry-After"); (c.code == "OVERLOADED") != (ra == "1") {
				t.Errorf("%s with %s: Retry-After %q", call.path, c.code, ra)
			}
		}
	}
	// Errors the engine produces from the graph's state.
	e.post(t, "/v1/commit", `{"ops": [{"op": "create_vertex", "vertex": "a"}]}`)
	for _, c := range []struct {
		body, code string
		status     int
	}{
		{`{"ops": [{"op": "create_vertex", "vertex": "a"}]}`, "ALREADY_EXISTS", 409},
		{`{"ops": [{"op": "create_edge", "vertex": "a", "dst": "zz"}]}`, "NOT_FOUND", 404},
		{`{"ops": [{"op": "delete_vertex", "vertex": "ghost", "vertex_alias": true}]}`, "NOT_FOUND", 404},
		{`{"reads": [{"vertex": "a", "version": ""}], "ops": [{"op": "delete_vertex", "vertex": "a"}]}`, "ABORTED", 409},
	} {
		st, out, _ := e.do(t, "POST", "/v1/commit", c.body)
		if code, _, _ := errOf(t, out); st != c.status || code != c.code {
			t.Errorf("%s: %d %v, want %d %s", c.body, st, out, c.status, c.code)
		}
	}
}

// Malformed requests answer a clear error and never reach the engine.
func TestHTTPMalformedInput(t *testing.T) {
	cases := []struct {
		method, path, body string
		status             int
		code, msg          string
	}{
		{"POST", "/v1/commit", `{"ops": [`, 400, "INVALID_ARGUMENT", "unexpected end of input"},
		{"POST", "/v1/commit", `{"ops": [}`, 400, "INVALID_ARGUMENT", "malformed JSON at byte 10"},
		{"POST", "/v1/commit", `not json`, 400, "INVALID_ARGUMENT", "malformed JSON at byte 2"},
		{"POST", "/v1/commit", `{"ops": []} {}`, 400, "INVALID_ARGUMENT", "unexpected data after the request object"},
		{"POST", "/v1/commit", `{"ops": [], "extra": 1}`, 400, "INVALID_ARGUMENT", `unknown field "extra"`},
		{"POST", "/v1/commit", `{"ops": {}}`, 400, "INVALID_ARGUMENT", `field "ops": expected an array, got JSON object`},
		{"POST", "/v1/commit", `[]`, 400, "INVALID_ARGUMENT", "expected an object, got JSON array"},
		{"POST", "/v1/commit", ``, 400, "INVALID_ARGUMENT", "empty request body"},
		{"POST", "/v1/commit", `{"ops": [{"vertex": "a"}]}`, 400, "INVALID_ARGUMENT", `ops[0]: missing "op"`},
		{"POST", "/v1/commit", `{"ops": [{"op": "make_vertex"}]}`, 400, "INVALID_ARGUMENT", `unknown op "make_vertex" (want one of create_vertex,`},
		{"POST", "/v1/commit", `{"ops": [{"op": "create_vertex", "vertex": "a", "color": 1}]}`, 400, "INVALID_ARGUMENT", `unknown field "color"`},
		{"POST", "/v1/commit", `{"ops": [{"op": "create_vertex", "vertex": 7}]}`, 400, "INVALID_ARGUMENT", `field "ops.vertex": expected a string, got JSON number`},
		{"POST", "/v1/commit", `{"ops": [{"op": "create_vertex"}, {"op": "delete_vertex", "vertex": "a", "value": 1}]}`, 400, "INVALID_ARGUMENT", "ops[1] (delete_vertex): field value is not used by delete_vertex"},
		{"POST", "/v1/commit", `{"ops": [{"op": "set_vertex_prop", "vertex": "a", "key": "k"}]}`, 400, "INVALID_ARGUMENT", "ops[0] (set_vertex_prop): missing value (to remove a property, use delete_vertex_prop)"},
		{"POST", "/v1/commit", `{"ops": [{"op": "set_vertex_prop", "vertex": "a", "key": "k", "value": null}]}`, 400, "INVALID_ARGUMENT", "missing value"},
		{"POST", "/v1/commit", `{"ops": [{"op": "set_vertex_prop", "vertex": "a", "key": "k", "value": {"x": 1}}]}`, 400, "INVALID_ARGUMENT", "objects are not property values"},
		{"POST", "/v1/commit", `{"ops": [{"op": "set_vertex_prop", "vertex": "a", "key": "k", "value": {"$datetime": "yesterday"}}]}`, 400, "INVALID_ARGUMENT", `datetime "yesterday"`},
		{"POST", "/v1/commit", `{"ops": [{"op": "set_vertex_prop", "vertex": "a", "key": "", "value": 1}]}`, 400, "INVALID_ARGUMENT", "ops[0] (set_vertex_prop): txn: invalid operation: empty property key"},
		{"POST", "/v1/commit", `{"ops": [{"op": "delete_vertex"}]}`, 400, "INVALID_ARGUMENT", "empty vertex"},
		{"POST", "/v1/commit", `{"ops": [{"op": "create_vertex", "vertex": "a\u0000b"}]}`, 400, "INVALID_ARGUMENT", "NUL byte"},
		{"POST", "/v1/commit", `{"ops": [{"op": "create_vertex", "vertex": "alias", "vertex_alias": true}]}`, 400, "INVALID_ARGUMENT", "field vertex_alias is not used by create_vertex"},
		{"POST", "/v1/commit", `{"reads": [{"vertex": "a", "version": "%%%"}]}`, 400, "INVALID_ARGUMENT", "reads[0].version: not base64"},
		{"POST", "/v1/commit", `{"reads": [{"vertex": "", "version": ""}]}`, 400, "INVALID_ARGUMENT", "reads[0]: txn: invalid operation: empty vertex"},
		{"POST", "/v1/commit", `{"ops": [{"op": "create_vertex", "vertex": "` + strings.Repeat("h", txn.HandleLenMax+1) + `"}]}`, 400, "INVALID_ARGUMENT", "longer than 512 bytes"},
		{"POST", "/v1/vertex", ``, 400, "INVALID_ARGUMENT", "empty request body"},
		{"POST", "/v1/vertex", `{}`, 400, "INVALID_ARGUMENT", "empty vertex"},
		{"POST", "/v1/vertex", `{"vertex": "a", "edges_max": -1}`, 400, "INVALID_ARGUMENT", "edges_max -1 is negative"},
		{"POST", "/v1/vertex", `{"vertex": "a", "props": "yes"}`, 400, "INVALID_ARGUMENT", `field "props": expected a boolean, got JSON string`},
		{"POST", "/v1/vertex", `{"vertex": "a", "snapshot": "zzz"}`, 400, "INVALID_ARGUMENT", "bad snapshot token"},
		{"POST", "/v1/edge", `{"src": "a"}`, 400, "INVALID_ARGUMENT", "empty edge"},
		{"POST", "/v1/edge", `{"edge": "e"}`, 400, "INVALID_ARGUMENT", "empty source vertex"},
		{"POST", "/v1/begin", `{"snapshot": "x"}`, 400, "INVALID_ARGUMENT", `unknown field "snapshot"`},
		{"POST", "/v1/run/echo", `{"a": }`, 400, "INVALID_ARGUMENT", "params: malformed JSON at byte 7"},
		{"POST", "/v1/run/echo", `{} {}`, 400, "INVALID_ARGUMENT", "params: malformed JSON at byte 4"},
		{"POST", "/v1/run/echo?depth=3", `{}`, 400, "INVALID_ARGUMENT", `unknown query parameter "depth"`},
		{"GET", "/v1/commit", ``, 405, "METHOD_NOT_ALLOWED", "method GET not allowed on /v1/commit (use POST)"},
		{"DELETE", "/v1/status", ``, 405, "METHOD_NOT_ALLOWED", "use GET"},
		{"POST", "/metrics", ``, 405, "METHOD_NOT_ALLOWED", "use GET"},
		{"GET", "/v2/commit", ``, 404, "NOT_FOUND", "no such endpoint: GET /v2/commit"},
		{"POST", "/v1/run/", `{}`, 404, "NOT_FOUND", "no such endpoint"},
	}
	e := newEnv(t)
	for _, c := range cases {
		st, out, resp := e.do(t, c.method, c.path, c.body)
		code, msg, retry := errOf(t, out)
		if st != c.status || code != c.code || retry || !strings.Contains(msg, c.msg) {
			t.Errorf("%s %s %.60q: %d %s %q; want %d %s containing %q", c.method, c.path, c.body, st, code, msg, c.status, c.code, c.msg)
		}
		if c.status == 405 && resp.Header.Get("Allow") == "" {
			t.Errorf("%s %s: 405 without Allow", c.method, c.path)
		}
	}
	if n := e.fake.CallCount("Commit"); n != 0 {
		t.Fatalf("malformed commits reached the engine %d times", n)
	}
}

func TestHTTPLimits(t *testing.T) {
	e := newEnvOpts(t, api.HTTPOptions{BodyMax: 4096})
	big := `{"ops": [{"op": "create_vertex", "vertex": "` + strings.Repeat("v", 5000) + `"}]}`
	for _, path := range []string{"/v1/commit", "/v1/run/echo", "/v1/vertex"} {
		st, out, _ := e.do(t, "POST", path, big)
		if code, msg, _ := errOf(t, out); st != 413 || code != "TOO_LARGE" || !strings.Contains(msg, "larger than 4096 bytes") {
			t.Errorf("%s: %d %v", path, st, out)
		}
	}
	e = newEnv(t)
	var ops strings.Builder
	ops.WriteString(`{"ops": [`)
	for i := range txn.OpsMax + 1 {
		if i > 0 {
			ops.WriteString(",")
		}
		fmt.Fprintf(&ops, `{"op": "create_vertex", "vertex": "v%d"}`, i)
	}
	ops.WriteString("]}")
	st, out, _ := e.do(t, "POST", "/v1/commit", ops.String())
	if code, msg, _ := errOf(t, out); st != 413 || code != "TOO_LARGE" || msg != "10001 operations, at most 10000" {
		t.Fatalf("too many ops: %d %v", st, out)
	}
	if n := e.fake.CallCount("Commit"); n != 0 {
		t.Fatalf("oversized commit reached the engine")
	}
	// Nothing changed.
	if st, _ := e.fake.Status(context.Background()); st.Vertices != 0 {
		t.Fatalf("%d vertices after rejected commits", st.Vertices)
	}
	_ = http.StatusOK
}
