package dql

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weft-db/weft/internal/bench"
	"github.com/weft-db/weft/internal/dgraph"
	dgraphapi "github.com/weft-db/weft/internal/dgraph/api"
	"github.com/weft-db/weft/internal/dgraph/exec"
	"github.com/weft-db/weft/internal/engine"
)

// Query is one of the report's two 2-hop queries, adapted to the film
// data set Weft has (goldendata: name, directed_by, director.film,
// initial_release_date; no actors, performances or genres).
type Query struct {
	Name string
	// Report is the report's query (§4.2.3) this one stands for.
	Report string
	// RootsPred is the predicate whose subjects are the query's roots.
	RootsPred string
	// Text is the DQL with %s where the root's UID goes.
	Text string
}

// Queries are the benchmark's queries. The report's actor query walks
// actor → film.actor.film (a performance) → film.performance.film → name:
// a person's films, two uid hops away; here a film's directors' films,
// film → directed_by → director.film → name. Its director query walks
// director → film.director.film → film.film.genre → name: a director's
// films and the nodes they share (genres); here a director's films and
// their directors, director → director.film → directed_by → name.
var Queries = []Query{
	{
		Name:      "film-directors-films",
		Report:    "actor → film.actor.film → film.performance.film → type.object.name.en",
		RootsPred: "directed_by",
		Text:      "{\n  me(func: uid(%s)) {\n    name@en\n    directed_by {\n      director.film {\n        name@en\n      }\n    }\n  }\n}",
	},
	{
		Name:      "director-films-directors",
		Report:    "director → film.director.film → film.film.genre → type.object.name.en",
		RootsPred: "director.film",
		Text:      "{\n  me(func: uid(%s)) {\n    name@en\n    director.film {\n      directed_by {\n        name@en\n      }\n    }\n  }\n}",
	},
}

func dqlQuery(name string) (Query, bool) {
	i := slices.IndexFunc(Queries, func(q Query) bool { return q.Name == name })
	if i < 0 {
		return Query{}, false
	}
	return Queries[i], true
}

// dqlBackend answers a DQL query {me(...){...}}, decoding the answer once
// as a client would.
type dqlBackend interface {
	query(ctx context.Context, text string) (dqlAnswer, error)
	close()
}

// inprocDQL calls the executor at a fresh snapshot, as the server does for
// a read-only query, without HTTP.
type inprocDQL struct {
	db   engine.API
	exec *exec.Executor
}

func (b *inprocDQL) query(ctx context.Context, text string) (dqlAnswer, error) {
	data, err := b.data(ctx, text)
	if err != nil {
		return dqlAnswer{}, err
	}
	return measureAnswer(data)
}

// data returns the query's "data" object.
func (b *inprocDQL) data(ctx context.Context, text string) ([]byte, error) {
	snap, err := b.db.Begin(ctx)
	if err != nil {
		return nil, err
	}
	res, err := b.exec.Query(ctx, dgraph.NewSnapshotReader(b.db, snap, false), text, nil)
	if err != nil {
		return nil, err
	}
	return res.Data, nil
}

func (b *inprocDQL) close() {}

// httpDQL posts each query to Dgraph's HTTP API, served in this process on
// loopback by the same handler weft serve --dgraph-http runs.
type httpDQL struct {
	srv    *http.Server
	url    string
	client *http.Client
	errc   chan error
}

func newHTTPDQL(ctx context.Context, g *dgraph.Graph) (*httpDQL, error) {
	s, err := dgraphapi.New(g, dgraphapi.NewExecutor(g), dgraphapi.DefaultConfig())
	if err != nil {
		return nil, err
	}
	if err := s.Init(ctx); err != nil {
		return nil, err
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	b := &httpDQL{srv: &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second},
		// ro=true is a read-only transaction, as pydgraph's txn(read_only=True)
		// and dgo's NewReadOnlyTxn send: the server keeps no start_ts for it.
		url: "http://" + lis.Addr().String() + "/query?ro=true",
		client: &http.Client{Transport: &http.Transport{
			MaxIdleConns: 4096, MaxIdleConnsPerHost: 4096, DisableCompression: true,
		}},
		errc: make(chan error, 1),
	}
	go func() {
		if err := b.srv.Serve(lis); !errors.Is(err, http.ErrServerClosed) {
			b.errc <- err
		}
	}()
	return b, nil
}

// newHTTPTarget is an httpDQL posting to an external server's Dgraph
// HTTP API at base (Options.Target).
func newHTTPTarget(base string) *httpDQL {
	return &httpDQL{url: strings.TrimRight(base, "/") + "/query?ro=true",
		client: &http.Client{Transport: &http.Transport{
			MaxIdleConns: 4096, MaxIdleConnsPerHost: 4096, DisableCompression: true,
		}},
		errc: make(chan error, 1),
	}
}

func (b *httpDQL) query(ctx context.Context, text string) (dqlAnswer, error) {
	body, me, err := b.post(ctx, text)
	if err != nil {
		return dqlAnswer{}, err
	}
	return countAnswer(body, me), nil
}

// post sends one query and returns the whole answer, its "data" and the
// number of its "me" nodes.
func (b *httpDQL) post(ctx context.Context, text string) (body []byte, me int, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.url, strings.NewReader(text))
	if err != nil {
		return nil, 0, err
	}
	req.Header.Set("Content-Type", "application/dql")
	resp, err := b.client.Do(req)
	if err != nil {
		return nil, 0, err
	}
	body, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, 0, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, 0, fmt.Errorf("POST /query: %s: %s", resp.Status, bytes.TrimSpace(body))
	}
	// {"data": {"me": [...]}, "extensions": {...}}, or {"errors": [...]}.
	var env struct {
		Data struct {
			Me []json.RawMessage `json:"me"`
		} `json:"data"`
		Errors json.RawMessage `json:"errors"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		return nil, 0, fmt.Errorf("POST /query: the answer is not Dgraph JSON: %w", err)
	}
	if len(env.Errors) > 0 && string(env.Errors) != "null" {
		return nil, 0, fmt.Errorf("POST /query: %s", env.Errors)
	}
	return body, len(env.Data.Me), nil
}

// failed reports the server stopping by itself, if it did.
func (b *httpDQL) failed() error {
	select {
	case err := <-b.errc:
		return fmt.Errorf("bench: the Dgraph HTTP server stopped: %w", err)
	default:
		return nil
	}
}

func (b *httpDQL) close() {
	if b.srv != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = b.srv.Shutdown(ctx)
	}
	b.client.CloseIdleConnections()
}

// findRoots asks the executor for the subjects of pred, sorted: the set a
// query's clients draw their roots from.
func findRoots(ctx context.Context, be *inprocDQL, pred string) ([]string, error) {
	data, err := be.data(ctx, fmt.Sprintf("{ q(func: has(%s)) { uid } }", pred))
	if err != nil {
		return nil, fmt.Errorf("finding the subjects of %s: %w", pred, err)
	}
	var out struct {
		Q []struct {
			UID string `json:"uid"`
		} `json:"q"`
	}
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("finding the subjects of %s: %w", pred, err)
	}
	uids := make([]string, 0, len(out.Q))
	for _, n := range out.Q {
		uids = append(uids, n.UID)
	}
	slices.Sort(uids)
	return uids, nil
}

// dqlAnswer is what one answer shows of the work done: its size and the
// names it holds (name@en values at every level).
type dqlAnswer struct {
	bytes, names int
	empty        bool // no root node (the uid has none of the fields)
}

// measureAnswer decodes an answer {"me":[...]} and counts its name values.
func measureAnswer(data []byte) (dqlAnswer, error) {
	var out struct {
		Me []json.RawMessage `json:"me"`
	}
	if err := json.Unmarshal(data, &out); err != nil {
		return dqlAnswer{}, fmt.Errorf("answer is not Dgraph JSON: %w", err)
	}
	return countAnswer(data, len(out.Me)), nil
}

// countAnswer sizes an answer with roots root nodes.
func countAnswer(data []byte, roots int) dqlAnswer {
	return dqlAnswer{bytes: len(data), names: bytes.Count(data, []byte(`"name@en":`)), empty: roots == 0}
}

// dqlCalls is the internal work of one query, counted in process on a
// sample of roots: engine read requests (dgraph.SnapshotReader.Calls: a
// GetVertex is one, a batched read one per shard it asks — vertex
// placement: about one per node a level visits; predicate placement: per
// level, one per shard holding the level's node vertices plus one per
// predicate read, index lookups alike in both) and executor batches.
type dqlCalls struct {
	Placement       string  `json:"placement"`
	Roots           int     `json:"roots_sampled"`
	GetVertexMean   float64 `json:"engine_requests_mean"`
	GetVertexMax    int64   `json:"engine_requests_max"`
	BatchesMean     float64 `json:"batches_mean"`
	NodesMean       float64 `json:"nodes_read_mean"`
	NamesMean       float64 `json:"names_mean"`
	EmptyAnswers    int     `json:"empty_answers"`
	AnswerBytesMean float64 `json:"answer_bytes_mean"`
	// ShardRPCsMean and ShardReadBatchesMean (--cluster) are the shards'
	// Read and ReadBatch calls per query, counted at the shards: the
	// network round trips of the reads (the stable-stamp announces
	// between gatekeepers are not counted).
	ShardRPCsMean        float64 `json:"shard_rpcs_mean,omitempty"`
	ShardReadBatchesMean float64 `json:"shard_read_batches_mean,omitempty"`
	// ShardRPCsMax (--target-shards) is the most calls one query made.
	ShardRPCsMax int64 `json:"shard_rpcs_max,omitempty"`
}

// countCalls runs q on the first n roots of a seeded shuffle through a
// counting reader.
func countCalls(ctx context.Context, db engine.API, ex *exec.Executor, q Query, roots []string, n int, seed uint64) (dqlCalls, error) {
	r := bench.NewRand(seed, 77)
	sample := slices.Clone(roots)
	r.Shuffle(len(sample), func(i, j int) { sample[i], sample[j] = sample[j], sample[i] })
	sample = sample[:min(n, len(sample))]
	var c dqlCalls
	var calls, batches, nodes, names, size int64
	for _, root := range sample {
		snap, err := db.Begin(ctx)
		if err != nil {
			return c, err
		}
		rd := dgraph.NewSnapshotReader(db, snap, false)
		res, err := ex.Query(ctx, rd, fmt.Sprintf(q.Text, root), nil)
		if err != nil {
			return c, fmt.Errorf("%s on %s: %w", q.Name, root, err)
		}
		a, err := measureAnswer(res.Data)
		if err != nil {
			return c, err
		}
		calls += rd.Calls()
		c.GetVertexMax = max(c.GetVertexMax, rd.Calls())
		batches += int64(res.Stats.Batches)
		nodes += int64(res.Stats.Nodes)
		names += int64(a.names)
		size += int64(a.bytes)
		if a.empty {
			c.EmptyAnswers++
		}
	}
	c.Roots, c.Placement = len(sample), ex.Placement()
	if k := float64(len(sample)); k > 0 {
		c.GetVertexMean = bench.Round(float64(calls)/k, 2)
		c.BatchesMean = bench.Round(float64(batches)/k, 2)
		c.NodesMean = bench.Round(float64(nodes)/k, 2)
		c.NamesMean = bench.Round(float64(names)/k, 2)
		c.AnswerBytesMean = bench.Round(float64(size)/k, 1)
	}
	return c, nil
}

// dqlLatency is a cell's latency distribution in milliseconds.
type dqlLatency struct {
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P95  float64 `json:"p95"`
	P99  float64 `json:"p99"`
	Min  float64 `json:"min"`
	Max  float64 `json:"max"`
}

func latencyMS(h *bench.Hist) dqlLatency {
	if h.Count() == 0 {
		return dqlLatency{}
	}
	ms := func(ns int64) float64 { return bench.Round(float64(ns)/1e6, 3) }
	return dqlLatency{Mean: bench.Round(h.Mean()/1e6, 3), P50: ms(h.Quantile(0.5)), P95: ms(h.Quantile(0.95)),
		P99: ms(h.Quantile(0.99)), Min: ms(h.Min()), Max: ms(h.Max())}
}

// dqlCell is one (query, clients) measurement.
type dqlCell struct {
	Query   string  `json:"query"`
	Clients int     `json:"clients"`
	Seconds float64 `json:"seconds"`
	// Queries answered without error, and their rate over Seconds.
	Queries   int64      `json:"queries"`
	PerSec    float64    `json:"queries_per_sec"`
	LatencyMS dqlLatency `json:"latency_ms"`
	// NamesMean and AnswerBytesMean are the answers' mean size; Empty
	// counts answers with no root node.
	NamesMean       float64  `json:"names_mean"`
	AnswerBytesMean float64  `json:"answer_bytes_mean"`
	Empty           int64    `json:"empty_answers"`
	Errors          int64    `json:"errors"`
	ErrorSamples    []string `json:"error_samples,omitempty"`
	// CPUCores is the process's CPU time (clients and server) over Seconds;
	// PerCPUSec is Queries over that CPU time: what a core to itself
	// answers, less sensitive than PerSec to other work on the machine.
	CPUCores  float64 `json:"cpu_cores"`
	PerCPUSec float64 `json:"queries_per_cpu_sec"`
}

// dqlWorker is one client: a goroutine issuing queries back to back.
type dqlWorker struct {
	hist                   bench.Hist
	ok, errs, empty, names int64
	bytes                  int64
	samples                []string
}

const dqlErrorSamplesMax = 3

func (w *dqlWorker) run(ctx context.Context, be dqlBackend, q Query, roots []string, seed, stream uint64, stop *atomic.Bool) {
	r := bench.NewRand(seed, stream)
	// Every client asks at least once, even one scheduled after the cell
	// ended (a loaded machine), so that no cell is empty by accident.
	for i := 0; ctx.Err() == nil && (i == 0 || !stop.Load()); i++ {
		text := fmt.Sprintf(q.Text, roots[r.IntN(len(roots))])
		t := time.Now()
		a, err := be.query(ctx, text)
		d := time.Since(t)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			w.errs++
			if len(w.samples) < dqlErrorSamplesMax {
				w.samples = append(w.samples, err.Error())
			}
			continue
		}
		w.hist.Record(d.Nanoseconds())
		w.ok++
		w.names += int64(a.names)
		w.bytes += int64(a.bytes)
		if a.empty {
			w.empty++
		}
	}
}

// runCell runs clients workers for d and merges what they saw.
func runCell(ctx context.Context, be dqlBackend, q Query, roots []string, clients int, d time.Duration, seed, stream uint64) dqlCell {
	workers := make([]*dqlWorker, clients)
	var stop atomic.Bool
	var wg sync.WaitGroup
	cpu0 := bench.ProcessCPU()
	start := time.Now()
	for i := range workers {
		workers[i] = &dqlWorker{}
		wg.Add(1)
		go func(w *dqlWorker, i int) {
			defer wg.Done()
			w.run(ctx, be, q, roots, seed, stream+uint64(i), &stop)
		}(workers[i], i)
	}
	timer := time.AfterFunc(d, func() { stop.Store(true) })
	wg.Wait()
	timer.Stop()
	elapsed := time.Since(start)
	cpu := bench.ProcessCPU() - cpu0
	c := dqlCell{Query: q.Name, Clients: clients, Seconds: bench.Round(elapsed.Seconds(), 3),
		CPUCores: bench.Round(cpu.Seconds()/elapsed.Seconds(), 2)}
	var h bench.Hist
	var names, size int64
	for _, w := range workers {
		h.Merge(&w.hist)
		c.Queries += w.ok
		c.Errors += w.errs
		c.Empty += w.empty
		names += w.names
		size += w.bytes
		for _, s := range w.samples {
			if len(c.ErrorSamples) < dqlErrorSamplesMax {
				c.ErrorSamples = append(c.ErrorSamples, s)
			}
		}
	}
	c.PerSec = bench.Round(float64(c.Queries)/elapsed.Seconds(), 1)
	if cpu > 0 {
		c.PerCPUSec = bench.Round(float64(c.Queries)/cpu.Seconds(), 1)
	}
	c.LatencyMS = latencyMS(&h)
	if c.Queries > 0 {
		c.NamesMean = bench.Round(float64(names)/float64(c.Queries), 2)
		c.AnswerBytesMean = bench.Round(float64(size)/float64(c.Queries), 1)
	}
	return c
}
