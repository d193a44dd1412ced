package nodeprog

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/weft-db/weft/internal/value"
)

// Pattern programs: traverse_props (a path pattern, level by level) and
// discover_paths (all simple paths between two vertices under predicates).

// ---- traverse_props

type traverseParams struct {
	Src          string       `json:"src"`
	NodeProps    []FilterSpec `json:"node_props"`
	NodeAliases  [][]string   `json:"node_aliases"`
	EdgeProps    []FilterSpec `json:"edge_props"`
	CollectNodes bool         `json:"collect_nodes"`
	CollectEdges bool         `json:"collect_edges"`
	// Aggregate returns a count (or a reduction of one property) of the
	// vertices instead of their handles.
	Aggregate json.RawMessage `json:"aggregate"`

	nodes []Filter
	edges []Filter
	agg   *AggregateSpec
	// levelArgs are the hop arguments to each level, boxed once, for
	// traversals that do not collect edges (whose arguments carry none).
	levelArgs []any
}

type traverseArg struct {
	Level int    `json:"level,omitempty"`
	Edge  string `json:"edge,omitempty"` // the edge followed to get here
}

type traverseState struct{ levels uint64 }

type traverseEmit struct {
	Node  string       `json:"node,omitempty"`
	Edge  string       `json:"edge,omitempty"`
	Value *value.Value `json:"value,omitempty"` // the aggregate's property of Node
}

// Traversal is traverse_props' result, handles sorted.
type Traversal struct {
	Nodes []string `json:"nodes"`
	Edges []string `json:"edges"`
}

func parseTraverse(raw json.RawMessage) (*traverseParams, error) {
	const prog = "traverse_props"
	var p traverseParams
	if err := DecodeParams(prog, raw, &p); err != nil {
		return nil, err
	}
	if err := requireHandle(prog, "src", p.Src); err != nil {
		return nil, err
	}
	levels := len(p.NodeProps)
	switch {
	case levels == 0:
		return nil, badParam(prog, "node_props", "required: one filter per level, the first for src ({} matches any vertex)")
	case levels > LevelsMax:
		return nil, badParam(prog, "node_props", "%d levels, more than %d", levels, LevelsMax)
	case len(p.NodeAliases) != 0 && len(p.NodeAliases) != levels:
		return nil, badParam(prog, "node_aliases", "%d entries; want none or one per level (%d)", len(p.NodeAliases), levels)
	case len(p.EdgeProps) != levels-1 && len(p.EdgeProps) != levels:
		return nil, badParam(prog, "edge_props", "%d entries; want one per step between levels (%d), or one more to collect the last level's edges", len(p.EdgeProps), levels-1)
	}
	for i, fs := range p.NodeProps {
		f, err := fs.Compile(prog, "node_props["+strconv.Itoa(i)+"]")
		if err != nil {
			return nil, err
		}
		p.nodes = append(p.nodes, f)
	}
	for i, as := range p.NodeAliases {
		if err := checkHandles(prog, "node_aliases["+strconv.Itoa(i)+"]", as); err != nil {
			return nil, err
		}
	}
	for i, fs := range p.EdgeProps {
		f, err := fs.Compile(prog, "edge_props["+strconv.Itoa(i)+"]")
		if err != nil {
			return nil, err
		}
		p.edges = append(p.edges, f)
	}
	agg, err := parseAggregate(prog, p.Aggregate)
	if err != nil {
		return nil, err
	}
	p.agg = agg
	if !p.CollectEdges {
		for i := range levels {
			p.levelArgs = append(p.levelArgs, traverseArg{Level: i})
		}
	}
	return &p, nil
}

// collectsEdges reports whether the result has edges: followed ones or the
// last level's.
func (p *traverseParams) collectsEdges() bool { return p.CollectEdges || len(p.edges) == len(p.nodes) }

// matchLevel checks level i's vertex filter and aliases (all required).
func (p *traverseParams) matchLevel(i int, v Vertex) bool {
	if !p.nodes[i].MatchVertex(v) {
		return false
	}
	if len(p.NodeAliases) == 0 || len(p.NodeAliases[i]) == 0 {
		return true
	}
	have := v.Aliases()
	for _, a := range p.NodeAliases[i] {
		if !slices.Contains(have, a) {
			return false
		}
	}
	return true
}

func traverseStep(c *Ctx, p *traverseParams, v Vertex, a traverseArg) error {
	i := a.Level
	if i < 0 || i >= len(p.nodes) {
		return fmt.Errorf("hop for level %d of %d", i, len(p.nodes))
	}
	if !p.matchLevel(i, v) {
		return nil
	}
	if a.Edge != "" && p.CollectEdges {
		c.Emit(traverseEmit{Edge: a.Edge})
	}
	st, err := StateOf[traverseState](c)
	if err != nil {
		return err
	}
	if st.levels&(1<<i) != 0 {
		return nil
	}
	st.levels |= 1 << i
	last := i == len(p.nodes)-1
	if last || p.CollectNodes {
		EmitOf(c, traverseEmit{Node: v.Handle(), Value: p.agg.valueOf(v)})
	}
	if last {
		if len(p.edges) > i { // a trailing edge filter: collect the last level's edges
			v.Edges(func(e Edge) bool {
				if p.edges[i].MatchEdge(e) {
					c.Emit(traverseEmit{Edge: e.Handle()})
				}
				return true
			})
		}
		return nil
	}
	if p.levelArgs != nil {
		next := p.levelArgs[i+1]
		v.Edges(func(e Edge) bool {
			if p.edges[i].MatchEdge(e) {
				c.Hop(e.Dst(), next)
			}
			return true
		})
		return nil
	}
	v.Edges(func(e Edge) bool {
		if p.edges[i].MatchEdge(e) {
			c.Hop(e.Dst(), traverseArg{Level: i + 1, Edge: e.Handle()})
		}
		return true
	})
	return nil
}

type traverseGather struct {
	p     *traverseParams
	nodes map[string]*value.Value // the aggregate's property, when it has one
	edges map[string]struct{}
}

func (g *traverseGather) Add(e traverseEmit) (bool, error) {
	if e.Node != "" {
		g.nodes[e.Node] = e.Value
	}
	if e.Edge != "" {
		g.edges[e.Edge] = struct{}{}
	}
	return false, nil
}

func (g *traverseGather) Result() (any, error) {
	if g.p.agg != nil {
		return g.p.agg.result(g.nodes, len(g.edges), g.p.collectsEdges()), nil
	}
	return Traversal{Nodes: sortedSet(g.nodes), Edges: sortedSet(g.edges)}, nil
}

func sortedSet[V any](m map[string]V) []string {
	out := slices.Sorted(maps.Keys(m))
	if out == nil {
		out = []string{}
	}
	return out
}

var traverseProps = &Def[traverseParams, traverseArg, traverseEmit]{
	ProgName: "traverse_props",
	Parse:    parseTraverse,
	Start:    func(p *traverseParams) []Hop { return []Hop{{To: p.Src, Arg: traverseArg{}}} },
	Step:     traverseStep,
	Gather: func(p *traverseParams) GatherOf[traverseEmit] {
		return &traverseGather{p: p, nodes: map[string]*value.Value{}, edges: map[string]struct{}{}}
	},
}

// ---- discover_paths

type discoverParams struct {
	Src       string     `json:"src"`
	Dest      string     `json:"dest"`
	PathLen   *int       `json:"path_len"`
	NodePreds FilterSpec `json:"node_preds"`
	EdgePreds FilterSpec `json:"edge_preds"`

	pathLen int
	nodes   Filter
	edges   Filter
}

type discoverArg struct {
	Path  []string `json:"path,omitempty"`  // vertices before this one
	Edges []string `json:"edges,omitempty"` // edges between them and to this one
}

type discoverEmit struct {
	Path  []string `json:"path"`
	Edges []string `json:"edges"`
}

// Paths is discover_paths' result: the union of every matching simple path
// as a subgraph, vertex → its edges on some path (sorted by handle; dest
// maps to an empty list), and how many paths there were.
type Paths struct {
	Paths map[string][]EdgeView `json:"paths"`
	Count int                   `json:"count"`
}

func parseDiscover(raw json.RawMessage) (*discoverParams, error) {
	const prog = "discover_paths"
	var p discoverParams
	if err := DecodeParams(prog, raw, &p); err != nil {
		return nil, err
	}
	if err := requireHandle(prog, "src", p.Src); err != nil {
		return nil, err
	}
	if err := requireHandle(prog, "dest", p.Dest); err != nil {
		return nil, err
	}
	p.pathLen = PathLenMax
	if p.PathLen != nil {
		if *p.PathLen < 0 || *p.PathLen > PathLenMax {
			return nil, badParam(prog, "path_len", "must be in [0, %d], got %d", PathLenMax, *p.PathLen)
		}
		p.pathLen = *p.PathLen
	}
	var err error
	if p.nodes, err = p.NodePreds.Compile(prog, "node_preds"); err != nil {
		return nil, err
	}
	if p.edges, err = p.EdgePreds.Compile(prog, "edge_preds"); err != nil {
		return nil, err
	}
	return &p, nil
}

func discoverStep(c *Ctx, p *discoverParams, v Vertex, a discoverArg) error {
	if !p.nodes.MatchVertex(v) {
		return nil
	}
	path := extend(a.Path, v.Handle())
	if v.Handle() == p.Dest {
		c.Emit(discoverEmit{Path: path, Edges: a.Edges})
		return nil
	}
	if len(a.Edges) >= p.pathLen {
		return nil
	}
	v.Edges(func(e Edge) bool {
		if p.edges.MatchEdge(e) && !slices.Contains(path, e.Dst()) {
			c.Hop(e.Dst(), discoverArg{Path: path, Edges: extend(a.Edges, e.Handle())})
		}
		return true
	})
	return nil
}

type discoverGather struct {
	dest  string
	edges map[string]map[string]EdgeView // vertex → edge handle → edge
	count int
}

func (g *discoverGather) Add(e discoverEmit) (bool, error) {
	g.count++
	if len(e.Path) != len(e.Edges)+1 {
		return false, errBadEmit
	}
	for i, h := range e.Path {
		m := g.edges[h]
		if m == nil {
			m = map[string]EdgeView{}
			g.edges[h] = m
		}
		if i < len(e.Edges) {
			m[e.Edges[i]] = EdgeView{Handle: e.Edges[i], Src: h, Dst: e.Path[i+1]}
		}
	}
	return false, nil
}

func (g *discoverGather) Result() (any, error) {
	r := Paths{Paths: map[string][]EdgeView{}, Count: g.count}
	for v, m := range g.edges {
		list := make([]EdgeView, 0, len(m))
		for _, h := range slices.Sorted(maps.Keys(m)) {
			list = append(list, m[h])
		}
		r.Paths[v] = list
	}
	return r, nil
}

var discoverPaths = &Def[discoverParams, discoverArg, discoverEmit]{
	ProgName: "discover_paths",
	Parse:    parseDiscover,
	Start:    func(p *discoverParams) []Hop { return []Hop{{To: p.Src, Arg: discoverArg{}}} },
	Step:     discoverStep,
	Gather: func(p *discoverParams) GatherOf[discoverEmit] {
		return &discoverGather{dest: p.Dest, edges: map[string]map[string]EdgeView{}}
	},
}
