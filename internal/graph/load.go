package graph

import (
	"fmt"
	"strings"

	"github.com/weft-db/weft/internal/value"
	"github.com/weft-db/weft/internal/vclock"
)

// Prop is one property for Load.
type Prop struct {
	Key string
	Val value.Value
}

// EdgeRecord is one out-edge for Load.
type EdgeRecord struct {
	Handle string
	Dst    string
	Props  []Prop
}

// VertexRecord is one vertex as the backing store holds it, for Load.
type VertexRecord struct {
	Handle string
	// Deleted loads a tombstone: the store remembers a deleted vertex's last
	// write, and LastWrite must answer it (optimistic validation compares the
	// two). A tombstone has no props, aliases or edges.
	Deleted bool
	// LastWrite is the stamp of the vertex's last committed write; zero means
	// W. It must not be after W.
	LastWrite vclock.Stamp
	Props     []Prop
	Aliases   []string
	Edges     []EdgeRecord
}

// Load adds a whole vertex at W: the bulk path for rebuilding a partition
// from the store. Every element is created at W, and LastWrite answers
// rec.LastWrite. It is much cheaper than the equivalent writes: slices are
// allocated at their exact size, the edge index is built once, and one write
// is logged. The handle must be new to this partition (not a vertex or
// tombstone; being an edge destination is fine). Nothing changes on error.
func (g *Graph) Load(rec *VertexRecord, w vclock.Stamp) error {
	if err := g.checkLoad(rec, w); err != nil {
		return fmt.Errorf("load vertex %q: %w", rec.Handle, err)
	}
	lw := rec.LastWrite
	if lw.IsZero() {
		lw = w
	}
	if rec.Deleted {
		e := &g.handles.ents[g.handles.intern(rec.Handle)]
		g.setStamp(&e.tomb, g.stamps.intern(lw))
		g.n.tombstones++
		g.checkAfter("load")
		return nil
	}
	s := g.stamps.intern(w)
	last := g.stamps.intern(lw)
	slot, v := g.vertexFor(rec.Handle)
	v.edges = make([]edge, len(rec.Edges))
	v.names = make([]byte, 0, edgeNameBytes(rec.Edges))
	v.props = g.loadProps(rec.Props, s)
	for i := range rec.Edges {
		er := &rec.Edges[i]
		d := g.handles.intern(er.Dst)
		g.handles.ents[d].refs++
		v.edges[i] = edge{off: uint32(len(v.names)), n: uint32(len(er.Handle)), dst: d}
		v.names = append(v.names, er.Handle...)
		g.setStamp(&v.edges[i].created, s)
		if len(er.Props) > 0 {
			x := v.ext()
			x.eprops = append(x.eprops, g.loadProps(er.Props, s))
			v.edges[i].props = uint32(len(x.eprops))
		}
	}
	if len(v.edges) >= g.cfg.EdgeIndexMin {
		v.ext().index = buildIndex(v, 4)
	}
	if len(rec.Aliases) > 0 {
		x := v.ext()
		x.aliases = make([]aliasVer, len(rec.Aliases))
		for i, a := range rec.Aliases {
			x.aliases[i] = aliasVer{name: strings.Clone(a)}
			g.setStamp(&x.aliases[i].created, s)
		}
	}
	g.setStamp(&v.created, s)
	g.touch(slot, v, last)
	g.n.vertices++
	g.n.edges += len(rec.Edges)
	g.n.versions += 1 + len(rec.Edges) + len(rec.Props) + len(rec.Aliases) + edgePropCount(rec.Edges)
	g.checkAfter("load")
	return nil
}

func edgeNameBytes(es []EdgeRecord) int {
	n := 0
	for i := range es {
		n += len(es[i].Handle)
	}
	return n
}

func edgePropCount(es []EdgeRecord) int {
	n := 0
	for i := range es {
		n += len(es[i].Props)
	}
	return n
}

func (g *Graph) loadProps(in []Prop, s sid) []prop {
	if len(in) == 0 {
		return nil
	}
	ps := make([]prop, len(in))
	for i, p := range in {
		kid := g.keys.intern(p.Key)
		g.keys.ents[kid].refs++
		ps[i] = prop{key: kid, val: p.Val}
		g.setStamp(&ps[i].created, s)
	}
	return ps
}

// checkLoad validates a record without changing anything.
func (g *Graph) checkLoad(rec *VertexRecord, w vclock.Stamp) error {
	if err := checkName("vertex handle", rec.Handle, g.cfg.HandleLenMax); err != nil {
		return err
	}
	if err := checkStamp(w); err != nil {
		return err
	}
	if vclock.CompareStamps(rec.LastWrite, w) == vclock.After && !rec.LastWrite.IsZero() {
		return fmt.Errorf("%w: last write %s after load stamp %s", ErrInvalid, rec.LastWrite, w)
	}
	if hid, ok := g.handles.lookup(rec.Handle); ok {
		if e := g.handles.ents[hid]; e.slot != 0 || e.tomb != 0 {
			return ErrVertexExists
		}
	}
	if rec.Deleted {
		if len(rec.Props)+len(rec.Aliases)+len(rec.Edges) > 0 {
			return fmt.Errorf("%w: a deleted vertex has no properties, aliases or edges", ErrInvalid)
		}
		return nil
	}
	if err := g.checkLoadProps(rec.Props); err != nil {
		return err
	}
	if len(rec.Aliases) > g.cfg.AliasesPerVertexMax {
		return fmt.Errorf("%w: %d aliases", ErrLimit, len(rec.Aliases))
	}
	for i, a := range rec.Aliases {
		if err := checkName("alias", a, g.cfg.HandleLenMax); err != nil {
			return err
		}
		for _, b := range rec.Aliases[:i] {
			if a == b {
				return fmt.Errorf("%w: %q", ErrAliasExists, a)
			}
		}
	}
	return g.checkLoadEdges(rec.Edges)
}

func (g *Graph) checkLoadProps(ps []Prop) error {
	if len(ps) > g.cfg.PropsPerElementMax {
		return fmt.Errorf("%w: %d properties", ErrLimit, len(ps))
	}
	for i, p := range ps {
		if err := checkName("property key", p.Key, g.cfg.KeyLenMax); err != nil {
			return err
		}
		if err := checkValue(p.Key, p.Val); err != nil {
			return err
		}
		for _, q := range ps[:i] { // bounded by PropsPerElementMax
			if q.Key == p.Key {
				return fmt.Errorf("%w: property %q given twice", ErrInvalid, p.Key)
			}
		}
	}
	return nil
}

// checkLoadEdges checks names, limits and duplicate handles (with a scratch
// index on a scratch arena: no map per vertex).
func (g *Graph) checkLoadEdges(es []EdgeRecord) error {
	if len(es) > g.cfg.EdgesPerVertexMax {
		return fmt.Errorf("%w: %d out-edges", ErrLimit, len(es))
	}
	for i := range es {
		if err := checkName("edge handle", es[i].Handle, g.cfg.HandleLenMax); err != nil {
			return err
		}
		if err := checkName("destination handle", es[i].Dst, g.cfg.HandleLenMax); err != nil {
			return err
		}
		if err := g.checkLoadProps(es[i].Props); err != nil {
			return fmt.Errorf("edge %q: %w", es[i].Handle, err)
		}
	}
	if len(es) < 64 {
		for i := range es {
			for j := range i {
				if es[i].Handle == es[j].Handle {
					return fmt.Errorf("%w: %q given twice", ErrEdgeExists, es[i].Handle)
				}
			}
		}
		return nil
	}
	size := 4
	for size < 2*len(es) {
		size <<= 1
	}
	idx, mask := make([]uint32, size), uint32(size-1)
	for i := range es {
		h := es[i].Handle
		p := hashName(h) & mask
		for ; idx[p] != 0; p = (p + 1) & mask {
			if es[idx[p]-1].Handle == h {
				return fmt.Errorf("%w: %q given twice", ErrEdgeExists, h)
			}
		}
		idx[p] = uint32(i + 1)
	}
	return nil
}
