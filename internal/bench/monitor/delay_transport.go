package monitor

import (
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	"github.com/weft-db/weft/internal/bench"
)

// delayTransport is an http.RoundTripper that adds a one-way network delay
// to each direction of every exchange: delay plus a random jitter before the
// request is sent, and again after the response headers arrive. The jitter
// is uniform on [0, jitter], or with exp exponential with the same mean
// (jitter/2), cut at jitterExpCut means: the long tail of a shared network
// or a busy server's queue, where a uniform jitter has none.
// It models a LAN or WAN hop for request/response protocols at the cost of
// two timers per call, where a delaying TCP proxy would copy every byte
// through another process-local hop and compete for the same CPUs as the
// servers it measures.
type delayTransport struct {
	base          http.RoundTripper
	delay, jitter time.Duration
	exp           bool

	mu  sync.Mutex
	rng *rand.Rand
}

// jitterExpCut bounds an exponential jitter, in means.
const jitterExpCut = 20

// Jitter distributions of --net-jitter-dist.
const (
	JitterUniform = "uniform"
	JitterExp     = "exp"
)

func newDelayTransport(base http.RoundTripper, delay, jitter time.Duration, dist string, seed uint64) *delayTransport {
	return &delayTransport{base: base, delay: delay, jitter: jitter, exp: dist == JitterExp, rng: rand.New(rand.NewPCG(seed, 0xde1a7))}
}

// oneWay draws one direction's delay.
func (t *delayTransport) oneWay() time.Duration {
	d := t.delay
	if t.jitter > 0 {
		t.mu.Lock()
		if t.exp {
			mean := float64(t.jitter) / 2
			d += time.Duration(min(t.rng.ExpFloat64(), jitterExpCut) * mean)
		} else {
			d += time.Duration(t.rng.Int64N(int64(t.jitter) + 1))
		}
		t.mu.Unlock()
	}
	return d
}

func (t *delayTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := bench.Sleep(req.Context(), t.oneWay()); err != nil {
		return nil, err
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if err := bench.Sleep(req.Context(), t.oneWay()); err != nil {
		resp.Body.Close()
		return nil, err
	}
	return resp, nil
}
