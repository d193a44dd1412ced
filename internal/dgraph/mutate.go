package dgraph

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/weft-db/weft/internal/dgraph/schema"
	"github.com/weft-db/weft/internal/engineapi"
	"github.com/weft-db/weft/internal/rdf"
	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/value"
)

// Mutation is one Dgraph mutation. Deletions apply first, then sets, so
// that "delete the old value, set the new one" works in one mutation.
type Mutation struct {
	Set, Del []rdf.NQuad
}

// MutateOptions are what a loader shares between its mutations.
type MutateOptions struct {
	// Alloc hands out the UIDs of new nodes (nil: the Graph's own).
	Alloc *Allocator
	// Blanks maps blank nodes across mutations (a load, where _:x in two
	// batches is one node); nil maps them per mutation, as Dgraph's
	// /mutate does.
	Blanks *BlankMap
	// XIDs caches committed XID bindings, saving alias reads (nil: none).
	XIDs *XIDCache
	// dropping is the predicate DropPredicate is deleting: busy for
	// others, not for its own deletions.
	dropping string
}

// Result reports a committed mutation.
type Result struct {
	// UIDs maps each blank node of the mutation (without "_:") to its UID,
	// as Dgraph's /mutate answers {"uids": {"alice": "0x1"}}. Empty when
	// MutateOptions.Blanks is set.
	UIDs map[string]string
	// Snapshot is the commit's timestamp: a read at it sees the mutation.
	Snapshot engineapi.Snapshot
	Stats    Stats
}

// Stats counts what a mutation did.
type Stats struct {
	Quads    int // quads applied (set and delete)
	Nodes    int // nodes created
	Edges    int // uid-valued quads set
	Values   int // scalar quads set
	Ops      int // engine operations of the committed transaction
	Attempts int // transactions tried (1 without conflicts)
}

// Add accumulates s into t.
func (t *Stats) Add(s Stats) {
	t.Quads += s.Quads
	t.Nodes += s.Nodes
	t.Edges += s.Edges
	t.Values += s.Values
	t.Ops += s.Ops
	t.Attempts += s.Attempts
}

// Mutate applies one mutation as one Weft transaction, retried on
// conflicts. Bad input fails with an error wrapping ErrInvalid or
// ErrUnsupported and changes nothing.
func (g *Graph) Mutate(ctx context.Context, m Mutation) (*Result, error) {
	return g.MutateWith(ctx, m, MutateOptions{})
}

// MutateWith is Mutate with a loader's shared state.
func (g *Graph) MutateWith(ctx context.Context, m Mutation, o MutateOptions) (*Result, error) {
	if err := checkMutation(m); err != nil {
		return nil, err
	}
	if o.Alloc == nil {
		o.Alloc = g.alloc
	}
	mem := &memo{blanks: map[string]uint64{}, xids: map[string]uint64{}}
	var res *Result
	attempts := 0
	err := g.retry(ctx, func(int) error {
		attempts++
		var err error
		res, err = g.mutateOnce(ctx, m, o, mem)
		return err
	})
	if err != nil {
		return nil, err
	}
	res.Stats.Attempts = attempts
	return res, nil
}

// checkQuad checks what needs no schema.
func checkQuad(nq *rdf.NQuad, del bool) error {
	if err := checkTerm(nq.Subject, del, "subject"); err != nil {
		return err
	}
	if nq.Predicate == rdf.Star {
		if !del || nq.Object.Kind != rdf.Wildcard {
			return fmt.Errorf("%w: <s> * * is only a deletion", ErrInvalid)
		}
		return nil
	}
	if err := checkPred(nq.Predicate); err != nil {
		return err
	}
	if nq.Lang != "" {
		if err := checkLang(nq.Lang); err != nil {
			return err
		}
	}
	switch nq.Object.Kind {
	case rdf.Literal:
	case rdf.Wildcard:
		if !del {
			return fmt.Errorf("%w: * as an object is only for deletions", ErrInvalid)
		}
	default:
		if err := checkTerm(nq.Object, del, "object"); err != nil {
			return err
		}
	}
	if !del {
		for _, f := range nq.Facets {
			if err := checkFacetKey(f.Key); err != nil {
				return err
			}
		}
	}
	return nil
}

func checkTerm(t rdf.Term, del bool, what string) error {
	switch t.Kind {
	case rdf.IRI:
		if t.Name == "" {
			return fmt.Errorf("%w: empty IRI %s", ErrInvalid, what)
		}
	case rdf.UID:
		if t.UID == 0 {
			return fmt.Errorf("%w: uid 0 is not a node", ErrInvalid)
		}
	case rdf.Blank:
		if del {
			return fmt.Errorf("%w: blank node _:%s in a deletion (it names no existing node)", ErrInvalid, t.Name)
		}
	case rdf.UIDVar, rdf.ValVar:
		return fmt.Errorf("%w: %s(%s) as %s needs an upsert block", ErrUnsupported, map[rdf.Kind]string{rdf.UIDVar: "uid", rdf.ValVar: "val"}[t.Kind], t.Name, what)
	default:
		return fmt.Errorf("%w: a %s cannot be the %s", ErrInvalid, t.Kind, what)
	}
	return nil
}

// memo keeps the UIDs chosen for new nodes across the attempts of one
// mutation, so that a retry does not waste them.
type memo struct {
	blanks map[string]uint64 // local blank nodes
	xids   map[string]uint64 // XIDs that were unbound when last tried
}

// need is how much of a node an attempt reads.
type need uint8

const (
	needNone   need = iota
	needExists      // whether it exists (not in the read set)
	needProps       // its properties (in the read set)
	needState       // properties and out-edges (in the read set)
)

// node is one Dgraph node as an attempt sees and changes it.
type node struct {
	uid    uint64
	h      string
	create bool // absent at the snapshot: this transaction creates it
	exists bool // present at the snapshot
	alias  string
	xid    string
	loaded need
	old    map[string]value.Value // properties at the snapshot
	props  map[string]value.Value // nil until written, then the new properties
	// edges holds the out-edges known at the snapshot (a nil value: known
	// absent); edgesAll says it holds all of them.
	edges    map[string]*edgeRec
	edgesAll bool
	next     map[string]*edgeRec // changed edges: the new record, nil when deleted
	touched  map[string]bool     // predicates whose values or edges changed
	countD   map[string]int64    // edge count changes by predicate ("~p" too)
}

type edgeRec struct {
	dst   uint64
	props map[string]value.Value
}

func (n *node) prop(k string) (value.Value, bool) {
	if n.props != nil {
		v, ok := n.props[k]
		return v, ok
	}
	v, ok := n.old[k]
	return v, ok
}

func (n *node) propsNow() map[string]value.Value {
	if n.props != nil {
		return n.props
	}
	return n.old
}

func (n *node) write() {
	if n.props == nil {
		n.props = maps.Clone(n.old)
		if n.props == nil {
			n.props = map[string]value.Value{}
		}
	}
}

func (n *node) setProp(k string, v value.Value) { n.write(); n.props[k] = v }
func (n *node) delProp(k string)                { n.write(); delete(n.props, k) }

func (n *node) touch(pred string) {
	if n.touched == nil {
		n.touched = map[string]bool{}
	}
	n.touched[pred] = true
}

// termKey identifies a subject or object term.
type termKey struct {
	kind rdf.Kind
	name string
	uid  uint64
}

func keyOf(t rdf.Term) termKey { return termKey{kind: t.Kind, name: t.Name, uid: t.UID} }

func isNodeTerm(t rdf.Term) bool {
	return t.Kind == rdf.IRI || t.Kind == rdf.Blank || t.Kind == rdf.UID
}

// attempt is one try of a mutation: reads at one snapshot, the new state,
// and the transaction that writes it.
type attempt struct {
	g     *Graph
	ctx   context.Context
	snap  engineapi.Snapshot
	st    *schemaState
	o     MutateOptions
	mem   *memo
	nodes map[uint64]*node
	terms map[termKey]*node // nil: a term of a deletion that names no node
	preds map[string]schema.Predicate
	added map[string]schema.Predicate // predicates this mutation adds to the schema
	reads []txn.Read
	bound map[string]uint64 // XIDs seen bound or bound here, for the cache
	stats Stats
	mu    sync.Mutex // guards reads and bound during parallel reads
}

func (g *Graph) mutateOnce(ctx context.Context, m Mutation, o MutateOptions, mem *memo) (*Result, error) {
	snap, err := g.db.Begin(ctx)
	if err != nil {
		return nil, err
	}
	p, err := g.prepare(ctx, snap, []Mutation{m}, o, mem)
	if err != nil {
		return nil, err
	}
	return g.commitPrepared(ctx, p, nil, o)
}

func dedupeReads(rs []txn.Read) []txn.Read {
	seen := make(map[string]bool, len(rs))
	out := rs[:0]
	for _, r := range rs {
		k := r.Vertex
		if r.Alias {
			k = "\x00" + k
		}
		if !seen[k] {
			seen[k] = true
			out = append(out, r)
		}
	}
	return out
}

// schemaPred is the stored schema's definition of p (cached per attempt).
func (a *attempt) schemaPred(p string) (schema.Predicate, bool) {
	if P, ok := a.preds[p]; ok {
		return P, true
	}
	P, ok := a.st.sch.Predicate(p)
	if ok {
		a.preds[p] = P
	}
	return P, ok
}

// pred returns the schema of predicate p; in a set, a predicate the schema
// lacks is added with a type inferred from the quad (Dgraph's flexible
// schema). known is false for an unknown predicate in a deletion.
func (a *attempt) pred(p string, nq *rdf.NQuad, set bool) (schema.Predicate, bool, error) {
	if a.st.meta.busy(p) && p != a.o.dropping {
		return schema.Predicate{}, false, fmt.Errorf("%w: %s", ErrBusy, p)
	}
	if P, ok := a.preds[p]; ok {
		if set && nq.Lang != "" && !P.Lang && a.added[p].Name != "" && (P.Type == schema.String || P.Type == schema.Default) {
			P.Type, P.Lang = schema.String, true // an added predicate's later value has a language
			a.preds[p], a.added[p] = P, P
		}
		return P, true, nil
	}
	if P, ok := a.schemaPred(p); ok {
		return P, true, nil
	}
	if !set {
		return schema.Predicate{}, false, nil
	}
	P := inferPred(p, nq)
	a.preds[p], a.added[p] = P, P
	return P, true, nil
}

// inferPred is the schema Dgraph gives a predicate on its first value.
func inferPred(p string, nq *rdf.NQuad) schema.Predicate {
	P := schema.Predicate{Name: p}
	switch {
	case isNodeTerm(nq.Object):
		P.Type, P.List = schema.UID, true
	case nq.Lang != "":
		P.Type, P.Lang = schema.String, true
	default:
		P.Type = map[rdf.Datatype]schema.Scalar{rdf.TypeString: schema.String, rdf.TypeInt: schema.Int,
			rdf.TypeFloat: schema.Float, rdf.TypeBool: schema.Bool, rdf.TypeDatetime: schema.Datetime,
			rdf.TypeGeo: schema.Geo, rdf.TypePassword: schema.Password, rdf.TypeVector: schema.Float32Vector,
		}[nq.Object.Datatype] // TypeDefault and TypeBinary: default
	}
	return P
}

func facetProps(fs []rdf.Facet) map[string]value.Value {
	m := make(map[string]value.Value, len(fs)+1)
	for _, f := range fs {
		m[f.Key] = f.Value
	}
	return m
}

// applySet applies one set quad to the attempt's state.
func (a *attempt) applySet(nq *rdf.NQuad) error {
	s := a.terms[keyOf(nq.Subject)]
	p := nq.Predicate
	P, _, err := a.pred(p, nq, true)
	if err != nil {
		return err
	}
	if P.Type == schema.UID {
		if !isNodeTerm(nq.Object) {
			return fmt.Errorf("%w: predicate %s is of type uid: its object must be a node, not a literal", ErrInvalid, p)
		}
		if nq.Lang != "" {
			return fmt.Errorf("%w: predicate %s is of type uid: no language", ErrInvalid, p)
		}
		o := a.terms[keyOf(nq.Object)]
		h := EdgeHandle(p, o.uid)
		if !P.List { // a single uid: the new edge replaces the others
			hs, err := a.edgesOf(s, p)
			if err != nil {
				return err
			}
			for _, old := range hs {
				if old != h {
					s.next[old] = nil
				}
			}
		}
		if _, err := a.edgeNow(s, h); err != nil { // learn the old state before changing it
			return err
		}
		props := facetProps(nq.Facets)
		props[EdgePredKey] = value.Str(p)
		s.next[h] = &edgeRec{dst: o.uid, props: props}
		s.touch(p)
		a.stats.Edges++
		return nil
	}
	if isNodeTerm(nq.Object) {
		return fmt.Errorf("%w: predicate %s is of type %s: its object must be a literal, not a node", ErrInvalid, p, P.Type)
	}
	if nq.Lang != "" && !P.Lang {
		return fmt.Errorf("%w: predicate %s has no @lang directive: cannot store a value in language %q", ErrInvalid, p, nq.Lang)
	}
	v, err := convertLiteral(nq.Object, P.Type)
	if err != nil {
		return fmt.Errorf("predicate %s: %w", p, err)
	}
	key := ValueKey(p, nq.Lang)
	if P.List {
		if len(nq.Facets) > 0 {
			return fmt.Errorf("%w: facets on the values of list predicate %s", ErrUnsupported, p)
		}
		cur, _ := s.prop(key)
		list := listOf(cur)
		if !slices.ContainsFunc(list, func(e value.Value) bool { return sameValue(e, v) }) {
			s.setProp(key, value.ListOf(append(list, v)...))
		}
	} else {
		a.delFacets(s, key)
		s.setProp(key, v)
		for _, f := range nq.Facets {
			s.setProp(FacetPropKey(key, f.Key), f.Value)
		}
	}
	s.touch(p)
	a.stats.Values++
	return nil
}

// applyXIDs records each new XID node's XID as the xid predicate.
func (a *attempt) applyXIDs() error {
	for _, uid := range slices.Sorted(maps.Keys(a.nodes)) {
		n := a.nodes[uid]
		if n.xid == "" {
			continue
		}
		nq := rdf.NQuad{Subject: rdf.Term{Kind: rdf.UID, UID: uid}, Predicate: XIDPred,
			Object: rdf.Term{Kind: rdf.Literal, Value: value.Str(n.xid), Datatype: rdf.TypeString}}
		a.terms[keyOf(nq.Subject)] = n
		if err := a.applySet(&nq); err != nil {
			return fmt.Errorf("recording the xid of %s: %w", n.h, err)
		}
		a.stats.Values--
		a.stats.Nodes++
	}
	for _, n := range a.nodes {
		if n.create && n.xid == "" {
			a.stats.Nodes++
		}
	}
	return nil
}

func listOf(v value.Value) []value.Value {
	switch v.Kind() {
	case value.Null:
		return nil
	case value.List:
		return slices.Clone(v.List())
	}
	return []value.Value{v}
}

// sameValue is equality of stored values: same kind and value.
func sameValue(a, b value.Value) bool {
	if a.Kind() != b.Kind() {
		return false
	}
	if a.Kind() == value.List {
		return slices.EqualFunc(a.List(), b.List(), sameValue)
	}
	return value.Equal(a, b)
}

// delFacets removes the facets of scalar value key.
func (a *attempt) delFacets(n *node, key string) {
	for k := range n.propsNow() {
		if kind, _, _, _ := classifyProp(k); kind == propFacet && len(k) > len(key) && k[:len(key)] == key && k[len(key)] == '|' {
			n.delProp(k)
		}
	}
}

// applyDel applies one delete quad.
func (a *attempt) applyDel(nq *rdf.NQuad) error {
	s := a.terms[keyOf(nq.Subject)]
	if s == nil || (!s.exists && !s.create) {
		return nil // no such node: nothing to delete
	}
	if nq.Predicate == rdf.Star {
		return a.delAll(s)
	}
	p := nq.Predicate
	P, known, err := a.pred(p, nq, false)
	if err != nil || !known {
		return err
	}
	s.touch(p)
	if P.Type == schema.UID {
		if nq.Object.Kind == rdf.Wildcard {
			hs, err := a.edgesOf(s, p)
			for _, h := range hs {
				s.next[h] = nil
			}
			return err
		}
		o := a.terms[keyOf(nq.Object)]
		if o == nil {
			return nil
		}
		h := EdgeHandle(p, o.uid)
		if cur, err := a.edgeNow(s, h); err != nil || cur == nil {
			return err
		}
		s.next[h] = nil
		return nil
	}
	if nq.Object.Kind == rdf.Wildcard {
		for _, k := range slices.Sorted(maps.Keys(s.propsNow())) {
			kind, kp, lang, _ := classifyProp(k)
			if kind == propValue && kp == p && (nq.Lang == "" || lang == nq.Lang) {
				s.delProp(k)
				a.delFacets(s, k)
			}
		}
		return nil
	}
	if isNodeTerm(nq.Object) {
		return fmt.Errorf("%w: predicate %s is of type %s: its object must be a literal, not a node", ErrInvalid, p, P.Type)
	}
	key := ValueKey(p, nq.Lang)
	cur, ok := s.prop(key)
	if !ok {
		return nil
	}
	match := func(stored value.Value) (bool, error) {
		if P.Type == schema.Password {
			return CheckPassword(stored.Str(), nq.Object.Value.Str()), nil
		}
		v, err := convertLiteral(nq.Object, P.Type)
		return err == nil && sameValue(stored, v), err
	}
	if P.List {
		var keep []value.Value
		for _, e := range listOf(cur) {
			m, err := match(e)
			if err != nil {
				return err
			}
			if !m {
				keep = append(keep, e)
			}
		}
		if len(keep) == 0 {
			s.delProp(key)
		} else {
			s.setProp(key, value.ListOf(keep...))
		}
		return nil
	}
	if m, err := match(cur); err != nil || !m {
		return err
	}
	s.delProp(key)
	a.delFacets(s, key)
	return nil
}

// delAll is <s> * *: every value and out-edge of s goes, except its xid
// (the node keeps its identity) and what other nodes' edges put on it
// (reverse edges and their counts).
func (a *attempt) delAll(s *node) error {
	if err := a.allEdges(s); err != nil {
		return err
	}
	for _, k := range slices.Sorted(maps.Keys(s.propsNow())) {
		kind, p, _, _ := classifyProp(k)
		if (kind == propValue || kind == propFacet) && p != XIDPred {
			if a.st.meta.busy(p) {
				return fmt.Errorf("%w: %s", ErrBusy, p)
			}
			s.delProp(k)
			s.touch(p)
		}
	}
	for h, r := range s.edges {
		p, _, ok := ParseEdgeHandle(h)
		if r == nil || !ok || p[0] == '~' {
			continue
		}
		if a.st.meta.busy(p) {
			return fmt.Errorf("%w: %s", ErrBusy, p)
		}
		s.next[h] = nil
		s.touch(p)
	}
	for h, r := range s.next {
		if p, _, ok := ParseEdgeHandle(h); ok && r != nil && p[0] != '~' {
			s.next[h] = nil
		}
	}
	return nil
}
