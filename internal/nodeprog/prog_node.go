package nodeprog

import (
	"encoding/json"

	"github.com/weft-db/weft/internal/value"
)

// Single-vertex programs: TAO's obj_get (get_node, read_node_props),
// assoc_get/assoc_range (get_edges) and assoc_count (count_edges). Each runs
// one step at the vertex and emits one value; a vertex not visible at the
// program's stamp gives a null result.

// NodeView is a vertex as get_node returns it.
type NodeView struct {
	Handle  string                 `json:"handle"`
	Props   map[string]value.Value `json:"props,omitempty"`
	Edges   []EdgeView             `json:"edges,omitempty"`
	Aliases []string               `json:"aliases,omitempty"`
}

// EdgeView is an edge as programs return it.
type EdgeView struct {
	Handle string                 `json:"handle"`
	Src    string                 `json:"src"`
	Dst    string                 `json:"dst"`
	Props  map[string]value.Value `json:"props,omitempty"`
}

func edgeView(src string, e Edge, withProps bool) EdgeView {
	ev := EdgeView{Handle: e.Handle(), Src: src, Dst: e.Dst()}
	if withProps {
		ev.Props = collectProps(e.Props, nil)
	}
	return ev
}

// collectProps copies properties, only keys when keys is non-nil.
func collectProps(each func(func(string, value.Value) bool), keys map[string]struct{}) map[string]value.Value {
	var out map[string]value.Value
	each(func(k string, v value.Value) bool {
		if keys != nil {
			if _, ok := keys[k]; !ok {
				return true
			}
		}
		if out == nil {
			out = map[string]value.Value{}
		}
		out[k] = v
		return true
	})
	return out
}

func setOf(hs []string) map[string]struct{} {
	if len(hs) == 0 {
		return nil
	}
	m := make(map[string]struct{}, len(hs))
	for _, h := range hs {
		m[h] = struct{}{}
	}
	return m
}

// startAt is the Start of a single-vertex program.
func startAt(h string) []Hop { return []Hop{{To: h}} }

// single gathers the one value a single-vertex program emits.
type single[E any] struct{ v *E }

func (g *single[E]) Add(e E) (bool, error) {
	if g.v == nil {
		g.v = &e
	}
	return false, nil
}

func (g *single[E]) Result() (any, error) {
	if g.v == nil {
		return nil, nil
	}
	return *g.v, nil
}

func newSingle[E any, P any](*P) GatherOf[E] { return &single[E]{} }

func boolOr(b *bool, def bool) bool {
	if b == nil {
		return def
	}
	return *b
}

// ---- get_node

type getNodeParams struct {
	Node    string `json:"node"`
	Props   *bool  `json:"props"`
	Edges   *bool  `json:"edges"`
	Aliases *bool  `json:"aliases"`

	props, edges, aliases bool
}

var getNode = &Def[getNodeParams, struct{}, NodeView]{
	ProgName: "get_node",
	Local:    true,
	Parse: func(raw json.RawMessage) (*getNodeParams, error) {
		var p getNodeParams
		if err := DecodeParams("get_node", raw, &p); err != nil {
			return nil, err
		}
		if err := requireHandle("get_node", "node", p.Node); err != nil {
			return nil, err
		}
		p.props, p.edges, p.aliases = boolOr(p.Props, true), boolOr(p.Edges, true), boolOr(p.Aliases, true)
		return &p, nil
	},
	Start: func(p *getNodeParams) []Hop { return startAt(p.Node) },
	Step: func(c *Ctx, p *getNodeParams, v Vertex, _ struct{}) error {
		nv := NodeView{Handle: v.Handle()}
		if p.props {
			nv.Props = collectProps(v.Props, nil)
		}
		if p.edges {
			v.Edges(func(e Edge) bool {
				nv.Edges = append(nv.Edges, edgeView(nv.Handle, e, true))
				return true
			})
		}
		if p.aliases {
			nv.Aliases = append([]string(nil), v.Aliases()...)
		}
		c.Emit(nv)
		return nil
	},
	Gather: newSingle[NodeView, getNodeParams],
}

// ---- read_node_props

type readNodePropsParams struct {
	Node string   `json:"node"`
	Keys []string `json:"keys"`

	keys map[string]struct{}
}

// NodeProps is read_node_props' result.
type NodeProps struct {
	Node  string                 `json:"node"`
	Props map[string]value.Value `json:"props"`
}

var readNodeProps = &Def[readNodePropsParams, struct{}, NodeProps]{
	ProgName: "read_node_props",
	Local:    true,
	Parse: func(raw json.RawMessage) (*readNodePropsParams, error) {
		var p readNodePropsParams
		if err := DecodeParams("read_node_props", raw, &p); err != nil {
			return nil, err
		}
		if err := requireHandle("read_node_props", "node", p.Node); err != nil {
			return nil, err
		}
		if err := checkHandles("read_node_props", "keys", p.Keys); err != nil {
			return nil, err
		}
		p.keys = setOf(p.Keys)
		return &p, nil
	},
	Start: func(p *readNodePropsParams) []Hop { return startAt(p.Node) },
	Step: func(c *Ctx, p *readNodePropsParams, v Vertex, _ struct{}) error {
		props := collectProps(v.Props, p.keys)
		if props == nil {
			props = map[string]value.Value{}
		}
		c.Emit(NodeProps{Node: v.Handle(), Props: props})
		return nil
	},
	Gather: newSingle[NodeProps, readNodePropsParams],
}

// ---- get_edges and count_edges share their edge selection.

type edgeSelect struct {
	Node      string     `json:"node"`
	Nbrs      []string   `json:"nbrs"`
	Edges     []string   `json:"edges"`
	EdgeProps FilterSpec `json:"edge_props"`

	nbrs, edges map[string]struct{}
	filter      Filter
}

func (s *edgeSelect) compile(prog string) error {
	if err := requireHandle(prog, "node", s.Node); err != nil {
		return err
	}
	if err := checkHandles(prog, "nbrs", s.Nbrs); err != nil {
		return err
	}
	if err := checkHandles(prog, "edges", s.Edges); err != nil {
		return err
	}
	f, err := s.EdgeProps.Compile(prog, "edge_props")
	if err != nil {
		return err
	}
	s.nbrs, s.edges, s.filter = setOf(s.Nbrs), setOf(s.Edges), f
	return nil
}

func (s *edgeSelect) match(e Edge) bool {
	if s.nbrs != nil {
		if _, ok := s.nbrs[e.Dst()]; !ok {
			return false
		}
	}
	if s.edges != nil {
		if _, ok := s.edges[e.Handle()]; !ok {
			return false
		}
	}
	return s.filter.MatchEdge(e)
}

type getEdgesParams struct {
	edgeSelect
	Limit     int   `json:"limit"`
	WithProps *bool `json:"with_props"`

	withProps bool
}

// EdgeList is get_edges' result.
type EdgeList struct {
	Edges []EdgeView `json:"edges"`
}

var getEdges = &Def[getEdgesParams, struct{}, EdgeList]{
	ProgName: "get_edges",
	Local:    true,
	Parse: func(raw json.RawMessage) (*getEdgesParams, error) {
		var p getEdgesParams
		if err := DecodeParams("get_edges", raw, &p); err != nil {
			return nil, err
		}
		if err := p.edgeSelect.compile("get_edges"); err != nil {
			return nil, err
		}
		if p.Limit < 0 {
			return nil, badParam("get_edges", "limit", "must be >= 0 (0 = no limit), got %d", p.Limit)
		}
		p.withProps = boolOr(p.WithProps, true)
		return &p, nil
	},
	Start: func(p *getEdgesParams) []Hop { return startAt(p.Node) },
	Step: func(c *Ctx, p *getEdgesParams, v Vertex, _ struct{}) error {
		n := v.EdgeCount()
		if p.Limit > 0 && p.Limit < n {
			n = p.Limit
		}
		out := EdgeList{Edges: make([]EdgeView, 0, n)}
		v.Edges(func(e Edge) bool {
			if p.match(e) {
				out.Edges = append(out.Edges, edgeView(v.Handle(), e, p.withProps))
			}
			return p.Limit == 0 || len(out.Edges) < p.Limit
		})
		c.Emit(out)
		return nil
	},
	Gather: newSingle[EdgeList, getEdgesParams],
}

type countEdgesParams struct{ edgeSelect }

// EdgeCount is count_edges' result.
type EdgeCount struct {
	Count int `json:"count"`
}

var countEdges = &Def[countEdgesParams, struct{}, EdgeCount]{
	ProgName: "count_edges",
	Local:    true,
	Parse: func(raw json.RawMessage) (*countEdgesParams, error) {
		var p countEdgesParams
		if err := DecodeParams("count_edges", raw, &p); err != nil {
			return nil, err
		}
		if err := p.edgeSelect.compile("count_edges"); err != nil {
			return nil, err
		}
		return &p, nil
	},
	Start: func(p *countEdgesParams) []Hop { return startAt(p.Node) },
	Step: func(c *Ctx, p *countEdgesParams, v Vertex, _ struct{}) error {
		n := 0
		if p.nbrs == nil && p.edges == nil && len(p.filter) == 0 {
			n = v.EdgeCount()
		} else {
			v.Edges(func(e Edge) bool {
				if p.match(e) {
					n++
				}
				return true
			})
		}
		c.Emit(EdgeCount{Count: n})
		return nil
	},
	Gather: newSingle[EdgeCount, countEdgesParams],
}
