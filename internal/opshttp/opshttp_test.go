package opshttp

import (
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
)

// /metrics exports the role's gauges under its namespace next to the Go
// and process collectors; /healthz follows the health function.
func TestServesGaugesAndHealth(t *testing.T) {
	var healthy atomic.Bool
	s, err := Start("127.0.0.1:0", Config{Namespace: "weft_test",
		Gauges:  func() map[string]float64 { return map[string]float64{"vertices": 42, "serving": 1} },
		Healthy: func() (bool, string) { return healthy.Load(), "detail" }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get("http://" + s.Addr() + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	code, body := get("/metrics")
	for _, want := range []string{"weft_test_vertices 42", "weft_test_serving 1", "go_goroutines", "process_"} {
		if code != 200 || !strings.Contains(body, want) {
			t.Fatalf("/metrics: %d, lacks %q:\n%.800s", code, want, body)
		}
	}
	if code, body := get("/healthz"); code != 503 || !strings.Contains(body, "unavailable") {
		t.Fatalf("/healthz while unhealthy: %d %s", code, body)
	}
	healthy.Store(true)
	if code, body := get("/healthz"); code != 200 || !strings.Contains(body, `"ok"`) {
		t.Fatalf("/healthz while healthy: %d %s", code, body)
	}
	if _, err := Start("127.0.0.1:0", Config{}); err == nil {
		t.Fatal("a config without namespace and health was accepted")
	}
}
