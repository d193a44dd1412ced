package faults

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	weft "github.com/weft-db/weft/client/weft"
	"github.com/weft-db/weft/internal/check"
)

// Successors a ring read records for a vertex that has not exactly one
// out-edge into the ring; CheckRing reports them as pointing outside it.
const (
	ringNoEdge   = -1 // no out-edge
	ringEdges    = -2 // more than one
	ringStranger = -3 // an edge to a vertex that is not ring/0..n-1
)

// fRewire is the ring's write: value [a] at invocation, [a b c d] when done.
const fRewire = "rewire"

// errBrokenRing ends a rewire that found no a → b → c → d path: it commits
// nothing; the reads report what is wrong.
var errBrokenRing = errors.New("faults: the ring is broken")

// ring is FoundationDB's cycle workload as graph edges: ring/0..n-1 each
// with one out-edge, together one cycle through all n.
type ring struct {
	h     *harness
	rec   check.Recorder
	n     int
	edges counter // edge handles are unique: e<n>
}

func newRing(h *harness) *ring { return &ring{h: h, n: h.cfg.Sizes.RingSize} }

func (r *ring) name() string { return WorkloadRing }
func (r *ring) workers() int { return 1 }

func (r *ring) setup(ctx context.Context, c *weft.Client) error {
	// All or nothing: either no vertex exists and all are created with
	// their edges, or an earlier attempt committed all of them.
	return c.Update(ctx, func(tx *weft.Tx) error {
		v, err := tx.GetVertex(ctx, weft.Handle(handle("ring", 0)), weft.ReadOptions{NoEdges: true, NoAliases: true, NoProps: true})
		if err != nil || v.Exists {
			return err
		}
		for i := range int64(r.n) {
			tx.CreateVertex(handle("ring", i))
		}
		for i := range int64(r.n) {
			tx.CreateEdge(weft.Handle(handle("ring", i)), fmt.Sprintf("s%d", i), weft.Handle(handle("ring", (i+1)%int64(r.n))))
		}
		return nil
	})
}

func (r *ring) run(w *worker, _ int) {
	for !w.h.stopping() {
		if w.rng.IntN(3) == 0 {
			r.read(w)
			continue
		}
		a := int64(w.rng.IntN(r.n))
		w.op(&r.rec, fRewire, []int64{a}, nil, func(ctx context.Context) (any, check.Type, error) {
			var path []int64
			t, err := w.txn(ctx, func(ctx context.Context, tx *weft.Tx) (err error) {
				path, err = r.rewire(ctx, tx, a)
				return err
			})
			return path, t, err
		})
	}
}

// rewire reads a → b → c → d and swaps b and c: a → c → b → d.
func (r *ring) rewire(ctx context.Context, tx *weft.Tx, a int64) ([]int64, error) {
	path := []int64{a}
	var edges []string
	for range 3 {
		src := path[len(path)-1]
		v, err := tx.GetVertex(ctx, weft.Handle(handle("ring", src)), weft.ReadOptions{NoProps: true, NoAliases: true})
		if err != nil {
			return nil, err
		}
		next := r.successor(v)
		if next < 0 {
			return nil, errBrokenRing
		}
		path = append(path, next)
		edges = append(edges, v.Edges[0].Handle)
	}
	b, c, d := path[1], path[2], path[3]
	if a == b || a == c || a == d || b == c || b == d || c == d {
		return nil, errBrokenRing
	}
	for i, link := range [][2]int64{{a, c}, {c, b}, {b, d}} {
		src := weft.Handle(handle("ring", link[0]))
		tx.DeleteEdge(src, edges[[]int{0, 2, 1}[i]]) // a's, c's, b's old edge
		tx.CreateEdge(src, fmt.Sprintf("e%d", r.edges.next()), weft.Handle(handle("ring", link[1])))
	}
	return path, nil
}

// successor is the ring vertex v's one out-edge leads to, or a negative
// marker (ringNoEdge, ringEdges, ringStranger).
func (r *ring) successor(v *weft.Vertex) int64 {
	switch {
	case len(v.Edges) == 0:
		return ringNoEdge
	case len(v.Edges) > 1:
		return ringEdges
	}
	s, ok := strings.CutPrefix(v.Edges[0].Dst, "ring/")
	n, err := strconv.ParseInt(s, 10, 64)
	if !ok || err != nil || n < 0 || n >= int64(r.n) {
		return ringStranger
	}
	return n
}

// read reads every vertex's successor at one snapshot.
func (r *ring) read(w *worker) check.Type {
	t, _ := w.op(&r.rec, check.FRead, nil, nil, func(ctx context.Context) (any, check.Type, error) {
		m := map[int64]int64{}
		t, err := w.txn(ctx, func(ctx context.Context, tx *weft.Tx) error {
			clear(m)
			for i := range int64(r.n) {
				v, err := tx.GetVertex(ctx, weft.Handle(handle("ring", i)), weft.ReadOptions{NoProps: true, NoAliases: true})
				if err != nil {
					return err
				}
				if v.Exists {
					m[i] = r.successor(v)
				}
			}
			return nil
		})
		return m, t, err
	})
	return t
}

func (r *ring) final(w *worker) check.Type { return r.read(w) }

func (r *ring) histories() []namedHistory {
	return []namedHistory{{WorkloadRing + ".jsonl", r.rec.History()}}
}

func (r *ring) check() workloadCheck {
	res, err := check.CheckRing(r.rec.History(), r.n)
	return workloadCheck{checks: []checkOutcome{{checker: "ring", history: WorkloadRing + ".jsonl", res: res, err: err}}, lostNA: true}
}

// keys are the ring's handles (the mover prefers their units).
func (r *ring) keys() []string { return handles("ring", r.n) }
