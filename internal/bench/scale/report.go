package scale

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"

	"gonum.org/v1/plot/plotter"

	"github.com/weft-db/weft/internal/bench"
	"github.com/weft-db/weft/internal/bench/tao"
)

// scaleResults is the "results" object of scale.json.
type scaleResults struct {
	// ModelCores is C, the cores per machine the model predicts for.
	ModelCores int     `json:"model_cores"`
	Points     []Point `json:"points"`
	// Extrapolation applies the model, with the marginal costs per
	// operation and idle loads of the largest shape measured, to shapes
	// beyond the grid.
	Extrapolation []scaleExtrapolation `json:"extrapolation"`
}

// scaleExtrapolation is the model's prediction for one shape.
type scaleExtrapolation struct {
	Mix string `json:"mix"`
	// From is the measured shape whose costs per operation are used.
	From        Shape   `json:"from"`
	Gatekeepers int     `json:"gatekeepers"`
	Shards      int     `json:"shards"`
	OpsPerSec   float64 `json:"ops_per_sec"`
	Bottleneck  string  `json:"bottleneck"`
}

// Shapes the extrapolation predicts.
var (
	extrapolationGatekeepers = []int{1, 2, 4, 8, 16}
	extrapolationShards      = []int{1, 2, 4, 8, 16, 32}
)

// extrapolate predicts, per mix, every shape of the extrapolation grid from
// the costs of the largest shape measured without error (most gatekeepers,
// then most shards).
func extrapolate(pts []Point, cores int) []scaleExtrapolation {
	var out []scaleExtrapolation
	for _, mix := range scaleMixes {
		var from *Point
		for i := range pts {
			p := &pts[i]
			if p.Mix != mix || p.Error != "" || p.Ops == 0 {
				continue
			}
			if from == nil || p.Gatekeepers > from.Gatekeepers || (p.Gatekeepers == from.Gatekeepers && p.Shards > from.Shards) {
				from = p
			}
		}
		if from == nil {
			continue
		}
		costs := map[string]float64{}
		for r, us := range from.MarginalCostUSPerOp {
			costs[r] = us / 1e6
		}
		for _, g := range extrapolationGatekeepers {
			for _, s := range extrapolationShards {
				m := predict(costs, from.IdleCoresPerProcess, g, s, float64(cores))
				out = append(out, scaleExtrapolation{Mix: mix, From: Shape{from.Gatekeepers, from.Shards},
					Gatekeepers: g, Shards: s, OpsPerSec: bench.Round(finite(m.OpsPerSec), 0), Bottleneck: m.Bottleneck})
			}
		}
	}
	return out
}

func (o Options) result(res *scaleResults, g *tao.Graph) *bench.Result {
	return &bench.Result{
		Benchmark: "scale/" + o.Name(),
		Schema:    bench.SchemaVersion,
		Params: map[string]any{
			"shapes": o.Shapes, "kronos_replicas": o.Kronos, "coord_replicas": o.Coord,
			"vertices": o.Vertices, "edges": g.Edges(), "duration_s": o.Duration.Seconds(), "clients": o.Clients,
			"conns_per_gatekeeper": o.Conns, "streams_per_conn": o.Streams, "mixes": o.Mixes,
			"load_batch_ops": o.LoadBatch, "loaders": o.Loaders, "model_cores": o.ModelCores, "seed": o.Seed,
			"idle_window_s": o.IdleWindow.Seconds(),
			"quick":         o.Quick, "get_edges_limit": tao.EdgesLimit, "get_node_edges": false, "dst": "uniform",
			"store": "PostgreSQL started by weft cluster up (weft postgres), fsync on",
		},
		Results: res,
		Notes: []string{
			"Every process runs on this one machine (loopback), sharing its cores with the clients and, on a shared machine, with other work: the throughput per core and the costs per operation are approximate (see env.load_avg_*).",
			"Throughput per core (ops_per_cpu_second) is ops/s divided by the cores the cluster and the clients used over the window (their CPU seconds per wall second): operations per CPU second.",
			"CPU per process is /proc/<pid>/stat utime+stime+cutime+cstime summed over the process and its descendants (PostgreSQL's server and backends are children of weft postgres), sampled before and after the measured window; client is this bench process (CLOCK_PROCESS_CPUTIME_ID).",
			"Model (a model, not a measurement): throughput ≈ min over roles of n_role × (C − idle cores of one process of the role) / (marginal CPU seconds per operation of the role: its CPU over the window less its idle CPU, per operation), n = G gatekeepers, S shards, G client machines, 1 Kronos, 1 PostgreSQL, 1 coordinator; assumes each process on its own machine with C cores, no network cost beyond loopback's, linear scaling within a role, and costs per operation and idle loads that do not change with the shape. Idle CPU is measured for idle_window_s after the load, before the first mix.",
			"kronos_calls sums the gatekeepers' Kronos Assign calls (order.Counting in their Status): a commit makes at most one, when a stamp it must follow is concurrent with its own, so kronos_calls_per_commit is the fraction of commits ordered by Kronos. kronos_events_created and kronos_log_entries, from the Kronos leader's Stats, add the shards' ordering of reads. kronos_ordered_commit_fraction_max = min(1, events created / commits) is a looser bound kept for comparison.",
			"Clients: closed loop, client i on gatekeeper i mod G over that gatekeeper's connections; reads are node programs at a fresh snapshot (get_node without edges, get_edges with limit 50, count_edges), writes as in weft bench tao.",
		},
	}
}

// saveScalePlots draws the throughput per core, the measured throughput, the
// model's prediction and its extrapolation against the shard count.
func saveScalePlots(o Options, res *scaleResults) ([]string, error) {
	name := o.Name()
	series := func(y func(p Point) float64) []bench.Series {
		var out []bench.Series
		for _, mix := range o.Mixes {
			for _, g := range gatekeeperCounts(res.Points) {
				var xy plotter.XYs
				for _, p := range res.Points {
					if p.Mix == mix && p.Gatekeepers == g && p.Error == "" && p.Ops > 0 {
						xy = append(xy, plotter.XY{X: float64(p.Shards), Y: y(p)})
					}
				}
				if len(xy) > 0 {
					slices.SortFunc(xy, func(a, b plotter.XY) int { return int(a.X - b.X) })
					out = append(out, bench.Series{Name: fmt.Sprintf("%s, %d gatekeeper(s)", mix, g), Points: xy, Dashed: mix != "tao"})
				}
			}
		}
		return out
	}
	var extra []bench.Series
	for _, mix := range o.Mixes {
		for _, g := range extrapolationGatekeepers {
			var xy plotter.XYs
			for _, e := range res.Extrapolation {
				if e.Mix == mix && e.Gatekeepers == g {
					xy = append(xy, plotter.XY{X: float64(e.Shards), Y: e.OpsPerSec / 1e3})
				}
			}
			if len(xy) > 0 {
				extra = append(extra, bench.Series{Name: fmt.Sprintf("%s, %d gatekeeper(s)", mix, g), Points: xy, Dashed: mix != "tao"})
			}
		}
	}
	charts := map[string]bench.Chart{
		name + "_per_core.png": {Title: "Throughput per core (all processes on one machine)", XLabel: "shards (log)",
			YLabel: "operations per CPU second", LogX: true, YFrom0: true, Headroom: 0.3, Series: series(func(p Point) float64 { return p.OpsPerCPUSecond })},
		name + "_throughput.png": {Title: "Measured throughput (all processes on one machine)", XLabel: "shards (log)",
			YLabel: "operations per second (thousands)", LogX: true, YFrom0: true, Headroom: 0.3, Series: series(func(p Point) float64 { return p.OpsPerSec / 1e3 })},
		name + "_model.png": {Title: fmt.Sprintf("Model: predicted throughput, one %d-core machine per process", o.ModelCores), XLabel: "shards (log)",
			YLabel: "predicted operations per second (thousands)", LogX: true, YFrom0: true, Headroom: 0.3, Series: series(func(p Point) float64 { return p.Model.OpsPerSec / 1e3 })},
	}
	if len(extra) > 0 {
		charts[name+"_extrapolation.png"] = bench.Chart{Title: fmt.Sprintf("Model extrapolated from the largest shape measured (%d cores per process)", o.ModelCores),
			XLabel: "shards (log)", YLabel: "predicted operations per second (thousands)", LogX: true, YFrom0: true, Headroom: 0.3,
			LegendLeft: true, Series: extra}
	}
	var names []string
	for _, file := range slices.Sorted(maps.Keys(charts)) {
		if err := charts[file].Save(filepath.Join(o.Out, file)); err != nil {
			return names, err
		}
		names = append(names, file)
	}
	return names, nil
}

// gatekeeperCounts returns the distinct gatekeeper counts of pts, ascending.
func gatekeeperCounts(pts []Point) []int {
	var out []int
	for _, p := range pts {
		if !slices.Contains(out, p.Gatekeepers) {
			out = append(out, p.Gatekeepers)
		}
	}
	slices.Sort(out)
	return out
}
