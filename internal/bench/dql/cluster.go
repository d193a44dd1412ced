package dql

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/weft-db/weft/internal/bench"
	"github.com/weft-db/weft/internal/dgraph"
	"github.com/weft-db/weft/internal/dgraph/exec"
	"github.com/weft-db/weft/internal/engine"
	"github.com/weft-db/weft/internal/rdf"
	pb "github.com/weft-db/weft/internal/wire/clusterpb"
)

// The DQL benchmark on a cluster (Options.Cluster) and against an
// external server (Options.Target). On a cluster, a query's reads cross
// the network: the executor's batched reads (engine.BatchReader) become one
// Shard.ReadBatch call per shard a batch touches, so the internal calls per
// query are network round trips, counted at the shards.

// runCluster starts the cluster, loads the film data through gatekeeper 0's
// Dgraph face and runs the query cells through every gatekeeper's.
func (b *dqlBench) runCluster(ctx context.Context) error {
	o := b.opts
	for _, p := range []string{o.RDF, o.Schema} {
		if _, err := os.Stat(p); err != nil {
			return fmt.Errorf("bench: the film data: %w", err)
		}
	}
	b.cfg = engine.DefaultConfig()
	if o.Gatekeepers > 0 {
		b.cfg.Gatekeepers = o.Gatekeepers
	}
	if o.Shards > 0 {
		b.cfg.Shards = o.Shards
	}
	b.cfg.Sync = false // the cluster's in-memory store
	lines, err := countLines(o.RDF, o.Lines)
	if err != nil {
		return err
	}
	lc, err := engine.StartLocalCluster(engine.LocalClusterConfig{Gatekeepers: b.cfg.Gatekeepers, Shards: b.cfg.Shards})
	if err != nil {
		return err
	}
	b.cleanup = append(b.cleanup, func() { lc.Close() })
	b.lc = lc
	if err := b.loadInto(ctx, lc.Gatekeepers[0], lines); err != nil {
		return err
	}
	r := &b.res.Load
	o.Log.Info("film data loaded into the cluster", "quads", r.Quads, "seconds", r.Seconds, "engine_edges", r.EngineEdges)
	return b.clusterQueries(ctx)
}

// shardRPCs sums the Read and ReadBatch calls the cluster's shards have
// answered.
func (b *dqlBench) shardRPCs() (reads, batches uint64) {
	for _, s := range b.lc.Shards {
		r, bt := s.ReadCalls()
		reads += r
		batches += bt
	}
	return reads, batches
}

// clusterQueries is queries on the cluster: roots found and calls counted
// through gatekeeper 0, cells through every gatekeeper's Dgraph HTTP API
// in turn (or gatekeeper 0's executor in process).
func (b *dqlBench) clusterQueries(ctx context.Context) error {
	o := b.opts
	gks := b.lc.Gatekeepers
	in := &inprocDQL{db: gks[0], exec: exec.New(b.g)}
	var be dqlBackend = in
	var fronts []*httpDQL
	if o.Mode == "http" {
		for i, gk := range gks {
			g := b.g
			if i > 0 { // each gatekeeper process opens its own Dgraph face
				var err error
				if g, err = dgraph.Open(ctx, gk, dgraph.DefaultConfig()); err != nil {
					return err
				}
			}
			hb, err := newHTTPDQL(ctx, g)
			if err != nil {
				return err
			}
			defer hb.close()
			fronts = append(fronts, hb)
		}
		be = &rrDQL{fronts: fronts}
	}
	b.res.Roots, b.res.Calls = map[string]int{}, map[string]dqlCalls{}
	roots := map[string][]string{}
	for _, name := range o.Queries {
		q, _ := dqlQuery(name)
		rs, err := findRoots(ctx, in, q.RootsPred)
		if err != nil {
			return err
		}
		if rs, err = b.pickRoots(name, rs); err != nil {
			return err
		}
		roots[name], b.res.Roots[name] = rs, len(rs)
		r0, b0 := b.shardRPCs()
		c, err := countCalls(ctx, gks[0], in.exec, q, rs, o.CallsSample, o.Seed)
		if err != nil {
			return err
		}
		r1, b1 := b.shardRPCs()
		if c.Roots > 0 {
			c.ShardRPCsMean = bench.Round(float64(r1-r0+b1-b0)/float64(c.Roots), 2)
			c.ShardReadBatchesMean = bench.Round(float64(b1-b0)/float64(c.Roots), 2)
		}
		b.res.Calls[name] = c
	}
	if o.CPUProfile != "" {
		stop, err := startProfile(o.CPUProfile)
		if err != nil {
			return err
		}
		defer stop()
	}
	err := b.runCells(ctx, be, roots)
	for _, hb := range fronts {
		err = errors.Join(err, hb.failed())
	}
	return err
}

// pickRoots keeps at most RootsMax of a query's roots (a seeded choice).
func (b *dqlBench) pickRoots(name string, rs []string) ([]string, error) {
	o := b.opts
	q, _ := dqlQuery(name)
	if len(rs) == 0 {
		return nil, fmt.Errorf("bench: the data has no subjects of %s to root %s at", q.RootsPred, q.Name)
	}
	if o.RootsMax > 0 && len(rs) > o.RootsMax {
		r := bench.NewRand(o.Seed, 78)
		r.Shuffle(len(rs), func(i, j int) { rs[i], rs[j] = rs[j], rs[i] })
		rs = rs[:o.RootsMax]
	}
	return rs, nil
}

// rrDQL sends each query to the next of several front ends (one per
// gatekeeper), as clients spread over a cluster's gatekeepers.
type rrDQL struct {
	fronts []*httpDQL
	next   atomic.Uint64
}

func (r *rrDQL) query(ctx context.Context, text string) (dqlAnswer, error) {
	return r.fronts[r.next.Add(1)%uint64(len(r.fronts))].query(ctx, text)
}

func (r *rrDQL) close() {}

// runTarget runs the query cells against an external server's Dgraph HTTP
// API, its roots found through the same API.
func (b *dqlBench) runTarget(ctx context.Context) error {
	o := b.opts
	hb := newHTTPTarget(o.Target)
	defer hb.close()
	if o.TargetLoad {
		if err := b.targetLoad(ctx, hb); err != nil {
			return err
		}
	}
	b.res.Roots, b.res.Calls = map[string]int{}, map[string]dqlCalls{}
	roots := map[string][]string{}
	for _, name := range o.Queries {
		q, _ := dqlQuery(name)
		body, _, err := hb.post(ctx, fmt.Sprintf("{ me(func: has(%s)) { uid } }", q.RootsPred))
		if err != nil {
			return fmt.Errorf("bench: finding the subjects of %s at %s: %w", q.RootsPred, o.Target, err)
		}
		var out struct {
			Data struct {
				Me []struct {
					UID string `json:"uid"`
				} `json:"me"`
			} `json:"data"`
		}
		if err := json.Unmarshal(body, &out); err != nil {
			return fmt.Errorf("bench: finding the subjects of %s: %w", q.RootsPred, err)
		}
		rs := make([]string, 0, len(out.Data.Me))
		for _, n := range out.Data.Me {
			rs = append(rs, n.UID)
		}
		slices.Sort(rs)
		if rs, err = b.pickRoots(name, rs); err != nil {
			return err
		}
		roots[name], b.res.Roots[name] = rs, len(rs)
		if len(o.TargetShards) > 0 {
			if b.res.Calls[name], err = b.targetCalls(ctx, hb, q, rs); err != nil {
				return err
			}
		}
	}
	return b.runCells(ctx, hb, roots)
}

// describeFront corrects the result's parameters and notes for a cluster
// or target run (result describes the single-process run).
func (b *dqlBench) describeFront(res *bench.Result) {
	o := b.opts
	p, ok := res.Params.(map[string]any)
	if !ok {
		return
	}
	// dqlNotes describes the single-process run: drop what does not hold.
	keep := res.Notes[:0]
	for _, n := range res.Notes {
		switch {
		case strings.HasPrefix(n, "Queries are POSTed"), strings.HasPrefix(n, "Queries call the DQL executor") && o.Cluster:
		case o.Target != "" && (strings.HasPrefix(n, "Load: ") || strings.HasPrefix(n, "Internal calls: ")):
		default:
			keep = append(keep, n)
		}
	}
	res.Notes = keep
	switch {
	case o.Cluster:
		p["cluster"] = true
		p["store"] = "pebble in memory (vfs.NewMem), shared by the cluster's roles"
		p["sync_during_load"], p["sync_during_queries"] = false, false
		res.Notes = append(res.Notes,
			fmt.Sprintf("Cluster: %d gatekeeper and %d shard roles in this process, each behind its own gRPC server on 127.0.0.1 "+
				"(engine.StartLocalCluster: the code weft gatekeeper and weft shard run), with an in-process Kronos; "+
				"every read crosses loopback TCP (Shard.Read, Shard.ReadBatch).", b.cfg.Gatekeepers, b.cfg.Shards),
			"Cluster load: through gatekeeper 0's Dgraph face (commits on the shared store, writes to the shards over the FIFO streams).",
			"Cluster queries (http): every gatekeeper serves Dgraph's HTTP API on 127.0.0.1 in this process (its own Dgraph face, the handler weft gatekeeper --dgraph-http runs); queries are POSTed (application/dql, ?ro=true) to them in turn, each answer decoded and its name@en values counted. With --mode inproc, gatekeeper 0's executor is called directly. Every query's snapshot waits until the peer gatekeepers have merged its stamp (a round of announces).",
			"internal_calls.shard_rpcs_mean: the shards' Read and ReadBatch calls per query, counted at the shards over the sampled roots: the query's network round trips for reads (engine_requests_mean counts a GetVertex as one request although an alias GetVertex is two Read calls).")
	case o.Target != "":
		p["target"] = o.Target
		for _, k := range []string{"store", "sync_during_load", "sync_during_queries", "load_batch_quads", "loaders",
			"gatekeepers", "shards", "lines", "rdf", "schema"} {
			delete(p, k)
		}
		p["target_load"], p["target_shards"] = o.TargetLoad, o.TargetShards
		load := "the data was loaded beforehand (results.load is empty)"
		if o.TargetLoad {
			load = "this run applied the schema through the target's /alter and posted the first params.lines_posted lines through its /mutate?commitNow=true, load_batch_quads lines per mutation (results.load: quads accepted, lines skipped, mutations)"
			p["lines_posted"], p["load_batch_quads"] = b.res.Load.Lines, o.LoadBatch
		}
		calls := "no internal calls were counted"
		if len(o.TargetShards) > 0 {
			calls = "internal calls: calls_sample queries per query, sent one at a time, and the change in the target shards' Read and ReadBatch counters (Shard.Status at params.target_shards) over them: internal_calls.shard_rpcs_mean are network round trips per query (nothing else used the cluster meanwhile)"
		}
		res.Notes = append(res.Notes, "Target: the queries went to the external server at params.target (POST /query?ro=true, application/dql; each answer decoded and its name@en values counted; latency measured by the client around the whole request); "+load+
			"; the roots were found through the same API (has(pred)); "+calls+"; params.placement is a label only (the server's data has its own).")
	}
}

// errTargetRefused marks an answer of the target refusing a request (as
// opposed to failing to reach it).
var errTargetRefused = errors.New("bench: the target refused the request")

// postTarget posts body to the target's path and returns the answer; an
// HTTP error or a Dgraph error is errTargetRefused.
func postTarget(ctx context.Context, hb *httpDQL, url, contentType, body string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", contentType)
	resp, err := hb.client.Do(req)
	if err != nil {
		return nil, err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	var env struct {
		Errors json.RawMessage `json:"errors"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &env) != nil || (len(env.Errors) > 0 && string(env.Errors) != "null") {
		return b, fmt.Errorf("%w: POST %s: %s: %.300s", errTargetRefused, url, resp.Status, bytes.TrimSpace(b))
	}
	return b, nil
}

// targetLoadAttemptsMax bounds the attempts of one mutation the target
// answers with a retryable error (a conflict, overload).
const targetLoadAttemptsMax = 8

// targetLoad applies the schema and posts the film data's lines through the
// target's Dgraph HTTP API (TargetLoad).
func (b *dqlBench) targetLoad(ctx context.Context, hb *httpDQL) error {
	o := b.opts
	base := strings.TrimRight(o.Target, "/")
	sch, err := os.ReadFile(o.Schema)
	if err != nil {
		return err
	}
	r := &b.res.Load
	t := time.Now()
	if _, err := postTarget(ctx, hb, base+"/alter", "application/dql", string(sch)); err != nil {
		return fmt.Errorf("%s: %w", o.Schema, err)
	}
	r.SchemaSeconds = bench.Round(time.Since(t).Seconds(), 3)
	lines, err := countLines(o.RDF, o.Lines)
	if err != nil {
		return err
	}
	f, err := rdf.Open(o.RDF)
	if err != nil {
		return err
	}
	defer f.Close()
	bar := bench.NewBar(o.Progress, lines, "dql load (target)")
	defer bar.Finish()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	t = time.Now()
	var batch []string
	flush := func() error {
		ok, skipped, err := b.postLines(ctx, hb, base+"/mutate?commitNow=true", batch)
		r.Quads += int64(ok)
		r.Skipped += int64(skipped)
		_ = bar.Add(len(batch))
		batch = batch[:0]
		return err
	}
	for sc.Scan() {
		if o.Lines > 0 && r.Lines >= int64(o.Lines) {
			break
		}
		r.Lines++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if batch = append(batch, line); len(batch) == o.LoadBatch {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if len(batch) > 0 {
		if err := flush(); err != nil {
			return err
		}
	}
	r.Seconds = bench.Round(time.Since(t).Seconds(), 3)
	r.QuadsPerSec = bench.Round(float64(r.Quads)/max(r.Seconds, 1e-9), 0)
	r.ReportQuadsPerSec = bench.Round(dqlReportEdges/float64(dqlReportSeconds), 0)
	r.VsReport = bench.Round(r.QuadsPerSec/r.ReportQuadsPerSec, 2)
	o.Log.Info("film data loaded through the target", "quads", r.Quads, "skipped", r.Skipped, "seconds", r.Seconds)
	return nil
}

// postLines posts lines as one mutation; when the target refuses it, the
// halves are posted in turn, down to single lines, which are skipped.
func (b *dqlBench) postLines(ctx context.Context, hb *httpDQL, url string, lines []string) (ok, skipped int, err error) {
	body := "{ set {\n" + strings.Join(lines, "\n") + "\n} }"
	for attempt := 1; ; attempt++ {
		ans, err := postTarget(ctx, hb, url, "application/rdf", body)
		if err == nil {
			b.res.Load.Transactions++
			return len(lines), 0, nil
		}
		if !errors.Is(err, errTargetRefused) {
			return 0, 0, err
		}
		retry := bytes.Contains(ans, []byte("ErrorOverloaded")) || bytes.Contains(ans, []byte("ErrorAborted")) ||
			bytes.Contains(ans, []byte("retry"))
		if !retry || attempt == targetLoadAttemptsMax {
			break
		}
		b.res.Load.Retries++
		select {
		case <-ctx.Done():
			return 0, 0, ctx.Err()
		case <-time.After(time.Duration(attempt) * 20 * time.Millisecond):
		}
	}
	if len(lines) == 1 {
		return 0, 1, nil
	}
	h := len(lines) / 2
	ok1, sk1, err := b.postLines(ctx, hb, url, lines[:h])
	if err != nil {
		return ok1, sk1, err
	}
	ok2, sk2, err := b.postLines(ctx, hb, url, lines[h:])
	return ok1 + ok2, sk1 + sk2, err
}

// targetCalls sends CallsSample queries of q (roots drawn as countCalls
// draws them), one at a time, and counts the target shards' Read and
// ReadBatch calls they caused (TargetShards).
func (b *dqlBench) targetCalls(ctx context.Context, hb *httpDQL, q Query, roots []string) (dqlCalls, error) {
	o := b.opts
	var clients []pb.ShardClient
	for _, addr := range o.TargetShards {
		conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			return dqlCalls{}, err
		}
		defer conn.Close()
		clients = append(clients, pb.NewShardClient(conn))
	}
	counts := func() (reads, batches uint64, err error) {
		for i, c := range clients {
			st, err := c.Status(ctx, &pb.StatusRequest{})
			if err != nil {
				return 0, 0, fmt.Errorf("bench: status of the target's shard %s: %w", o.TargetShards[i], err)
			}
			reads += st.GetReads()
			batches += st.GetReadBatches()
		}
		return reads, batches, nil
	}
	r := bench.NewRand(o.Seed, 77)
	sample := slices.Clone(roots)
	r.Shuffle(len(sample), func(i, j int) { sample[i], sample[j] = sample[j], sample[i] })
	sample = sample[:min(o.CallsSample, len(sample))]
	c := dqlCalls{Placement: o.Placement, Roots: len(sample)}
	r0, b0, err := counts()
	if err != nil {
		return c, err
	}
	var names, size int64
	r1, b1 := r0, b0
	for _, root := range sample {
		a, err := hb.query(ctx, fmt.Sprintf(q.Text, root))
		if err != nil {
			return c, fmt.Errorf("%s on %s: %w", q.Name, root, err)
		}
		names += int64(a.names)
		size += int64(a.bytes)
		if a.empty {
			c.EmptyAnswers++
		}
		prevR, prevB := r1, b1
		if r1, b1, err = counts(); err != nil {
			return c, err
		}
		c.ShardRPCsMax = max(c.ShardRPCsMax, int64(r1-prevR+b1-prevB))
	}
	if k := float64(len(sample)); k > 0 {
		c.ShardRPCsMean = bench.Round(float64(r1-r0+b1-b0)/k, 2)
		c.ShardReadBatchesMean = bench.Round(float64(b1-b0)/k, 2)
		c.NamesMean = bench.Round(float64(names)/k, 2)
		c.AnswerBytesMean = bench.Round(float64(size)/k, 1)
	}
	return c, nil
}
