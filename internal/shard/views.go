package shard

import (
	"github.com/weft-db/weft/internal/graph"
	"github.com/weft-db/weft/internal/nodeprog"
	"github.com/weft-db/weft/internal/value"
	"github.com/weft-db/weft/internal/vclock"
)

// ProgramVertex adapts a graph view to a node program's Vertex.
func ProgramVertex(v graph.VertexView) nodeprog.Vertex { return &vertexView{v} }

// reusedVertex returns a lookup of g's vertices at s for a runner that
// reuses one view: each Vertex it returns is valid until its next call,
// which is all a Step may use it for (nodeprog.Vertex), and a program's
// vertex visits allocate nothing for it.
func reusedVertex(g *graph.Graph, s vclock.Stamp, ord graph.Orderer) func(string) (nodeprog.Vertex, bool) {
	vv := &vertexView{}
	return func(h string) (nodeprog.Vertex, bool) {
		v, ok := g.View(h, s, ord)
		if !ok {
			return nil, false
		}
		vv.v = v
		return vv, true
	}
}

type vertexView struct{ v graph.VertexView }

func (x *vertexView) Handle() string                      { return x.v.Handle() }
func (x *vertexView) Prop(key string) (value.Value, bool) { return x.v.Prop(key) }
func (x *vertexView) Props(fn func(string, value.Value) bool) {
	for k, v := range x.v.Props() {
		if !fn(k, v) {
			return
		}
	}
}
func (x *vertexView) Aliases() []string {
	var out []string
	for a := range x.v.Aliases() {
		out = append(out, a)
	}
	return out
}
func (x *vertexView) Edges(fn func(nodeprog.Edge) bool) {
	ev := &edgeView{} // one per call: an Edge is valid only during fn
	for e := range x.v.Edges() {
		ev.e = e
		if !fn(ev) {
			return
		}
	}
}
func (x *vertexView) EdgeCount() int { return x.v.EdgeCount() }

type edgeView struct{ e graph.EdgeView }

func (x *edgeView) Handle() string                      { return x.e.Handle() }
func (x *edgeView) Dst() string                         { return x.e.Dst() }
func (x *edgeView) Prop(key string) (value.Value, bool) { return x.e.Prop(key) }
func (x *edgeView) Props(fn func(string, value.Value) bool) {
	for k, v := range x.e.Props() {
		if !fn(k, v) {
			return
		}
	}
}
