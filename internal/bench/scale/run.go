package scale

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/weft-db/weft/client/weft"
	"github.com/weft-db/weft/internal/bench"
	"github.com/weft-db/weft/internal/bench/tao"
)

// Point is one shape and mix of the grid: what the clients did, the CPU
// every role used over the measured window, the cluster's counters, and the
// model's prediction from them.
type Point struct {
	Gatekeepers int    `json:"gatekeepers"`
	Shards      int    `json:"shards"`
	Mix         string `json:"mix"`
	// Error is why the shape or mix failed (the other figures are then
	// partial); Dir the cluster's directory, with the processes' logs,
	// when it was kept (a failed shape's, or every one with KeepDirs).
	Error string `json:"error,omitempty"`
	Dir   string `json:"dir,omitempty"`
	// LoadSeconds is the time to load the graph into this shape's cluster.
	LoadSeconds float64 `json:"load_seconds"`
	// Seconds is the measured window's wall time; Ops the operations the
	// clients finished in it (failed ones included, as in bench tao).
	Seconds      float64                 `json:"seconds"`
	Ops          int64                   `json:"ops"`
	OpsPerSec    float64                 `json:"ops_per_sec"`
	Errors       int64                   `json:"errors"`
	ErrorSamples []string                `json:"error_samples,omitempty"`
	Retries      int64                   `json:"retries"`
	ReadsUS      bench.Summary           `json:"reads_latency_us"`
	WritesUS     bench.Summary           `json:"writes_latency_us"`
	PerOp        map[string]tao.OpResult `json:"per_op"`
	// CPUSeconds is the CPU each role used over the window: every process
	// of the role with its descendants (/proc utime+stime, cutime+cstime),
	// and for "client" this bench process. ProcCPUSeconds is per process.
	CPUSeconds     map[string]float64 `json:"cpu_seconds"`
	ProcCPUSeconds map[string]float64 `json:"proc_cpu_seconds"`
	// CPUSecondsTotal is every role's CPU, clients included;
	// CPUSecondsCluster leaves the clients out. CoresUsed is the total
	// over the window's wall time.
	CPUSecondsTotal   float64 `json:"cpu_seconds_total"`
	CPUSecondsCluster float64 `json:"cpu_seconds_cluster"`
	CoresUsed         float64 `json:"cores_used"`
	// OpsPerCPUSecond is the throughput per core: ops/s divided by the
	// cores used (CPU seconds per wall second), i.e. operations per CPU
	// second, clients included; OpsPerClusterCPUSecond without the clients.
	OpsPerCPUSecond        float64 `json:"ops_per_cpu_second"`
	OpsPerClusterCPUSecond float64 `json:"ops_per_cluster_cpu_second"`
	// The gatekeepers' Status counters over the window, summed.
	Commits  uint64 `json:"commits"`
	Aborts   uint64 `json:"aborts"`
	Programs uint64 `json:"programs"`
	// KronosCalls is the gatekeepers' kronos_calls counter over the window,
	// per commit and per operation.
	KronosCalls          uint64  `json:"kronos_calls"`
	KronosCallsPerCommit float64 `json:"kronos_calls_per_commit"`
	KronosCallsPerOp     float64 `json:"kronos_calls_per_op"`
	// From the Kronos leader's Stats over the window: events created (a
	// commit the gatekeeper orders through Kronos creates at least the
	// event of its own new stamp; a shard ordering concurrent stamps for a
	// read creates those it had not) and raft log entries applied (each a
	// batch of ordering and cleanup commands).
	KronosEventsCreated    uint64  `json:"kronos_events_created"`
	KronosEventsPerCommit  float64 `json:"kronos_events_per_commit"`
	KronosEventsPerOp      float64 `json:"kronos_events_per_op"`
	KronosLogEntries       uint64  `json:"kronos_log_entries"`
	KronosLogEntriesPerOp  float64 `json:"kronos_log_entries_per_op"`
	KronosOrderedFraction  float64 `json:"kronos_ordered_commit_fraction_max"`
	NopRequestsUnavailable string  `json:"nop_requests"`
	// Edge accounting of the TAO mix: the edge count before plus created
	// minus deleted must be what the shards report after.
	EdgesExpected   int64 `json:"edges_expected"`
	EdgesReported   int64 `json:"edges_reported"`
	EdgesConsistent bool  `json:"edges_consistent"`
	// IdleCoresPerProcess is the cores one process of each role used with
	// the cluster idle (measured before the loads; the clients are not).
	IdleCoresPerProcess map[string]float64 `json:"idle_cores_per_process"`
	// CostUSPerOp is each role's CPU µs per operation; MarginalCostUSPerOp
	// the same less the role's idle CPU over the window: the model's input.
	CostUSPerOp         map[string]float64 `json:"cost_us_per_op"`
	MarginalCostUSPerOp map[string]float64 `json:"marginal_cost_us_per_op"`
	Model               modelPrediction    `json:"model"`
}

// scaleIdle is what a cluster's processes use without load.
type scaleIdle struct {
	// rate is CPU seconds per second of each whole role; perProc the cores
	// one process of the role uses.
	rate, perProc map[string]float64
}

// measureIdle samples the cluster's CPU over window with no client running.
func measureIdle(ctx context.Context, c *scaleCluster, window time.Duration) (scaleIdle, error) {
	idle := scaleIdle{rate: map[string]float64{}, perProc: map[string]float64{}}
	a, err := c.sampleCPU()
	if err != nil {
		return idle, err
	}
	select {
	case <-time.After(window):
	case <-ctx.Done():
		return idle, ctx.Err()
	}
	b, err := c.sampleCPU()
	if err != nil {
		return idle, err
	}
	roles, _ := c.cpuByRole(a, b)
	secs := b.at.Sub(a.at).Seconds()
	n := map[string]int{}
	for _, p := range c.procs {
		n[p.Role]++
	}
	for r, cpu := range roles {
		if r == roleClient || n[r] == 0 || secs <= 0 {
			continue // the clients are not running: their process is not idle cluster load
		}
		idle.rate[r] = cpu / secs
		idle.perProc[r] = bench.Round(cpu/secs/float64(n[r]), 4)
	}
	return idle, nil
}

// nopUnavailable says why nop_requests has no figure.
const nopUnavailable = "not measured: the cluster's Status (over the wire) does not carry the gatekeepers' NOP count"

// dialGatekeepers opens conns client connections to every gatekeeper.
func dialGatekeepers(addrs []string, conns, streams int) ([][]*weft.Client, func(), error) {
	var all []*weft.Client
	closeAll := func() {
		for _, c := range all {
			c.Close()
		}
	}
	out := make([][]*weft.Client, len(addrs))
	for i, a := range addrs {
		for range max(conns, 1) {
			c, err := weft.Dial(a, weft.Options{Streams: streams})
			if err != nil {
				closeAll()
				return nil, nil, err
			}
			all = append(all, c)
			out[i] = append(out[i], c)
		}
	}
	return out, closeAll, nil
}

// measureMix runs mix m for o.Duration from o.Clients clients, client i on
// gatekeeper i mod G, and measures the window.
func measureMix(ctx context.Context, o Options, g *tao.Graph, c *scaleCluster, gks [][]*weft.Client,
	shape Shape, m string, idle scaleIdle) (Point, error) {
	p := Point{Gatekeepers: shape.Gatekeepers, Shards: shape.Shards, Mix: m, NopRequestsUnavailable: nopUnavailable}
	mix, err := scaleMix(m)
	if err != nil {
		return p, err
	}
	heads := make([]*weft.Client, len(gks))
	bes := make([]tao.Backend, len(gks))
	for i, conns := range gks {
		heads[i] = conns[0]
		bes[i] = tao.NewClientBackend(conns, false, tao.EdgesLimit)
	}
	workers := make([]*tao.Worker, o.Clients)
	for i := range workers {
		workers[i] = tao.NewWorker(i, bench.NewRand(o.Seed, 1000+uint64(i)), bes[i%len(bes)], g, mix)
	}
	st0, err := gatekeeperCounters(ctx, heads)
	if err != nil {
		return p, err
	}
	k0, err := kronosStats(ctx, c.addrs(roleKronos))
	if err != nil {
		return p, err
	}
	cpu0, err := c.sampleCPU()
	if err != nil {
		return p, err
	}
	bar := bench.NewBar(o.Progress, int64(o.Duration/time.Millisecond), fmt.Sprintf("%s %dg×%ds", m, shape.Gatekeepers, shape.Shards))
	interval := min(max(o.Duration/20, 100*time.Millisecond), time.Second)
	elapsed, _ := tao.RunClients(ctx, workers, o.Duration, interval, func(t time.Duration) {
		_ = bar.Set64(min(int64(t/time.Millisecond), int64(o.Duration/time.Millisecond)))
	})
	cpu1, cerr := c.sampleCPU()
	_ = bar.Finish()
	if ctx.Err() != nil {
		return p, ctx.Err()
	}
	if cerr != nil {
		return p, cerr
	}
	t := tao.Summarise(workers, elapsed)
	r := t.Run
	p.Seconds, p.Ops, p.OpsPerSec, p.Errors, p.ErrorSamples, p.Retries = r.Seconds, r.Ops, r.OpsPerSec, r.Errors, r.ErrorSamples, r.Retries
	p.ReadsUS, p.WritesUS, p.PerOp = t.Reads, t.Writes, t.Ops
	window := cpu1.at.Sub(cpu0.at).Seconds()
	p.CPUSeconds, p.ProcCPUSeconds = c.cpuByRole(cpu0, cpu1)
	p.fillCPU(window)
	st1, err := gatekeeperCounters(ctx, heads)
	if err != nil {
		return p, err
	}
	k1, err := kronosStats(ctx, c.addrs(roleKronos))
	if err != nil {
		return p, err
	}
	p.fillCounters(st0, st1, k0.GetCreated(), k1.GetCreated(), k0.GetAppliedIndex(), k1.GetAppliedIndex())
	p.IdleCoresPerProcess = idle.perProc
	p.CostUSPerOp, p.MarginalCostUSPerOp = map[string]float64{}, map[string]float64{}
	costs := marginalCosts(p.CPUSeconds, idle.rate, window, p.Ops)
	for r, s := range marginalCosts(p.CPUSeconds, nil, window, p.Ops) {
		p.CostUSPerOp[r] = bench.Round(s*1e6, 2)
	}
	for r, s := range costs {
		p.MarginalCostUSPerOp[r] = bench.Round(s*1e6, 2)
	}
	p.Model = roundPrediction(predict(costs, idle.perProc, shape.Gatekeepers, shape.Shards, float64(o.ModelCores)))
	err = p.checkEdges(ctx, heads[0], st0.edges, r.EdgesCreated, r.EdgesDeleted)
	if p.Errors > 0 {
		err = errors.Join(err, fmt.Errorf("bench: %d operations failed (first: %v)", p.Errors, p.ErrorSamples))
	}
	return p, err
}

// fillCPU derives the totals and the throughput per core from CPUSeconds.
func (p *Point) fillCPU(window float64) {
	for r, s := range p.CPUSeconds {
		p.CPUSecondsTotal += s
		if r != roleClient {
			p.CPUSecondsCluster += s
		}
	}
	p.CPUSecondsTotal, p.CPUSecondsCluster = bench.Round(p.CPUSecondsTotal, 3), bench.Round(p.CPUSecondsCluster, 3)
	if window > 0 {
		p.CoresUsed = bench.Round(p.CPUSecondsTotal/window, 3)
	}
	if p.CPUSecondsTotal > 0 {
		p.OpsPerCPUSecond = bench.Round(float64(p.Ops)/p.CPUSecondsTotal, 1)
	}
	if p.CPUSecondsCluster > 0 {
		p.OpsPerClusterCPUSecond = bench.Round(float64(p.Ops)/p.CPUSecondsCluster, 1)
	}
}

// fillCounters takes the differences of the gatekeepers' and Kronos's
// counters over the window.
func (p *Point) fillCounters(a, b gkCounters, created0, created1, applied0, applied1 uint64) {
	p.Commits, p.Aborts, p.Programs = b.commits-a.commits, b.aborts-a.aborts, b.programs-a.programs
	p.KronosCalls = b.kronosCalls - a.kronosCalls
	p.KronosEventsCreated, p.KronosLogEntries = created1-created0, applied1-applied0
	per := func(n uint64, d uint64) float64 {
		if d == 0 {
			return 0
		}
		return bench.Round(float64(n)/float64(d), 6)
	}
	ops := uint64(max(p.Ops, 0))
	p.KronosCallsPerCommit, p.KronosCallsPerOp = per(p.KronosCalls, p.Commits), per(p.KronosCalls, ops)
	p.KronosEventsPerCommit, p.KronosEventsPerOp = per(p.KronosEventsCreated, p.Commits), per(p.KronosEventsCreated, ops)
	p.KronosLogEntriesPerOp = per(p.KronosLogEntries, ops)
	// Every commit ordered through Kronos created at least one event (its
	// own stamp's), so events/commits bounds the ordered fraction above.
	p.KronosOrderedFraction = min(p.KronosEventsPerCommit, 1)
}

// checkEdges waits until the shards report the edge count the clients'
// creates and deletes imply.
func (p *Point) checkEdges(ctx context.Context, gk *weft.Client, before, created, deleted int64) error {
	p.EdgesExpected = before + created - deleted
	api := &loadAPI{gks: []*weft.Client{gk}}
	st, err := tao.Settle(ctx, api.Status, -1, p.EdgesExpected)
	if st != nil {
		p.EdgesReported = st.Edges
	}
	p.EdgesConsistent = err == nil
	return err
}

func roundPrediction(m modelPrediction) modelPrediction {
	m.OpsPerSec = bench.Round(finite(m.OpsPerSec), 0)
	for r, b := range m.Bounds {
		m.Bounds[r] = bench.Round(b, 0)
	}
	return m
}
