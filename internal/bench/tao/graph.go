package tao

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weft-db/weft/internal/bench"
	"github.com/weft-db/weft/internal/engine"
	"github.com/weft-db/weft/internal/txn"
)

// LinkBench's access distributions (FBWorkload.properties): Zipf shapes and
// the share of draws uncorrelated with out-degree.
const (
	linkReadShape    = 0.8   // read_shape, read_uncorr_shape
	linkReadUncorr   = 0.995 // read_uncorr_blend = 99.5
	linkWriteShape   = 0.741 // write_shape, write_uncorr_shape
	linkWriteUncorr  = 0.95  // write_uncorr_blend = 95
	nodeReadShape    = 0.625 // node_read_shape
	dstZipfShape     = 0.8   // --dst zipf: in-degree popularity (our choice; LinkBench has none)
	taoHandlePrefix  = "v"
	taoRetriesMax    = 32 // attempts of one transaction before it counts as an error
	taoEmptyPicksMax = 32 // vertices tried for a delete before giving up on an edgeless draw
)

// Graph is the generated social graph and the access distributions of the
// workload over it. Vertices are 0..n-1 with handles "v0", "v1", …; vertex v
// has deg[v] out-edges with handles "0", "1", … (base 36) to destinations
// drawn by dst.
type Graph struct {
	n   int
	deg []int32
	// linkRead picks the vertex of get_edges and count_edges, linkWrite that
	// of create_edge and delete_edge, nodeRead that of get_node, dst the
	// destination of every edge created (at load and by the workload).
	linkRead, linkWrite blendDist
	nodeRead            accessDist
	dst                 func(r *rand.Rand) int32
	edges               int64
	maxDeg              int32
	zeroDeg             int
}

// Edges is the number of edges the graph is generated with.
func (g *Graph) Edges() int64 { return g.edges }

// NewGraph assigns out-degrees the way LinkBench's loader does: vertex
// order[k] gets the degree at quantile 1-(k+½)/n of the distribution
// (stratified, so every run of the same size has the same degree multiset;
// order is a seeded random permutation), and builds the access distributions.
// The uncorrelated link reads and writes share one order (LinkBench uses one
// shuffler seed for both), node reads have their own, and the correlated
// draws use the degree order itself: rank k is the k-th largest out-degree.
func NewGraph(n int, cdf DegreeCDF, dst string, seed uint64) (*Graph, error) {
	g := &Graph{n: n, deg: make([]int32, n)}
	byDegree := permutation(bench.NewRand(seed, 100), n)
	for k, v := range byDegree {
		d := cdf.quantile(1 - (float64(k)+0.5)/float64(n))
		d = min(d, 1<<31-1)
		g.deg[v] = int32(d)
		g.edges += d
		g.maxDeg = max(g.maxDeg, int32(d))
		if d == 0 {
			g.zeroDeg++
		}
	}
	uncorr := permutation(bench.NewRand(seed, 101), n)
	g.linkRead = blendDist{
		uncorr:  accessDist{z: newZipf(n, linkReadShape), order: uncorr},
		corr:    accessDist{z: newZipf(n, linkReadShape), order: byDegree},
		pUncorr: linkReadUncorr,
	}
	g.linkWrite = blendDist{
		uncorr:  accessDist{z: newZipf(n, linkWriteShape), order: uncorr},
		corr:    accessDist{z: newZipf(n, linkWriteShape), order: byDegree},
		pUncorr: linkWriteUncorr,
	}
	g.nodeRead = accessDist{z: newZipf(n, nodeReadShape), order: permutation(bench.NewRand(seed, 102), n)}
	switch dst {
	case "uniform":
		g.dst = func(r *rand.Rand) int32 { return int32(r.IntN(n)) }
	case "zipf":
		pop := accessDist{z: newZipf(n, dstZipfShape), order: permutation(bench.NewRand(seed, 103), n)}
		g.dst = pop.pick
	default:
		return nil, fmt.Errorf("bench: --dst %q: want uniform or zipf", dst)
	}
	return g, nil
}

func taoHandle(v int32) string { return taoHandlePrefix + strconv.Itoa(int(v)) }

// LoadStats reports the load phase.
type LoadStats struct {
	Seconds       float64 `json:"seconds"`
	VertexSeconds float64 `json:"vertex_seconds"`
	EdgeSeconds   float64 `json:"edge_seconds"`
	OpsPerSec     float64 `json:"ops_per_sec"` // vertices and edges created per second
	Transactions  int64   `json:"transactions"`
	Aborts        int64   `json:"aborts"` // commits retried after a conflict
	// ReopenSeconds is the time to close the store loaded without fsync and
	// reopen it with fsync (recovery rebuilds every shard): --load-nosync only.
	ReopenSeconds float64 `json:"reopen_seconds,omitempty"`
}

// LoadGraph creates the vertices, then the edges, through Commit in
// transactions of batch operations, with loaders transactions in flight.
// Edges follow their source's vertex order, so one transaction holds the
// edges of a few neighbouring sources.
func LoadGraph(ctx context.Context, db engine.API, g *Graph, batch, loaders int, seed uint64,
	progress func(int)) (LoadStats, error) {
	var st LoadStats
	start := time.Now()
	gen := func(yield func(txn.Op) bool) {
		for v := range int32(g.n) {
			if !yield(txn.Op{Kind: txn.CreateVertex, Vertex: taoHandle(v)}) {
				return
			}
		}
	}
	if err := loadOps(ctx, db, gen, batch, loaders, &st, progress); err != nil {
		return st, fmt.Errorf("loading vertices: %w", err)
	}
	st.VertexSeconds = time.Since(start).Seconds()
	r := bench.NewRand(seed, 104)
	gen = func(yield func(txn.Op) bool) {
		for v := range int32(g.n) {
			src := taoHandle(v)
			for j := range int64(g.deg[v]) {
				op := txn.Op{Kind: txn.CreateEdge, Vertex: src, Edge: strconv.FormatInt(j, 36), Dst: taoHandle(g.dst(r))}
				if !yield(op) {
					return
				}
			}
		}
	}
	if err := loadOps(ctx, db, gen, batch, loaders, &st, progress); err != nil {
		return st, fmt.Errorf("loading edges: %w", err)
	}
	st.Seconds = time.Since(start).Seconds()
	st.EdgeSeconds = st.Seconds - st.VertexSeconds
	st.OpsPerSec = float64(int64(g.n)+g.edges) / st.Seconds
	return st, nil
}

// loadOps commits the generated operations in transactions of batch
// operations from loaders goroutines, retrying a transaction that aborts.
func loadOps(ctx context.Context, db engine.API, gen func(func(txn.Op) bool), batch, loaders int,
	st *LoadStats, progress func(int)) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	work := make(chan []txn.Op, loaders)
	var (
		wg       sync.WaitGroup
		errOnce  sync.Once
		firstErr error
		txns     atomic.Int64
		aborts   atomic.Int64
	)
	fail := func(err error) {
		errOnce.Do(func() { firstErr = err; cancel() })
	}
	for w := range loaders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := bench.NewRand(uint64(w), 105)
			for ops := range work {
				n, err := commitRetrying(ctx, db, ops, r)
				aborts.Add(int64(n))
				if err != nil {
					fail(err)
					continue // drain
				}
				txns.Add(1)
				progress(len(ops))
			}
		}()
	}
	cur := make([]txn.Op, 0, batch)
	for op := range gen {
		cur = append(cur, op)
		if len(cur) == batch {
			select {
			case work <- cur:
			case <-ctx.Done():
			}
			if ctx.Err() != nil {
				break
			}
			cur = make([]txn.Op, 0, batch)
		}
	}
	if len(cur) > 0 && ctx.Err() == nil {
		work <- cur
	}
	close(work)
	wg.Wait()
	st.Transactions += txns.Load()
	st.Aborts += aborts.Load()
	if firstErr != nil {
		return firstErr
	}
	return ctx.Err()
}

// commitRetrying commits ops without reads, retrying conflicts and overload
// with jittered, growing pauses; it returns the number of retries.
func commitRetrying(ctx context.Context, db engine.API, ops []txn.Op, r *rand.Rand) (int, error) {
	for attempt := 0; ; attempt++ {
		_, err := db.Commit(ctx, nil, ops)
		if err == nil || !retryable(err) {
			return attempt, err
		}
		if attempt+1 >= taoRetriesMax {
			return attempt, fmt.Errorf("bench: %d attempts: %w", taoRetriesMax, err)
		}
		if err := pause(ctx, r, attempt); err != nil {
			return attempt, err
		}
	}
}

func retryable(err error) bool {
	return errors.Is(err, engine.ErrAborted) || errors.Is(err, engine.ErrSnapshotTooOld) ||
		errors.Is(err, engine.ErrOverloaded)
}

// pause sleeps a random time up to 50µs·2^attempt (at most ~50 ms).
func pause(ctx context.Context, r *rand.Rand, attempt int) error {
	return bench.Sleep(ctx, time.Duration(r.Int64N(int64(50*time.Microsecond)<<min(attempt, 10))))
}

// degreePercentiles describes the out-degrees for the JSON.
func (g *Graph) degreePercentiles() map[string]int32 {
	s := slices.Clone(g.deg)
	slices.Sort(s)
	at := func(q float64) int32 { return s[min(int(q*float64(len(s))), len(s)-1)] }
	return map[string]int32{"p50": at(0.5), "p90": at(0.9), "p99": at(0.99), "p999": at(0.999), "max": s[len(s)-1]}
}
