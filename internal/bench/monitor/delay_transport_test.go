package monitor

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
	hc := &http.Client{Transport: newDelayTransport(inner, d, 0, JitterUniform, 1)}
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
	tr := newDelayTransport(nil, time.Millisecond, 3*time.Millisecond, JitterUniform, 7)
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
	hc := &http.Client{Transport: newDelayTransport(inner, time.Hour, 0, JitterUniform, 1)}
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

// TestDelayTransportExpJitter checks the exponential jitter: the same mean
// as the uniform one (jitter/2), a tail beyond the uniform's range, never
// below the fixed delay or above the cut.
func TestDelayTransportExpJitter(t *testing.T) {
	const delay, jitter = time.Millisecond, 2 * time.Millisecond
	tr := newDelayTransport(nil, delay, jitter, JitterExp, 11)
	const n = 20000
	var sum time.Duration
	beyond := 0
	for range n {
		d := tr.oneWay()
		if d < delay || d > delay+jitterExpCut*jitter/2 {
			t.Fatalf("one-way delay %v outside [%v, %v]", d, delay, delay+jitterExpCut*jitter/2)
		}
		if d > delay+jitter {
			beyond++
		}
		sum += d - delay
	}
	if mean := sum / n; mean < 950*time.Microsecond || mean > 1050*time.Microsecond {
		t.Fatalf("mean jitter %v, want about jitter/2 = %v", mean, jitter/2)
	}
	// P(Exp(mean m) > 2m) = e^-2 ≈ 13.5%: beyond the uniform's range.
	if frac := float64(beyond) / n; frac < 0.12 || frac > 0.15 {
		t.Fatalf("%.3f of the delays beyond delay+jitter, want about 0.135", frac)
	}
}
