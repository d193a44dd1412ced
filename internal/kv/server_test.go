package kv

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/weft-db/weft/internal/kv/kvcore"
)

func testServer(t *testing.T) *Server {
	t.Helper()
	cfg := DefaultServerConfig()
	cfg.Peers = []string{"127.0.0.1:0"}
	cfg.Replica.Dir, cfg.Replica.FS = "kv", vfs.NewMem()
	s, err := NewServer(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Stop() })
	return s
}

// TestServerRejectsBadRequests: malformed or oversized input gets a clear
// error with a stable code and changes nothing.
func TestServerRejectsBadRequests(t *testing.T) {
	s := testServer(t)
	h := s.Handler()
	for _, tc := range []struct {
		path, body string
		status     int
		code       kvcore.Code
	}{
		{"/v1/kv/get", `{"key": "k"`, 400, kvcore.CodeInvalid},
		{"/v1/kv/get", `{"key": "k", "extra": 1}`, 400, kvcore.CodeInvalid},
		{"/v1/kv/get", `{"key": ""}`, 400, kvcore.CodeInvalid},
		{"/v1/kv/put", `{"key": "k", "sibling": {"version": {"entries": []}, "value": ""}}`, 400, kvcore.CodeInvalid},
		{"/v1/kv/put", `{"key": "k", "sibling": {"version": {"entries": [{"actor": 1, "counter": 1}]}, "value": "!!"}}`, 400, kvcore.CodeInvalid},
		{"/v1/kv/put", `{"key": "k", "sibling": {"version": {"entries": [{"actor": 1, "counter": 1}]}, "value": "` + strings.Repeat("A", 2<<20) + `"}}`, 400, kvcore.CodeInvalid},
		{"/v1/kv/candidates", ``, 400, kvcore.CodeInvalid},
	} {
		method := http.MethodPost
		if tc.body == "" {
			method = http.MethodGet
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(method, tc.path, strings.NewReader(tc.body)))
		var e kvcore.ErrorJSON
		if w.Code != tc.status || json.Unmarshal(w.Body.Bytes(), &e) != nil || e.Error.Code != tc.code {
			t.Errorf("%s %.60s: HTTP %d %s, want %d %s", tc.path, tc.body, w.Code, w.Body.String(), tc.status, tc.code)
		}
	}
	if st := s.Replica().Stats(); st.Applied != 0 {
		t.Fatalf("bad requests applied %d PUTs", st.Applied)
	}
	// A good PUT, then a GET through the handler.
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/v1/kv/put",
		strings.NewReader(`{"key": "k", "sibling": {"version": {"entries": [{"actor": 1, "counter": 1}]}, "value": "aGk="}}`)))
	if w.Code != 200 || !strings.Contains(w.Body.String(), `"outcome":"applied"`) {
		t.Fatalf("put: %d %s", w.Code, w.Body.String())
	}
	w = httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/v1/kv/get", strings.NewReader(`{"key": "k"}`)))
	var g kvcore.GetResponse
	if w.Code != 200 || json.Unmarshal(w.Body.Bytes(), &g) != nil || len(g.Siblings) != 1 || string(g.Siblings[0].Value) != "hi" || g.HVC == nil {
		t.Fatalf("get: %d %s", w.Code, w.Body.String())
	}
}
