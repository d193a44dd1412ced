package nodeprog

import "encoding/json"

// lcc: local clustering coefficient of every vertex, in one of three
// definitions (k is the size of the neighbourhood N(v), which never contains
// v itself; multi-edges count once):
//
//	out         Weaver's: N(v) = out-neighbours; links u→w with u, w in N(v),
//	            over k(k−1). The clustering node program computes the same.
//	undirected  the simple undirected graph (LDBC Graphalytics on undirected
//	            graphs, and the gnutella reference): N(v) = in ∪ out
//	            neighbours; 2·(pairs {u, w} of N(v) adjacent either way) over
//	            k(k−1).
//	directed    Graphalytics on directed graphs: N(v) = in ∪ out neighbours;
//	            links u→w inside N(v), over k(k−1).
//
// A vertex with k < 2 has coefficient 0. Average is the mean over all
// vertices.
//
// triangles: the number of triangles of the simple undirected graph, each
// counted once; per_node (for the given nodes, or top) counts the triangles
// through each vertex.

type lccAnalysis struct{}

func (lccAnalysis) Name() string { return "lcc" }

type lccParams struct {
	Mode string `json:"mode"`
	outputParams
}

// LCC is lcc's result.
type LCC struct {
	Mode         string             `json:"mode"`
	Average      float64            `json:"average"`
	Coefficients map[string]float64 `json:"coefficients,omitempty"`
	Top          []Scored           `json:"top,omitempty"`
}

func (lccAnalysis) Compile(raw json.RawMessage) (Job, error) {
	var p lccParams
	if err := DecodeParams("lcc", raw, &p); err != nil {
		return nil, err
	}
	switch p.Mode {
	case "":
		p.Mode = "out"
	case "out", "undirected", "directed":
	default:
		return nil, badParam("lcc", "mode", "unknown mode %q (want out, undirected or directed)", p.Mode)
	}
	if err := p.check("lcc"); err != nil {
		return nil, err
	}
	return &p, nil
}

func (p *lccParams) Run(snap Snapshot, lim SnapshotLimits) (any, error) {
	lim = lim.withDefaults()
	x, err := buildIndex(snap, lim)
	if err != nil {
		return nil, err
	}
	n := x.n()
	out := x.simple(false)
	hood, links := out, out // N(v), and the lists whose members are tested
	switch p.Mode {
	case "undirected":
		hood = x.simple(true)
		links = hood
	case "directed":
		hood = x.simple(true)
	}
	mark := make([]int32, n)
	for i := range mark {
		mark[i] = -1
	}
	coeff := make([]float64, n)
	sum := 0.0
	for v := range int32(n) {
		nv := hood.of(v)
		k := len(nv)
		if k < 2 {
			continue
		}
		for _, u := range nv {
			mark[u] = v
		}
		c := 0
		for _, u := range nv {
			for _, w := range links.of(u) {
				if mark[w] == v {
					c++
				}
			}
		}
		coeff[v] = float64(c) / float64(k*(k-1))
		sum += coeff[v]
	}
	res := LCC{Mode: p.Mode}
	if n > 0 {
		res.Average = sum / float64(n)
	}
	res.Coefficients, res.Top, err = p.pick(x, coeff, lim, "lcc")
	if err != nil {
		return nil, err
	}
	return res, nil
}

type trianglesAnalysis struct{}

func (trianglesAnalysis) Name() string { return "triangles" }

type trianglesParams struct{ outputParams }

// TriangleTotal is the triangles analysis' result.
type TriangleTotal struct {
	Triangles int64              `json:"triangles"`
	PerNode   map[string]float64 `json:"per_node,omitempty"`
	Top       []Scored           `json:"top,omitempty"`
}

func (trianglesAnalysis) Compile(raw json.RawMessage) (Job, error) {
	var p trianglesParams
	if err := DecodeParams("triangles", raw, &p); err != nil {
		return nil, err
	}
	if err := p.check("triangles"); err != nil {
		return nil, err
	}
	return &p, nil
}

func (p *trianglesParams) Run(snap Snapshot, lim SnapshotLimits) (any, error) {
	lim = lim.withDefaults()
	x, err := buildIndex(snap, lim)
	if err != nil {
		return nil, err
	}
	n := x.n()
	und := x.simple(true)
	mark := make([]int32, n)
	for i := range mark {
		mark[i] = -1
	}
	per := make([]float64, n)
	var total int64
	// each triangle v < u < w once: mark N(v), then for u in N(v) above v,
	// the marked w in N(u) above u.
	for v := range int32(n) {
		nv := und.of(v)
		for _, u := range nv {
			mark[u] = v
		}
		for _, u := range nv {
			if u <= v {
				continue
			}
			for _, w := range und.of(u) {
				if w > u && mark[w] == v {
					total++
					per[v]++
					per[u]++
					per[w]++
				}
			}
		}
	}
	res := TriangleTotal{Triangles: total}
	if len(p.Nodes) > 0 || p.Top > 0 {
		if res.PerNode, res.Top, err = p.pick(x, per, lim, "triangles"); err != nil {
			return nil, err
		}
	}
	return res, nil
}
