package nodeprog

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"

	"github.com/weft-db/weft/internal/value"
)

// Neighbourhood programs: clustering (Weaver's CLUSTERING), triangle_count
// around given vertices (Weaver's legacy TRIANGLE_COUNT) and
// two_neighborhood. Neighbourhoods are out-neighbourhoods: a node program
// sees only out-edges. For the undirected or in∪out definitions, run the lcc
// and triangles analyses over a snapshot.

// nbrsInlineMax is the neighbourhood size up to which a center sends its
// neighbour set with each hop, so neighbours emit only the intersection;
// above it neighbours emit their whole out-neighbour list (O(k + Σ deg)
// bytes instead of O(k²)).
const nbrsInlineMax = 256

// outNbrs returns v's distinct out-neighbours other than v, in edge order.
func outNbrs(v Vertex) []string {
	var out []string
	seen := map[string]struct{}{v.Handle(): {}}
	v.Edges(func(e Edge) bool {
		if _, ok := seen[e.Dst()]; !ok {
			seen[e.Dst()] = struct{}{}
			out = append(out, e.Dst())
		}
		return true
	})
	return out
}

type nbrArg struct {
	Center string   `json:"center,omitempty"` // "" at the center itself
	Nbrs   []string `json:"nbrs,omitempty"`   // the center's neighbours, when few
}

// nbrEmit: from a center (From == ""), its neighbour set; from a neighbour,
// its out-neighbours (those in the center's set when the hop carried it).
type nbrEmit struct {
	Center string   `json:"center"`
	From   string   `json:"from,omitempty"`
	Nbrs   []string `json:"nbrs"`
}

// nbrStep is the step of clustering and triangle_count.
func nbrStep(c *Ctx, v Vertex, a nbrArg) error {
	if a.Center == "" {
		n := outNbrs(v)
		c.Emit(nbrEmit{Center: v.Handle(), Nbrs: n})
		var inline []string
		if len(n) <= nbrsInlineMax {
			inline = n
		}
		for _, u := range n {
			c.Hop(u, nbrArg{Center: v.Handle(), Nbrs: inline})
		}
		return nil
	}
	outs := outNbrs(v)
	if a.Nbrs != nil {
		set := setOf(a.Nbrs)
		outs = slices.DeleteFunc(outs, func(w string) bool { _, ok := set[w]; return !ok })
	}
	c.Emit(nbrEmit{Center: a.Center, From: v.Handle(), Nbrs: outs})
	return nil
}

// hood is one center's gathered neighbourhood.
type hood struct {
	nbrs  map[string]struct{} // nil until the center reports
	k     int
	links map[string][]string // neighbour → its out-neighbours (maybe unfiltered)
}

type hoodGather struct{ hoods map[string]*hood }

func (g *hoodGather) Add(e nbrEmit) (bool, error) {
	h := g.hoods[e.Center]
	if h == nil {
		h = &hood{links: map[string][]string{}}
		g.hoods[e.Center] = h
	}
	if e.From == "" {
		h.nbrs, h.k = setOf(e.Nbrs), len(e.Nbrs)
		if h.nbrs == nil {
			h.nbrs = map[string]struct{}{}
		}
	} else {
		h.links[e.From] = e.Nbrs
	}
	return false, nil
}

// each calls fn for every link u→w inside the center's neighbourhood.
func (h *hood) each(fn func(u, w string)) {
	for u, ws := range h.links {
		if _, ok := h.nbrs[u]; !ok {
			continue
		}
		for _, w := range ws {
			if _, ok := h.nbrs[w]; ok && w != u {
				fn(u, w)
			}
		}
	}
}

// ordered counts the links u→w (ordered pairs) in the neighbourhood.
func (h *hood) ordered() int {
	n := 0
	h.each(func(string, string) { n++ })
	return n
}

// unordered counts the pairs {u, w} linked in either direction.
func (h *hood) unordered() int {
	seen := map[[2]string]struct{}{}
	h.each(func(u, w string) {
		if w < u {
			u, w = w, u
		}
		seen[[2]string{u, w}] = struct{}{}
	})
	return len(seen)
}

// ---- clustering

type clusteringParams struct {
	Node string `json:"node"`
	Mode string `json:"mode"`
}

// Clustering is clustering's result: the local clustering coefficient of
// Node over its out-neighbours, Links / (Degree·(Degree−1)), 0 when
// Degree < 2.
type Clustering struct {
	Node        string  `json:"node"`
	Coefficient float64 `json:"coefficient"`
	Degree      int     `json:"degree"`
	Links       int     `json:"links"`
}

type clusteringGather struct {
	hoodGather
	node string
}

func (g *clusteringGather) Result() (any, error) {
	h := g.hoods[g.node]
	if h == nil || h.nbrs == nil {
		return nil, nil
	}
	r := Clustering{Node: g.node, Degree: h.k, Links: h.ordered()}
	if h.k >= 2 {
		r.Coefficient = float64(r.Links) / float64(h.k*(h.k-1))
	}
	return r, nil
}

var clustering = &Def[clusteringParams, nbrArg, nbrEmit]{
	ProgName: "clustering",
	Parse: func(raw json.RawMessage) (*clusteringParams, error) {
		var p clusteringParams
		if err := DecodeParams("clustering", raw, &p); err != nil {
			return nil, err
		}
		if err := requireHandle("clustering", "node", p.Node); err != nil {
			return nil, err
		}
		switch p.Mode {
		case "", "out":
		case "undirected", "directed":
			return nil, badParam("clustering", "mode", "%q needs in-edges, which a node program does not see; run the lcc analysis with mode %q", p.Mode, p.Mode)
		default:
			return nil, badParam("clustering", "mode", "unknown mode %q (want \"out\")", p.Mode)
		}
		return &p, nil
	},
	Start: func(p *clusteringParams) []Hop { return []Hop{{To: p.Node, Arg: nbrArg{}}} },
	Step:  func(c *Ctx, _ *clusteringParams, v Vertex, a nbrArg) error { return nbrStep(c, v, a) },
	Gather: func(p *clusteringParams) GatherOf[nbrEmit] {
		return &clusteringGather{hoodGather: hoodGather{hoods: map[string]*hood{}}, node: p.Node}
	},
}

// ---- triangle_count

type triangleParams struct {
	Nodes []string `json:"nodes"`
}

// Triangles is triangle_count's result: for each given vertex v visible at
// the stamp, the number of pairs {u, w} of its out-neighbours joined by an
// edge in either direction (the triangles through v when edges are stored
// both ways); Total is their sum.
type Triangles struct {
	Total   int            `json:"total"`
	PerNode map[string]int `json:"per_node"`
}

type triangleGather struct{ hoodGather }

func (g *triangleGather) Result() (any, error) {
	r := Triangles{PerNode: map[string]int{}}
	for v, h := range g.hoods {
		if h.nbrs == nil {
			continue
		}
		n := h.unordered()
		r.PerNode[v] = n
		r.Total += n
	}
	return r, nil
}

var triangleCount = &Def[triangleParams, nbrArg, nbrEmit]{
	ProgName: "triangle_count",
	Parse: func(raw json.RawMessage) (*triangleParams, error) {
		var p triangleParams
		if err := DecodeParams("triangle_count", raw, &p); err != nil {
			return nil, err
		}
		if len(p.Nodes) == 0 {
			return nil, badParam("triangle_count", "nodes", "required (for a whole-graph count run the triangles analysis)")
		}
		if err := checkHandles("triangle_count", "nodes", p.Nodes); err != nil {
			return nil, err
		}
		p.Nodes = slices.Compact(slices.Sorted(slices.Values(p.Nodes)))
		return &p, nil
	},
	Start: func(p *triangleParams) []Hop {
		hops := make([]Hop, len(p.Nodes))
		for i, n := range p.Nodes {
			hops[i] = Hop{To: n, Arg: nbrArg{}}
		}
		return hops
	},
	Step: func(c *Ctx, _ *triangleParams, v Vertex, a nbrArg) error { return nbrStep(c, v, a) },
	Gather: func(*triangleParams) GatherOf[nbrEmit] {
		return &triangleGather{hoodGather{hoods: map[string]*hood{}}}
	},
}

// ---- two_neighborhood

type twoHoodParams struct {
	Node      string          `json:"node"`
	PropKey   string          `json:"prop_key"`
	PropValue json.RawMessage `json:"prop_value"`
	EdgeProps FilterSpec      `json:"edge_props"`

	value  *value.Value
	filter Filter
}

type twoHoodArg struct {
	Depth  int    `json:"depth"`
	Center string `json:"center"`
}

type twoHoodState struct{ depth int }

// NodeValue is one vertex with one property value.
type NodeValue struct {
	Node  string      `json:"node"`
	Value value.Value `json:"value"`
}

// Neighborhood is two_neighborhood's result: the vertices within two
// out-hops of the center (not the center itself) that have prop_key (equal
// to prop_value when given), sorted by handle.
type Neighborhood struct {
	Nodes []NodeValue `json:"nodes"`
}

type twoHoodGather struct{ found map[string]value.Value }

func (g *twoHoodGather) Add(e NodeValue) (bool, error) { g.found[e.Node] = e.Value; return false, nil }

func (g *twoHoodGather) Result() (any, error) {
	out := Neighborhood{Nodes: make([]NodeValue, 0, len(g.found))}
	for _, n := range slices.Sorted(maps.Keys(g.found)) {
		out.Nodes = append(out.Nodes, NodeValue{Node: n, Value: g.found[n]})
	}
	return out, nil
}

var twoNeighborhood = &Def[twoHoodParams, twoHoodArg, NodeValue]{
	ProgName: "two_neighborhood",
	Parse: func(raw json.RawMessage) (*twoHoodParams, error) {
		var p twoHoodParams
		if err := DecodeParams("two_neighborhood", raw, &p); err != nil {
			return nil, err
		}
		if err := requireHandle("two_neighborhood", "node", p.Node); err != nil {
			return nil, err
		}
		if p.PropKey == "" {
			return nil, badParam("two_neighborhood", "prop_key", "required")
		}
		if pv := bytes.TrimSpace(p.PropValue); len(pv) > 0 && string(pv) != "null" {
			var v value.Value
			if err := v.UnmarshalJSON(pv); err != nil {
				return nil, badParam("two_neighborhood", "prop_value", "%v", err)
			}
			p.value = &v
		}
		f, err := p.EdgeProps.Compile("two_neighborhood", "edge_props")
		if err != nil {
			return nil, err
		}
		p.filter = f
		return &p, nil
	},
	Start: func(p *twoHoodParams) []Hop { return []Hop{{To: p.Node, Arg: twoHoodArg{Center: p.Node}}} },
	Step: func(c *Ctx, p *twoHoodParams, v Vertex, a twoHoodArg) error {
		if st := LookupState[twoHoodState](c); st != nil && st.depth <= a.Depth {
			return nil
		}
		st, err := StateOf[twoHoodState](c)
		if err != nil {
			return err
		}
		st.depth = a.Depth
		if v.Handle() != a.Center {
			if pv, ok := v.Prop(p.PropKey); ok && (p.value == nil || value.Equal(pv, *p.value)) {
				c.Emit(NodeValue{Node: v.Handle(), Value: pv})
			}
		}
		if a.Depth < 2 {
			v.Edges(func(e Edge) bool {
				if p.filter.MatchEdge(e) {
					c.Hop(e.Dst(), twoHoodArg{Depth: a.Depth + 1, Center: a.Center})
				}
				return true
			})
		}
		return nil
	},
	Gather: func(*twoHoodParams) GatherOf[NodeValue] { return &twoHoodGather{found: map[string]value.Value{}} },
}
