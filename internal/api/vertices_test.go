package api_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/weft-db/weft/internal/api"
	"github.com/weft-db/weft/internal/engine"
)

// POST /v1/vertices on the demo graph: vertices by handle and by alias, in
// order, at one snapshot; bad requests refused with what was wrong.
func TestHTTPGetVertices(t *testing.T) {
	cfg := engine.DefaultConfig()
	cfg.DataDir = ""
	db, err := engine.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := api.LoadDemo(t.Context(), db); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api.NewHTTPHandler(db, nil, api.HTTPOptions{}))
	defer srv.Close()
	post := func(body string) (int, map[string]any) {
		t.Helper()
		resp, err := srv.Client().Post(srv.URL+"/v1/vertices", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, out
	}
	st, out := post(`{"vertices": ["person/bob", {"vertex": "alice", "vertex_alias": true}, "person/nobody"], "edges": false}`)
	vs, _ := out["vertices"].([]any)
	if st != 200 || out["snapshot"] == "" || len(vs) != 3 {
		t.Fatalf("%d %v", st, out)
	}
	for i, want := range []struct {
		handle string
		exists bool
	}{{"person/bob", true}, {"person/alice", true}, {"person/nobody", false}} {
		v := vs[i].(map[string]any)
		if v["handle"] != want.handle || v["exists"] != want.exists || len(v["edges"].([]any)) != 0 || len(v["reads"].([]any)) == 0 {
			t.Errorf("vertex %d: %v, want %+v without edges, with its reads", i, v, want)
		}
	}
	if name := vs[1].(map[string]any)["props"].(map[string]any)["name"]; name != "Alice" {
		t.Errorf("alice: name %v", name)
	}
	for _, tc := range []struct{ body, want string }{
		{`{"vertices": []}`, "none asked for"},
		{`{"vertices": [{"vertex": "a", "alias": true}]}`, "unknown field"},
		{`{"vertices": [7]}`, "a vertex is a handle or"},
		{`{"vertices": ["a"], "edges_max": -1}`, "edges_max -1 is negative"},
		{`{"vertices": ["a"], "edges_max": 10001}`, "at most 10000"},
	} {
		st, out := post(tc.body)
		e, _ := out["error"].(map[string]any)
		if st != http.StatusBadRequest || e["code"] != "INVALID_ARGUMENT" || !strings.Contains(e["message"].(string), tc.want) {
			t.Errorf("%s: %d %v, want 400 INVALID_ARGUMENT with %q", tc.body, st, out, tc.want)
		}
	}
}
