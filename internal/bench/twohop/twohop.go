package twohop

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/weft-db/weft/client/weft"
	"github.com/weft-db/weft/internal/bench"
)

// Options configure a run; zero values take the defaults.
type Options struct {
	// Bin is the weft binary whose serve is measured (default: this one).
	Bin string
	// Vertices and Edges size the graph (default 100,000 and 1,000,000;
	// 5,000 and 50,000 with Quick).
	Vertices, Edges int
	// Queries per cell and round (default 1,000; 200 with Quick), Rounds
	// (default 3), Clients the client counts (default 1 and 8).
	Queries, Rounds int
	Clients         []int
	// Interfaces to run, by name (default all: go-grpc, go-grpc-count,
	// go-http, go-http-count, python-http, python-http-count, dql-http);
	// the Python ones need Python; dql-http has the graph bulk-loaded into
	// the Dgraph face as N-Quads too.
	Interfaces []string
	// Peers are other databases measured in the same rounds: "redis"
	// (Debian's redis-server with a Lua script; interface redis-lua).
	Peers []string
	// Python is an interpreter with the weft package (default: the
	// repository's clients/python/.venv/bin/python where it exists).
	Python string
	// Shards and Gatekeepers of the server (default serve's).
	Shards, Gatekeepers int
	// LoadBatch is the operations per load transaction (default 10,000),
	// Loaders the edge transactions in flight (default 1).
	LoadBatch, Loaders int
	// ServerCPUProfile has the server write a CPU profile of its life
	// (load included) to this file (weft serve --cpuprofile).
	ServerCPUProfile string
	Quick            bool
	InMemory         bool
	DataDir          string
	Seed             uint64
	// Out is the directory of the JSON result and plots ("" none).
	Out      string
	Log      *slog.Logger
	Progress io.Writer
	// Summary receives the table of medians at the end (nil: none).
	Summary io.Writer
}

// Interfaces are the interfaces a run can use.
var Interfaces = []string{"go-grpc", "go-grpc-count", "go-http", "go-http-count", "python-http", "python-http-count", "dql-http"}

func (o *Options) defaults() error {
	if o.Bin == "" {
		exe, err := os.Executable()
		if err != nil {
			return err
		}
		o.Bin = exe
	}
	if o.Vertices <= 0 {
		o.Vertices = pick(o.Quick, 5_000, 100_000)
	}
	if o.Edges <= 0 {
		o.Edges = pick(o.Quick, 50_000, 1_000_000)
	}
	if o.Queries <= 0 {
		o.Queries = pick(o.Quick, 200, 1_000)
	}
	if o.Rounds <= 0 {
		o.Rounds = 3
	}
	if len(o.Clients) == 0 {
		o.Clients = []int{1, 8}
	}
	for _, c := range o.Clients {
		if c < 1 || c > 256 {
			return fmt.Errorf("bench: clients %d: want 1 to 256", c)
		}
	}
	if len(o.Interfaces) == 0 {
		o.Interfaces = Interfaces
	}
	for _, name := range o.Interfaces {
		if !slices.Contains(Interfaces, name) {
			return fmt.Errorf("bench: interface %q: want one of %s", name, strings.Join(Interfaces, ", "))
		}
	}
	if o.InMemory && slices.Contains(o.Interfaces, "dql-http") {
		return errors.New("bench: dql-http reads a store bulk-loaded before the server starts, which --in-memory would not open: leave out one of them")
	}
	for _, p := range o.Peers {
		switch p {
		case "redis":
		case "falkordb":
			return errors.New("bench: peer falkordb: its server (a Redis module) is in no package the registries here serve; --peers redis is")
		default:
			return fmt.Errorf("bench: peer %q: want redis", p)
		}
	}
	if o.LoadBatch <= 0 {
		o.LoadBatch = 10_000
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return nil
}

func pick[T any](quick bool, q, full T) T {
	if quick {
		return q
	}
	return full
}

// Params are the run's parameters as the JSON records them.
type Params struct {
	Vertices    int      `json:"vertices"`
	Edges       int      `json:"edges"`
	Queries     int      `json:"queries"`
	Rounds      int      `json:"rounds"`
	Clients     []int    `json:"clients"`
	Interfaces  []string `json:"interfaces"`
	Peers       []string `json:"peers,omitempty"`
	Shards      int      `json:"shards,omitempty"`
	Gatekeepers int      `json:"gatekeepers,omitempty"`
	InMemory    bool     `json:"in_memory"`
	Seed        uint64   `json:"seed"`
	Python      string   `json:"python,omitempty"`
}

// Results are the measurements.
type Results struct {
	Load LoadStats `json:"load"`
	// DgraphLoad is the N-Quads' bulk load (weft load --bulk, a process of
	// its own, N-Quads per second in ops_per_sec), with dql-http.
	DgraphLoad *LoadStats `json:"dgraph_load,omitempty"`
	// RedisLoad is the graph's load into redis-server (--peers redis).
	RedisLoad *LoadStats `json:"redis_load,omitempty"`
	// MeanAnswer is the mean two-hop count of the queries (the work per query).
	MeanAnswer float64 `json:"mean_answer"`
	Cells      []Cell  `json:"cells"`
	ServerRSS  int64   `json:"server_rss_bytes"`
}

// Cell is one interface at one client count: the medians over rounds.
type Cell struct {
	Interface string `json:"interface"`
	Clients   int    `json:"clients"`
	// QPS is queries per second; P50US and P99US the latency percentiles
	// (µs); ServerCPUMS the server's CPU per query (ms).
	QPS         float64 `json:"qps"`
	P50US       float64 `json:"p50_us"`
	P99US       float64 `json:"p99_us"`
	ServerCPUMS float64 `json:"server_cpu_ms"`
	// Rounds are each round's figures, in order.
	Rounds []Round `json:"rounds"`
	// Correct is how many answers matched the generator's (all, or the run fails).
	Correct int `json:"correct"`
	// VsRedis is QPS as a share of redis-lua's at the same clients (--peers redis).
	VsRedis float64 `json:"vs_redis,omitempty"`
}

// Round is one round's figures of a cell.
type Round struct {
	QPS         float64 `json:"qps"`
	P50US       float64 `json:"p50_us"`
	P99US       float64 `json:"p99_us"`
	ServerCPUMS float64 `json:"server_cpu_ms"`
}

// Run generates and loads the graph into a fresh `weft serve`, runs the
// cells and returns the result (also written to Out).
func Run(ctx context.Context, o Options) (*bench.Result, error) {
	if err := o.defaults(); err != nil {
		return nil, err
	}
	start, load := time.Now(), bench.LoadAvg()
	cpu0, cpuOK := bench.ReadCPUTimes()
	res := &bench.Result{Benchmark: "twohop", Schema: bench.SchemaVersion}
	r := &Results{}
	res.Results = r
	name := "twohop"
	if o.Quick {
		name += "-quick"
	}
	runErr := run(ctx, &o, res, r)
	cpu1, _ := bench.ReadCPUTimes()
	out, err := bench.Finish(res, start, load, o.Out, name, func() ([]string, error) { return plots(o.Out, name, r) }, runErr)
	out.Env.SetCPUShares(cpu0, cpu1, cpuOK)
	if o.Out != "" && err == nil {
		err = bench.WriteJSON(o.Out, name, out) // again, with the CPU shares
	}
	return out, err
}

func run(ctx context.Context, o *Options, res *bench.Result, r *Results) error {
	var ifaces []iface
	python := ""
	if slices.ContainsFunc(o.Interfaces, func(n string) bool { return strings.HasPrefix(n, "python") }) {
		p, err := findPython(o.Python)
		if err != nil {
			return err
		}
		python = p
	}
	res.Params = Params{Vertices: o.Vertices, Edges: o.Edges, Queries: o.Queries, Rounds: o.Rounds, Clients: o.Clients,
		Interfaces: o.Interfaces, Peers: o.Peers, Shards: o.Shards, Gatekeepers: o.Gatekeepers, InMemory: o.InMemory, Seed: o.Seed, Python: python}
	res.Notes = append(res.Notes, "query: count the distinct c with v→b→c for a random v (traverse_props over three levels); "+
		"every answer checked against the generated edge lists",
		"server CPU per query: the weft serve process's user+system time over the cell, from /proc, divided by its queries")

	g := NewGraph(o.Vertices, o.Edges, o.Seed)
	srcs, want := g.Answers(o.Queries, o.Seed)
	sum := 0
	for _, w := range want {
		sum += w
	}
	r.MeanAnswer = bench.Round(float64(sum)/float64(len(want)), 1)

	dql := slices.Contains(o.Interfaces, "dql-http")
	var prepare func(dir, store string) error
	if dql {
		prepare = func(dir, store string) error {
			rdf, schema, err := writeRDF(dir, g)
			if err != nil {
				return err
			}
			o.Log.Info("loading the graph into the Dgraph face (weft load --bulk)", "quads", g.Vertices()+g.Edges())
			st, err := bulkLoad(ctx, o, store, rdf, schema)
			st.Vertices, st.Edges = g.Vertices(), g.Edges()
			st.OpsPerSec = float64(st.Vertices+st.Edges) / st.Seconds
			r.DgraphLoad = &st
			return err
		}
	}
	srv, err := startServer(o, dql, prepare)
	if err != nil {
		return err
	}
	defer srv.close()
	for _, n := range o.Interfaces {
		switch n {
		case "go-grpc", "go-grpc-count":
			ifaces = append(ifaces, grpcIface(srv.grpc, strings.HasSuffix(n, "-count")))
		case "go-http", "go-http-count":
			ifaces = append(ifaces, httpIface(srv.http, strings.HasSuffix(n, "-count")))
		case "python-http", "python-http-count":
			ifaces = append(ifaces, pythonIface(python, srv.http, strings.HasSuffix(n, "-count")))
		case "dql-http":
			ifaces = append(ifaces, dqlIface(srv.dgraphHTTP))
		}
	}

	c, err := weft.Dial(srv.grpc)
	if err != nil {
		return err
	}
	bar := bench.NewBar(o.Progress, int64(g.Vertices()+g.Edges()), "loading the graph")
	r.Load, err = load(ctx, c, g, o.LoadBatch, max(o.Loaders, 1), func(n int) { _ = bar.Add(n) })
	_ = bar.Finish()
	c.Close()
	if err != nil {
		return err
	}
	o.Log.Info("graph loaded", "vertices", g.Vertices(), "edges", g.Edges(), "seconds", bench.Round(r.Load.Seconds, 1))
	if slices.Contains(o.Peers, "redis") {
		peer, st, err := startRedis(ctx, srv.dir, g)
		if err != nil {
			return err
		}
		defer peer.close()
		r.RedisLoad = &st
		ifaces = append(ifaces, peer.iface())
		o.Log.Info("graph loaded into redis-server", "seconds", bench.Round(st.Seconds, 1))
	}

	type key struct {
		iface   string
		clients int
	}
	cells := map[key]*Cell{}
	var order []key
	for _, f := range ifaces {
		for _, k := range o.Clients {
			order = append(order, key{f.name, k})
			cells[key{f.name, k}] = &Cell{Interface: f.name, Clients: k}
		}
	}
	bar = bench.NewBar(o.Progress, int64(o.Rounds*len(order)), "measuring")
	for round := range o.Rounds {
		for _, f := range ifaces {
			for _, k := range o.Clients {
				if err := ctx.Err(); err != nil {
					return err
				}
				cpuOf := srv.cpu
				if f.cpu != nil {
					cpuOf = f.cpu
				}
				var cpuStart time.Duration
				out, err := f.run(ctx, srcs, k, func() { cpuStart = cpuOf() })
				cpu := cpuOf() - cpuStart
				if err != nil {
					return fmt.Errorf("bench: %s with %d clients: %w", f.name, k, err)
				}
				cell := cells[key{f.name, k}]
				if err := checkAnswers(srcs, out.got, want); err != nil {
					return fmt.Errorf("bench: %s with %d clients, round %d: %w", f.name, k, round+1, err)
				}
				cell.Correct += len(want)
				lat := make([]float64, len(out.latency))
				for i, d := range out.latency {
					lat[i] = float64(d) / float64(time.Microsecond)
				}
				s := bench.Summarize(lat)
				cell.Rounds = append(cell.Rounds, Round{
					QPS: bench.Round(float64(len(srcs))/out.wall.Seconds(), 1), P50US: bench.Round(s.P50, 1), P99US: bench.Round(s.P99, 1),
					ServerCPUMS: bench.Round(cpu.Seconds()*1e3/float64(len(srcs)), 4)})
				_ = bar.Add(1)
			}
		}
		o.Log.Info("round done", "round", round+1)
	}
	_ = bar.Finish()
	r.ServerRSS = srv.rss()
	for _, k := range order {
		c := cells[k]
		med := func(f func(Round) float64) float64 {
			var xs []float64
			for _, rd := range c.Rounds {
				xs = append(xs, f(rd))
			}
			return bench.Median(xs)
		}
		c.QPS = bench.Round(med(func(r Round) float64 { return r.QPS }), 1)
		c.P50US = bench.Round(med(func(r Round) float64 { return r.P50US }), 1)
		c.P99US = bench.Round(med(func(r Round) float64 { return r.P99US }), 1)
		c.ServerCPUMS = bench.Round(med(func(r Round) float64 { return r.ServerCPUMS }), 4)
		r.Cells = append(r.Cells, *c)
	}
	redisQPS := map[int]float64{}
	for _, c := range r.Cells {
		if c.Interface == "redis-lua" {
			redisQPS[c.Clients] = c.QPS
		}
	}
	for i := range r.Cells {
		if q := redisQPS[r.Cells[i].Clients]; q > 0 && r.Cells[i].Interface != "redis-lua" {
			r.Cells[i].VsRedis = bench.Round(r.Cells[i].QPS/q, 2)
		}
	}
	if o.Summary != nil {
		printCells(o.Summary, r.Cells)
	}
	return nil
}

// printCells writes the medians as a table.
func printCells(w io.Writer, cells []Cell) {
	fmt.Fprintf(w, "%-20s %7s %10s %10s %10s %16s %9s\n", "interface", "clients", "queries/s", "p50 µs", "p99 µs", "server CPU/query", "vs redis")
	for _, c := range cells {
		vs := ""
		if c.VsRedis > 0 {
			vs = fmt.Sprintf("%.2f×", c.VsRedis)
		}
		fmt.Fprintf(w, "%-20s %7d %10.0f %10.0f %10.0f %13.3f ms %9s\n", c.Interface, c.Clients, c.QPS, c.P50US, c.P99US, c.ServerCPUMS, vs)
	}
}

// checkAnswers compares every answer with the generator's.
func checkAnswers(srcs, got, want []int) error {
	bad := 0
	var wrong []string
	for i := range want {
		if got[i] != want[i] {
			bad++
			if len(wrong) < 5 {
				wrong = append(wrong, fmt.Sprintf("%s answered %d, want %d", Handle(srcs[i]), got[i], want[i]))
			}
		}
	}
	if bad > 0 {
		return fmt.Errorf("%d of %d answers wrong: %s", bad, len(want), strings.Join(wrong, "; "))
	}
	return nil
}

// findPython is the interpreter to run the Python client with: the given
// one, or the repository's virtual environment (clients/python/.venv,
// which `make` creates) found from the working directory up. It must
// import weft.
func findPython(p string) (string, error) {
	if p == "" {
		dir, _ := os.Getwd()
		for ; dir != filepath.Dir(dir); dir = filepath.Dir(dir) {
			cand := filepath.Join(dir, "clients", "python", ".venv", "bin", "python")
			if _, err := os.Stat(cand); err == nil {
				p = cand
				break
			}
		}
	}
	if p == "" {
		return "", errors.New("bench: the Python interfaces need a Python with the weft package: run make (it creates clients/python/.venv) or give --python, or leave them out with --interfaces")
	}
	if out, err := exec.Command(p, "-c", "import weft").CombinedOutput(); err != nil {
		return "", fmt.Errorf("bench: %s cannot import weft (pip install -e clients/python): %v: %s", p, err, out)
	}
	return p, nil
}
