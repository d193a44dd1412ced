package graph

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/weft-db/weft/internal/invariants"
	"github.com/weft-db/weft/internal/value"
	"github.com/weft-db/weft/internal/vclock"
)

// Errors. Every write that returns one changed nothing.
var (
	ErrInvalid       = errors.New("graph: invalid argument")
	ErrLimit         = errors.New("graph: limit exceeded")
	ErrVertexExists  = errors.New("graph: vertex exists")
	ErrVertexMissing = errors.New("graph: vertex not found")
	ErrVertexDeleted = errors.New("graph: vertex deleted")
	ErrEdgeExists    = errors.New("graph: edge exists")
	ErrEdgeMissing   = errors.New("graph: edge not found")
	ErrPropMissing   = errors.New("graph: property not found")
	ErrAliasExists   = errors.New("graph: alias exists")
	ErrAliasMissing  = errors.New("graph: alias not found")
	// ErrStampOrder: the write's stamp is before (by vector clock) the last
	// write applied to the same vertex or alias; the caller broke apply order.
	ErrStampOrder = errors.New("graph: write stamp precedes the last write")
)

// Graph is one partition's multi-version property graph. It is not safe for
// concurrent use, except that reads (View, LastWrite, Vertices, Stats and the
// views they return) may run concurrently with each other while no write or
// Collect runs.
type Graph struct {
	checks  uint64 // invariant checks requested (-tags invariants)
	cfg     Config
	stamps  stampTable
	handles names // vertex handles: local vertices, tombstones, edge destinations
	keys    names // property keys
	verts   vertexStore
	free    []uint32 // free vertex slots
	dirty   []uint32 // slots with work for Collect (unset when KeepHistory)
	low     vclock.Stamp
	n       counts
}

// counts are maintained by every write and Collect; CheckInvariants recounts.
type counts struct {
	vertices   int // vertices whose latest lifespan is live
	edges      int // out-edge versions not deleted
	versions   int // stored versions: lifespans, edges, property values, aliases
	tombstones int // collected vertices remembered only for LastWrite
}

// vertex is one handle's record on this partition: its lifespans and every
// version of its properties, aliases and out-edges, in apply order. Its size
// matters (one per vertex): rare parts live in x.
type vertex struct {
	hid     uint32 // handle id
	created sid    // latest lifespan
	deleted sid
	flat    uint32 // edges[:flat] all have created == 0
	dead    uint32 // edge versions with deleted != 0
	dirty   bool
	edges   []edge
	names   []byte // edge handle arena: append-only, so strings into it never change
	props   []prop
	writes  []sid // stamps of writes touching the vertex, apply order, no adjacent repeats
	x       *extra
}

type extra struct {
	older   []span     // earlier lifespans, all deleted
	aliases []aliasVer // alias versions, apply order
	index   []uint32   // open addressing on edge handle: edge position + 1, 0 empty
	eprops  [][]prop   // edge property lists; edge.props = slot + 1
	efree   []uint32   // free eprops slots
}

type span struct{ created, deleted sid }

// edge is 24 bytes: its handle is a range of the vertex's arena, its
// destination an interned handle id.
type edge struct {
	off, n  uint32
	dst     uint32
	created sid
	deleted sid
	props   uint32 // eprops slot + 1, 0 = no properties ever set
}

type prop struct {
	key     uint32
	created sid
	deleted sid
	val     value.Value
}

type aliasVer struct {
	name             string
	created, deleted sid
}

// New returns an empty graph. It panics on an invalid Config (a programmer
// error); call cfg.Validate first to get an error instead.
func New(cfg Config) *Graph {
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	return &Graph{cfg: cfg, stamps: newStampTable(), handles: newNames(), keys: newNames()}
}

// Config returns the graph's configuration.
func (g *Graph) Config() Config { return g.cfg }

func assert(ok bool, format string, args ...any) {
	if !ok {
		panic(fmt.Sprintf("graph: assertion failed: "+format, args...))
	}
}

// checkAfter verifies the graph after a mutation in invariants builds.
func (g *Graph) checkAfter(op string) {
	if !invariants.On {
		return
	}
	// A full check costs at least the graph's size: every operation is
	// checked while the graph is small (every test's case), then one in
	// size/256 so big workloads under -tags invariants stay near linear.
	g.checks++
	if n := g.n.vertices / 256; n > 1 && g.checks%uint64(n) != 0 {
		return
	}
	if err := g.CheckInvariants(); err != nil {
		panic("graph: invariant broken after " + op + ": " + err.Error())
	}
}

// vertexChunk is the number of vertex records per chunk (128 KiB).
const vertexChunk = 1024

// vertexStore holds vertex records in fixed-size chunks: growing never copies
// records (nor doubles their memory for a moment), and a record's address is
// stable for as long as its slot is in use.
type vertexStore struct {
	chunks [][]vertex
	n      int
}

func (s *vertexStore) len() int { return s.n }

func (s *vertexStore) at(slot uint32) *vertex { return &s.chunks[slot/vertexChunk][slot%vertexChunk] }

// add appends an empty slot.
func (s *vertexStore) add() uint32 {
	if s.n == len(s.chunks)*vertexChunk {
		s.chunks = append(s.chunks, make([]vertex, vertexChunk))
	}
	s.n++
	return uint32(s.n - 1)
}

func (v *vertex) ext() *extra {
	if v.x == nil {
		v.x = &extra{}
	}
	return v.x
}

func (v *vertex) live() bool { return v.deleted == 0 }

func (v *vertex) edgeName(e *edge) string {
	return unsafe.String(&v.names[e.off], int(e.n))
}

func (v *vertex) liveEdges() int { return len(v.edges) - int(v.dead) }

func (v *vertex) aliases() []aliasVer {
	if v.x == nil {
		return nil
	}
	return v.x.aliases
}

// edgeProps returns the property list of e (nil when it never had any).
func (v *vertex) edgeProps(e *edge) []prop {
	if e.props == 0 {
		return nil
	}
	return v.x.eprops[e.props-1]
}

// record returns the slot and vertex record of handle h, if this partition
// holds one.
func (g *Graph) record(h string) (uint32, *vertex, bool) {
	hid, ok := g.handles.lookup(h)
	if !ok {
		return 0, nil, false
	}
	s := g.handles.ents[hid].slot
	if s == 0 {
		return 0, nil, false
	}
	return s - 1, g.verts.at(s - 1), true
}

// Stats describes a graph's size.
type Stats struct {
	Vertices   int   // vertices live at the latest stamp
	Edges      int   // out-edges live at the latest stamp
	Versions   int   // stored versions (lifespans, edges, property values, aliases), dead ones included
	Tombstones int   // collected vertices remembered only for LastWrite
	Handles    int   // interned vertex handles (local, tombstoned, or edge destinations)
	Stamps     int   // interned stamps
	Bytes      int64 // approximate heap bytes held (capacities, not Go runtime overhead)
}

// Stats returns the graph's counters; Bytes costs a walk over every vertex.
func (g *Graph) Stats() Stats {
	st := g.Counts()
	st.Bytes = g.bytes()
	return st
}

// Counts is Stats without Bytes: O(1), for callers that poll often (Bytes
// walks every vertex).
func (g *Graph) Counts() Stats {
	return Stats{
		Vertices: g.n.vertices, Edges: g.n.edges, Versions: g.n.versions, Tombstones: g.n.tombstones,
		Handles: g.handles.len(), Stamps: g.stamps.live,
	}
}

// Approximate sizes (amd64) for Stats.Bytes.
const (
	sizeVertex     = int64(unsafe.Sizeof(vertex{}))
	sizeExtra      = int64(unsafe.Sizeof(extra{}))
	sizeEdge       = int64(unsafe.Sizeof(edge{}))
	sizeProp       = int64(unsafe.Sizeof(prop{}))
	sizeAlias      = int64(unsafe.Sizeof(aliasVer{}))
	sizeName       = int64(unsafe.Sizeof(nameEntry{}))
	sizeStamp      = int64(unsafe.Sizeof(stampEntry{}))
	sizeMapEntry   = 48 // swiss-table slot plus control byte and slack, per key
	sizeSliceSlots = 24
)

func (g *Graph) bytes() int64 {
	b := int64(len(g.verts.chunks)*vertexChunk)*sizeVertex + int64(cap(g.free)+cap(g.dirty))*4
	for i := range g.verts.len() {
		v := g.verts.at(uint32(i))
		b += int64(cap(v.edges))*sizeEdge + int64(cap(v.names)) + int64(cap(v.props))*sizeProp + int64(cap(v.writes))*4
		if x := v.x; x != nil {
			b += sizeExtra + int64(cap(x.older))*8 + int64(cap(x.aliases))*sizeAlias + int64(cap(x.index))*4
			b += int64(cap(x.eprops))*sizeSliceSlots + int64(cap(x.efree))*4
			for _, ps := range x.eprops {
				b += int64(cap(ps)) * sizeProp
			}
			for _, a := range x.aliases {
				b += int64(len(a.name))
			}
		}
	}
	for _, n := range []*names{&g.handles, &g.keys} {
		b += int64(cap(n.ents))*sizeName + int64(len(n.ids.slots))*8 + int64(cap(n.free))*4
		for i := range n.ents {
			b += int64(len(n.ents[i].name))
		}
	}
	b += int64(cap(g.stamps.ents))*sizeStamp + int64(len(g.stamps.byHash))*sizeMapEntry
	for i := range g.stamps.ents {
		b += int64(cap(g.stamps.ents[i].st.Clock.Counters)) * 8
	}
	return b
}
