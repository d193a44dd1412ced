package bench

import (
	"fmt"
	"time"
)

// netBenefitSamples is the Monte Carlo sample count of netBenefit: its
// standard error is well under 0.1 percentage point.
const netBenefitSamples = 200_000

// netBenefit is the benefit of eventual (R1 W1) over sequential (R1 W=N)
// consistency that the configured network delays alone account for, at n
// replicas and putPct% PUTs: the throughput ratio, minus one, of closed-loop
// clients whose every operation takes exactly its network time and no
// processing at all. A GET (R = 1, sent to all N, as the benchmark's clients
// do) takes the fastest of N round trips; a PUT the slowest of N (W = N) or
// the fastest (W = 1). Each round trip is two one-way delays drawn as the
// delay transport draws them. It is computed, not measured: the yardstick to
// read a measured benefit against. Processing time shrinks the measured
// benefit below it (it adds the same to both modes); uneven processing
// (a server descheduled while the others answer) can lift it above, as W = N
// also waits for the slowest server. 0 when there is no jitter.
func netBenefit(delay, jitter time.Duration, dist string, n, putPct int, seed uint64) float64 {
	if n < 1 || putPct <= 0 {
		return 0
	}
	t := newDelayTransport(nil, delay, jitter, dist, seed)
	var sumMin, sumMax float64
	for range netBenefitSamples {
		lo, hi := time.Duration(1<<62), time.Duration(0)
		for range n {
			rtt := t.oneWay() + t.oneWay()
			lo, hi = min(lo, rtt), max(hi, rtt)
		}
		sumMin += float64(lo)
		sumMax += float64(hi)
	}
	if sumMin == 0 {
		return 0
	}
	f := float64(putPct) / 100
	seq := (1-f)*sumMin + f*sumMax // mean op time × samples, W = N
	return seq/sumMin - 1          // eventual: every op the fastest of N
}

// netBenefits fills NetBenefit for every synthetic (N, PUT%) of res, when
// the run had a network delay or jitter.
func (o *MonitorOptions) netBenefits(res *MonitorResults) {
	if !o.delayed() {
		return
	}
	res.NetBenefit = map[string]map[string]float64{}
	for _, n := range o.Ns {
		k := fmt.Sprintf("N%d", n)
		res.NetBenefit[k] = map[string]float64{}
		for _, p := range o.PutPcts {
			res.NetBenefit[k][fmt.Sprintf("%d%%", p)] = netBenefit(o.NetDelay, o.NetJitter, o.JitterDist, n, p, o.Seed)
		}
	}
}
