package monitor

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
	lo, hi := netRoundTrips(delay, jitter, dist, n, seed)
	return benefitOf(lo, hi, putPct)
}

// netRoundTrips returns the mean of the fastest (lo) and of the slowest (hi)
// of n round trips, each two one-way delays drawn as the delay transport
// draws them.
func netRoundTrips(delay, jitter time.Duration, dist string, n int, seed uint64) (lo, hi float64) {
	if n < 1 {
		return 0, 0
	}
	t := newDelayTransport(nil, delay, jitter, dist, seed)
	for range netBenefitSamples {
		fast, slow := time.Duration(1<<62), time.Duration(0)
		for range n {
			rtt := t.oneWay() + t.oneWay()
			fast, slow = min(fast, rtt), max(slow, rtt)
		}
		lo += float64(fast)
		hi += float64(slow)
	}
	return lo / netBenefitSamples, hi / netBenefitSamples
}

// benefitOf is netBenefit from the mean fastest and slowest round trips.
func benefitOf(lo, hi float64, putPct int) float64 {
	if lo == 0 || putPct <= 0 {
		return 0
	}
	f := float64(putPct) / 100
	seq := (1-f)*lo + f*hi // mean op time, W = N
	return seq/lo - 1      // eventual: every op the fastest of N
}

// netBenefits fills NetBenefit for every synthetic (N, PUT%) of res, when
// the run had a network delay or jitter.
func (o *Options) netBenefits(res *Results) {
	if !o.delayed() {
		return
	}
	res.NetBenefit = map[string]map[string]float64{}
	for _, n := range o.Ns {
		k := fmt.Sprintf("N%d", n)
		res.NetBenefit[k] = map[string]float64{}
		lo, hi := netRoundTrips(o.NetDelay, o.NetJitter, o.JitterDist, n, o.Seed) // the same for every PUT share
		for _, p := range o.PutPcts {
			res.NetBenefit[k][fmt.Sprintf("%d%%", p)] = benefitOf(lo, hi, p)
		}
	}
}
