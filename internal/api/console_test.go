package api_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/weft-db/weft/internal/api"
	"github.com/weft-db/weft/internal/api/apitest"
	"github.com/weft-db/weft/internal/api/console"
)

// TestConsoleServedBesideTheAPI checks the web console answers / and
// /console/… with its types and cache policy, and that the JSON API's paths
// and 404s are as before.
func TestConsoleServedBesideTheAPI(t *testing.T) {
	dg := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"path":"`+r.URL.Path+`","body":"`+strings.TrimSpace(string(body))+`"}`)
	}))
	defer dg.Close()
	srv := httptest.NewServer(api.NewHTTPHandler(apitest.New(), nil, api.HTTPOptions{DgraphHTTP: dg.Listener.Addr().String()}))
	defer srv.Close()
	get := func(method, path, body string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}

	var index string
	for _, p := range []string{"/", "/console/", "/console"} {
		resp, body := get("GET", p, "")
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" ||
			resp.Header.Get("Cache-Control") != "no-cache" || !strings.Contains(body, "<title>Weft console</title>") {
			t.Fatalf("GET %s: %d %v %.80q", p, resp.StatusCode, resp.Header, body)
		}
		index = body
	}
	assets := regexp.MustCompile(`/console/assets/[A-Za-z0-9_.-]+`).FindAllString(index, -1)
	if len(assets) != 2 {
		t.Fatalf("index.html names %v, want the JS and the CSS", assets)
	}
	for _, a := range assets {
		resp, body := get("GET", a, "")
		want := "text/javascript; charset=utf-8"
		if strings.HasSuffix(a, ".css") {
			want = "text/css; charset=utf-8"
		}
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != want ||
			resp.Header.Get("Cache-Control") != "public, max-age=31536000, immutable" || len(body) < 100 {
			t.Fatalf("GET %s: %d %v %d bytes", a, resp.StatusCode, resp.Header, len(body))
		}
	}
	for _, p := range []string{"/console/assets/nope.js", "/console/assets/", "/console/nope"} {
		if resp, _ := get("GET", p, ""); resp.StatusCode != 404 {
			t.Errorf("GET %s: %d, want 404", p, resp.StatusCode)
		}
	}
	if resp, body := get("GET", "/console/config.json", ""); resp.StatusCode != 200 || !strings.Contains(body, dg.Listener.Addr().String()) {
		t.Errorf("config.json: %d %s", resp.StatusCode, body)
	}
	if resp, body := get("POST", "/console/dgraph/query", "{ q(func: uid(0x1)) { uid } }"); resp.StatusCode != 200 ||
		body != `{"path":"/query","body":"{ q(func: uid(0x1)) { uid } }"}` {
		t.Errorf("DQL forward: %d %s", resp.StatusCode, body)
	}

	// The JSON API is unchanged around it.
	if resp, body := get("GET", "/v1/programs", ""); resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" || !strings.Contains(body, `"programs"`) {
		t.Errorf("GET /v1/programs: %d %s", resp.StatusCode, body)
	}
	for _, p := range []string{"/index.html", "/v2/commit", "/consoles"} {
		if resp, body := get("GET", p, ""); resp.StatusCode != 404 || !strings.Contains(body, `"NOT_FOUND"`) {
			t.Errorf("GET %s: %d %s, want the JSON 404", p, resp.StatusCode, body)
		}
	}
	if resp, _ := get("POST", "/", ""); resp.StatusCode == 200 {
		t.Errorf("POST /: 200")
	}

	// With the Dgraph face off, DQL answers 503 saying how to turn it on.
	off := httptest.NewServer(api.NewHTTPHandler(apitest.New(), nil, api.HTTPOptions{}))
	defer off.Close()
	resp, err := off.Client().Post(off.URL+"/console/dgraph/query", "application/dql", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 503 || !strings.Contains(string(b), "--dgraph-http") {
		t.Errorf("DQL with the face off: %d %s", resp.StatusCode, b)
	}
}

// TestConsoleProcessView checks `weft serve`'s cluster view: the process as
// its one member, its gatekeepers and shards as slots, and its request
// counters read from its own registry.
func TestConsoleProcessView(t *testing.T) {
	e := newEnv(t)
	for i := 0; i < 3; i++ {
		resp, err := http.Get(e.http.URL + "/v1/status")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	resp, err := http.Get(e.http.URL + "/console/cluster.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v console.ClusterView
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil || resp.StatusCode != 200 {
		t.Fatalf("%s: %v", resp.Status, err)
	}
	if v.Mode != "process" || len(v.Members) != 1 || !v.Members[0].Self || len(v.Slots) != 2 || len(v.Epochs) != 1 {
		t.Fatalf("view %+v", v)
	}
	if m := v.Members[0].Metrics; m == nil || m.Requests < 3 {
		t.Fatalf("the process's metrics %+v (%s): want its 3 status requests", m, v.Members[0].MetricsError)
	}
}
