package graph

import (
	"errors"
	"fmt"
)

// CheckInvariants verifies the whole structure: reference counts of stamps,
// handles and keys (recounted from scratch), the name and stamp indexes,
// per-vertex rules (one live version per edge handle, property key and alias;
// a deleted vertex has nothing live; limits; the edge index; the creation
// cursor; the write log), the dirty list and the counters. It costs time
// linear in the graph; tests and invariants builds call it.
func (g *Graph) CheckInvariants() error {
	c := newRecount(g)
	var live counts
	freeSlots := map[uint32]bool{}
	for _, s := range g.free {
		if freeSlots[s] || int(s) >= g.verts.len() || g.verts.at(s).hid != 0 {
			return fmt.Errorf("free slot %d: duplicate, out of range or in use", s)
		}
		freeSlots[s] = true
	}
	dirty := map[uint32]bool{}
	for _, s := range g.dirty {
		if dirty[s] || int(s) >= g.verts.len() || !g.verts.at(s).dirty {
			return fmt.Errorf("dirty slot %d: duplicate, out of range or not flagged", s)
		}
		dirty[s] = true
	}
	for i := range g.verts.len() {
		v := g.verts.at(uint32(i))
		if v.hid == 0 {
			if !freeSlots[uint32(i)] {
				return fmt.Errorf("slot %d: empty but not free", i)
			}
			continue
		}
		if err := g.checkVertex(uint32(i), v, c, &live); err != nil {
			return fmt.Errorf("vertex %q (slot %d): %w", g.handles.ents[v.hid].name, i, err)
		}
		if v.dirty != dirty[uint32(i)] {
			return fmt.Errorf("vertex %q: dirty flag %v but listed %v", g.handles.ents[v.hid].name, v.dirty, dirty[uint32(i)])
		}
	}
	for id := range g.handles.ents {
		if t := g.handles.ents[id].tomb; t != 0 {
			c.stamps[t]++
			live.tombstones++
		}
	}
	if live != g.n {
		return fmt.Errorf("counts %+v, recounted %+v", g.n, live)
	}
	if err := checkNames("handle", &g.handles, c.handles); err != nil {
		return err
	}
	if err := checkNames("key", &g.keys, c.keys); err != nil {
		return err
	}
	return checkStamps(&g.stamps, c.stamps)
}

type recount struct {
	stamps  []uint32
	handles []uint32
	keys    []uint32
}

func newRecount(g *Graph) *recount {
	return &recount{
		stamps:  make([]uint32, len(g.stamps.ents)),
		handles: make([]uint32, len(g.handles.ents)),
		keys:    make([]uint32, len(g.keys.ents)),
	}
}

func (c *recount) stamp(ids ...sid) error {
	for _, id := range ids {
		if int(id) >= len(c.stamps) {
			return fmt.Errorf("stamp id %d out of range", id)
		}
		if id != 0 {
			c.stamps[id]++
		}
	}
	return nil
}

func (g *Graph) checkVertex(slot uint32, v *vertex, c *recount, n *counts) error {
	if int(v.hid) >= len(g.handles.ents) || g.handles.ents[v.hid].slot != slot+1 {
		return errors.New("handle entry does not point back")
	}
	if err := c.stamp(v.created, v.deleted); err != nil {
		return err
	}
	n.versions++
	if v.live() {
		n.vertices++
	}
	if err := g.checkLog(v, c); err != nil {
		return err
	}
	if err := g.checkEdges(v, c, n); err != nil {
		return err
	}
	if err := g.checkProps(v.props, v.live(), c, n); err != nil {
		return err
	}
	if err := g.checkExtra(v, c, n); err != nil {
		return err
	}
	pending := v.created != 0 || v.deleted != 0 || len(v.writes) > 1 || v.dead > 0 || int(v.flat) < len(v.edges) || hasStamps(v)
	if pending && !v.dirty && !g.cfg.KeepHistory {
		return errors.New("has work for Collect but is not dirty")
	}
	return nil
}

func hasStamps(v *vertex) bool {
	stamped := func(ps []prop) bool {
		for _, p := range ps {
			if p.created != 0 || p.deleted != 0 {
				return true
			}
		}
		return false
	}
	if stamped(v.props) {
		return true
	}
	if x := v.x; x != nil {
		if len(x.older) > 0 {
			return true
		}
		for _, a := range x.aliases {
			if a.created != 0 || a.deleted != 0 {
				return true
			}
		}
		for _, ps := range x.eprops {
			if stamped(ps) {
				return true
			}
		}
	}
	return false
}

func (g *Graph) checkLog(v *vertex, c *recount) error {
	if len(v.writes) == 0 {
		return errors.New("empty write log")
	}
	for i, s := range v.writes {
		if s == 0 || (i > 0 && v.writes[i-1] == s) {
			return fmt.Errorf("write log %v: zero or repeated entry", v.writes)
		}
		if err := c.stamp(s); err != nil {
			return err
		}
	}
	return nil
}

func (g *Graph) checkEdges(v *vertex, c *recount, n *counts) error {
	dead, live := 0, map[string]bool{}
	for i := range v.edges {
		e := &v.edges[i]
		if uint64(e.off)+uint64(e.n) > uint64(len(v.names)) || e.n == 0 {
			return fmt.Errorf("edge %d: name range %d+%d outside arena of %d", i, e.off, e.n, len(v.names))
		}
		if int(e.dst) >= len(c.handles) || e.dst == 0 {
			return fmt.Errorf("edge %d: destination id %d", i, e.dst)
		}
		c.handles[e.dst]++
		if err := c.stamp(e.created, e.deleted); err != nil {
			return err
		}
		if i < int(v.flat) && e.created != 0 {
			return fmt.Errorf("edge %d below cursor %d has a creation stamp", i, v.flat)
		}
		n.versions++
		name := v.edgeName(e)
		if e.deleted != 0 {
			dead++
		} else {
			if live[name] {
				return fmt.Errorf("edge %q live twice", name)
			}
			if !v.live() {
				return fmt.Errorf("edge %q live on a deleted vertex", name)
			}
			live[name] = true
			n.edges++
		}
		found := false
		v.versionsOf(name, func(j int) bool { found = j == i; return !found })
		if !found {
			return fmt.Errorf("edge %d (%q) not found by handle", i, name)
		}
		if e.props != 0 && (v.x == nil || int(e.props) > len(v.x.eprops)) {
			return fmt.Errorf("edge %q: properties slot %d out of range", name, e.props)
		}
	}
	if dead != int(v.dead) || int(v.flat) > len(v.edges) || len(live) > g.cfg.EdgesPerVertexMax {
		return fmt.Errorf("dead %d (recounted %d), cursor %d of %d edges, %d live", v.dead, dead, v.flat, len(v.edges), len(live))
	}
	return checkIndex(v, g.cfg.EdgeIndexMin)
}

func checkIndex(v *vertex, min int) error {
	var idx []uint32
	if v.x != nil {
		idx = v.x.index
	}
	if (len(v.edges) >= min) != (idx != nil) {
		return fmt.Errorf("%d edge versions, index of %d (threshold %d)", len(v.edges), len(idx), min)
	}
	if idx == nil {
		return nil
	}
	used := 0
	for _, p := range idx {
		if p != 0 {
			used++
			if int(p) > len(v.edges) {
				return fmt.Errorf("index entry %d beyond %d edges", p, len(v.edges))
			}
		}
	}
	if used != len(v.edges) || 4*used > 3*len(idx) || len(idx)&(len(idx)-1) != 0 {
		return fmt.Errorf("index of %d slots holds %d entries for %d edges", len(idx), used, len(v.edges))
	}
	return nil
}

// checkProps: one live version per key, none on a deleted element, limits.
func (g *Graph) checkProps(ps []prop, elementLive bool, c *recount, n *counts) error {
	live := map[uint32]bool{}
	for _, p := range ps {
		if int(p.key) >= len(c.keys) || p.key == 0 {
			return fmt.Errorf("property key id %d", p.key)
		}
		c.keys[p.key]++
		if err := c.stamp(p.created, p.deleted); err != nil {
			return err
		}
		if p.val.IsNull() {
			return fmt.Errorf("property %q holds null", g.keys.ents[p.key].name)
		}
		n.versions++
		if p.deleted == 0 {
			if live[p.key] || !elementLive {
				return fmt.Errorf("property %q: live twice or on a deleted element", g.keys.ents[p.key].name)
			}
			live[p.key] = true
		}
	}
	if len(live) > g.cfg.PropsPerElementMax {
		return fmt.Errorf("%d live properties", len(live))
	}
	return nil
}

func (g *Graph) checkExtra(v *vertex, c *recount, n *counts) error {
	x := v.x
	if x == nil {
		return nil
	}
	for _, s := range x.older {
		if s.deleted == 0 {
			return errors.New("an earlier lifespan is not deleted")
		}
		if err := c.stamp(s.created, s.deleted); err != nil {
			return err
		}
		n.versions++
	}
	live := map[string]bool{}
	for _, a := range x.aliases {
		if err := c.stamp(a.created, a.deleted); err != nil {
			return err
		}
		n.versions++
		if a.deleted == 0 {
			if live[a.name] || !v.live() {
				return fmt.Errorf("alias %q: live twice or on a deleted vertex", a.name)
			}
			live[a.name] = true
		}
	}
	if len(live) > g.cfg.AliasesPerVertexMax {
		return fmt.Errorf("%d live aliases", len(live))
	}
	return g.checkEdgeProps(v, c, n)
}

func (g *Graph) checkEdgeProps(v *vertex, c *recount, n *counts) error {
	x := v.x
	owner := make([]int, len(x.eprops))
	for i := range v.edges {
		if p := v.edges[i].props; p != 0 {
			if owner[p-1] != 0 {
				return fmt.Errorf("properties slot %d shared by two edges", p-1)
			}
			owner[p-1] = i + 1
			// An edge's properties are reachable only through that edge version,
			// so deleting the edge does not tombstone them.
			if err := g.checkProps(x.eprops[p-1], true, c, n); err != nil {
				return fmt.Errorf("edge %q: %w", v.edgeName(&v.edges[i]), err)
			}
		}
	}
	free := 0
	for _, f := range x.efree {
		if int(f) >= len(x.eprops) || owner[f] != 0 || x.eprops[f] != nil {
			return fmt.Errorf("free properties slot %d in use", f)
		}
		owner[f] = -1
		free++
	}
	for i, o := range owner {
		if o == 0 && x.eprops[i] == nil {
			return fmt.Errorf("properties slot %d neither owned nor free", i)
		}
	}
	return nil
}

func checkNames(what string, n *names, refs []uint32) error {
	if len(n.ents[0].name) != 0 || n.ents[0].refs != 0 {
		return fmt.Errorf("%s entry 0 in use", what)
	}
	free := map[uint32]bool{}
	for _, id := range n.free {
		if free[id] || !n.ents[id].unused() || n.ents[id].name != "" {
			return fmt.Errorf("free %s id %d: duplicate or in use", what, id)
		}
		free[id] = true
	}
	inUse := 0
	for id := 1; id < len(n.ents); id++ {
		e := &n.ents[id]
		if free[uint32(id)] {
			continue
		}
		inUse++
		if e.refs != refs[id] {
			return fmt.Errorf("%s %q: %d references, recounted %d", what, e.name, e.refs, refs[id])
		}
		if e.unused() {
			return fmt.Errorf("%s %q: unused but not freed", what, e.name)
		}
		if e.slot != 0 && e.tomb != 0 {
			return fmt.Errorf("%s %q: both a vertex and a tombstone", what, e.name)
		}
		if got, ok := n.lookup(e.name); !ok || got != uint32(id) {
			return fmt.Errorf("%s %q: index says %d, entry is %d", what, e.name, got, id)
		}
	}
	if inUse != n.ids.n {
		return fmt.Errorf("%d %s entries in use, index holds %d", inUse, what, n.ids.n)
	}
	held := 0
	n.ids.ids(func(uint32) { held++ })
	if held != n.ids.n {
		return fmt.Errorf("%s index: %d words, count says %d", what, held, n.ids.n)
	}
	return nil
}

func checkStamps(t *stampTable, refs []uint32) error {
	free := map[sid]bool{}
	for _, id := range t.free {
		if free[id] || id == 0 || t.ents[id].refs != 0 {
			return fmt.Errorf("free stamp %d: duplicate or in use", id)
		}
		free[id] = true
	}
	live := 0
	for id := 1; id < len(t.ents); id++ {
		if free[sid(id)] {
			continue
		}
		live++
		e := &t.ents[id]
		if e.refs != refs[id] || e.refs == 0 {
			return fmt.Errorf("stamp %d (%s): %d references, recounted %d", id, e.st, e.refs, refs[id])
		}
	}
	if live != t.live {
		return fmt.Errorf("%d live stamps, counter says %d", live, t.live)
	}
	for h, id := range t.byHash {
		if int(id) >= len(t.ents) || free[id] || stampHash(t.ents[id].st) != h {
			return fmt.Errorf("stamp index entry %x → %d is stale", h, id)
		}
	}
	return nil
}
