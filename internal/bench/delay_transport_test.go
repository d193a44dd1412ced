package bench

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// countingTransport records when requests reach the network.
type countingTransport struct {
	base  http.RoundTripper
	sent  []time.Time
	calls int
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.calls++
	c.sent = append(c.sent, time.Now())
	return c.base.RoundTrip(r)
}

func TestDelayTransportDelaysBothDirections(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) }))
	defer srv.Close()
	inner := &countingTransport{base: http.DefaultTransport}
	const d = 20 * time.Millisecond
	hc := &http.Client{Transport: newDelayTransport(inner, d, 0, 1)}
	start := time.Now()
	resp, err := hc.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	total := time.Since(start)
	if inner.calls != 1 {
		t.Fatalf("inner transport called %d times, want 1", inner.calls)
	}
	if before := inner.sent[0].Sub(start); before < d {
		t.Fatalf("request left after %v, want at least the one-way delay %v", before, d)
	}
	if total < 2*d {
		t.Fatalf("round trip took %v, want at least two one-way delays (%v)", total, 2*d)
	}
}

func TestDelayTransportJitterStaysInRange(t *testing.T) {
	tr := newDelayTransport(nil, time.Millisecond, 3*time.Millisecond, 7)
	seen := map[bool]int{}
	for range 2000 {
		d := tr.oneWay()
		if d < time.Millisecond || d > 4*time.Millisecond {
			t.Fatalf("one-way delay %v outside [1ms, 4ms]", d)
		}
		seen[d > 2500*time.Microsecond]++
	}
	if seen[true] == 0 || seen[false] == 0 {
		t.Fatalf("jitter not spread over its range: %v", seen)
	}
}

func TestDelayTransportStopsWithTheContext(t *testing.T) {
	inner := &countingTransport{base: http.DefaultTransport}
	hc := &http.Client{Transport: newDelayTransport(inner, time.Hour, 0, 1)}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://127.0.0.1:1/", nil)
	if _, err := hc.Do(req); err == nil {
		t.Fatal("a request whose context ended during the delay succeeded")
	}
	if inner.calls != 0 {
		t.Fatalf("the request reached the network (%d calls) after its context ended", inner.calls)
	}
}
