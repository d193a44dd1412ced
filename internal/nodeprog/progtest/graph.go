package progtest

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/weft-db/weft/internal/nodeprog"
	"github.com/weft-db/weft/internal/value"
)

// Props are property values by key.
type Props map[string]value.Value

// P builds Props from key, value pairs; values may be string, int, int64,
// float64, bool, time.Time or value.Value.
func P(kv ...any) Props {
	if len(kv)%2 != 0 {
		panic("progtest.P: odd number of arguments")
	}
	p := Props{}
	for i := 0; i < len(kv); i += 2 {
		p[kv[i].(string)] = V(kv[i+1])
	}
	return p
}

// V converts a Go value to a value.Value.
func V(x any) value.Value {
	switch v := x.(type) {
	case value.Value:
		return v
	case string:
		return value.Str(v)
	case int:
		return value.I64(int64(v))
	case int64:
		return value.I64(v)
	case float64:
		return value.F64(v)
	case bool:
		return value.Boolean(v)
	case time.Time:
		return value.Time(v)
	case []any:
		vs := make([]value.Value, len(v))
		for i, e := range v {
			vs[i] = V(e)
		}
		return value.ListOf(vs...)
	}
	panic(fmt.Sprintf("progtest.V: unsupported %T", x))
}

// Graph is an in-memory directed property multigraph. Edges are kept in
// insertion order; a vertex's edges are its out-edges.
type Graph struct {
	verts map[string]*vertex
	edges int
}

type vertex struct {
	handle  string
	props   Props
	aliases []string
	out     []*edge
}

type edge struct {
	handle string
	dst    string
	props  Props
}

// NewGraph returns an empty graph.
func NewGraph() *Graph { return &Graph{verts: map[string]*vertex{}} }

// AddVertex adds a vertex, or adds props to an existing one.
func (g *Graph) AddVertex(h string, props Props) *Graph {
	v := g.verts[h]
	if v == nil {
		v = &vertex{handle: h, props: Props{}}
		g.verts[h] = v
	}
	maps.Copy(v.props, props)
	return g
}

// AddEdge adds edge h from src to dst, creating missing endpoints.
func (g *Graph) AddEdge(h, src, dst string, props Props) *Graph {
	g.AddVertex(src, nil).AddVertex(dst, nil)
	p := Props{}
	maps.Copy(p, props)
	g.verts[src].out = append(g.verts[src].out, &edge{handle: h, dst: dst, props: p})
	g.edges++
	return g
}

// AddAlias gives vertex h an alias.
func (g *Graph) AddAlias(h, alias string) *Graph {
	g.AddVertex(h, nil)
	g.verts[h].aliases = append(g.verts[h].aliases, alias)
	return g
}

// RemoveVertex deletes vertex h and its out-edges but leaves edges pointing
// to it, as a program sees a vertex deleted before its stamp whose in-edges
// live on other shards: hops there find nothing.
func (g *Graph) RemoveVertex(h string) *Graph {
	if v, ok := g.verts[h]; ok {
		g.edges -= len(v.out)
		delete(g.verts, h)
	}
	return g
}

// NumVertices and NumEdges count what the graph holds.
func (g *Graph) NumVertices() int { return len(g.verts) }
func (g *Graph) NumEdges() int    { return g.edges }

// Handles returns every vertex handle, sorted.
func (g *Graph) Handles() []string { return slices.Sorted(maps.Keys(g.verts)) }

// Lookup implements the runner's lookup over the whole graph.
func (g *Graph) Lookup(h string) (nodeprog.Vertex, bool) {
	v, ok := g.verts[h]
	if !ok {
		return nil, false
	}
	return v, true
}

// Vertices implements nodeprog.Snapshot, in handle order.
func (g *Graph) Vertices(fn func(nodeprog.Vertex) bool) {
	for _, h := range g.Handles() {
		if !fn(g.verts[h]) {
			return
		}
	}
}

func (v *vertex) Handle() string                          { return v.handle }
func (v *vertex) Prop(k string) (value.Value, bool)       { x, ok := v.props[k]; return x, ok }
func (v *vertex) Props(fn func(string, value.Value) bool) { eachProp(v.props, fn) }
func (v *vertex) Aliases() []string                       { return v.aliases }
func (v *vertex) EdgeCount() int                          { return len(v.out) }
func (v *vertex) Edges(fn func(nodeprog.Edge) bool) {
	for _, e := range v.out {
		if !fn(e) {
			return
		}
	}
}

func (e *edge) Handle() string                          { return e.handle }
func (e *edge) Dst() string                             { return e.dst }
func (e *edge) Prop(k string) (value.Value, bool)       { x, ok := e.props[k]; return x, ok }
func (e *edge) Props(fn func(string, value.Value) bool) { eachProp(e.props, fn) }

func eachProp(p Props, fn func(string, value.Value) bool) {
	for _, k := range slices.Sorted(maps.Keys(p)) {
		if !fn(k, p[k]) {
			return
		}
	}
}
