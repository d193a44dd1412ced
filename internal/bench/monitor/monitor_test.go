package monitor

import (
	"math"
	"testing"
	"time"
)

// TestMonitorSummarise: benefit is eventual+monitor over sequential − 1,
// overhead 1 − eventual+monitor over eventual, per N and PUT share; the
// latency shares count every cell's violations, graph cells included; the
// rollback durations are summarised apart.
func TestMonitorSummarise(t *testing.T) {
	res := Results{Cells: []Cell{
		{N: 2, PutPct: 50, Mode: "sequential", OpsPerSec: 100},
		{N: 2, PutPct: 50, Mode: "eventual", OpsPerSec: 150},
		{N: 2, PutPct: 50, Mode: "eventual+monitor", OpsPerSec: 135, LatenciesMs: []float64{5, 50, 500}},
		{N: 2, PutPct: 38, Mode: "graph-eventual+monitor", OpsPerSec: 10, LatenciesMs: []float64{2000}},
		{N: 2, PutPct: 50, Mode: "rollback", OpsPerSec: 1, RollbackMs: []float64{60, 80}},
	}}
	res.summarise()
	if b := res.Benefit["N2"]["50%"]; math.Abs(b-0.35) > 1e-9 {
		t.Errorf("benefit %v, want 0.35", b)
	}
	if o := res.Overhead["N2"]["50%"]; math.Abs(o-0.10) > 1e-9 {
		t.Errorf("overhead %v, want 0.10", o)
	}
	if _, ok := res.Benefit["N2"]["38%"]; ok {
		t.Error("a graph cell counted as a synthetic one")
	}
	if b := res.Benefit["N2"]["50%"]; res.Rollback.Count != 2 || res.Rollback.Max != 80 || math.Abs(b-0.35) > 1e-9 {
		t.Errorf("rollback cell: summary %+v, benefit %v (the rollback cell must not count as a throughput cell)", res.Rollback, b)
	}
	if res.Latency.Count != 4 || res.Within100ms != 0.5 || res.Within1s != 0.75 {
		t.Errorf("latency %+v within100 %v within1s %v", res.Latency, res.Within100ms, res.Within1s)
	}
}

// TestRollbackBetaFor: the chance that all N variables are true at once,
// β_N^N, is the same at every N.
func TestRollbackBetaFor(t *testing.T) {
	for _, n := range []int{2, 3, 5} {
		if b := RollbackBetaFor(0.05, n); math.Abs(math.Pow(b, float64(n))-0.05*0.05) > 1e-12 {
			t.Errorf("N=%d: β=%v, β^N=%v, want %v", n, b, math.Pow(b, float64(n)), 0.05*0.05)
		}
	}
}

// TestNetBenefit: with 1 ms + uniform [0, 1 ms] one way, a round trip is
// 2 ms + X with X the sum of two uniforms; for two replicas E[min] + E[max]
// = 2·3 ms and E[max] − E[min] = E|X − Y| = 7/15 ms (X − Y is Irwin–Hall(4)
// − 2 in ms), so at 50% PUTs the network-only benefit is 3 / (3 − 7/30) − 1 = 7/83. No
// jitter or no PUTs: 0. It grows with N and the PUT share, and the
// exponential jitter's tail raises it.
func TestNetBenefit(t *testing.T) {
	ms := time.Millisecond
	if got, want := netBenefit(ms, ms, JitterUniform, 2, 50, 1), 7.0/83; math.Abs(got-want) > 0.002 {
		t.Errorf("N2 50%%: %.4f, want %.4f", got, want)
	}
	if got := netBenefit(ms, 0, JitterUniform, 5, 50, 1); got != 0 {
		t.Errorf("no jitter: %v, want 0", got)
	}
	if got := netBenefit(ms, ms, JitterUniform, 5, 0, 1); got != 0 {
		t.Errorf("no PUTs: %v, want 0", got)
	}
	prev := 0.0
	for _, n := range []int{2, 3, 5} {
		u := netBenefit(ms, ms, JitterUniform, n, 50, 1)
		if u <= prev {
			t.Errorf("N%d: %.4f, not above N−: %.4f", n, u, prev)
		}
		if e := netBenefit(ms, ms, JitterExp, n, 50, 1); e <= u {
			t.Errorf("N%d: exp %.4f not above uniform %.4f", n, e, u)
		}
		if q := netBenefit(ms, ms, JitterUniform, n, 25, 1); q >= u {
			t.Errorf("N%d: 25%% PUTs %.4f not below 50%%: %.4f", n, q, u)
		}
		prev = u
	}
	o := Options{Ns: []int{2}, PutPcts: []int{50}, NetDelay: ms, NetJitter: ms, JitterDist: JitterUniform, Seed: 1}
	var res Results
	o.netBenefits(&res)
	if got := res.NetBenefit["N2"]["50%"]; math.Abs(got-7.0/83) > 0.002 {
		t.Errorf("netBenefits N2 50%%: %v", res.NetBenefit)
	}
	o.NetDelay, o.NetJitter = 0, 0
	res = Results{}
	if o.netBenefits(&res); res.NetBenefit != nil {
		t.Errorf("no delay: NetBenefit %v, want none", res.NetBenefit)
	}
}

// TestRoundOrder: every round measures every mode once; over k rounds each
// mode is in each place once.
func TestRoundOrder(t *testing.T) {
	for _, k := range []int{1, 3, 4} {
		place := map[[2]int]int{}
		for rep := range k {
			order := roundOrder(rep, k)
			seen := map[int]bool{}
			for p, j := range order {
				if j < 0 || j >= k || seen[j] {
					t.Fatalf("k=%d round %d: order %v", k, rep, order)
				}
				seen[j] = true
				place[[2]int{j, p}]++
			}
		}
		if len(place) != k*k {
			t.Errorf("k=%d: (mode, place) pairs %v, want all %d once", k, place, k*k)
		}
	}
}
