package tao

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/weft-db/weft/internal/bench"
)

// taoOp is one of the five operations of the TAO mix.
type taoOp int

const (
	opGetEdges taoOp = iota // assoc_range (and assoc_get): get_edges with a limit
	opCountEdges
	opGetNode
	opCreateEdge
	opDeleteEdge
	taoOps
)

var taoOpNames = [taoOps]string{"get_edges", "count_edges", "get_node", "create_edge", "delete_edge"}

func (o taoOp) String() string { return taoOpNames[o] }

func (o taoOp) isWrite() bool { return o >= opCreateEdge }

// The TAO mix (Bronson et al., ATC'13, as Weaver's soc_net_bench.py uses it):
// shares of the reads and of the writes, in percent.
var (
	taoReadShares  = [...]float64{opGetEdges: 59.4, opCountEdges: 11.7, opGetNode: 28.9}
	taoWriteShares = [...]float64{opCreateEdge - opCreateEdge: 80, opDeleteEdge - opCreateEdge: 20}
)

// Mixes names the workload variants by their read fraction.
var Mixes = map[string]float64{"tao": 0.998, "reads": 1, "75": 0.75}

// Mix is a cumulative distribution over the operations.
type Mix struct {
	name  string
	reads float64
	cum   [taoOps]float64
}

// NewMix returns the mix named name (Mixes).
func NewMix(name string) (Mix, error) {
	reads, ok := Mixes[name]
	if !ok {
		return Mix{}, fmt.Errorf("bench: unknown mix %q (have tao, reads, 75)", name)
	}
	m := Mix{name: name, reads: reads}
	acc := 0.0
	for op := range taoOps {
		acc += m.weight(op)
		m.cum[op] = acc
	}
	return m, nil
}

// GetNodeMix is the mix of get_node alone (weft bench scale's get_node mix).
func GetNodeMix() Mix {
	mix := Mix{name: "get_node", reads: 1}
	for op := opGetNode; op < taoOps; op++ {
		mix.cum[op] = 1 // every draw below 1 lands on get_node
	}
	return mix
}

// weight is the probability of op.
func (m Mix) weight(op taoOp) float64 {
	if op.isWrite() {
		return (1 - m.reads) * taoWriteShares[op-opCreateEdge] / 100
	}
	return m.reads * taoReadShares[op] / 100
}

func (m Mix) pick(r *rand.Rand) taoOp {
	u := r.Float64() * m.cum[taoOps-1]
	for op := range taoOps {
		if u < m.cum[op] {
			return op
		}
	}
	return taoOps - 1
}

// taoOpStats is one client's record of one operation.
type taoOpStats struct {
	hist    bench.Hist
	errors  int64
	retries int64 // attempts after the first (conflicts, overload)
	items   int64 // edges returned (get_edges) or counted (count_edges)
	missing int64 // vertices a read did not find
}

// Worker is one client: a goroutine issuing operations back to back.
type Worker struct {
	id    int
	r     *rand.Rand
	be    Backend
	g     *Graph
	mix   Mix
	limit int

	ops        [taoOps]taoOpStats
	created    int64
	deleted    int64
	emptyDraws int64 // delete draws that hit a vertex without out-edges
	errSamples []string
	seq        int
	done       atomic.Int64 // operations finished, read by the sampler
	_          [56]byte     // keep the next worker's counter off this cache line
}

// NewWorker returns client id of a run on g: it draws operations from mix
// with r and issues them through be, asking get_edges for EdgesLimit edges.
// Clients of one graph need distinct ids: the edges a client creates are
// named after it.
func NewWorker(id int, r *rand.Rand, be Backend, g *Graph, mix Mix) *Worker {
	return &Worker{id: id, r: r, be: be, g: g, mix: mix, limit: EdgesLimit}
}

// run issues operations until stop is set or ctx ends; operations in flight
// when stop is set finish (and count).
func (w *Worker) run(ctx context.Context, stop *atomic.Bool) {
	for !stop.Load() && ctx.Err() == nil {
		op := w.mix.pick(w.r)
		start := time.Now()
		err := w.do(ctx, op)
		lat := time.Since(start)
		if err != nil && ctx.Err() != nil {
			return // interrupted: not the engine's error
		}
		s := &w.ops[op]
		s.hist.Record(lat.Nanoseconds())
		if err != nil {
			s.errors++
			if len(w.errSamples) < 3 {
				w.errSamples = append(w.errSamples, op.String()+": "+err.Error())
			}
		}
		w.done.Add(1)
	}
}

func (w *Worker) do(ctx context.Context, op taoOp) error {
	s := &w.ops[op]
	switch op {
	case opGetEdges:
		n, err := w.be.getEdges(ctx, taoHandle(w.g.linkRead.pick(w.r)), w.limit)
		s.items += int64(n)
		return err
	case opCountEdges:
		n, err := w.be.countEdges(ctx, taoHandle(w.g.linkRead.pick(w.r)))
		s.items += int64(n)
		return err
	case opGetNode:
		found, err := w.be.getNode(ctx, taoHandle(w.g.nodeRead.pick(w.r)))
		if err == nil && !found {
			s.missing++
		}
		return err
	case opCreateEdge:
		return w.createEdge(ctx, s)
	case opDeleteEdge:
		return w.deleteEdge(ctx, s)
	}
	panic(fmt.Sprintf("bench: operation %d", op))
}

// createEdge adds an edge from a vertex drawn by LinkBench's link-write
// distribution. Its handle is unique to this client ("c<client>.<n>"), so a
// retry after an abort cannot collide with an edge that exists.
func (w *Worker) createEdge(ctx context.Context, s *taoOpStats) error {
	src := taoHandle(w.g.linkWrite.pick(w.r))
	dst := taoHandle(w.g.dst(w.r))
	w.seq++
	edge := "c" + strconv.FormatInt(int64(w.id), 36) + "." + strconv.FormatInt(int64(w.seq), 36)
	err := w.retry(ctx, s, func() error { return w.be.createEdge(ctx, src, edge, dst) })
	if err == nil {
		w.created++
	}
	return err
}

// deleteEdge deletes a random one of the first limit out-edges of a vertex
// drawn by the link-write distribution; a vertex without out-edges (45% of
// them have none) is replaced by another draw, up to taoEmptyPicksMax times.
func (w *Worker) deleteEdge(ctx context.Context, s *taoOpStats) error {
	for range taoEmptyPicksMax {
		src := taoHandle(w.g.linkWrite.pick(w.r))
		err := w.retry(ctx, s, func() error { return w.be.deleteEdge(ctx, src, w.limit, w.r) })
		if errors.Is(err, errNoEdges) {
			w.emptyDraws++
			continue
		}
		if err == nil {
			w.deleted++
		}
		return err
	}
	return nil // nothing to delete near the hot vertices: counted in emptyDraws
}

// retry runs one transaction attempt after another while it fails with a
// retryable error, pausing a growing random time between attempts.
func (w *Worker) retry(ctx context.Context, s *taoOpStats, attempt func() error) error {
	for i := 0; ; i++ {
		err := attempt()
		if err == nil || !w.be.retryable(err) {
			return err
		}
		if i+1 >= taoRetriesMax {
			return fmt.Errorf("bench: %d attempts: %w", taoRetriesMax, err)
		}
		s.retries++
		if err := pause(ctx, w.r, i); err != nil {
			return err
		}
	}
}

// Tick is the throughput of one interval of the run.
type Tick struct {
	T         float64 `json:"t_s"` // end of the interval, from the start of the run
	OpsPerSec float64 `json:"ops_per_sec"`
}

// RunClients runs the workers for d and samples their throughput every
// interval. It returns the measured wall time (the last operation's end).
func RunClients(ctx context.Context, workers []*Worker, d, interval time.Duration,
	progress func(time.Duration)) (time.Duration, []Tick) {
	var stop atomic.Bool
	finished := make(chan struct{}, len(workers))
	start := time.Now()
	for _, w := range workers {
		go func() {
			w.run(ctx, &stop)
			finished <- struct{}{}
		}()
	}
	total := func() int64 {
		var n int64
		for _, w := range workers {
			n += w.done.Load()
		}
		return n
	}
	var ticks []Tick
	tick := time.NewTicker(interval)
	defer tick.Stop()
	last, lastT := int64(0), time.Duration(0)
	for !stop.Load() {
		select {
		case <-tick.C:
		case <-ctx.Done():
			stop.Store(true)
			continue
		}
		now := time.Since(start)
		n := total()
		ticks = append(ticks, Tick{T: bench.Round(now.Seconds(), 3), OpsPerSec: bench.Round(float64(n-last)/(now-lastT).Seconds(), 0)})
		last, lastT = n, now
		progress(now)
		if now >= d {
			stop.Store(true)
		}
	}
	for range workers {
		<-finished
	}
	return time.Since(start), ticks
}
