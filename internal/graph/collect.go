package graph

import (
	"github.com/weft-db/weft/internal/vclock"
)

// Garbage collection (dissertation §4.3). The watermark w is the earliest
// stamp any read may still use (the minimum over outstanding node programs);
// reads at or after w must see exactly what they saw before. Collect decides
// by vector clock alone (never the Orderer), so it never waits on Kronos:
//
//   - a version deleted strictly before w (by clock) is dropped: every read
//     R ≥ w has deleted < R, so it is invisible to all of them;
//   - a creation stamp at or before w is replaced by 0 ("before every allowed
//     read"), which frees the stamp once nothing else names it. This is what
//     keeps memory per edge small after a stream of single-edge transactions;
//   - a vertex's write log keeps only its newest entry before w by clock and
//     what follows: entries applied earlier precede it in execution order, so
//     they are ≤ every R ≥ w and LastWrite never answers them again;
//   - a vertex deleted before w with nothing left becomes a tombstone: just
//     its handle and last write, which the store also keeps;
//   - when at most a quarter of the stamp table is live, it is renumbered
//     densely (a walk over every version), so a burst of transactions does
//     not pin its peak size.
//
// Only vertices written since they last had nothing to collect are visited
// (the dirty list), so Collect costs time in proportion to recent writes.

// Collect drops what no read at or after watermark can see and returns how
// many versions (lifespans, edges, property values, aliases) it freed. With
// Config.KeepHistory it does nothing. After it, reads before the watermark are
// undefined (a read strictly before it by clock panics).
func (g *Graph) Collect(watermark vclock.Stamp) (freed int) {
	if g.cfg.KeepHistory || watermark.IsZero() {
		return 0
	}
	if g.low.IsZero() || vclock.CompareStamps(watermark, g.low) != vclock.Before {
		g.low = vclock.Stamp{Clock: watermark.Clock.Clone(), Owner: watermark.Owner}
	}
	m := gcMemo{t: &g.stamps, w: watermark}
	keep := g.dirty[:0]
	for _, slot := range g.dirty {
		f, pending := g.collectVertex(slot, &m)
		freed += f
		if pending {
			keep = append(keep, slot)
		}
	}
	clear(g.dirty[len(keep):])
	g.dirty = keep
	if cap(g.dirty) > 64 && len(g.dirty) < cap(g.dirty)/4 {
		g.dirty = append([]uint32(nil), g.dirty...)
	}
	if g.stamps.sparse() {
		g.stamps.compact(g.eachSid)
	}
	g.checkAfter("collect")
	return freed
}

// eachSid calls fn on every stamp field of the graph (for compaction).
// It costs a walk over every version.
func (g *Graph) eachSid(fn func(*sid)) {
	props := func(ps []prop) {
		for i := range ps {
			fn(&ps[i].created)
			fn(&ps[i].deleted)
		}
	}
	for i := range g.verts.len() {
		v := g.verts.at(uint32(i))
		fn(&v.created)
		fn(&v.deleted)
		for j := range v.writes {
			fn(&v.writes[j])
		}
		for j := range v.edges {
			fn(&v.edges[j].created)
			fn(&v.edges[j].deleted)
		}
		props(v.props)
		if x := v.x; x != nil {
			for j := range x.older {
				fn(&x.older[j].created)
				fn(&x.older[j].deleted)
			}
			for j := range x.aliases {
				fn(&x.aliases[j].created)
				fn(&x.aliases[j].deleted)
			}
			for _, ps := range x.eprops {
				props(ps)
			}
		}
	}
	for i := range g.handles.ents {
		fn(&g.handles.ents[i].tomb)
	}
}

// collectVertex collects one vertex and reports whether it still has work
// for a later collection (then it stays dirty).
func (g *Graph) collectVertex(slot uint32, m *gcMemo) (freed int, pending bool) {
	v := g.verts.at(slot)
	v.props, freed, pending = g.collectProps(v.props, m)
	if x := v.x; x != nil {
		f, p := g.collectExtra(x, m)
		freed, pending = freed+f, pending || p
	}
	f, p := g.collectEdges(v, m)
	freed, pending = freed+f, pending || p
	if m.atOrBefore(v.created) {
		g.stamps.unref(v.created)
		v.created = 0
	}
	g.truncateLog(v, m)
	if m.before(v.deleted) && v.empty() {
		g.removeVertex(slot, v)
		return freed + 1, false
	}
	v.dirty = pending || v.created != 0 || v.deleted != 0 || len(v.writes) > 1
	return freed, v.dirty
}

// empty reports a vertex with no versions left besides its latest lifespan.
func (v *vertex) empty() bool {
	if len(v.edges) > 0 || len(v.props) > 0 {
		return false
	}
	x := v.x
	return x == nil || len(x.older) == 0 && len(x.aliases) == 0 && len(x.eprops) == len(x.efree)
}

// collectProps drops versions deleted before the watermark and flattens old
// creation stamps, in place.
func (g *Graph) collectProps(ps []prop, m *gcMemo) (out []prop, freed int, pending bool) {
	n := 0
	for i := range ps {
		p := ps[i]
		if m.before(p.deleted) {
			g.stamps.unref(p.created)
			g.stamps.unref(p.deleted)
			g.keys.ents[p.key].refs--
			g.keys.release(p.key)
			freed++
			continue
		}
		if m.atOrBefore(p.created) {
			g.stamps.unref(p.created)
			p.created = 0
		}
		pending = pending || p.created != 0 || p.deleted != 0
		ps[n] = p
		n++
	}
	clear(ps[n:]) // release dropped values
	g.n.versions -= freed
	if n == 0 {
		return nil, freed, pending
	}
	return shrink(ps[:n]), freed, pending
}

// shrink reallocates a slice that uses less than half its capacity.
func shrink[T any](s []T) []T {
	if cap(s) > 8 && len(s) < cap(s)/2 {
		return append(make([]T, 0, len(s)), s...)
	}
	return s
}

func (g *Graph) collectExtra(x *extra, m *gcMemo) (freed int, pending bool) {
	older := x.older[:0]
	for _, s := range x.older {
		if m.before(s.deleted) {
			g.stamps.unref(s.created)
			g.stamps.unref(s.deleted)
			freed++
			continue
		}
		if m.atOrBefore(s.created) {
			g.stamps.unref(s.created)
			s.created = 0
		}
		older = append(older, s)
	}
	x.older = shrinkOrNil(older)
	as := x.aliases[:0]
	for _, a := range x.aliases {
		if m.before(a.deleted) {
			g.stamps.unref(a.created)
			g.stamps.unref(a.deleted)
			freed++
			continue
		}
		if m.atOrBefore(a.created) {
			g.stamps.unref(a.created)
			a.created = 0
		}
		pending = pending || a.created != 0 || a.deleted != 0
		as = append(as, a)
	}
	clear(x.aliases[len(as):])
	x.aliases = shrinkOrNil(as)
	g.n.versions -= freed
	for i, ps := range x.eprops {
		if ps == nil {
			continue
		}
		out, f, p := g.collectProps(ps, m)
		x.eprops[i] = out
		freed, pending = freed+f, pending || p
	}
	return freed, pending || len(x.older) > 0
}

func shrinkOrNil[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return shrink(s)
}

// collectEdges drops edges deleted before the watermark (compacting the edge
// slice and, into a fresh array, the handle arena) and advances the creation
// cursor v.flat.
func (g *Graph) collectEdges(v *vertex, m *gcMemo) (freed int, pending bool) {
	if v.dead > 0 {
		freed = g.dropDeadEdges(v, m)
	}
	for v.flat < uint32(len(v.edges)) {
		e := &v.edges[v.flat]
		if e.created != 0 {
			if !m.atOrBefore(e.created) {
				break
			}
			g.stamps.unref(e.created)
			e.created = 0
		}
		v.flat++
	}
	return freed, v.flat < uint32(len(v.edges)) || v.dead > 0
}

func (g *Graph) dropDeadEdges(v *vertex, m *gcMemo) (freed int) {
	bytes, drop := 0, 0
	for i := range v.edges {
		if e := &v.edges[i]; m.before(e.deleted) {
			drop++
		} else {
			bytes += int(e.n)
		}
	}
	if drop == 0 {
		return 0
	}
	names := make([]byte, 0, bytes) // fresh: strings handed out keep the old arena
	n, flat := 0, uint32(0)
	for i := range v.edges {
		e := v.edges[i]
		if m.before(e.deleted) {
			freed += 1 + g.dropEdge(v, &e)
			continue
		}
		if uint32(i) < v.flat {
			flat++
		}
		names = append(names, v.names[e.off:e.off+e.n]...)
		e.off = uint32(len(names)) - e.n
		v.edges[n] = e
		n++
	}
	clear(v.edges[n:])
	v.edges = shrinkOrNil(v.edges[:n])
	v.names = names
	if len(names) == 0 {
		v.names = nil
	}
	v.flat = flat
	v.rebuildIndex(g.cfg.EdgeIndexMin)
	g.n.versions -= drop // their properties were counted off by dropEdge
	return freed
}

// dropEdge releases everything a collected edge names and returns the number
// of property versions dropped with it.
func (g *Graph) dropEdge(v *vertex, e *edge) (props int) {
	g.stamps.unref(e.created)
	g.stamps.unref(e.deleted)
	v.dead--
	g.handles.ents[e.dst].refs--
	g.handles.release(e.dst)
	if e.props == 0 {
		return 0
	}
	x := v.x
	props = len(x.eprops[e.props-1])
	for _, p := range x.eprops[e.props-1] {
		g.stamps.unref(p.created)
		g.stamps.unref(p.deleted)
		g.keys.ents[p.key].refs--
		g.keys.release(p.key)
		g.n.versions--
	}
	x.eprops[e.props-1] = nil
	x.efree = append(x.efree, e.props-1)
	if len(x.efree) == len(x.eprops) {
		x.eprops, x.efree = nil, nil
	}
	return props
}

// truncateLog keeps the newest write before the watermark and all after it.
func (g *Graph) truncateLog(v *vertex, m *gcMemo) {
	k := -1
	for i := len(v.writes) - 1; i > 0; i-- {
		if m.before(v.writes[i]) {
			k = i
			break
		}
	}
	if k <= 0 {
		return
	}
	for _, s := range v.writes[:k] {
		g.stamps.unref(s)
	}
	v.writes = shrink(append(v.writes[:0], v.writes[k:]...))
}

// removeVertex turns a fully collected vertex into a tombstone.
func (g *Graph) removeVertex(slot uint32, v *vertex) {
	g.stamps.unref(v.created)
	g.stamps.unref(v.deleted)
	last := v.writes[len(v.writes)-1]
	for _, s := range v.writes[:len(v.writes)-1] {
		g.stamps.unref(s)
	}
	e := &g.handles.ents[v.hid]
	e.slot, e.tomb = 0, last // the log's reference moves to the tombstone
	*v = vertex{}
	g.free = append(g.free, slot)
	g.n.versions--
	g.n.tombstones++
}
