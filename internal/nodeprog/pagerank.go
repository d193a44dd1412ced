package nodeprog

import (
	"encoding/json"
	"math"
)

// pagerank: the power iteration of LDBC Graphalytics. Ranks start at 1/n;
// each iteration gives every vertex (1−d)/n, plus d/n of the rank held by
// dangling vertices (no out-edges), plus d·rank(u)/outdeg(u) from each
// in-neighbour u. Ranks sum to 1. Directed (default) follows edges as
// stored, multi-edges counting once each; undirected uses the simple
// undirected graph (distinct neighbours, no self-loops). It runs iterations
// times, or stops early once the L1 change of an iteration is below
// tolerance (> 0).

type pagerankAnalysis struct{}

func (pagerankAnalysis) Name() string { return "pagerank" }

type pagerankParams struct {
	Damping    *float64 `json:"damping"`
	Iterations *int     `json:"iterations"`
	Tolerance  float64  `json:"tolerance"`
	Directed   *bool    `json:"directed"`
	outputParams

	damping    float64
	iterations int
	directed   bool
}

// PageRank is pagerank's result.
type PageRank struct {
	Iterations int                `json:"iterations"` // run
	Delta      float64            `json:"delta"`      // L1 change of the last one
	Ranks      map[string]float64 `json:"ranks,omitempty"`
	Top        []Scored           `json:"top,omitempty"`
}

// pagerankIterationsMax bounds iterations.
const pagerankIterationsMax = 10000

func (pagerankAnalysis) Compile(raw json.RawMessage) (Job, error) {
	const prog = "pagerank"
	var p pagerankParams
	if err := DecodeParams(prog, raw, &p); err != nil {
		return nil, err
	}
	p.damping, p.iterations, p.directed = 0.85, 20, boolOr(p.Directed, true)
	if p.Damping != nil {
		if d := *p.Damping; !(d >= 0 && d < 1) {
			return nil, badParam(prog, "damping", "must be in [0, 1), got %v", d)
		}
		p.damping = *p.Damping
	}
	if p.Iterations != nil {
		if it := *p.Iterations; it < 1 || it > pagerankIterationsMax {
			return nil, badParam(prog, "iterations", "must be in [1, %d], got %d", pagerankIterationsMax, it)
		}
		p.iterations = *p.Iterations
	}
	if !(p.Tolerance >= 0) || math.IsInf(p.Tolerance, 0) {
		return nil, badParam(prog, "tolerance", "must be a finite number >= 0, got %v", p.Tolerance)
	}
	if err := p.check(prog); err != nil {
		return nil, err
	}
	return &p, nil
}

func (p *pagerankParams) Run(snap Snapshot, lim SnapshotLimits) (any, error) {
	lim = lim.withDefaults()
	x, err := buildIndex(snap, lim)
	if err != nil {
		return nil, err
	}
	n := x.n()
	res := PageRank{}
	if n == 0 {
		return res, nil
	}
	// in-lists and out-degrees of the graph the ranks flow over
	var in *csr
	deg := make([]float64, n)
	if p.directed {
		in = x.in()
		for v := range int32(n) {
			deg[v] = float64(len(x.out(v)))
		}
	} else {
		in = x.simple(true)
		for v := range int32(n) {
			deg[v] = float64(len(in.of(v)))
		}
	}
	rank, next, share := make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range rank {
		rank[i] = 1 / float64(n)
	}
	d, nf := p.damping, float64(n)
	for res.Iterations < p.iterations {
		dangling := 0.0
		for v, r := range rank {
			if deg[v] == 0 {
				dangling += r
			} else {
				share[v] = r / deg[v]
			}
		}
		base := (1-d)/nf + d*dangling/nf
		res.Delta = 0
		for v := range int32(n) {
			s := 0.0
			for _, u := range in.of(v) {
				s += share[u]
			}
			next[v] = base + d*s
			res.Delta += math.Abs(next[v] - rank[v])
		}
		rank, next = next, rank
		res.Iterations++
		if p.Tolerance > 0 && res.Delta < p.Tolerance {
			break
		}
	}
	res.Ranks, res.Top, err = p.pick(x, rank, lim, "pagerank")
	if err != nil {
		return nil, err
	}
	return res, nil
}
