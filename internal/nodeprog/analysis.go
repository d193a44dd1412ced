package nodeprog

import (
	"cmp"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
)

// Whole-snapshot analyses (pagerank, wcc, lcc, triangles) read every vertex
// visible at one timestamp, from every shard, through a Snapshot. They build
// a compact index (vertices sorted by handle, edges as int32 arrays) and run
// in memory; output never depends on the Snapshot's enumeration order.

// Analysis is a named whole-snapshot analysis. Compile validates params up
// front (ErrBadParams naming the field).
type Analysis interface {
	Name() string
	Compile(params json.RawMessage) (Job, error)
}

// Job is an analysis bound to validated params.
type Job interface {
	Run(snap Snapshot, lim SnapshotLimits) (any, error)
}

// SnapshotLimits bounds an analysis. Zero fields take the defaults.
type SnapshotLimits struct {
	// VerticesMax bounds the vertices indexed (ErrTooLarge). Default 1<<26.
	VerticesMax int
	// EdgesMax bounds the edges indexed (ErrTooLarge). Default 1<<28.
	EdgesMax int
	// ResultsMax bounds the per-vertex entries of a result returned whole
	// (without top or nodes); beyond it the analysis fails with ErrTooLarge
	// asking for a filter. Default 1<<20.
	ResultsMax int
}

func (l SnapshotLimits) withDefaults() SnapshotLimits {
	if l.VerticesMax <= 0 {
		l.VerticesMax = 1 << 26
	}
	if l.EdgesMax <= 0 {
		l.EdgesMax = 1 << 28
	}
	if l.ResultsMax <= 0 {
		l.ResultsMax = 1 << 20
	}
	return l
}

// Analyze compiles and runs analysis name over snap.
func (r *Registry) Analyze(snap Snapshot, name string, params json.RawMessage, lim SnapshotLimits) (any, error) {
	job, err := r.CompileAnalysis(name, params)
	if err != nil {
		return nil, err
	}
	return job.Run(snap, lim)
}

func builtinAnalyses() []Analysis {
	return []Analysis{pagerankAnalysis{}, wccAnalysis{}, lccAnalysis{}, trianglesAnalysis{}}
}

// index is a snapshot as arrays: vertex i has handle handles[i] (sorted),
// out-edges outDst[outOff[i]:outOff[i+1]] in the vertex's edge order. Edges
// to vertices not in the snapshot are dropped.
type index struct {
	handles []string
	ids     map[string]int32
	outOff  []int32
	outDst  []int32
}

func (x *index) n() int              { return len(x.handles) }
func (x *index) out(v int32) []int32 { return x.outDst[x.outOff[v]:x.outOff[v+1]] }

func buildIndex(snap Snapshot, lim SnapshotLimits) (*index, error) {
	type rec struct {
		h    string
		dsts []string
	}
	var recs []rec
	edges := 0
	var err error
	snap.Vertices(func(v Vertex) bool {
		if len(recs) >= lim.VerticesMax {
			err = fmt.Errorf("%w: snapshot has more than %d vertices (VerticesMax)", ErrTooLarge, lim.VerticesMax)
			return false
		}
		r := rec{h: v.Handle(), dsts: make([]string, 0, v.EdgeCount())}
		v.Edges(func(e Edge) bool {
			r.dsts = append(r.dsts, e.Dst())
			return true
		})
		if edges += len(r.dsts); edges > lim.EdgesMax {
			err = fmt.Errorf("%w: snapshot has more than %d edges (EdgesMax)", ErrTooLarge, lim.EdgesMax)
			return false
		}
		recs = append(recs, r)
		return true
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(recs, func(a, b rec) int { return cmp.Compare(a.h, b.h) })
	x := &index{handles: make([]string, len(recs)), ids: make(map[string]int32, len(recs)), outOff: make([]int32, len(recs)+1)}
	for i, r := range recs {
		if i > 0 && recs[i-1].h == r.h {
			return nil, fmt.Errorf("nodeprog: snapshot enumerated vertex %q twice", r.h)
		}
		x.handles[i] = r.h
		x.ids[r.h] = int32(i)
	}
	x.outDst = make([]int32, 0, edges)
	for i, r := range recs {
		for _, d := range r.dsts {
			if id, ok := x.ids[d]; ok {
				x.outDst = append(x.outDst, id)
			}
		}
		x.outOff[i+1] = int32(len(x.outDst))
	}
	return x, nil
}

// csr is an adjacency list per vertex.
type csr struct {
	off []int32
	dst []int32
}

func (c *csr) of(v int32) []int32 { return c.dst[c.off[v]:c.off[v+1]] }

// in returns the in-edges, each list ascending by source (with repeats for
// multi-edges).
func (x *index) in() *csr {
	n := x.n()
	c := &csr{off: make([]int32, n+1), dst: make([]int32, len(x.outDst))}
	for _, d := range x.outDst {
		c.off[d+1]++
	}
	for i := range n {
		c.off[i+1] += c.off[i]
	}
	fill := slices.Clone(c.off[:n])
	for v := range int32(n) {
		for _, d := range x.out(v) {
			c.dst[fill[d]] = v
			fill[d]++
		}
	}
	return c
}

// simple returns distinct neighbours other than the vertex itself,
// ascending: out-neighbours, or out ∪ in when undirected.
func (x *index) simple(undirected bool) *csr {
	n := x.n()
	var in *csr
	if undirected {
		in = x.in()
	}
	c := &csr{off: make([]int32, n+1)}
	var buf []int32
	for v := range int32(n) {
		buf = append(buf[:0], x.out(v)...)
		if undirected {
			buf = append(buf, in.of(v)...)
		}
		slices.Sort(buf)
		buf = slices.Compact(buf)
		for _, u := range buf {
			if u != v {
				c.dst = append(c.dst, u)
			}
		}
		c.off[v+1] = int32(len(c.dst))
	}
	return c
}

// Scored is one vertex with one number.
type Scored struct {
	Node  string  `json:"node"`
	Value float64 `json:"value"`
}

// outputParams select what an analysis returns per vertex: the top k
// vertices, the given vertices, or (neither) all of them.
type outputParams struct {
	Top   int      `json:"top"`
	Nodes []string `json:"nodes"`
}

func (o *outputParams) check(prog string) error {
	if o.Top < 0 || o.Top > NodesMax {
		return badParam(prog, "top", "must be in [0, %d], got %d", NodesMax, o.Top)
	}
	return checkHandles(prog, "nodes", o.Nodes)
}

// pick returns the per-vertex map (for nodes, or everything when neither top
// nor nodes is given) and the top list (value descending, then handle).
func (o *outputParams) pick(x *index, vals []float64, lim SnapshotLimits, prog string) (map[string]float64, []Scored, error) {
	var m map[string]float64
	switch {
	case len(o.Nodes) > 0:
		m = map[string]float64{}
		for _, h := range o.Nodes {
			if id, ok := x.ids[h]; ok {
				m[h] = vals[id]
			}
		}
	case o.Top == 0:
		if x.n() > lim.ResultsMax {
			return nil, nil, fmt.Errorf("%w: %s would return %d vertices (ResultsMax %d); ask for top or nodes", ErrTooLarge, prog, x.n(), lim.ResultsMax)
		}
		m = make(map[string]float64, x.n())
		for i, h := range x.handles {
			m[h] = vals[i]
		}
	}
	if o.Top == 0 {
		return m, nil, nil
	}
	ids := make([]int32, x.n())
	for i := range ids {
		ids[i] = int32(i)
	}
	slices.SortFunc(ids, func(a, b int32) int {
		if c := cmp.Compare(vals[b], vals[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b) // ids ascend with handles
	})
	top := make([]Scored, 0, min(o.Top, len(ids)))
	for _, id := range ids[:min(o.Top, len(ids))] {
		top = append(top, Scored{Node: x.handles[id], Value: vals[id]})
	}
	return m, top, nil
}

// Params implement paramDescriber for the built-in analyses.
func (pagerankAnalysis) Params() []Param  { return paramsOf(reflect.TypeFor[pagerankParams]()) }
func (wccAnalysis) Params() []Param       { return paramsOf(reflect.TypeFor[wccParams]()) }
func (lccAnalysis) Params() []Param       { return paramsOf(reflect.TypeFor[lccParams]()) }
func (trianglesAnalysis) Params() []Param { return paramsOf(reflect.TypeFor[trianglesParams]()) }
