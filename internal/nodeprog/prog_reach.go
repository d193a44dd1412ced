package nodeprog

import (
	"encoding/json"
	"slices"

	"github.com/weft-db/weft/internal/value"
)

// Reachability programs. All are label-correcting: a vertex keeps the best
// label it has seen (fewest hops, then the lexicographically smallest path)
// and expands again only when a better one arrives. Across shards hops
// arrive in any order, so first-come would make the answer depend on the
// shard count; the total order on labels makes it unique.

// PathResult is the result of reachability and n_hop_reachability.
type PathResult struct {
	Reachable bool     `json:"reachable"`
	Hops      int      `json:"hops"` // edges on Path; 0 when unreachable
	Path      []string `json:"path"` // src … dest; empty when unreachable
}

// shorterPath orders paths by length, then lexicographically.
func shorterPath(a, b []string) bool {
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return slices.Compare(a, b) < 0
}

// extend returns path + h in a new slice, never writing into path's array
// (hop arguments share it).
func extend(path []string, h string) []string {
	out := make([]string, len(path)+1)
	copy(out, path)
	out[len(path)] = h
	return out
}

type reachParams struct {
	Src       string     `json:"src"`
	Dest      string     `json:"dest"`
	EdgeProps FilterSpec `json:"edge_props"`
	MaxHops   *int       `json:"max_hops"` // n_hop_reachability only

	filter  Filter
	maxHops int // -1: no bound
}

func parseReach(prog string, raw json.RawMessage, needMax bool) (*reachParams, error) {
	var p reachParams
	if err := DecodeParams(prog, raw, &p); err != nil {
		return nil, err
	}
	if err := requireHandle(prog, "src", p.Src); err != nil {
		return nil, err
	}
	if err := requireHandle(prog, "dest", p.Dest); err != nil {
		return nil, err
	}
	f, err := p.EdgeProps.Compile(prog, "edge_props")
	if err != nil {
		return nil, err
	}
	p.filter, p.maxHops = f, -1
	switch {
	case needMax && p.MaxHops == nil:
		return nil, badParam(prog, "max_hops", "required")
	case !needMax && p.MaxHops != nil:
		return nil, badParam(prog, "max_hops", "unknown field (use n_hop_reachability)")
	case needMax && (*p.MaxHops < 0 || *p.MaxHops > PathLenMax):
		return nil, badParam(prog, "max_hops", "must be in [0, %d], got %d", PathLenMax, *p.MaxHops)
	case needMax:
		p.maxHops = *p.MaxHops
	}
	return &p, nil
}

type reachArg struct {
	Path []string `json:"path,omitempty"` // the vertices before this one
}

// Priority runs fewer hops first.
func (a reachArg) Priority() float64 { return float64(len(a.Path)) }

type reachState struct{ path []string }

type reachEmit struct {
	Path []string `json:"path"`
}

func reachStep(c *Ctx, p *reachParams, v Vertex, a reachArg) error {
	path := extend(a.Path, v.Handle())
	if st := LookupState[reachState](c); st != nil && !shorterPath(path, st.path) {
		return nil
	}
	st, err := StateOf[reachState](c)
	if err != nil {
		return err
	}
	st.path = path
	if v.Handle() == p.Dest {
		c.Emit(reachEmit{Path: path})
		c.Prune(float64(len(path) - 1)) // longer labels cannot win; equal ones may tie
		return nil
	}
	if p.maxHops >= 0 && len(path)-1 >= p.maxHops {
		return nil
	}
	v.Edges(func(e Edge) bool {
		if p.filter.MatchEdge(e) {
			c.Hop(e.Dst(), reachArg{Path: path})
		}
		return true
	})
	return nil
}

type reachGather struct{ best []string }

func (g *reachGather) Add(e reachEmit) (bool, error) {
	if g.best == nil || shorterPath(e.Path, g.best) {
		g.best = e.Path
	}
	return false, nil
}

func (g *reachGather) Result() (any, error) {
	if g.best == nil {
		return PathResult{Path: []string{}}, nil
	}
	return PathResult{Reachable: true, Hops: len(g.best) - 1, Path: g.best}, nil
}

var reachability = &Def[reachParams, reachArg, reachEmit]{
	ProgName: "reachability",
	Ord:      Priority,
	Parse:    func(raw json.RawMessage) (*reachParams, error) { return parseReach("reachability", raw, false) },
	Rejects:  []string{"max_hops"},
	Start:    func(p *reachParams) []Hop { return []Hop{{To: p.Src, Arg: reachArg{}}} },
	Step:     reachStep,
	Gather:   func(*reachParams) GatherOf[reachEmit] { return &reachGather{} },
}

var nHopReachability = &Def[reachParams, reachArg, reachEmit]{
	ProgName: "n_hop_reachability",
	Ord:      Priority,
	Parse:    func(raw json.RawMessage) (*reachParams, error) { return parseReach("n_hop_reachability", raw, true) },
	Start:    func(p *reachParams) []Hop { return []Hop{{To: p.Src, Arg: reachArg{}}} },
	Step:     reachStep,
	Gather:   func(*reachParams) GatherOf[reachEmit] { return &reachGather{} },
}

// ---- pathless_reachability: a visited set, and an early answer.

// Reachable is pathless_reachability's result.
type Reachable struct {
	Reachable bool `json:"reachable"`
}

type visited struct{}

type pathlessGather struct{ found bool }

func (g *pathlessGather) Add(bool) (bool, error) { g.found = true; return true, nil }
func (g *pathlessGather) Result() (any, error)   { return Reachable{Reachable: g.found}, nil }

// pathlessArg is the hop count so far, for the runner's priority order.
type pathlessArg struct {
	Hops int `json:"hops,omitempty"`
}

func (a pathlessArg) Priority() float64 { return float64(a.Hops) }

var pathlessReachability = &Def[reachParams, pathlessArg, bool]{
	ProgName: "pathless_reachability",
	Ord:      Priority,
	Parse: func(raw json.RawMessage) (*reachParams, error) {
		return parseReach("pathless_reachability", raw, false)
	},
	Rejects: []string{"max_hops"},
	Start:   func(p *reachParams) []Hop { return []Hop{{To: p.Src, Arg: pathlessArg{}}} },
	Step: func(c *Ctx, p *reachParams, v Vertex, a pathlessArg) error {
		if LookupState[visited](c) != nil {
			return nil
		}
		if _, err := StateOf[visited](c); err != nil {
			return err
		}
		if v.Handle() == p.Dest {
			c.Emit(true)
			c.Prune(-1) // the answer is known: drop all remaining work
			return nil
		}
		v.Edges(func(e Edge) bool {
			if p.filter.MatchEdge(e) {
				c.Hop(e.Dst(), pathlessArg{Hops: a.Hops + 1})
			}
			return true
		})
		return nil
	},
	Gather: func(*reachParams) GatherOf[bool] { return &pathlessGather{} },
}

// ---- bfs: hop depth of every vertex reachable from src.

type bfsParams struct {
	Src       string     `json:"src"`
	MaxDepth  *int       `json:"max_depth"`
	EdgeProps FilterSpec `json:"edge_props"`
	// Aggregate returns a count (or a reduction of one property) of the
	// vertices reached instead of their depths.
	Aggregate json.RawMessage `json:"aggregate"`

	filter   Filter
	maxDepth int // -1: no bound
	agg      *AggregateSpec
}

type bfsArg struct {
	Depth int `json:"depth"`
}

// Priority runs shallower hops first.
func (a bfsArg) Priority() float64 { return float64(a.Depth) }

type bfsState struct{ depth int }

type bfsEmit struct {
	Node  string       `json:"node"`
	Depth int          `json:"depth"`
	Value *value.Value `json:"value,omitempty"` // the aggregate's property of Node
}

// Depths is bfs' result: the hop distance of every vertex reached.
type Depths struct {
	Depths map[string]int `json:"depths"`
}

type bfsGather struct {
	d    map[string]int
	agg  *AggregateSpec
	vals map[string]*value.Value // with agg: the aggregate's property per vertex reached
}

func (g *bfsGather) Add(e bfsEmit) (bool, error) {
	if d, ok := g.d[e.Node]; !ok || e.Depth < d {
		g.d[e.Node] = e.Depth
	}
	if g.agg != nil {
		g.vals[e.Node] = e.Value
	}
	return false, nil
}

func (g *bfsGather) Result() (any, error) {
	if g.agg != nil {
		return g.agg.result(g.vals, 0, false), nil
	}
	return Depths{Depths: g.d}, nil
}

var bfs = &Def[bfsParams, bfsArg, bfsEmit]{
	ProgName: "bfs",
	Ord:      Priority,
	Parse: func(raw json.RawMessage) (*bfsParams, error) {
		var p bfsParams
		if err := DecodeParams("bfs", raw, &p); err != nil {
			return nil, err
		}
		if err := requireHandle("bfs", "src", p.Src); err != nil {
			return nil, err
		}
		f, err := p.EdgeProps.Compile("bfs", "edge_props")
		if err != nil {
			return nil, err
		}
		p.filter, p.maxDepth = f, -1
		if p.MaxDepth != nil {
			if *p.MaxDepth < 0 {
				return nil, badParam("bfs", "max_depth", "must be >= 0, got %d", *p.MaxDepth)
			}
			p.maxDepth = *p.MaxDepth
		}
		if p.agg, err = parseAggregate("bfs", p.Aggregate); err != nil {
			return nil, err
		}
		return &p, nil
	},
	Start: func(p *bfsParams) []Hop { return []Hop{{To: p.Src, Arg: bfsArg{}}} },
	Step: func(c *Ctx, p *bfsParams, v Vertex, a bfsArg) error {
		if st := LookupState[bfsState](c); st != nil && st.depth <= a.Depth {
			return nil
		}
		st, err := StateOf[bfsState](c)
		if err != nil {
			return err
		}
		st.depth = a.Depth
		EmitOf(c, bfsEmit{Node: v.Handle(), Depth: a.Depth, Value: p.agg.valueOf(v)})
		if p.maxDepth >= 0 && a.Depth >= p.maxDepth {
			return nil
		}
		v.Edges(func(e Edge) bool {
			if p.filter.MatchEdge(e) {
				c.Hop(e.Dst(), bfsArg{Depth: a.Depth + 1})
			}
			return true
		})
		return nil
	},
	Gather: func(p *bfsParams) GatherOf[bfsEmit] {
		return &bfsGather{d: map[string]int{}, agg: p.agg, vals: map[string]*value.Value{}}
	},
}
