package engine

import (
	"github.com/weft-db/weft/internal/graph"
	"github.com/weft-db/weft/internal/nodeprog"
	"github.com/weft-db/weft/internal/value"
)

// snapVertex is a vertex copied out of a shard for a whole-snapshot
// analysis, which runs after the shards have moved on.
type snapVertex struct {
	handle  string
	props   []kv
	aliases []string
	edges   []snapEdge
}

type kv struct {
	k string
	v value.Value
}

type snapEdge struct {
	handle, dst string
	props       []kv
}

func copyVertex(v graph.VertexView) *snapVertex {
	s := &snapVertex{handle: v.Handle()}
	for k, val := range v.Props() {
		s.props = append(s.props, kv{k, val})
	}
	for a := range v.Aliases() {
		s.aliases = append(s.aliases, a)
	}
	s.edges = make([]snapEdge, 0, v.EdgeCount())
	for e := range v.Edges() {
		se := snapEdge{handle: e.Handle(), dst: e.Dst()}
		for k, val := range e.Props() {
			se.props = append(se.props, kv{k, val})
		}
		s.edges = append(s.edges, se)
	}
	return s
}

func (s *snapVertex) Handle() string { return s.handle }
func (s *snapVertex) Prop(key string) (value.Value, bool) {
	return findKV(s.props, key)
}
func (s *snapVertex) Props(fn func(string, value.Value) bool) {
	for _, p := range s.props {
		if !fn(p.k, p.v) {
			return
		}
	}
}
func (s *snapVertex) Aliases() []string { return s.aliases }
func (s *snapVertex) Edges(fn func(nodeprog.Edge) bool) {
	for i := range s.edges {
		if !fn(&s.edges[i]) {
			return
		}
	}
}
func (s *snapVertex) EdgeCount() int { return len(s.edges) }

func (e *snapEdge) Handle() string                      { return e.handle }
func (e *snapEdge) Dst() string                         { return e.dst }
func (e *snapEdge) Prop(key string) (value.Value, bool) { return findKV(e.props, key) }
func (e *snapEdge) Props(fn func(string, value.Value) bool) {
	for _, p := range e.props {
		if !fn(p.k, p.v) {
			return
		}
	}
}

func findKV(ps []kv, key string) (value.Value, bool) {
	for _, p := range ps {
		if p.k == key {
			return p.v, true
		}
	}
	return value.Value{}, false
}

// snapshot is the union of the shards' copies.
type snapshot struct{ parts [][]*snapVertex }

func (s *snapshot) Vertices(fn func(nodeprog.Vertex) bool) {
	for _, part := range s.parts {
		for _, v := range part {
			if !fn(v) {
				return
			}
		}
	}
}
