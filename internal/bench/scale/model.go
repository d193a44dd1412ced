package scale

import (
	"math"
	"slices"
)

// The extrapolation model of `weft bench scale` (docs/scale-out.md). It is a
// model, not a measurement: from the CPU each role spent per operation on
// this machine, it predicts the throughput of the same cluster with every
// process on a machine of its own with C cores:
//
//	throughput ≈ min over roles r of  n_r · (C − idle_r) / cost_r
//
// where cost_r is role r's marginal CPU seconds per operation (all its
// processes together, their idle CPU over the window taken out), idle_r the
// cores one process of the role uses with no load at all (heartbeats, clock
// announcements: measured before the loads), and n_r its process count: G
// gatekeepers, S shards, one Kronos (its leader does the work), one
// PostgreSQL, one coordinator, and G client machines (one load generator per
// gatekeeper). Assumptions: the network costs nothing beyond what loopback
// cost here (already in the CPU figures), a role's work spreads evenly over
// its processes, a process uses C cores as well as it used its share of this
// machine (linear scaling per role), and the cost per operation and the idle
// load of a role do not change with G, S or load (contention, batching and
// cache effects are ignored). The role with the smallest bound is the
// predicted bottleneck.

// Role names of the model, as `weft cluster up` names its processes, plus
// the load generator.
const (
	roleGatekeeper = "gatekeeper"
	roleShard      = "shard"
	roleKronos     = "kronos"
	rolePostgres   = "postgres"
	roleCoord      = "coord"
	roleClient     = "client"
)

// modelProcs is n_r: how many machines role r's work spreads over in the
// model. Kronos, PostgreSQL and the coordinator are single processes.
func modelProcs(role string, gatekeepers, shards int) int {
	switch role {
	case roleGatekeeper, roleClient:
		return gatekeepers
	case roleShard:
		return shards
	}
	return 1
}

// modelPrediction is the model's answer for one cluster shape.
type modelPrediction struct {
	OpsPerSec float64 `json:"ops_per_sec"`
	// Bottleneck is the role with the smallest bound.
	Bottleneck string `json:"bottleneck"`
	// Bounds is n_r · C / cost_r per role (roles without cost are unbounded
	// and absent).
	Bounds map[string]float64 `json:"bounds_ops_per_sec"`
}

// predict applies the model to costs (marginal CPU seconds per operation,
// by role) and idle (cores one idle process of the role uses) for
// gatekeepers and shards processes on machines of cores cores. Roles are
// visited in name order, so ties pick the same bottleneck every time. A
// model without any cost predicts +Inf (JSON cannot hold it: callers check).
func predict(costs, idle map[string]float64, gatekeepers, shards int, cores float64) modelPrediction {
	p := modelPrediction{OpsPerSec: math.Inf(1), Bounds: map[string]float64{}}
	roles := make([]string, 0, len(costs))
	for r := range costs {
		roles = append(roles, r)
	}
	slices.Sort(roles)
	for _, r := range roles {
		c := costs[r]
		if c <= 0 {
			continue
		}
		b := float64(modelProcs(r, gatekeepers, shards)) * max(cores-idle[r], 0) / c
		p.Bounds[r] = b
		if b < p.OpsPerSec {
			p.OpsPerSec, p.Bottleneck = b, r
		}
	}
	return p
}

// marginalCosts returns each role's CPU seconds per operation over a
// window of window seconds, less what the role's processes use idle
// (idleRate: CPU seconds per second of the whole role), never below zero.
func marginalCosts(cpuSeconds, idleRate map[string]float64, window float64, ops int64) map[string]float64 {
	out := map[string]float64{}
	if ops <= 0 {
		return out
	}
	for r, s := range cpuSeconds {
		out[r] = max(s-idleRate[r]*window, 0) / float64(ops)
	}
	return out
}
