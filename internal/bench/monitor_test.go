package bench

import (
	"math"
	"testing"
)

// TestMonitorSummarise: benefit is eventual+monitor over sequential − 1,
// overhead 1 − eventual+monitor over eventual, per N and PUT share; the
// latency shares count every cell's violations, graph cells included; the
// rollback durations are summarised apart.
func TestMonitorSummarise(t *testing.T) {
	res := MonitorResults{Cells: []MonitorCell{
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
