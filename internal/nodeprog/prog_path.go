package nodeprog

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
)

// shortest_path and widest_path: Weaver's DIJKSTRA program, made
// label-correcting so it runs across shards without a central priority
// queue. Each runner processes its local hops cheapest first (Order
// Priority), which is Dijkstra within a shard; a vertex re-expands only when
// a strictly better label arrives from another shard.
//
// With dest, the answer is the best path under a total order: for
// shortest_path (cost, hops, path lexicographically); for widest_path
// (width descending, hops, path). Widest keeps at each vertex the Pareto
// frontier of (width, hops) labels, because taking a bottleneck (min) can
// turn a worse label into a tie later, and a single best label would then
// depend on arrival order. Without dest, the program computes the cost (or
// width) of every vertex reachable from src, without paths.
//
// An edge takes part only if it has a numeric property named weight (and
// matches edge_props); a negative weight (shortest_path) or a non-finite one
// fails the program. Costs of integer weights are exact (float64 sums below
// 2^53); with fractional weights, ties that only rounding creates are broken
// by arrival order.

type weightedParams struct {
	Src       string     `json:"src"`
	Dest      string     `json:"dest"`
	Weight    string     `json:"weight"`
	EdgeProps FilterSpec `json:"edge_props"`

	filter Filter
	widest bool
}

func parseWeighted(prog string, raw json.RawMessage, widest bool) (*weightedParams, error) {
	var p weightedParams
	if err := DecodeParams(prog, raw, &p); err != nil {
		return nil, err
	}
	if err := requireHandle(prog, "src", p.Src); err != nil {
		return nil, err
	}
	if p.Weight == "" {
		return nil, badParam(prog, "weight", "required (the name of the edge property holding the weight)")
	}
	f, err := p.EdgeProps.Compile(prog, "edge_props")
	if err != nil {
		return nil, err
	}
	p.filter, p.widest = f, widest
	return &p, nil
}

// weight reads e's weight; ok is false when e does not take part.
func (p *weightedParams) weight(e Edge) (w float64, ok bool, err error) {
	if !p.filter.MatchEdge(e) {
		return 0, false, nil
	}
	v, has := e.Prop(p.Weight)
	if !has {
		return 0, false, nil
	}
	w, num := v.Number()
	if !num {
		return 0, false, nil
	}
	if math.IsNaN(w) || math.IsInf(w, 0) {
		return 0, false, fmt.Errorf("edge %q: weight %v is not finite", e.Handle(), w)
	}
	if w < 0 && !p.widest {
		return 0, false, fmt.Errorf("edge %q: weight %v is negative", e.Handle(), w)
	}
	return w, true, nil
}

// pathArg is the label a hop carries: the cost (or width) so far and, with
// dest, the vertices before this one. Start marks the hop to src (for
// widest_path, the infinite width of the empty path; JSON has no infinity).
type pathArg struct {
	Cost  float64  `json:"cost"`
	Path  []string `json:"path,omitempty"`
	Start bool     `json:"start,omitempty"`
	Wide  bool     `json:"wide,omitempty"`
}

// Priority runs the cheapest (widest) label first.
func (a pathArg) Priority() float64 {
	switch {
	case a.Start:
		return math.Inf(-1)
	case a.Wide:
		return -a.Cost
	}
	return a.Cost
}

type pathEmit struct {
	Node string   `json:"node"`
	Cost float64  `json:"cost"`
	Inf  bool     `json:"inf,omitempty"` // widest, dest == src: infinite width
	Path []string `json:"path,omitempty"`
}

// WeightedPath is the result of shortest_path and widest_path with dest.
// Cost is the path's total weight (shortest) or its bottleneck (widest);
// null when unreachable, and for widest_path from a vertex to itself.
type WeightedPath struct {
	Reachable bool     `json:"reachable"`
	Cost      *float64 `json:"cost"`
	Hops      int      `json:"hops"`
	Path      []string `json:"path"`
}

// Costs is the result of shortest_path and widest_path without dest: the
// cost (or width) of every vertex reached. widest_path omits src.
type Costs struct {
	Costs map[string]float64 `json:"costs"`
}

type label struct {
	cost float64 // width for widest
	inf  bool    // widest: infinite width (the empty path)
	path []string
}

// better orders labels: cost ascending (width descending), then hops, then
// path.
func (p *weightedParams) better(a, b label) bool {
	if p.widest {
		if a.inf != b.inf {
			return a.inf
		}
		if a.cost != b.cost && !a.inf {
			return a.cost > b.cost
		}
	} else if a.cost != b.cost {
		return a.cost < b.cost
	}
	return shorterPath(a.path, b.path)
}

// dominates reports whether frontier label m makes l useless: no extension
// of l can beat the same extension of m.
func dominates(m, l label) bool {
	wider := m.inf || (!l.inf && m.cost >= l.cost)
	if !wider || len(m.path) > len(l.path) {
		return false
	}
	return len(m.path) < len(l.path) || slices.Compare(m.path, l.path) <= 0
}

type shortestState struct{ best label }
type widestState struct{ frontier []label }
type costState struct {
	cost float64
	inf  bool
}

func pathStart(p *weightedParams) []Hop {
	return []Hop{{To: p.Src, Arg: pathArg{Start: true, Wide: p.widest}}}
}

func pathStep(c *Ctx, p *weightedParams, v Vertex, a pathArg) error {
	l := label{cost: a.Cost, inf: p.widest && a.Start}
	if p.Dest != "" {
		l.path = extend(a.Path, v.Handle())
	}
	keep, err := p.record(c, l)
	if err != nil || !keep {
		return err
	}
	if p.Dest != "" && v.Handle() == p.Dest {
		c.Emit(pathEmit{Node: v.Handle(), Cost: l.cost, Inf: l.inf, Path: l.path})
		// costlier (narrower) labels cannot win; equal ones may tie
		if !p.widest {
			c.Prune(l.cost)
		} else if !l.inf {
			c.Prune(-l.cost)
		}
		return nil
	}
	if p.Dest == "" && !l.inf {
		c.Emit(pathEmit{Node: v.Handle(), Cost: l.cost})
	}
	var stepErr error
	v.Edges(func(e Edge) bool {
		w, ok, err := p.weight(e)
		if err != nil {
			stepErr = err
			return false
		}
		if !ok {
			return true
		}
		next := pathArg{Path: l.path, Wide: p.widest}
		switch {
		case !p.widest:
			next.Cost = l.cost + w
		case l.inf:
			next.Cost = w
		default:
			next.Cost = math.Min(l.cost, w)
		}
		c.Hop(e.Dst(), next)
		return true
	})
	return stepErr
}

// record stores l in the vertex's state if it can still matter, reporting
// whether to expand it.
func (p *weightedParams) record(c *Ctx, l label) (bool, error) {
	switch {
	case p.Dest == "":
		if st := LookupState[costState](c); st != nil && !p.better(label{cost: l.cost, inf: l.inf}, label{cost: st.cost, inf: st.inf}) {
			return false, nil
		}
		st, err := StateOf[costState](c)
		if err != nil {
			return false, err
		}
		st.cost, st.inf = l.cost, l.inf
	case !p.widest:
		if st := LookupState[shortestState](c); st != nil && !p.better(l, st.best) {
			return false, nil
		}
		st, err := StateOf[shortestState](c)
		if err != nil {
			return false, err
		}
		st.best = l
	default:
		st := LookupState[widestState](c)
		if st != nil && slices.ContainsFunc(st.frontier, func(m label) bool { return dominates(m, l) }) {
			return false, nil
		}
		st, err := StateOf[widestState](c)
		if err != nil {
			return false, err
		}
		st.frontier = slices.DeleteFunc(st.frontier, func(m label) bool { return dominates(l, m) })
		st.frontier = append(st.frontier, l)
	}
	return true, nil
}

type pathGather struct {
	p     *weightedParams
	found bool
	best  label
	costs map[string]float64
}

func (g *pathGather) Add(e pathEmit) (bool, error) {
	if g.p.Dest == "" {
		if c, ok := g.costs[e.Node]; !ok || g.p.better(label{cost: e.Cost}, label{cost: c}) {
			g.costs[e.Node] = e.Cost
		}
		return false, nil
	}
	l := label{cost: e.Cost, inf: e.Inf, path: e.Path}
	if !g.found || g.p.better(l, g.best) {
		g.found, g.best = true, l
	}
	return false, nil
}

func (g *pathGather) Result() (any, error) {
	if g.p.Dest == "" {
		return Costs{Costs: g.costs}, nil
	}
	if !g.found {
		return WeightedPath{Path: []string{}}, nil
	}
	r := WeightedPath{Reachable: true, Hops: len(g.best.path) - 1, Path: g.best.path}
	if !g.best.inf {
		cost := g.best.cost
		r.Cost = &cost
	}
	return r, nil
}

func newPathGather(p *weightedParams) GatherOf[pathEmit] {
	return &pathGather{p: p, costs: map[string]float64{}}
}

var shortestPath = &Def[weightedParams, pathArg, pathEmit]{
	ProgName: "shortest_path",
	Ord:      Priority,
	Parse:    func(raw json.RawMessage) (*weightedParams, error) { return parseWeighted("shortest_path", raw, false) },
	Start:    pathStart,
	Step:     pathStep,
	Gather:   newPathGather,
}

var widestPath = &Def[weightedParams, pathArg, pathEmit]{
	ProgName: "widest_path",
	Ord:      Priority,
	Parse:    func(raw json.RawMessage) (*weightedParams, error) { return parseWeighted("widest_path", raw, true) },
	Start:    pathStart,
	Step:     pathStep,
	Gather:   newPathGather,
}
