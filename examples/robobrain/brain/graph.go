package brain

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/weft-db/weft/client/weft"
)

// ErrGone is returned by Merge and Split when a concept to restructure no
// longer exists (another restructuring took it).
var ErrGone = errors.New("concept gone")

// Graph is the knowledge graph stored under one handle prefix.
type Graph struct {
	c      *weft.Client
	prefix string
}

// New returns the graph under prefix on the server c talks to.
func New(c *weft.Client, prefix string) *Graph { return &Graph{c: c, prefix: prefix} }

// Concept is the handle of the concept first named name; NameAlias the
// alias that finds the concept holding name now.
func (g *Graph) Concept(name string) string   { return g.prefix + "/c/" + name }
func (g *Graph) NameAlias(name string) string { return g.prefix + "/name/" + name }
func (g *Graph) registry() string             { return g.prefix + "/registry" }
func (g *Graph) stats() string                { return g.prefix + "/stats" }

func outEdge(kind, dst string) string { return "out:" + kind + ":" + dst }
func inEdge(kind, src string) string  { return "in:" + kind + ":" + src }
func regEdge(c string) string         { return "c:" + c }

// Rel is one relation as stored: Out says whether it leaves the concept read.
type Rel struct {
	Kind, Other string
	Out         bool
	Confidence  float64
}

func (r Rel) key() string { return fmt.Sprintf("%v|%s|%s", r.Out, r.Kind, r.Other) }

// View is a concept as read.
type View struct {
	Handle, Name, Kind string
	Names              []string // from its aliases, sorted
	MergedFrom         []string // handles it was merged from, or split from
	Rels               []Rel    // sorted by key
}

func viewOf(g *Graph, v *weft.Vertex) View {
	out := View{Handle: v.Handle}
	out.Name, _ = v.Props["name"].(string)
	out.Kind, _ = v.Props["kind"].(string)
	for _, a := range v.Aliases {
		out.Names = append(out.Names, strings.TrimPrefix(a, g.prefix+"/name/"))
	}
	sort.Strings(out.Names)
	if l, ok := v.Props["from"].([]any); ok {
		for _, x := range l {
			s, _ := x.(string)
			out.MergedFrom = append(out.MergedFrom, s)
		}
	}
	for _, e := range v.Edges {
		kind, _ := e.Props["kind"].(string)
		conf, _ := e.Props["confidence"].(float64)
		out.Rels = append(out.Rels, Rel{Kind: kind, Other: e.Dst, Out: strings.HasPrefix(e.Handle, "out:"), Confidence: conf})
	}
	sort.Slice(out.Rels, func(i, j int) bool { return out.Rels[i].key() < out.Rels[j].key() })
	return out
}

// addRel writes both edges of the relation src -kind-> dst.
func addRel(tx *weft.Tx, src, kind, dst string, conf float64) {
	o, i := outEdge(kind, dst), inEdge(kind, src)
	tx.CreateEdge(weft.Handle(src), o, weft.Handle(dst))
	tx.SetEdgeProp(weft.Handle(src), o, "kind", kind)
	tx.SetEdgeProp(weft.Handle(src), o, "confidence", conf)
	tx.CreateEdge(weft.Handle(dst), i, weft.Handle(src))
	tx.SetEdgeProp(weft.Handle(dst), i, "kind", kind)
	tx.SetEdgeProp(weft.Handle(dst), i, "confidence", conf)
}

// createConcept writes a new concept with its names, registered.
func (g *Graph) createConcept(tx *weft.Tx, h, name, kind string, names []string) {
	tx.CreateVertex(h)
	tx.SetVertexProp(weft.Handle(h), "name", name)
	tx.SetVertexProp(weft.Handle(h), "kind", kind)
	for _, n := range names {
		tx.AddAlias(weft.Handle(h), g.NameAlias(n))
	}
	tx.CreateEdge(weft.Handle(g.registry()), regEdge(h), weft.Handle(h))
}

// Load writes the knowledge in transactions of at most batch items.
func (g *Graph) Load(ctx context.Context, k *Knowledge, batch int) (txs int, err error) {
	if err := g.c.Update(ctx, func(tx *weft.Tx) error {
		tx.CreateVertex(g.registry())
		tx.CreateVertex(g.stats())
		tx.SetVertexProp(weft.Handle(g.stats()), "concepts", len(k.Concepts))
		tx.SetVertexProp(weft.Handle(g.stats()), "relations", len(k.Relations))
		return nil
	}); err != nil {
		return 0, err
	}
	txs++
	in := func(count int, add func(tx *weft.Tx, i int)) error {
		for lo := 0; lo < count; lo += batch {
			hi := min(lo+batch, count)
			if err := g.c.Update(ctx, func(tx *weft.Tx) error {
				for i := lo; i < hi; i++ {
					add(tx, i)
				}
				return nil
			}); err != nil {
				return err
			}
			txs++
		}
		return nil
	}
	if err := in(len(k.Concepts), func(tx *weft.Tx, i int) {
		c := k.Concepts[i]
		g.createConcept(tx, g.Concept(c.Name), c.Name, c.Kind, []string{c.Name})
	}); err != nil {
		return txs, fmt.Errorf("load concepts: %w", err)
	}
	if err := in(len(k.Relations), func(tx *weft.Tx, i int) {
		r := k.Relations[i]
		addRel(tx, g.Concept(k.Concepts[r.Src].Name), r.Kind, g.Concept(k.Concepts[r.Dst].Name), r.Confidence)
	}); err != nil {
		return txs, fmt.Errorf("load relations: %w", err)
	}
	return txs, nil
}

// Read reads the concept holding name now (through its alias).
func (g *Graph) Read(ctx context.Context, name string) (View, bool, error) {
	tx, err := g.c.Begin(ctx)
	if err != nil {
		return View{}, false, err
	}
	v, err := tx.GetVertex(ctx, weft.Alias(g.NameAlias(name)))
	if err != nil || !v.Exists {
		return View{}, false, err
	}
	return viewOf(g, v), true, nil
}

// Exists reports whether vertex h exists now.
func (g *Graph) Exists(ctx context.Context, h string) (bool, error) {
	tx, err := g.c.Begin(ctx)
	if err != nil {
		return false, err
	}
	v, err := tx.GetVertex(ctx, weft.Handle(h), weft.ReadOptions{NoEdges: true, NoProps: true, NoAliases: true})
	if err != nil {
		return false, err
	}
	return v.Exists, nil
}

// dissolve reads concept h in tx for remove. It reads each neighbour too, so that a concurrent restructuring of one
// aborts the transaction.
func (g *Graph) dissolve(ctx context.Context, tx *weft.Tx, h string) (View, error) {
	v, err := tx.GetVertex(ctx, weft.Handle(h))
	if err != nil {
		return View{}, err
	}
	if !v.Exists {
		return View{}, fmt.Errorf("%s: %w", h, ErrGone)
	}
	if v.EdgesTruncated {
		return View{}, fmt.Errorf("%s: too many relations", h)
	}
	view := viewOf(g, v)
	for _, r := range view.Rels {
		if _, err := tx.GetVertex(ctx, weft.Handle(r.Other), weft.ReadOptions{NoEdges: true, NoProps: true, NoAliases: true}); err != nil {
			return View{}, err
		}
	}
	return view, nil
}

// remove adds the ops that delete concept v: its relations' mirrors on
// the other concepts (but those in gone, deleted too), its registry edge,
// the vertex.
func (g *Graph) remove(tx *weft.Tx, v View, gone ...string) {
	for _, r := range v.Rels {
		if r.Other == v.Handle || slices.Contains(gone, r.Other) {
			continue
		}
		if r.Out {
			tx.DeleteEdge(weft.Handle(r.Other), inEdge(r.Kind, v.Handle))
		} else {
			tx.DeleteEdge(weft.Handle(r.Other), outEdge(r.Kind, v.Handle))
		}
	}
	tx.DeleteEdge(weft.Handle(g.registry()), regEdge(v.Handle))
	tx.DeleteVertex(weft.Handle(v.Handle))
}

// bumpStats adds to the stats vertex's counts (read and written in tx).
func (g *Graph) bumpStats(ctx context.Context, tx *weft.Tx, concepts, relations int64) error {
	s, err := tx.GetVertex(ctx, weft.Handle(g.stats()), weft.ReadOptions{NoEdges: true, NoAliases: true})
	if err != nil {
		return err
	}
	c, _ := s.Props["concepts"].(int64)
	r, _ := s.Props["relations"].(int64)
	tx.SetVertexProp(weft.Handle(g.stats()), "concepts", c+concepts)
	tx.SetVertexProp(weft.Handle(g.stats()), "relations", r+relations)
	return nil
}

// MergeResult reports one merge.
type MergeResult struct {
	Handle  string
	Dropped int // relations deduplicated, or between the two merged concepts
}

// Merge merges the concepts holding names a and b, in one transaction: a
// new concept gets every relation of both (one per kind, direction and
// other concept, at the higher confidence; relations between a and b are
// dropped), both concepts' names, and the old handles in "from"; a and b
// are deleted.
func (g *Graph) Merge(ctx context.Context, a, b string) (res MergeResult, attempts int, err error) {
	err = g.c.Update(ctx, func(tx *weft.Tx) error {
		attempts++
		res = MergeResult{}
		va, err := g.resolve(ctx, tx, a)
		if err != nil {
			return err
		}
		vb, err := g.resolve(ctx, tx, b)
		if err != nil {
			return err
		}
		if va.Handle == vb.Handle {
			return fmt.Errorf("%s and %s are one concept already: %w", a, b, ErrGone)
		}
		m := g.prefix + "/c/" + va.Name + "+" + vb.Name
		rels := map[string]Rel{}
		total := 0
		for _, v := range []View{va, vb} {
			for _, r := range v.Rels {
				if r.Out {
					total++ // an in-relation is counted as the other's out one
				} else if r.Other != va.Handle && r.Other != vb.Handle {
					total++
				}
				if r.Other == va.Handle || r.Other == vb.Handle {
					continue
				}
				if have, ok := rels[r.key()]; !ok || r.Confidence > have.Confidence {
					rels[r.key()] = r
				}
			}
		}
		res.Handle = m
		res.Dropped = total - len(rels)
		g.remove(tx, va, vb.Handle)
		g.remove(tx, vb, va.Handle)
		names := append(append([]string(nil), va.Names...), vb.Names...)
		sort.Strings(names)
		g.createConcept(tx, m, va.Name+"+"+vb.Name, va.Kind, names)
		tx.SetVertexProp(weft.Handle(m), "from", []string{va.Handle, vb.Handle})
		for _, r := range rels {
			if r.Out {
				addRel(tx, m, r.Kind, r.Other, r.Confidence)
			} else {
				addRel(tx, r.Other, r.Kind, m, r.Confidence)
			}
		}
		return g.bumpStats(ctx, tx, -1, -int64(res.Dropped))
	})
	return res, attempts, err
}

// resolve finds the concept holding name and reads it for dissolving.
func (g *Graph) resolve(ctx context.Context, tx *weft.Tx, name string) (View, error) {
	v, err := tx.GetVertex(ctx, weft.Alias(g.NameAlias(name)), weft.ReadOptions{NoEdges: true, NoProps: true, NoAliases: true})
	if err != nil {
		return View{}, err
	}
	if !v.Exists {
		return View{}, fmt.Errorf("%s: %w", name, ErrGone)
	}
	return g.dissolve(ctx, tx, v.Handle)
}

// Split splits the concept holding name, in one transaction, into NAME:kind
// (its is_a and part_of relations and all its names) and NAME:use (its
// has_affordance and located_in relations, named NAME:use); it is deleted.
func (g *Graph) Split(ctx context.Context, name string) (kindHalf, useHalf string, attempts int, err error) {
	err = g.c.Update(ctx, func(tx *weft.Tx) error {
		attempts++
		v, err := g.resolve(ctx, tx, name)
		if err != nil {
			return err
		}
		kindHalf, useHalf = g.prefix+"/c/"+v.Name+":kind", g.prefix+"/c/"+v.Name+":use"
		g.remove(tx, v)
		g.createConcept(tx, kindHalf, v.Name+":kind", v.Kind, v.Names)
		g.createConcept(tx, useHalf, v.Name+":use", v.Kind, []string{v.Name + ":use"})
		for _, h := range []string{kindHalf, useHalf} {
			tx.SetVertexProp(weft.Handle(h), "from", []string{v.Handle})
		}
		for _, r := range v.Rels {
			h := kindHalf
			if SplitsUse(r.Kind) {
				h = useHalf
			}
			if r.Out {
				addRel(tx, h, r.Kind, r.Other, r.Confidence)
			} else {
				addRel(tx, r.Other, r.Kind, h, r.Confidence)
			}
		}
		return g.bumpStats(ctx, tx, 1, 0)
	})
	return kindHalf, useHalf, attempts, err
}

// Check is what one reader saw at one snapshot.
type Check struct {
	Snapshot            string
	Concepts, Relations int
	StatsC, StatsR      int64
	Violations          []string
}

// CheckAt reads the whole graph at one snapshot (the registry, every
// concept, the names in watch through their aliases) and checks that it is
// whole: every registered concept exists; every relation's other end is a
// registered concept and holds the mirror edge; the stats vertex's counts
// are the registry's and the relations'; every name is held by exactly one
// concept, and each name in watch resolves to a registered concept that
// holds it.
func (g *Graph) CheckAt(ctx context.Context, watch []string) (Check, error) {
	tx, err := g.c.Begin(ctx)
	if err != nil {
		return Check{}, err
	}
	ck := Check{Snapshot: tx.Snapshot()}
	bad := func(f string, args ...any) { ck.Violations = append(ck.Violations, fmt.Sprintf(f, args...)) }
	s, err := tx.GetVertex(ctx, weft.Handle(g.stats()), weft.ReadOptions{NoEdges: true, NoAliases: true})
	if err != nil {
		return ck, err
	}
	ck.StatsC, _ = s.Props["concepts"].(int64)
	ck.StatsR, _ = s.Props["relations"].(int64)
	reg, err := tx.GetVertex(ctx, weft.Handle(g.registry()), weft.ReadOptions{NoProps: true, NoAliases: true})
	if err != nil {
		return ck, err
	}
	live := map[string]bool{}
	for _, e := range reg.Edges {
		live[e.Dst] = true
	}
	ck.Concepts = len(live)
	outs, ins := map[string]bool{}, map[string]bool{}
	holder := map[string]string{}
	for h := range live {
		v, err := tx.GetVertex(ctx, weft.Handle(h))
		if err != nil {
			return ck, err
		}
		if !v.Exists {
			bad("registered concept %s does not exist", h)
			continue
		}
		view := viewOf(g, v)
		for _, n := range view.Names {
			if o, ok := holder[n]; ok {
				bad("name %s held by %s and %s", n, o, h)
			}
			holder[n] = h
		}
		for _, r := range view.Rels {
			if !live[r.Other] {
				bad("%s has a relation %s with %s, not a live concept", h, r.Kind, r.Other)
			}
			if r.Out {
				outs[h+" "+r.Kind+" "+r.Other] = true
			} else {
				ins[r.Other+" "+r.Kind+" "+h] = true
			}
		}
	}
	ck.Relations = len(outs)
	for k := range outs {
		if !ins[k] {
			bad("relation %s has no mirror", k)
		}
	}
	for k := range ins {
		if !outs[k] {
			bad("mirror %s has no relation", k)
		}
	}
	if int64(ck.Concepts) != ck.StatsC || int64(ck.Relations) != ck.StatsR {
		bad("%d concepts and %d relations; stats say %d and %d", ck.Concepts, ck.Relations, ck.StatsC, ck.StatsR)
	}
	for _, n := range watch {
		v, err := tx.GetVertex(ctx, weft.Alias(g.NameAlias(n)), weft.ReadOptions{NoEdges: true, NoProps: true})
		if err != nil {
			return ck, err
		}
		if !v.Exists || !live[v.Handle] || holder[n] != v.Handle {
			bad("name %s resolves to %q (exists %v), held by %q", n, v.Handle, v.Exists, holder[n])
		}
	}
	return ck, nil
}
