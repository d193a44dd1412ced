package graph

import (
	"fmt"
	"math"
	"strings"

	"github.com/weft-db/weft/internal/value"
	"github.com/weft-db/weft/internal/vclock"
)

// Writes. Each takes the write's stamp W and is applied in the partition's
// execution order (consistent with timestamp order); several writes of one
// transaction share W. A write validates everything first and returns an
// error wrapping one of the sentinels with nothing changed, or applies fully.

func checkName(what, s string, max int) error {
	switch {
	case s == "":
		return fmt.Errorf("%w: empty %s", ErrInvalid, what)
	case len(s) > max:
		return fmt.Errorf("%w: %s longer than %d bytes", ErrInvalid, what, max)
	}
	return nil
}

func checkStamp(w vclock.Stamp) error {
	if w.IsZero() {
		return fmt.Errorf("%w: zero write stamp", ErrInvalid)
	}
	return nil
}

func checkValue(key string, val value.Value) error {
	if val.IsNull() {
		return fmt.Errorf("%w: property %q set to null (delete it instead)", ErrInvalid, key)
	}
	return nil
}

// checkOrder rejects w when it is before the last write last (0: none).
func (g *Graph) checkOrder(last sid, w vclock.Stamp) error {
	if last == 0 {
		return nil
	}
	if st := g.stamps.get(last); vclock.CompareStamps(w, st) == vclock.Before {
		return fmt.Errorf("%w: %s before %s", ErrStampOrder, w, st)
	}
	return nil
}

func lastOf(s []sid) sid {
	if len(s) == 0 {
		return 0
	}
	return s[len(s)-1]
}

// liveVertex returns the record of h, which must exist and be live, after
// checking the vertex handle and the write stamp's order.
func (g *Graph) liveVertex(h string, w vclock.Stamp) (uint32, *vertex, error) {
	if err := checkName("vertex handle", h, g.cfg.HandleLenMax); err != nil {
		return 0, nil, err
	}
	if err := checkStamp(w); err != nil {
		return 0, nil, err
	}
	slot, v, ok := g.record(h)
	if !ok {
		return 0, nil, fmt.Errorf("%w: %q", ErrVertexMissing, h)
	}
	if !v.live() {
		return 0, nil, fmt.Errorf("%w: %q", ErrVertexDeleted, h)
	}
	if err := g.checkOrder(lastOf(v.writes), w); err != nil {
		return 0, nil, fmt.Errorf("vertex %q: %w", h, err)
	}
	return slot, v, nil
}

// touch records a write at s on the vertex in slot: its write log, and the
// dirty list Collect works through.
func (g *Graph) touch(slot uint32, v *vertex, s sid) {
	if lastOf(v.writes) != s {
		v.writes = append(v.writes, s)
		g.stamps.ref(s)
	}
	if !v.dirty && !g.cfg.KeepHistory {
		v.dirty = true
		g.dirty = append(g.dirty, slot)
	}
}

// stamp interns w and sets *field to it, counting the reference.
func (g *Graph) setStamp(field *sid, s sid) {
	*field = s
	g.stamps.ref(s)
}

// CreateVertex creates vertex h at W. A handle whose vertex was deleted may be
// created again: a new lifespan, with the old one readable at old stamps until
// collected.
func (g *Graph) CreateVertex(h string, w vclock.Stamp) error {
	if err := checkName("vertex handle", h, g.cfg.HandleLenMax); err != nil {
		return err
	}
	if err := checkStamp(w); err != nil {
		return err
	}
	hid, known := g.handles.lookup(h)
	var last sid
	if known {
		e := &g.handles.ents[hid]
		last = e.tomb
		if e.slot != 0 {
			v := g.verts.at(e.slot - 1)
			if v.live() {
				return fmt.Errorf("%w: %q", ErrVertexExists, h)
			}
			last = lastOf(v.writes)
		}
	}
	if err := g.checkOrder(last, w); err != nil {
		return fmt.Errorf("vertex %q: %w", h, err)
	}
	s := g.stamps.intern(w)
	slot, v := g.vertexFor(h)
	if v.deleted != 0 { // re-created: the old lifespan keeps its stamps
		x := v.ext()
		x.older = append(x.older, span{v.created, v.deleted})
	}
	v.deleted = 0
	g.setStamp(&v.created, s)
	g.touch(slot, v, s)
	g.n.vertices++
	g.n.versions++
	g.checkAfter("create_vertex")
	return nil
}

// vertexFor returns the record of h, adding an empty one (taking over a
// tombstone's last write) when the partition holds none.
func (g *Graph) vertexFor(h string) (uint32, *vertex) {
	hid := g.handles.intern(h)
	e := &g.handles.ents[hid]
	if e.slot != 0 {
		return e.slot - 1, g.verts.at(e.slot - 1)
	}
	var slot uint32
	if n := len(g.free); n > 0 {
		slot = g.free[n-1]
		g.free = g.free[:n-1]
	} else {
		assert(g.verts.len() < math.MaxUint32-1, "vertex slots full")
		slot = g.verts.add()
	}
	e.slot = slot + 1
	v := g.verts.at(slot)
	*v = vertex{hid: hid}
	if e.tomb != 0 { // the reference moves from the tombstone to the log
		v.writes = []sid{e.tomb}
		e.tomb = 0
		g.n.tombstones--
	}
	return slot, v
}

// DeleteVertex deletes vertex h at W, and with it every live out-edge,
// property and alias (tombstones at W; in-edges on other vertices are the
// caller's to delete).
func (g *Graph) DeleteVertex(h string, w vclock.Stamp) error {
	slot, v, err := g.liveVertex(h, w)
	if err != nil {
		return err
	}
	s := g.stamps.intern(w)
	g.setStamp(&v.deleted, s)
	for i := range v.edges {
		if e := &v.edges[i]; e.deleted == 0 {
			g.setStamp(&e.deleted, s)
			v.dead++
			g.n.edges--
		}
	}
	for i := range v.props {
		if p := &v.props[i]; p.deleted == 0 {
			g.setStamp(&p.deleted, s)
		}
	}
	for i := range v.aliases() {
		if a := &v.x.aliases[i]; a.deleted == 0 {
			g.setStamp(&a.deleted, s)
		}
	}
	g.touch(slot, v, s)
	g.n.vertices--
	g.checkAfter("delete_vertex")
	return nil
}

// CreateEdge creates out-edge eh from local live vertex src to dst at W. dst is
// only a handle (it may live on another partition); it is not checked here.
func (g *Graph) CreateEdge(src, eh, dst string, w vclock.Stamp) error {
	if err := checkName("edge handle", eh, g.cfg.HandleLenMax); err != nil {
		return err
	}
	if err := checkName("destination handle", dst, g.cfg.HandleLenMax); err != nil {
		return err
	}
	slot, v, err := g.liveVertex(src, w)
	if err != nil {
		return err
	}
	if _, ok := v.liveEdge(eh); ok {
		return fmt.Errorf("%w: %q of vertex %q", ErrEdgeExists, eh, src)
	}
	if v.liveEdges() >= g.cfg.EdgesPerVertexMax {
		return fmt.Errorf("%w: vertex %q has %d live out-edges", ErrLimit, src, v.liveEdges())
	}
	if len(v.edges) >= math.MaxUint32-1 || len(v.names)+len(eh) > math.MaxUint32 {
		return fmt.Errorf("%w: vertex %q holds too many edge versions; collect first", ErrLimit, src)
	}
	s := g.stamps.intern(w)
	d := g.handles.intern(dst)
	g.handles.ents[d].refs++
	off := len(v.names)
	v.names = append(v.names, eh...) // appends past len only: earlier handles never change
	v.edges = append(v.edges, edge{off: uint32(off), n: uint32(len(eh)), dst: d})
	g.setStamp(&v.edges[len(v.edges)-1].created, s)
	v.indexAdded(len(v.edges)-1, g.cfg.EdgeIndexMin)
	g.touch(slot, v, s)
	g.n.edges++
	g.n.versions++
	g.checkAfter("create_edge")
	return nil
}

// liveEdgeOf returns the live vertex src and its live edge eh.
func (g *Graph) liveEdgeOf(src, eh string, w vclock.Stamp) (uint32, *vertex, *edge, error) {
	if err := checkName("edge handle", eh, g.cfg.HandleLenMax); err != nil {
		return 0, nil, nil, err
	}
	slot, v, err := g.liveVertex(src, w)
	if err != nil {
		return 0, nil, nil, err
	}
	i, ok := v.liveEdge(eh)
	if !ok {
		return 0, nil, nil, fmt.Errorf("%w: %q of vertex %q", ErrEdgeMissing, eh, src)
	}
	return slot, v, &v.edges[i], nil
}

// DeleteEdge deletes out-edge eh of src at W.
func (g *Graph) DeleteEdge(src, eh string, w vclock.Stamp) error {
	slot, v, e, err := g.liveEdgeOf(src, eh, w)
	if err != nil {
		return err
	}
	s := g.stamps.intern(w)
	g.setStamp(&e.deleted, s)
	v.dead++
	g.n.edges--
	g.touch(slot, v, s)
	g.checkAfter("delete_edge")
	return nil
}

// liveProp returns the position of the live version of key kid in ps.
func liveProp(ps []prop, kid uint32) int {
	for i := len(ps) - 1; i >= 0; i-- {
		if ps[i].key == kid && ps[i].deleted == 0 {
			return i
		}
	}
	return -1
}

func liveProps(ps []prop) int {
	n := 0
	for i := range ps {
		if ps[i].deleted == 0 {
			n++
		}
	}
	return n
}

// checkSet validates setting key on an element whose versions are ps.
func (g *Graph) checkSet(ps []prop, key string, val value.Value) error {
	if err := checkName("property key", key, g.cfg.KeyLenMax); err != nil {
		return err
	}
	if err := checkValue(key, val); err != nil {
		return err
	}
	if kid, ok := g.keys.lookup(key); ok && liveProp(ps, kid) >= 0 {
		return nil // supersedes: the count stays
	}
	if n := liveProps(ps); n >= g.cfg.PropsPerElementMax {
		return fmt.Errorf("%w: %d live properties", ErrLimit, n)
	}
	return nil
}

// setProp supersedes the live version of key (if any) and appends val, at s.
func (g *Graph) setProp(ps []prop, key string, val value.Value, s sid) []prop {
	kid := g.keys.intern(key)
	if i := liveProp(ps, kid); i >= 0 {
		g.setStamp(&ps[i].deleted, s)
	}
	g.keys.ents[kid].refs++
	ps = append(ps, prop{key: kid, val: val})
	g.setStamp(&ps[len(ps)-1].created, s)
	g.n.versions++
	return ps
}

// findLiveProp validates deleting key from ps and returns its position.
func (g *Graph) findLiveProp(ps []prop, key string) (int, error) {
	if err := checkName("property key", key, g.cfg.KeyLenMax); err != nil {
		return 0, err
	}
	if kid, ok := g.keys.lookup(key); ok {
		if i := liveProp(ps, kid); i >= 0 {
			return i, nil
		}
	}
	return 0, fmt.Errorf("%w: %q", ErrPropMissing, key)
}

// SetVertexProp sets property key of vertex h to val at W, superseding the
// previous value. val must not be null.
func (g *Graph) SetVertexProp(h, key string, val value.Value, w vclock.Stamp) error {
	slot, v, err := g.liveVertex(h, w)
	if err != nil {
		return err
	}
	if err := g.checkSet(v.props, key, val); err != nil {
		return fmt.Errorf("vertex %q: %w", h, err)
	}
	s := g.stamps.intern(w)
	v.props = g.setProp(v.props, key, val, s)
	g.touch(slot, v, s)
	g.checkAfter("set_vertex_prop")
	return nil
}

// DeleteVertexProp deletes property key of vertex h at W.
func (g *Graph) DeleteVertexProp(h, key string, w vclock.Stamp) error {
	slot, v, err := g.liveVertex(h, w)
	if err != nil {
		return err
	}
	i, err := g.findLiveProp(v.props, key)
	if err != nil {
		return fmt.Errorf("vertex %q: %w", h, err)
	}
	s := g.stamps.intern(w)
	g.setStamp(&v.props[i].deleted, s)
	g.touch(slot, v, s)
	g.checkAfter("delete_vertex_prop")
	return nil
}

// SetEdgeProp sets property key of out-edge eh of src to val at W.
func (g *Graph) SetEdgeProp(src, eh, key string, val value.Value, w vclock.Stamp) error {
	slot, v, e, err := g.liveEdgeOf(src, eh, w)
	if err != nil {
		return err
	}
	if err := g.checkSet(v.edgeProps(e), key, val); err != nil {
		return fmt.Errorf("edge %q of vertex %q: %w", eh, src, err)
	}
	s := g.stamps.intern(w)
	x := v.ext()
	if e.props == 0 {
		if n := len(x.efree); n > 0 {
			e.props = x.efree[n-1] + 1
			x.efree = x.efree[:n-1]
		} else {
			x.eprops = append(x.eprops, nil)
			e.props = uint32(len(x.eprops))
		}
	}
	x.eprops[e.props-1] = g.setProp(x.eprops[e.props-1], key, val, s)
	g.touch(slot, v, s)
	g.checkAfter("set_edge_prop")
	return nil
}

// DeleteEdgeProp deletes property key of out-edge eh of src at W.
func (g *Graph) DeleteEdgeProp(src, eh, key string, w vclock.Stamp) error {
	slot, v, e, err := g.liveEdgeOf(src, eh, w)
	if err != nil {
		return err
	}
	ps := v.edgeProps(e)
	i, err := g.findLiveProp(ps, key)
	if err != nil {
		return fmt.Errorf("edge %q of vertex %q: %w", eh, src, err)
	}
	s := g.stamps.intern(w)
	g.setStamp(&ps[i].deleted, s)
	g.touch(slot, v, s)
	g.checkAfter("delete_edge_prop")
	return nil
}

func liveAlias(as []aliasVer, alias string) int {
	for i := len(as) - 1; i >= 0; i-- {
		if as[i].deleted == 0 && as[i].name == alias {
			return i
		}
	}
	return -1
}

// AddAlias gives vertex h the alias at W. Uniqueness across vertices is the
// alias index's (AliasIndex.Bind, on the alias's partition); here an alias
// may be live at most once per vertex.
func (g *Graph) AddAlias(h, alias string, w vclock.Stamp) error {
	if err := checkName("alias", alias, g.cfg.HandleLenMax); err != nil {
		return err
	}
	slot, v, err := g.liveVertex(h, w)
	if err != nil {
		return err
	}
	as := v.aliases()
	if liveAlias(as, alias) >= 0 {
		return fmt.Errorf("%w: %q of vertex %q", ErrAliasExists, alias, h)
	}
	n := 0
	for i := range as {
		if as[i].deleted == 0 {
			n++
		}
	}
	if n >= g.cfg.AliasesPerVertexMax {
		return fmt.Errorf("%w: vertex %q has %d aliases", ErrLimit, h, n)
	}
	s := g.stamps.intern(w)
	x := v.ext()
	x.aliases = append(x.aliases, aliasVer{name: strings.Clone(alias)})
	g.setStamp(&x.aliases[len(x.aliases)-1].created, s)
	g.n.versions++
	g.touch(slot, v, s)
	g.checkAfter("add_alias")
	return nil
}

// RemoveAlias removes alias from vertex h at W.
func (g *Graph) RemoveAlias(h, alias string, w vclock.Stamp) error {
	if err := checkName("alias", alias, g.cfg.HandleLenMax); err != nil {
		return err
	}
	slot, v, err := g.liveVertex(h, w)
	if err != nil {
		return err
	}
	i := liveAlias(v.aliases(), alias)
	if i < 0 {
		return fmt.Errorf("%w: %q of vertex %q", ErrAliasMissing, alias, h)
	}
	s := g.stamps.intern(w)
	g.setStamp(&v.x.aliases[i].deleted, s)
	g.touch(slot, v, s)
	g.checkAfter("remove_alias")
	return nil
}
