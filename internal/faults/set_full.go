package faults

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"

	weft "github.com/weft-db/weft/client/weft"
	"github.com/weft-db/weft/internal/check"
)

// rootsBatch is how many generation roots one transaction creates ahead.
const rootsBatch = 16

// setFull is Jepsen's set-full workload over vertices: element e is vertex
// sf/e with an edge e<e> to it from its generation's root set/<e/gen>. Each
// generation is an independent set-full history.
type setFull struct {
	h   *harness
	gen int64 // elements per generation

	mu   sync.Mutex
	recs []*check.Recorder // by generation
	next int64             // the next element

	rootsMu sync.Mutex
	roots   int64 // roots 0..roots-1 exist (created by setup and ensureRoots)
}

func newSetFull(h *harness) *setFull {
	return &setFull{h: h, gen: int64(h.cfg.Sizes.SetGeneration)}
}

func (s *setFull) name() string { return WorkloadSetFull }
func (s *setFull) workers() int { return 1 }

func (s *setFull) setup(ctx context.Context, c *weft.Client) error {
	s.rootsMu.Lock()
	defer s.rootsMu.Unlock()
	return s.createRoots(ctx, c)
}

// createRoots creates the next rootsBatch roots; s.rootsMu is held.
func (s *setFull) createRoots(ctx context.Context, c *weft.Client) error {
	hs := make([]string, rootsBatch)
	for i := range hs {
		hs[i] = handle("set", s.roots+int64(i))
	}
	if err := createMissing(ctx, c, hs, nil); err != nil {
		return err
	}
	s.roots += rootsBatch
	return nil
}

// ensureRoots creates roots ahead of generation g (unrecorded, like setup).
// A failure is left to the add, which then fails with NOT_FOUND.
func (s *setFull) ensureRoots(w *worker, g int64) {
	s.rootsMu.Lock()
	defer s.rootsMu.Unlock()
	if g+1 < s.roots {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), w.timeout)
	defer cancel()
	_ = s.createRoots(ctx, w.c)
}

// rec returns generation g's recorder, creating it (and those before it).
func (s *setFull) rec(g int64) *check.Recorder {
	s.mu.Lock()
	defer s.mu.Unlock()
	for int64(len(s.recs)) <= g {
		s.recs = append(s.recs, &check.Recorder{})
	}
	return s.recs[g]
}

func (s *setFull) run(w *worker, _ int) {
	for !w.h.stopping() {
		if w.rng.IntN(4) != 0 {
			s.add(w)
		} else {
			s.read(w)
		}
	}
}

func (s *setFull) add(w *worker) {
	s.mu.Lock()
	e := s.next
	s.next++
	s.mu.Unlock()
	g := e / s.gen
	s.ensureRoots(w, g)
	w.op(s.rec(g), check.FAdd, e, nil, func(ctx context.Context) (any, check.Type, error) {
		t, err := w.txn(ctx, func(_ context.Context, tx *weft.Tx) error {
			tx.CreateVertex(handle("sf", e))
			tx.CreateEdge(weft.Handle(handle("set", g)), fmt.Sprintf("e%d", e), weft.Handle(handle("sf", e)))
			return nil
		})
		return e, t, err
	})
}

// read reads one generation: the latest most of the time, an older one
// (re-checking elements across later faults) otherwise.
func (s *setFull) read(w *worker) {
	s.mu.Lock()
	g := max(s.next-1, 0) / s.gen
	s.mu.Unlock()
	if w.rng.IntN(3) == 0 {
		g = w.rng.Int64N(g + 1)
	}
	w.op(s.rec(g), check.FRead, nil, nil, func(ctx context.Context) (any, check.Type, error) {
		var l []int64
		t, err := w.txn(ctx, func(ctx context.Context, tx *weft.Tx) (err error) {
			l, err = s.readRoot(ctx, tx, g)
			return err
		})
		return l, t, err
	})
}

// readRoot returns the elements linked from generation g's root.
func (s *setFull) readRoot(ctx context.Context, tx *weft.Tx, g int64) ([]int64, error) {
	v, err := tx.GetVertex(ctx, weft.Handle(handle("set", g)),
		weft.ReadOptions{NoProps: true, NoAliases: true, EdgesMax: int(2*s.gen) + 16})
	if err != nil {
		return nil, err
	}
	l := make([]int64, 0, len(v.Edges))
	for _, e := range v.Edges {
		x, ok := strings.CutPrefix(e.Dst, "sf/")
		n, err := strconv.ParseInt(x, 10, 64)
		if !ok || err != nil {
			n = garbage
		}
		l = append(l, n)
	}
	if v.EdgesTruncated {
		l = append(l, garbage)
	}
	return l, nil
}

// final reads every generation at one snapshot: one read in each
// generation's history.
func (s *setFull) final(w *worker) check.Type {
	s.mu.Lock()
	recs := append([]*check.Recorder(nil), s.recs...)
	s.mu.Unlock()
	return w.opN(recs, check.FRead, func(ctx context.Context) ([]any, check.Type, error) {
		out := make([]any, len(recs))
		t, err := w.txn(ctx, func(ctx context.Context, tx *weft.Tx) error {
			for g := range recs {
				l, err := s.readRoot(ctx, tx, int64(g))
				if err != nil {
					return err
				}
				out[g] = l
			}
			return nil
		})
		return out, t, err
	})
}

func (s *setFull) histories() []namedHistory {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]namedHistory, len(s.recs))
	for g, r := range s.recs {
		out[g] = namedHistory{fmt.Sprintf("%s/gen-%04d.jsonl", WorkloadSetFull, g), r.History()}
	}
	return out
}

// check checks each generation and merges the verdicts into one.
func (s *setFull) check() workloadCheck {
	var wc workloadCheck
	var all check.Result
	all.Valid = true
	for i, nh := range s.histories() {
		res, err := check.CheckSetFull(nh.h)
		if err != nil {
			wc.checks = append(wc.checks, checkOutcome{checker: "set-full", history: nh.file, err: err})
			continue
		}
		mergeResult(&all, res, i)
		lost, err := lostElements(nh.h)
		if err != nil {
			wc.checks = append(wc.checks, checkOutcome{checker: "lost-elements", history: nh.file, err: err})
		}
		wc.lost = append(wc.lost, lost...)
	}
	wc.checks = append(wc.checks, checkOutcome{checker: "set-full", history: WorkloadSetFull + "/gen-*.jsonl", res: all})
	return wc
}

// mergeResult adds res, the verdict on generation g, to all.
func mergeResult(all *check.Result, res check.Result, g int) {
	all.Valid = all.Valid && res.Valid
	all.Ops += res.Ops
	all.OK += res.OK
	all.Fail += res.Fail
	all.Info += res.Info
	all.Truncated += res.Truncated
	for _, a := range res.Anomalies {
		a.Explanation = fmt.Sprintf("generation %d: %s", g, a.Explanation)
		all.Anomalies = append(all.Anomalies, a)
	}
}

// keys are the current generation's root and the next 8 elements to be
// created (the mover prefers their units: moves race the creations).
func (s *setFull) keys() []string {
	s.mu.Lock()
	next := s.next
	s.mu.Unlock()
	out := []string{handle("set", next/s.gen)}
	for e := next; e < next+8; e++ {
		out = append(out, handle("sf", e))
	}
	return out
}
