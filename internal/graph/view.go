package graph

import (
	"iter"
	"slices"
	"strings"

	"github.com/weft-db/weft/internal/value"
	"github.com/weft-db/weft/internal/vclock"
)

// Reads at a read stamp R. An element is visible at R iff created ≤ R and not
// deleted ≤ R, where ≤ is vector-clock order, with ord deciding concurrent
// pairs (ord may be nil when no pair can be concurrent, e.g. one gatekeeper;
// a concurrent pair without one panics). After Collect(w), only reads at
// stamps at or after w are defined.
//
// A view is valid until the next write or Collect on its graph; views of one
// graph may be used concurrently with each other.

// VertexView is vertex h as it was at R.
type VertexView struct {
	g  *Graph
	v  *vertex
	rd reader
}

// EdgeView is one out-edge as it was at R.
type EdgeView struct {
	vv VertexView
	e  *edge
}

// checkRead rejects reads that a collection already made undefined.
func (g *Graph) checkRead(r vclock.Stamp) {
	checkWatermark(r, g.low)
}

// View returns vertex h as it was at R, or false when no version of it is
// visible at R (never created, deleted, or not on this partition).
func (g *Graph) View(h string, r vclock.Stamp, ord Orderer) (VertexView, bool) {
	g.checkRead(r)
	_, v, ok := g.record(h)
	if !ok {
		return VertexView{}, false
	}
	vv := VertexView{g: g, v: v, rd: reader{t: &g.stamps, r: r, ord: ord}}
	return vv, g.vertexVisible(v, &vv.rd)
}

func (g *Graph) vertexVisible(v *vertex, rd *reader) bool {
	var m memo
	if m.visible(rd, v.created, v.deleted) {
		return true
	}
	if v.x != nil {
		for _, s := range v.x.older {
			if m.visible(rd, s.created, s.deleted) {
				return true
			}
		}
	}
	return false
}

// LastWrite returns the stamp of the latest write that touched vertex h
// (creation, deletion, any property, edge or alias change) among the writes
// at or before R, or the zero stamp when there is none: the read version for
// optimistic validation. The writes ≤ R are a prefix of the vertex's
// apply-order write log, so the scan runs backwards from the newest. A
// collected vertex still answers its last write (a tombstone), as the store
// does. The result is a copy.
func (g *Graph) LastWrite(h string, r vclock.Stamp, ord Orderer) vclock.Stamp {
	g.checkRead(r)
	hid, ok := g.handles.lookup(h)
	if !ok {
		return vclock.Stamp{}
	}
	e := &g.handles.ents[hid]
	rd := reader{t: &g.stamps, r: r, ord: ord}
	var log []sid
	if e.slot != 0 {
		log = g.verts.at(e.slot - 1).writes
	} else if e.tomb != 0 {
		tomb := [1]sid{e.tomb}
		log = tomb[:]
	}
	for i := len(log) - 1; i >= 0; i-- {
		if rd.le(log[i]) {
			st := g.stamps.get(log[i])
			return vclock.Stamp{Clock: st.Clock.Clone(), Owner: st.Owner}
		}
	}
	return vclock.Stamp{}
}

// Vertices yields every vertex visible at R, in handle order (canonical, so
// that analyses such as PageRank sum in the same order on every replica). It
// costs a sort of the visible handles per call.
func (g *Graph) Vertices(r vclock.Stamp, ord Orderer) iter.Seq[VertexView] {
	g.checkRead(r)
	rd := reader{t: &g.stamps, r: r, ord: ord}
	var slots []uint32
	for i := range g.verts.len() {
		if v := g.verts.at(uint32(i)); v.hid != 0 && g.vertexVisible(v, &rd) {
			slots = append(slots, uint32(i))
		}
	}
	slices.SortFunc(slots, func(a, b uint32) int {
		return strings.Compare(g.handles.ents[g.verts.at(a).hid].name, g.handles.ents[g.verts.at(b).hid].name)
	})
	return func(yield func(VertexView) bool) {
		for _, s := range slots {
			if !yield(VertexView{g: g, v: g.verts.at(s), rd: rd}) {
				return
			}
		}
	}
}

// Handle is the vertex's handle.
func (vv VertexView) Handle() string { return vv.g.handles.ents[vv.v.hid].name }

// Prop returns the value of property key at R.
func (vv VertexView) Prop(key string) (value.Value, bool) { return vv.g.prop(vv.v.props, key, &vv.rd) }

// Props yields the properties visible at R, in the order their values were set.
func (vv VertexView) Props() iter.Seq2[string, value.Value] { return vv.g.props(vv.v.props, vv.rd) }

// Aliases yields the vertex's aliases visible at R, in the order they were added.
func (vv VertexView) Aliases() iter.Seq[string] {
	return func(yield func(string) bool) {
		rd := vv.rd
		var m memo
		for _, a := range vv.v.aliases() {
			if m.visible(&rd, a.created, a.deleted) && !yield(a.name) {
				return
			}
		}
	}
}

// Edges yields the out-edges visible at R, in creation order. It allocates
// nothing per edge; edges created and never deleted before the last
// collection cost no clock comparison at all.
func (vv VertexView) Edges() iter.Seq[EdgeView] {
	return func(yield func(EdgeView) bool) {
		rd := vv.rd
		var m memo
		es := vv.v.edges
		for i := range es {
			e := &es[i]
			if (e.created|e.deleted == 0 || m.visible(&rd, e.created, e.deleted)) && !yield(EdgeView{vv, e}) {
				return
			}
		}
	}
}

// EdgeCount is the number of out-edges visible at R. Edges below the
// collection cursor need no check when the vertex has no deleted edges.
func (vv VertexView) EdgeCount() int {
	v := vv.v
	rd := vv.rd
	var m memo
	n, from := 0, 0
	if v.dead == 0 {
		n, from = int(v.flat), int(v.flat)
	}
	for i := from; i < len(v.edges); i++ {
		if e := &v.edges[i]; m.visible(&rd, e.created, e.deleted) {
			n++
		}
	}
	return n
}

// Edge returns out-edge handle h as it was at R.
func (vv VertexView) Edge(h string) (EdgeView, bool) {
	rd := vv.rd
	var m memo
	found := -1
	vv.v.versionsOf(h, func(i int) bool {
		if e := &vv.v.edges[i]; m.visible(&rd, e.created, e.deleted) {
			found = i
			return false
		}
		return true
	})
	if found < 0 {
		return EdgeView{}, false
	}
	return EdgeView{vv, &vv.v.edges[found]}, true
}

// Handle is the edge's handle (no copy: it points into the vertex's arena).
func (ev EdgeView) Handle() string { return ev.vv.v.edgeName(ev.e) }

// Dst is the destination vertex's handle.
func (ev EdgeView) Dst() string { return ev.vv.g.handles.ents[ev.e.dst].name }

// Prop returns the value of the edge's property key at R.
func (ev EdgeView) Prop(key string) (value.Value, bool) {
	return ev.vv.g.prop(ev.vv.v.edgeProps(ev.e), key, &ev.vv.rd)
}

// Props yields the edge's properties visible at R, in the order they were set.
func (ev EdgeView) Props() iter.Seq2[string, value.Value] {
	return ev.vv.g.props(ev.vv.v.edgeProps(ev.e), ev.vv.rd)
}

func (g *Graph) prop(ps []prop, key string, rd *reader) (value.Value, bool) {
	if len(ps) == 0 {
		return value.Value{}, false
	}
	kid, ok := g.keys.lookup(key)
	if !ok {
		return value.Value{}, false
	}
	var m memo
	for i := len(ps) - 1; i >= 0; i-- {
		if p := &ps[i]; p.key == kid && m.visible(rd, p.created, p.deleted) {
			return p.val, true
		}
	}
	return value.Value{}, false
}

func (g *Graph) props(ps []prop, rd reader) iter.Seq2[string, value.Value] {
	return func(yield func(string, value.Value) bool) {
		var m memo
		for i := range ps {
			if p := &ps[i]; m.visible(&rd, p.created, p.deleted) && !yield(g.keys.ents[p.key].name, p.val) {
				return
			}
		}
	}
}
