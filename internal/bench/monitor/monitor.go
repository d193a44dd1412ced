package monitor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"gonum.org/v1/plot/plotter"

	kvclient "github.com/weft-db/weft/client/kv"
	"github.com/weft-db/weft/internal/bench"
	"github.com/weft-db/weft/internal/faultproxy"
	"github.com/weft-db/weft/internal/kv"
	"github.com/weft-db/weft/internal/kv/apps"
	"github.com/weft-db/weft/internal/kv/kvcore"
	"github.com/weft-db/weft/internal/monitor"
)

// Options configures `weft bench monitor`: the experiments of
// "Optimistic Execution in Key-Value Store" §VI on this machine, with the kv
// servers as separate processes on loopback.
type Options struct {
	// Bin is the weft binary the servers run. Required.
	Bin string
	// Out is the directory for monitor.json and the PNGs ("" writes none).
	Out string
	// Ns are the replication factors (servers = N). Default 2, 3, 5.
	Ns []int
	// PutPcts are the PUT percentages. Default 10, 25, 50.
	PutPcts []int
	// Duration is each cell's measured time. Default 5 s.
	Duration time.Duration
	// Repeat measures each synthetic cell this many times, in rounds that
	// measure every mode once (runSynthetic), and reports the median.
	// Default 1.
	Repeat int
	// ClientsPerServer is the client goroutines per server (the paper: 2).
	ClientsPerServer int
	// Beta is the probability a write makes a synthetic variable true
	// (the paper: 1%).
	Beta float64
	// Epsilon is the HVC ε for servers and monitor. Default 0: every
	// process reads this machine's clock, so the true skew bound is 0.
	Epsilon time.Duration
	// FlushEvery is the detectors' heartbeat. Default 50 ms.
	FlushEvery time.Duration
	// Graph also runs the graph application (local mutual exclusion).
	Graph bool
	// LatencyBeta, if positive, adds a cell per N at 50% PUTs with β =
	// LatencyBeta, every PUT of a variable's owner to its variable,
	// monitors on and rollback off (the paper's debugging use): enough
	// violations to measure the detection latency distribution, which
	// β = 1% rarely gives in a short run.
	LatencyBeta float64
	// RollbackBeta, if positive, adds a cell per N like the latency cell
	// but with rollback on and β = RollbackBeta^(2/N) (the same chance,
	// for independent variables, that all N are true at once as two at
	// RollbackBeta; else N = 5 rarely violates): violations found and
	// rolled back, with each rollback's duration and the requests it
	// refused (PAUSED) or made the clients redo.
	RollbackBeta float64
	// NetDelay and NetJitter, if set, put a fault proxy in front of every
	// server that delays each direction by NetDelay plus up to NetJitter:
	// the network latency the paper's AWS setup had and loopback has not
	// (with none, W = 1 saves no work on a CPU-bound machine: the client
	// still sends every PUT to all N replicas).
	NetDelay, NetJitter time.Duration
	// DelayAt says where the delay is added: "proxy" (default) puts a
	// delaying TCP proxy in front of every server; "client" delays each
	// request and each response in the HTTP transport of the clients and
	// the monitor (two timers per call instead of a proxy copying every
	// byte on the same two cores as the servers).
	DelayAt string
	// JitterDist is NetJitter's distribution with DelayAt "client":
	// "uniform" (default: on [0, NetJitter]) or "exp" (exponential with
	// the same mean, NetJitter/2: a long tail, as a busy server's queue
	// or a shared network has).
	JitterDist string
	// GraphVertices and GraphDegree shape its random graph. Default 200, 4.
	GraphVertices, GraphDegree int
	// Seed seeds the workloads. Default 1.
	Seed     uint64
	Dir      string // scratch directory for the servers' data (default: a temp dir)
	Progress io.Writer
	Log      *slog.Logger
}

func (o *Options) defaults() {
	if len(o.Ns) == 0 {
		o.Ns = []int{2, 3, 5}
	}
	if len(o.PutPcts) == 0 {
		o.PutPcts = []int{10, 25, 50}
	}
	if o.Duration <= 0 {
		o.Duration = 5 * time.Second
	}
	if o.Repeat <= 0 {
		o.Repeat = 1
	}
	if o.ClientsPerServer <= 0 {
		o.ClientsPerServer = 2
	}
	if o.FlushEvery <= 0 {
		o.FlushEvery = 50 * time.Millisecond
	}
	if o.GraphVertices <= 0 {
		o.GraphVertices = 200
	}
	if o.GraphDegree <= 0 {
		o.GraphDegree = 4
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.JitterDist == "" {
		o.JitterDist = JitterUniform
	}
	if o.DelayAt == "" {
		o.DelayAt = "proxy"
	}
	if o.Log == nil {
		o.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
}

// Cell is one measured configuration.
type Cell struct {
	N      int    `json:"n"`
	PutPct int    `json:"put_pct"`
	Mode   string `json:"mode"` // sequential, eventual, eventual+monitor; graph-…
	Quorum string `json:"quorum"`
	// OpsPerSec is completed GETs and PUTs per second over Duration (for
	// the graph cells, UpdatesPerSec is vertex updates per second).
	OpsPerSec float64 `json:"ops_per_sec"`
	// OpsPerSecRuns are the Repeat measurements OpsPerSec is the median of.
	OpsPerSecRuns []float64 `json:"ops_per_sec_runs,omitempty"`
	UpdatesPerSec float64   `json:"updates_per_sec,omitempty"`
	Ops           uint64    `json:"ops"`
	Errors        uint64    `json:"errors"`
	Violations    uint64    `json:"violations"`
	Rollbacks     uint64    `json:"rollbacks"`
	RollbackFails uint64    `json:"rollback_fails"`
	Candidates    uint64    `json:"candidates"`
	Missed        uint64    `json:"missed_candidates"`
	// LatenciesMs are the detection latencies of this cell's violations.
	LatenciesMs []float64 `json:"latencies_ms,omitempty"`
	// RollbackMs are the durations of this cell's completed rollbacks
	// (pause, cut choice, restore and resume of every server), and
	// Undone the writes they discarded in all.
	RollbackMs []float64 `json:"rollback_ms,omitempty"`
	Undone     uint64    `json:"undone,omitempty"`
	Seconds    float64   `json:"seconds"`
}

// Results is the JSON "results" of the benchmark.
type Results struct {
	Cells []Cell `json:"cells"`
	// Benefit[N][put%] is eventual+monitor over sequential throughput − 1
	// (the paper's Fig. 7: +25%, +23%, +36% at 50% PUTs for N = 2, 3, 5).
	Benefit map[string]map[string]float64 `json:"benefit"`
	// Overhead[N][put%] is 1 − eventual+monitor over eventual throughput
	// (the paper: typically < 8%).
	Overhead map[string]map[string]float64 `json:"overhead"`
	// NetBenefit[N][put%] is, for runs with a network delay, the benefit
	// the delays alone account for (netBenefit: a system with no
	// processing time): computed from the delay distribution, not measured.
	NetBenefit map[string]map[string]float64 `json:"net_benefit,omitempty"`
	// Rollback summarises the rollback cells' rollback durations (ms).
	Rollback bench.Summary `json:"rollback_ms"`
	// Latency summarises every detection latency (ms); Within100ms is the
	// share detected within 100 ms (the paper: 99.94%).
	Latency     bench.Summary `json:"latency_ms"`
	Within100ms float64       `json:"within_100ms"`
	Within1s    float64       `json:"within_1s"`
}

// Run runs every cell and writes monitor.json and the PNGs.
func Run(ctx context.Context, o Options) (*bench.Result, error) {
	o.defaults()
	if o.Bin == "" {
		return nil, errors.New("bench: monitor: the weft binary (Bin) is required")
	}
	if o.DelayAt != "proxy" && o.DelayAt != "client" {
		return nil, fmt.Errorf("bench: monitor: --net-delay-at is %q, want proxy or client", o.DelayAt)
	}
	switch {
	case o.JitterDist != JitterUniform && o.JitterDist != JitterExp:
		return nil, fmt.Errorf("bench: monitor: --net-jitter-dist is %q, want %s or %s", o.JitterDist, JitterUniform, JitterExp)
	case o.JitterDist == JitterExp && o.DelayAt != "client":
		return nil, errors.New("bench: monitor: --net-jitter-dist exp needs --net-delay-at client (the proxies' jitter is uniform)")
	}
	dir := o.Dir
	if dir == "" {
		d, err := os.MkdirTemp("", "weft-bench-monitor-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	started := time.Now()
	env := bench.CurrentEnv()
	env.LoadAvgStart = bench.LoadAvg()
	cpuStart, cpuOK := bench.ReadCPUTimes()
	cellsTotal := len(o.Ns) * 3 * len(o.PutPcts)
	if o.Graph {
		cellsTotal += 2 * len(o.Ns)
	}
	if o.LatencyBeta > 0 {
		cellsTotal += len(o.Ns)
	}
	if o.RollbackBeta > 0 {
		cellsTotal += len(o.Ns)
	}
	bar := bench.NewBar(o.Progress, int64(cellsTotal), "bench monitor")
	var res Results
	run := 0
	for _, n := range o.Ns {
		run++
		cells, err := o.runSynthetic(ctx, filepath.Join(dir, fmt.Sprintf("r%d", run)), n, []string{"sequential", "eventual", "eventual+monitor"}, bar)
		res.Cells = append(res.Cells, cells...)
		if err != nil {
			return nil, err
		}
		for _, extra := range []struct {
			mode string
			beta float64
		}{{"latency", o.LatencyBeta}, {"rollback", o.RollbackBeta}} {
			if extra.beta <= 0 {
				continue
			}
			run++
			cells, err := o.runSynthetic(ctx, filepath.Join(dir, fmt.Sprintf("r%d", run)), n, []string{extra.mode}, bar)
			res.Cells = append(res.Cells, cells...)
			if err != nil {
				return nil, err
			}
		}
		if o.Graph {
			for _, mode := range []string{"graph-sequential", "graph-eventual+monitor"} {
				run++
				cell, err := o.runGraph(ctx, filepath.Join(dir, fmt.Sprintf("r%d", run)), n, mode)
				bar.Add(1)
				if err != nil {
					return nil, err
				}
				res.Cells = append(res.Cells, cell)
			}
		}
	}
	bar.Finish()
	res.summarise()
	o.netBenefits(&res)
	env.LoadAvgEnd = bench.LoadAvg()
	cpuEnd, ok := bench.ReadCPUTimes()
	env.SetCPUShares(cpuStart, cpuEnd, cpuOK && ok)
	r := &bench.Result{
		Benchmark: "monitor", Schema: bench.SchemaVersion, Started: started, Seconds: time.Since(started).Seconds(), Env: env,
		Params: map[string]any{
			"ns": o.Ns, "put_pcts": o.PutPcts, "duration_s": o.Duration.Seconds(), "repeat": o.Repeat, "clients_per_server": o.ClientsPerServer,
			"beta": o.Beta, "epsilon_ns": o.Epsilon.Nanoseconds(), "flush_every_ms": o.FlushEvery.Milliseconds(),
			"graph": o.Graph, "graph_vertices": o.GraphVertices, "graph_degree": o.GraphDegree, "seed": o.Seed,
			"latency_beta": o.LatencyBeta, "rollback_beta": o.RollbackBeta, "net_delay_ms": float64(o.NetDelay) / 1e6, "net_jitter_ms": float64(o.NetJitter) / 1e6,
			"net_delay_at": o.DelayAt, "net_jitter_dist": o.JitterDist,
			"workload": "synthetic conjunctive (§VI-A): one variable per server, true with probability beta on a write; GETs and PUTs of ordinary keys otherwise",
			"servers":  "separate `weft kv serve` processes on loopback, --sync=false; the clients and the monitor run in the bench process",
		},
		Results: res,
		Paper: map[string]any{
			"benefit_at_50pct_puts": map[string]string{"N2": "+25%", "N3": "+23%", "N5": "+36%"},
			"monitor_overhead":      "typically < 8%",
			"detection_latency":     "99.94% within 100 ms, 99.96% within 1 s, all within 13 s",
		},
		Notes: []string{
			"sequential = R1 W=N without monitors; eventual = R1 W1 without monitors; eventual+monitor = R1 W1 with detectors on every server, the monitor and rollback on; latency = eventual+monitor at 50% PUTs with beta = latency_beta, variable owners writing only their variable, rollback off; rollback = the same with beta = rollback_beta and rollback on",
			"measured on a shared, noisy 2-core machine: servers, clients and monitor compete for the same CPUs",
		},
	}
	if o.Out != "" {
		if err := o.plot(r, &res); err != nil {
			return r, err
		}
		if err := bench.WriteJSON(o.Out, "monitor", r); err != nil {
			return r, err
		}
	}
	return r, nil
}

// modeRing is one mode's ring of servers (and watcher, when monitored)
// with its workload's parameters.
type modeRing struct {
	mode          string
	w             int
	procs         *KVProcs
	watcher       *kv.Watcher
	beta, varFrac float64
	pcts          []int
	runs          int // measurements so far: each writes its own ordinary keys
}

func (m *modeRing) stop() {
	if m.watcher != nil {
		m.watcher.Stop()
	}
	m.procs.Stop()
}

// startModeRing starts the N-server ring of one mode of the synthetic
// workload in dir.
func (o *Options) startModeRing(dir string, n int, mode string, spec *monitor.Spec) (*modeRing, error) {
	m := &modeRing{mode: mode, w: n, beta: o.Beta, varFrac: 0.5, pcts: o.PutPcts}
	if mode != "sequential" {
		m.w = 1
	}
	switch mode {
	case "latency":
		m.beta, m.pcts, m.varFrac = o.LatencyBeta, []int{50}, 1
	case "rollback":
		m.beta, m.pcts, m.varFrac = RollbackBetaFor(o.RollbackBeta, n), []int{50}, 1
	}
	monitored := mode == "eventual+monitor" || mode == "latency" || mode == "rollback"
	var err error
	m.procs, m.watcher, err = o.startRing(dir, n, 1, m.w, spec, monitored, mode != "latency")
	if err != nil {
		return nil, err
	}
	return m, nil
}

// runSynthetic starts an N-server ring for each of modes (all at once, in
// subdirectories of dir) and measures each PUT percentage on them,
// interleaved: each of the Repeat rounds measures every mode once, in an
// order that rotates from round to round, so that a drift in the machine's
// speed (other guests on the host, other jobs) falls on every mode alike
// instead of on whichever mode ran during it. A cell's throughput is the
// median of its rounds.
func (o *Options) runSynthetic(ctx context.Context, dir string, n int, modes []string, bar interface{ Add(int) error }) ([]Cell, error) {
	ring, err := kvcore.NewRing(n, kv.DefaultServerConfig().VNodes)
	if err != nil {
		return nil, err
	}
	spec := apps.SyntheticSpec(ring)
	rings := make([]*modeRing, 0, len(modes))
	defer func() {
		for _, m := range rings {
			m.stop()
		}
	}()
	for _, mode := range modes {
		m, err := o.startModeRing(filepath.Join(dir, strings.ReplaceAll(mode, "+", "-")), n, mode, spec)
		if err != nil {
			return nil, err
		}
		rings = append(rings, m)
	}
	vars := apps.SyntheticVars(ring)
	var cells []Cell
	for _, pct := range rings[0].pcts {
		round := make([]Cell, len(rings))
		for j, m := range rings {
			round[j] = Cell{N: n, PutPct: pct, Mode: m.mode, Quorum: fmt.Sprintf("N%dR1W%d", n, m.w)}
		}
		for rep := range o.Repeat {
			for _, j := range roundOrder(rep, len(rings)) {
				if err := o.measure(ctx, rings[j], pct, rep, vars, &round[j]); err != nil {
					return cells, err
				}
			}
		}
		for j := range round {
			c := &round[j]
			c.OpsPerSec = bench.Median(c.OpsPerSecRuns)
			o.Log.Info("bench monitor cell", "n", n, "put_pct", pct, "mode", c.Mode, "ops_per_sec", int(c.OpsPerSec),
				"violations", c.Violations, "rollbacks", c.Rollbacks)
			bar.Add(1)
		}
		cells = append(cells, round...)
	}
	return cells, nil
}

// roundOrder is the order in which round rep measures k modes: every mode
// once, starting one further each round, so each mode takes each place
// (first after the ring was idle, last, …) equally often over k rounds.
func roundOrder(rep, k int) []int {
	order := make([]int, k)
	for i := range order {
		order[i] = (i + rep) % k
	}
	return order
}

// measure runs the synthetic workload on m at pct% PUTs for Duration and
// adds what it counted to cell: one more throughput run, the operations
// and errors, and (monitored) the watcher's violations, rollbacks,
// candidates and latencies over the measurement.
func (o *Options) measure(ctx context.Context, m *modeRing, pct, rep int, vars []string, cell *Cell) error {
	before := kv.WatcherStats{}
	nLat, nRb := 0, 0
	if m.watcher != nil {
		before = m.watcher.Stats()
		nLat, nRb = len(m.watcher.Latencies()), len(m.watcher.Rollbacks())
	}
	m.runs++
	run := m.runs
	var mu sync.Mutex
	var got, errs uint64
	t0 := time.Now()
	err := o.clients(ctx, m.procs.Addrs, len(m.procs.Addrs)*o.ClientsPerServer, 1, m.w, func(ctx context.Context, i int, c *kvclient.Client) error {
		v := -1
		if i < len(vars) {
			v = i
		}
		st, err := apps.RunSynthetic(ctx, c, apps.SyntheticConfig{Vars: vars, Var: v, Beta: m.beta, PutFraction: float64(pct) / 100,
			VarFraction: m.varFrac, Client: i + 1000*run, Rand: rand.New(rand.NewPCG(o.Seed+uint64(rep), uint64(i*1000+pct)))})
		mu.Lock()
		got += st.Gets + st.Puts
		errs += st.Errors
		mu.Unlock()
		return err
	})
	if err != nil {
		return err
	}
	cell.Ops += got
	cell.Errors += errs
	cell.OpsPerSecRuns = append(cell.OpsPerSecRuns, float64(got)/o.Duration.Seconds())
	if m.watcher != nil {
		time.Sleep(2 * o.FlushEvery) // the last heartbeats
		o.watcherCounts(cell, before, m.watcher.Stats(), m.watcher.Latencies()[nLat:])
		rbs := m.watcher.Rollbacks()
		for _, rb := range rbs[min(nRb, len(rbs)):] { // the kept list is long enough for a measurement (ViolationsKept)
			if rb.OK {
				cell.RollbackMs = append(cell.RollbackMs, float64(rb.TookNs)/1e6)
				for _, u := range rb.Undone {
					cell.Undone += uint64(u)
				}
			}
		}
	}
	cell.Seconds += time.Since(t0).Seconds()
	return nil
}

// RollbackBetaFor is the rollback cell's β at N: beta^(2/N).
func RollbackBetaFor(beta float64, n int) float64 { return math.Pow(beta, 2/float64(n)) }

func (o *Options) watcherCounts(cell *Cell, before, after kv.WatcherStats, lat []uint64) {
	cell.Violations += after.Violations - before.Violations
	cell.Rollbacks += after.Rollbacks - before.Rollbacks
	cell.RollbackFails += after.RollbackFails - before.RollbackFails
	for i := range after.Candidates {
		cell.Candidates += after.Candidates[i] - before.Candidates[i]
		cell.Missed += after.Missed[i] - before.Missed[i]
	}
	for _, l := range lat {
		cell.LatenciesMs = append(cell.LatenciesMs, float64(l)/1e6)
	}
}

// Replot redraws the PNGs of a monitor.json in dir (after a change
// to the charts, without measuring again).
func Replot(dir string) error {
	b, err := os.ReadFile(filepath.Join(dir, "monitor.json"))
	if err != nil {
		return err
	}
	var res Results
	r := &bench.Result{Results: &res}
	if err := json.Unmarshal(b, r); err != nil {
		return fmt.Errorf("bench: %s/monitor.json: %w", dir, err)
	}
	o := Options{Out: dir}
	if err := o.plot(r, &res); err != nil {
		return err
	}
	return bench.WriteJSON(dir, "monitor", r)
}

// startRing starts n server processes (detectors on when monitored, with
// spec; behind delaying proxies when NetDelay or NetJitter is set) and, when
// monitored, an in-process watcher (rolling back when rollback is set).
func (o *Options) startRing(dir string, n, r, w int, spec *monitor.Spec, monitored, rollback bool) (*KVProcs, *kv.Watcher, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, err
	}
	args := []string{"--n", fmt.Sprint(n), "--r", fmt.Sprint(r), "--w", fmt.Sprint(w), "--sync=false",
		"--epsilon", o.Epsilon.String(), "--flush-every", o.FlushEvery.String(), "--requests-max", "4096"}
	if monitored {
		b, err := json.Marshal(spec)
		if err != nil {
			return nil, nil, err
		}
		path := filepath.Join(dir, "spec.json")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			return nil, nil, err
		}
		args = append(args, "--predicates", path)
	}
	start := StartKVProcs
	if o.proxied() {
		start = StartKVProcsProxied
	}
	procs, err := start(o.Bin, dir, n, args...)
	if err != nil {
		return nil, nil, err
	}
	for _, px := range procs.Proxies {
		px.Delay(faultproxy.Both, o.NetDelay, o.NetJitter)
	}
	if !monitored {
		return procs, nil, nil
	}
	cfg := kv.DefaultWatcherConfig()
	cfg.Servers, cfg.Spec, cfg.Rollback = procs.Addrs, spec, rollback
	cfg.Monitor.Epsilon = uint64(o.Epsilon.Nanoseconds())
	cfg.PollWait = 200 * time.Millisecond
	cfg.HTTPClient = o.httpClient(8, 1<<32)
	watcher, err := kv.NewWatcher(cfg, o.Log)
	if err == nil {
		err = watcher.Start()
	}
	if err != nil {
		procs.Stop()
		return nil, nil, err
	}
	return procs, watcher, nil
}

func (o *Options) delayed() bool { return o.NetDelay > 0 || o.NetJitter > 0 }

// proxied reports whether the delay is added by proxies in front of the
// servers.
func (o *Options) proxied() bool { return o.delayed() && o.DelayAt != "client" }

// httpClient is the HTTP client of one bench client or of the monitor:
// nil (the default transport of kvclient/kv) unless the delay is added at
// the client, then one whose transport delays each direction.
func (o *Options) httpClient(conns int, seed uint64) *http.Client {
	if !o.delayed() || o.proxied() {
		return nil
	}
	base := &http.Transport{MaxIdleConnsPerHost: conns, IdleConnTimeout: time.Minute}
	return &http.Client{Transport: newDelayTransport(base, o.NetDelay, o.NetJitter, o.JitterDist, o.Seed<<32^seed)}
}

// clients dials k clients with quorum (r, w) and runs f on each for
// Duration.
func (o *Options) clients(ctx context.Context, addrs []string, k, r, w int, f func(context.Context, int, *kvclient.Client) error) error {
	ctx, cancel := context.WithTimeout(ctx, o.Duration)
	defer cancel()
	cs := make([]*kvclient.Client, k)
	for i := range cs {
		c, err := kvclient.Dial(ctx, addrs, kvclient.Options{R: r, W: w, RoundTimeout: 200 * time.Millisecond,
			HTTPClient: o.httpClient(64, uint64(i))})
		if err != nil {
			return err
		}
		defer c.Close()
		cs[i] = c
	}
	errs := make([]error, k)
	var wg sync.WaitGroup
	for i, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = f(ctx, i, c)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// runGraph measures the graph application for Duration: sequential (R1,
// W=N, no monitors) or eventual (R1 W1) with monitors and rollback.
func (o *Options) runGraph(ctx context.Context, dir string, n int, mode string) (Cell, error) {
	clients := n * o.ClientsPerServer
	g, err := apps.RandomGraph(rand.New(rand.NewPCG(o.Seed, 77)), o.GraphVertices, o.GraphDegree, clients)
	if err != nil {
		return Cell{}, err
	}
	ring, err := kvcore.NewRing(n, kv.DefaultServerConfig().VNodes)
	if err != nil {
		return Cell{}, err
	}
	monitored := mode == "graph-eventual+monitor"
	w := n
	if monitored {
		w = 1
	}
	procs, watcher, err := o.startRing(dir, n, 1, w, g.Spec(ring), monitored, true)
	if err != nil {
		return Cell{}, err
	}
	defer procs.Stop()
	if watcher != nil {
		defer watcher.Stop()
	}
	var mu sync.Mutex
	var sum apps.GraphStats
	t0 := time.Now()
	err = o.clients(ctx, procs.Addrs, clients, 1, w, func(ctx context.Context, i int, c *kvclient.Client) error {
		st, err := apps.RunGraph(ctx, c, apps.GraphConfig{Graph: g, Client: i, Rand: rand.New(rand.NewPCG(o.Seed, uint64(i)))})
		mu.Lock()
		sum.Updates += st.Updates
		sum.Gets += st.Gets
		sum.Puts += st.Puts
		sum.Errors += st.Errors + st.Redone
		mu.Unlock()
		return err
	})
	if err != nil {
		return Cell{}, err
	}
	cell := Cell{N: n, Mode: mode, Quorum: fmt.Sprintf("N%dR1W%d", n, w), Ops: sum.Gets + sum.Puts, Errors: sum.Errors,
		OpsPerSec: float64(sum.Gets+sum.Puts) / o.Duration.Seconds(), UpdatesPerSec: float64(sum.Updates) / o.Duration.Seconds(),
		Seconds: time.Since(t0).Seconds()}
	if cell.PutPct = 0; cell.Ops > 0 {
		cell.PutPct = int(100 * sum.Puts / cell.Ops)
	}
	if watcher != nil {
		time.Sleep(2 * o.FlushEvery)
		o.watcherCounts(&cell, kv.WatcherStats{Candidates: make([]uint64, n), Missed: make([]uint64, n)}, watcher.Stats(), watcher.Latencies())
	}
	o.Log.Info("bench monitor graph cell", "n", n, "mode", mode, "updates_per_sec", int(cell.UpdatesPerSec),
		"violations", cell.Violations, "rollbacks", cell.Rollbacks)
	return cell, nil
}

func (res *Results) summarise() {
	thr := map[[2]int]map[string]float64{}
	var lat, rb []float64
	for _, c := range res.Cells {
		lat = append(lat, c.LatenciesMs...)
		rb = append(rb, c.RollbackMs...)
		if c.PutPct == 0 || c.Mode == "latency" || c.Mode == "rollback" || len(c.Mode) > 5 && c.Mode[:5] == "graph" {
			continue
		}
		k := [2]int{c.N, c.PutPct}
		if thr[k] == nil {
			thr[k] = map[string]float64{}
		}
		thr[k][c.Mode] = c.OpsPerSec
	}
	res.Benefit, res.Overhead = map[string]map[string]float64{}, map[string]map[string]float64{}
	for k, m := range thr {
		n, p := fmt.Sprintf("N%d", k[0]), fmt.Sprintf("%d%%", k[1])
		if res.Benefit[n] == nil {
			res.Benefit[n], res.Overhead[n] = map[string]float64{}, map[string]float64{}
		}
		if s, e := m["sequential"], m["eventual+monitor"]; s > 0 && e > 0 {
			res.Benefit[n][p] = e/s - 1
		}
		if e, em := m["eventual"], m["eventual+monitor"]; e > 0 && em > 0 {
			res.Overhead[n][p] = 1 - em/e
		}
	}
	res.Latency = bench.Summarize(lat)
	res.Rollback = bench.Summarize(rb)
	if len(lat) > 0 {
		in100, in1s := 0, 0
		for _, l := range lat {
			if l <= 100 {
				in100++
			}
			if l <= 1000 {
				in1s++
			}
		}
		res.Within100ms = float64(in100) / float64(len(lat))
		res.Within1s = float64(in1s) / float64(len(lat))
	}
}

// plot draws, per N, throughput against PUT percentage (one line per mode)
// and the detection latency CDF.
func (o *Options) plot(r *bench.Result, res *Results) error {
	r.Plots = nil
	var ns []int
	for _, c := range res.Cells {
		if !slices.Contains(ns, c.N) {
			ns = append(ns, c.N)
		}
	}
	for _, n := range ns {
		thr := bench.Chart{Title: fmt.Sprintf("N = %d: eventual + monitors vs sequential", n), XLabel: "PUT %", YLabel: "ops/s",
			YFrom0: true, Headroom: 0.45, LegendBottom: true}
		for _, mode := range []string{"sequential", "eventual+monitor", "eventual"} {
			var pts plotter.XYs
			for _, c := range res.Cells {
				if c.N == n && c.Mode == mode {
					pts = append(pts, plotter.XY{X: float64(c.PutPct), Y: c.OpsPerSec})
				}
			}
			if len(pts) > 0 {
				thr.Series = append(thr.Series, bench.Series{Name: mode, Points: pts, Dashed: mode == "eventual"})
			}
		}
		name := fmt.Sprintf("monitor_throughput_n%d.png", n)
		if err := thr.Save(filepath.Join(o.Out, name)); err != nil {
			return err
		}
		r.Plots = append(r.Plots, name)
	}
	var lat []float64
	for _, c := range res.Cells {
		lat = append(lat, c.LatenciesMs...)
	}
	if len(lat) == 0 {
		return nil
	}
	slices.Sort(lat)
	var pts plotter.XYs
	for _, p := range bench.CDF(lat, 500) {
		pts = append(pts, plotter.XY{X: max(p.X, 1e-3), Y: p.Frac})
	}
	cdf := bench.Chart{Title: "Detection latency (all cells)", XLabel: "ms (log)", YLabel: "fraction detected", LogX: true, LegendBottom: true,
		Series: []bench.Series{{Name: fmt.Sprintf("%d violations", len(lat)), Points: pts, Line: true}}}
	if err := cdf.Save(filepath.Join(o.Out, "monitor_latency_cdf.png")); err != nil {
		return err
	}
	r.Plots = append(r.Plots, "monitor_latency_cdf.png")
	return nil
}
