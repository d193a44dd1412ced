package graph

import "strings"

// nameEntry is one interned string: a vertex handle (local vertex, edge
// destination, or tombstone) or a property key.
type nameEntry struct {
	name string
	refs uint32 // handles: edge versions naming it as destination; keys: property versions
	slot uint32 // handles: vertex slot + 1, or 0 when no vertex record is held
	tomb sid    // handles: last write of a collected vertex (see Graph.LastWrite), or 0
}

func (e *nameEntry) unused() bool { return e.refs == 0 && e.slot == 0 && e.tomb == 0 }

// names interns strings to dense 32-bit ids, so edges name their destination
// in 4 bytes and property versions their key in 4 bytes.
type names struct {
	ids  nameIndex
	ents []nameEntry // ents[0] unused
	free []uint32
}

func newNames() names { return names{ids: newNameIndex(), ents: make([]nameEntry, 1)} }

func (n *names) lookup(s string) (uint32, bool) { return n.ids.get(n.ents, s) }

// intern returns the id of s, adding an unused entry when s is new. The
// string is cloned so the graph never pins a caller's larger buffer.
func (n *names) intern(s string) uint32 {
	if id, ok := n.lookup(s); ok {
		return id
	}
	e := nameEntry{name: strings.Clone(s)}
	var id uint32
	if k := len(n.free); k > 0 {
		id = n.free[k-1]
		n.free = n.free[:k-1]
		n.ents[id] = e
	} else {
		assert(len(n.ents) < 1<<32-1, "name table full")
		id = uint32(len(n.ents))
		n.ents = append(n.ents, e)
	}
	n.ids.put(e.name, id)
	return id
}

// release frees id once nothing uses it.
func (n *names) release(id uint32) {
	e := &n.ents[id]
	if !e.unused() {
		return
	}
	n.ids.del(e.name, id)
	*e = nameEntry{}
	n.free = append(n.free, id)
}

func (n *names) len() int { return n.ids.n }
