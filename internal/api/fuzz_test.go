package api_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/weft-db/weft/internal/api"
	"github.com/weft-db/weft/internal/api/apitest"
)

// Any body to any POST endpoint answers JSON: a success, or an error object
// with a known code; a rejected commit changes nothing.
func FuzzHTTPBodies(f *testing.F) {
	for _, s := range []string{
		`{"ops": [{"op": "create_vertex", "vertex": "a"}]}`,
		`{"reads": [{"vertex": "a", "version": "AA=="}], "ops": [{"op": "set_vertex_prop", "vertex": "a", "key": "k", "value": [1, 2.5, {"$datetime": "2024-01-02T03:04:05Z"}]}]}`,
		`{"vertex": "a", "edges_max": 3}`, `{"src": "a", "edge": "e"}`, `{}`, ``, `[`, `{"ops": null}`,
		`{"ops": [{"op": "create_edge", "vertex": "a", "dst": "a", "value": 1}]}`,
	} {
		for _, path := range []string{"/v1/commit", "/v1/vertex", "/v1/edge", "/v1/run/echo", "/v1/begin"} {
			f.Add(path, s)
		}
	}
	f.Fuzz(func(t *testing.T, path, body string) {
		fake := apitest.New()
		h := api.NewHTTPHandler(fake, nil, api.HTTPOptions{BodyMax: 1 << 16})
		req := httptest.NewRequest("POST", "http://weft"+"/"+urlPath(path), bytes.NewReader([]byte(body)))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code/100 == 3 { // the mux cleaning a path ("/v1/x/./y")
			return
		}
		var out map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
			t.Fatalf("%s %q: answer %d is not a JSON object: %q", path, body, rec.Code, rec.Body.Bytes())
		}
		if rec.Code == http.StatusOK {
			return
		}
		e, ok := out["error"].(map[string]any)
		if !ok || e["code"] == "" || e["code"] == "INTERNAL" {
			t.Fatalf("%s %q: %d %v", path, body, rec.Code, out)
		}
		if st, _ := fake.Status(t.Context()); st.Vertices != 0 || st.Commits != 0 {
			t.Fatalf("%s %q: rejected with %v but changed the graph", path, body, e)
		}
	})
}

// urlPath keeps fuzzed paths under /v1/ and free of characters that make an
// invalid request line.
func urlPath(p string) string {
	var b []byte
	for _, c := range []byte(p) {
		if c > ' ' && c < 0x7f && c != '?' && c != '#' && c != '%' {
			b = append(b, c)
		}
	}
	return "v1/" + string(bytes.TrimLeft(b, "/"))
}
