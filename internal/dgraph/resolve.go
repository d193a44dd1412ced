package dgraph

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/weft-db/weft/internal/engineapi"
	"github.com/weft-db/weft/internal/rdf"
)

// Resolution: finding the node of every term of a mutation, and reading
// from the snapshot what the mutation needs of each.

// termUse is what the quads need of one term.
type termUse struct {
	t      rdf.Term
	need   need
	create bool
}

// resolve maps every term to a node, reading what the quads need.
func (a *attempt) resolve(m Mutation) error {
	uses := map[termKey]*termUse{}
	var order []termKey
	use := func(t rdf.Term, nd need, create bool) {
		k := keyOf(t)
		u, ok := uses[k]
		if !ok {
			u = &termUse{t: t}
			uses[k] = u
			order = append(order, k)
		}
		u.need = max(u.need, nd)
		u.create = u.create || create
	}
	for i, quads := range [][]rdf.NQuad{m.Del, m.Set} {
		create := i == 1
		for j := range quads {
			nq := &quads[j]
			use(nq.Subject, needState, create)
			if isNodeTerm(nq.Object) {
				nd := needExists
				if p, ok := a.schemaPred(nq.Predicate); ok && p.Reverse && p.Count {
					nd = needProps
				}
				use(nq.Object, nd, create)
			}
		}
	}
	// First the terms whose UID needs a read (uncached XIDs), in parallel.
	err := parallel(len(order), a.g.cfg.ReadsParallelMax, func(i int) error {
		return a.resolveTerm(uses[order[i]])
	})
	if err != nil {
		return err
	}
	// Then whatever each node still needs, in parallel.
	needs := map[uint64]need{}
	for _, k := range order {
		if n := a.terms[k]; n != nil {
			needs[n.uid] = max(needs[n.uid], uses[k].need)
		}
	}
	uids := slices.Sorted(maps.Keys(needs))
	err = parallel(len(uids), a.g.cfg.ReadsParallelMax, func(i int) error {
		return a.load(a.nodes[uids[i]], needs[uids[i]])
	})
	if err != nil {
		return err
	}
	// A node a set names but the snapshot lacks (an explicit uid, a blank
	// node shared with another batch) is created here.
	for _, k := range order {
		if n := a.terms[k]; n != nil && uses[k].create && !n.exists && !n.create {
			n.create, n.loaded, n.edgesAll, n.old = true, needState, true, nil
		}
	}
	return nil
}

// resolveTerm finds (or, in a set, assigns) the UID of one term.
func (a *attempt) resolveTerm(u *termUse) error {
	t := u.t
	switch t.Kind {
	case rdf.UID:
		if err := a.g.checkLeased(a.ctx, a.snap, t.UID); err != nil {
			if u.create || !errors.Is(err, ErrInvalid) {
				return err
			}
			a.setTerm(t, nil) // never leased: nothing to delete
			return nil
		}
		a.setTerm(t, a.nodeFor(t.UID))
	case rdf.Blank:
		if a.o.Blanks != nil {
			uid, err := a.o.Blanks.get(a.ctx, t.Name, a.o.Alloc)
			if err != nil {
				return err
			}
			a.setTerm(t, a.nodeFor(uid))
			return nil
		}
		a.mu.Lock()
		uid, ok := a.mem.blanks[t.Name]
		a.mu.Unlock()
		if !ok {
			var err error
			if uid, err = a.o.Alloc.Next(a.ctx); err != nil {
				return err
			}
			a.mu.Lock()
			a.mem.blanks[t.Name] = uid
			a.mu.Unlock()
		}
		n := a.nodeFor(uid)
		n.create, n.loaded, n.edgesAll = true, needState, true
		a.setTerm(t, n)
	case rdf.IRI:
		return a.resolveXID(u)
	}
	return nil
}

// resolveXID finds the node of an XID through its alias (or the cache),
// reading it with what the quads need; in a set, an unbound XID gets a new
// node, bound to the alias in the same transaction.
func (a *attempt) resolveXID(u *termUse) error {
	xid := u.t.Name
	if a.o.XIDs != nil {
		if uid, ok := a.o.XIDs.get(xid); ok {
			n := a.nodeFor(uid)
			a.mu.Lock()
			n.exists = true
			a.mu.Unlock()
			a.setTerm(u.t, n)
			return nil
		}
	}
	alias := xidAlias(xid)
	v, err := a.g.db.GetVertex(a.ctx, a.snap, engineapi.VertexRef{Name: alias, Alias: true}, readOpts(u.need, a.g.cfg))
	if err != nil {
		return err
	}
	if v.Handle != "" {
		uid, ok := UIDOfHandle(v.Handle)
		if !ok {
			return fmt.Errorf("%w: alias %q names vertex %q, which is not a Dgraph node", ErrCorrupt, alias, v.Handle)
		}
		n := a.nodeFor(uid)
		a.mu.Lock()
		defer a.mu.Unlock()
		a.bound[xid] = uid
		if n.loaded < u.need && v.Exists {
			n.fill(v, u.need)
			if u.need >= needProps {
				a.reads = append(a.reads, v.Read)
			}
		}
		n.exists = n.exists || v.Exists
		a.terms[keyOf(u.t)] = n
		return nil
	}
	if !u.create {
		a.setTerm(u.t, nil)
		return nil
	}
	a.mu.Lock()
	uid, ok := a.mem.xids[xid]
	a.mu.Unlock()
	if !ok {
		if uid, err = a.o.Alloc.Next(a.ctx); err != nil {
			return err
		}
	}
	n := a.nodeFor(uid)
	a.mu.Lock()
	defer a.mu.Unlock()
	a.mem.xids[xid] = uid
	a.bound[xid] = uid
	n.create, n.loaded, n.edgesAll, n.alias, n.xid = true, needState, true, alias, xid
	if v.AliasRead != nil {
		a.reads = append(a.reads, *v.AliasRead)
	}
	a.terms[keyOf(u.t)] = n
	return nil
}

func (a *attempt) setTerm(t rdf.Term, n *node) {
	a.mu.Lock()
	a.terms[keyOf(t)] = n
	a.mu.Unlock()
}

// nodeFor returns the attempt's node for uid, adding it when new.
func (a *attempt) nodeFor(uid uint64) *node {
	a.mu.Lock()
	defer a.mu.Unlock()
	n, ok := a.nodes[uid]
	if !ok {
		n = &node{uid: uid, h: FormatUID(uid), edges: map[string]*edgeRec{}, next: map[string]*edgeRec{}}
		a.nodes[uid] = n
	}
	return n
}

func readOpts(nd need, cfg Config) engineapi.ReadOptions {
	switch nd {
	case needProps:
		return engineapi.ReadOptions{Props: true}
	case needState:
		return engineapi.ReadOptions{Props: true, Edges: true, EdgesMax: cfg.EdgesFirstMax}
	}
	return engineapi.ReadOptions{}
}

// fill records what a read returned.
func (n *node) fill(v *engineapi.Vertex, nd need) {
	n.exists = v.Exists
	n.loaded = nd
	if nd >= needProps {
		n.old = v.Props
	}
	if nd >= needState {
		n.edgesAll = !v.EdgesTruncated
		for _, e := range v.Edges {
			n.edges[e.Handle] = recOf(e)
		}
	}
}

func recOf(e engineapi.Edge) *edgeRec {
	dst, _ := UIDOfHandle(e.Dst)
	return &edgeRec{dst: dst, props: e.Props}
}

// load reads node n at the attempt's snapshot with at least nd.
func (a *attempt) load(n *node, nd need) error {
	if n.create || n.loaded >= nd || (nd == needExists && n.exists) {
		return nil
	}
	v, err := a.g.db.GetVertex(a.ctx, a.snap, engineapi.VertexRef{Name: n.h}, readOpts(nd, a.g.cfg))
	if err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	n.fill(v, nd)
	if nd >= needProps {
		a.reads = append(a.reads, v.Read)
	}
	return nil
}

// edge returns the out-edge h of n at the snapshot (nil when absent),
// reading it when the first read did not return it.
func (a *attempt) edge(n *node, h string) (*edgeRec, error) {
	if r, ok := n.edges[h]; ok || n.edgesAll || n.create {
		return r, nil
	}
	e, err := a.g.db.GetEdge(a.ctx, a.snap, engineapi.VertexRef{Name: n.h}, h)
	if err != nil {
		return nil, err
	}
	var r *edgeRec
	if e.Exists {
		r = recOf(*e)
	}
	n.edges[h] = r
	return r, nil
}

// edgeNow is edge h of n as the mutation has left it so far.
func (a *attempt) edgeNow(n *node, h string) (*edgeRec, error) {
	if r, ok := n.next[h]; ok {
		return r, nil
	}
	return a.edge(n, h)
}

// allEdges makes n.edges complete (a wildcard delete or a single-uid set
// needs every edge).
func (a *attempt) allEdges(n *node) error {
	if n.edgesAll || n.create {
		return nil
	}
	if !n.exists && n.loaded >= needExists {
		n.edgesAll = true
		return nil
	}
	v, err := a.g.db.GetVertex(a.ctx, a.snap, engineapi.VertexRef{Name: n.h},
		engineapi.ReadOptions{Edges: true, EdgesMax: a.g.cfg.EdgesMax})
	if err != nil {
		return err
	}
	if v.EdgesTruncated {
		return fmt.Errorf("%w: node %s has more than %d out-edges", ErrLimit, n.h, a.g.cfg.EdgesMax)
	}
	for _, e := range v.Edges {
		n.edges[e.Handle] = recOf(e)
	}
	n.edgesAll = true
	return nil
}

// edgesOf lists n's current edge handles of pred (sorted).
func (a *attempt) edgesOf(n *node, pred string) ([]string, error) {
	if err := a.allEdges(n); err != nil {
		return nil, err
	}
	var out []string
	for h, r := range n.edges {
		if r != nil {
			if p, _, ok := ParseEdgeHandle(h); ok && p == pred {
				if cur, changed := n.next[h]; !changed || cur != nil {
					out = append(out, h)
				}
			}
		}
	}
	for h, r := range n.next {
		if r != nil && n.edges[h] == nil {
			if p, _, ok := ParseEdgeHandle(h); ok && p == pred {
				out = append(out, h)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}
