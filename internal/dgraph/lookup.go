package dgraph

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/weft-db/weft/internal/dgraph/index"
	"github.com/weft-db/weft/internal/dgraph/schema"
	"github.com/weft-db/weft/internal/engineapi"
	"github.com/weft-db/weft/internal/value"
)

// Reads for the executor. Every function reads at the snapshot it is given,
// so a whole query sees one consistent state; results are sorted UIDs.

// Node is a Dgraph node as read at a snapshot.
type Node struct {
	UID    uint64
	Exists bool
	// Values maps value keys ("p", "p@lang") to values; a list predicate's
	// value is a list.
	Values map[string]value.Value
	// Facets maps a scalar value key to its facets.
	Facets map[string]map[string]value.Value
	// Edges maps a predicate ("p", or "~p" for reverse edges) to its edges,
	// sorted by destination.
	Edges map[string][]Edge
	// Counts maps a predicate ("p", "~p" under @count) to its edge count,
	// which is complete even when the edges read were truncated.
	Counts map[string]int64
	// EdgesTruncated is set when the node has more edges than were read.
	EdgesTruncated bool
}

// Edge is one uid-valued predicate edge.
type Edge struct {
	UID    uint64
	Facets map[string]value.Value
}

// ReadNode reads node uid at snap with at most edgesMax out-edges (0: the
// engine's default).
func (g *Graph) ReadNode(ctx context.Context, snap engineapi.Snapshot, uid uint64, edgesMax int) (*Node, error) {
	v, err := g.db.GetVertex(ctx, snap, engineapi.VertexRef{Name: FormatUID(uid)},
		engineapi.ReadOptions{Props: true, Edges: true, EdgesMax: edgesMax})
	if err != nil {
		return nil, err
	}
	return DecodeVertex(v), nil
}

// DecodeVertex reads a node out of a vertex read with GetVertex.
func DecodeVertex(v *engineapi.Vertex) *Node {
	n := &Node{Exists: v.Exists, Values: map[string]value.Value{}, Facets: map[string]map[string]value.Value{},
		Edges: map[string][]Edge{}, Counts: map[string]int64{}, EdgesTruncated: v.EdgesTruncated}
	n.UID, _ = UIDOfHandle(v.Handle)
	for k, val := range v.Props {
		switch kind, pred, lang, facet := classifyProp(k); kind {
		case propValue:
			n.Values[k] = val
		case propFacet:
			vk := ValueKey(pred, lang)
			if n.Facets[vk] == nil {
				n.Facets[vk] = map[string]value.Value{}
			}
			n.Facets[vk][facet] = val
		case propCount:
			n.Counts[pred] = val.Int()
		}
	}
	for _, e := range v.Edges {
		pred, dst, ok := ParseEdgeHandle(e.Handle)
		if !ok {
			continue
		}
		var facets map[string]value.Value
		for k, val := range e.Props {
			if k != EdgePredKey {
				if facets == nil {
					facets = map[string]value.Value{}
				}
				facets[k] = val
			}
		}
		n.Edges[pred] = append(n.Edges[pred], Edge{UID: dst, Facets: facets})
	}
	for _, es := range n.Edges {
		slices.SortFunc(es, func(a, b Edge) int { return cmpUint(a.UID, b.UID) })
	}
	return n
}

func cmpUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// edgeUIDs reads the given vertices with all their edges and returns the
// UIDs their edge handles name, sorted and distinct.
func (g *Graph) edgeUIDs(ctx context.Context, snap engineapi.Snapshot, handles []string) ([]uint64, error) {
	refs := make([]engineapi.VertexRef, len(handles))
	for i, h := range handles {
		refs[i] = engineapi.VertexRef{Name: h}
	}
	// One batched read: one request per shard (per predicate group in the
	// predicate placement, where a predicate's index is one shard's).
	vs, _, err := engineapi.GetVertices(ctx, g.db, snap, refs, engineapi.ReadOptions{Edges: true, EdgesMax: g.cfg.EdgesMax})
	if err != nil {
		return nil, err
	}
	var out []uint64
	for i, v := range vs {
		if v.EdgesTruncated {
			return nil, fmt.Errorf("%w: %s has more than %d entries", ErrLimit, handles[i], g.cfg.EdgesMax)
		}
		for _, e := range v.Edges {
			if u, ok := UIDOfHandle(e.Handle); ok {
				out = append(out, u)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// Has returns the nodes with a value or an edge of pred (any language):
// DQL's has(pred). Reverse predicates (~p) have no has-set.
func (g *Graph) Has(ctx context.Context, snap engineapi.Snapshot, pred string) ([]uint64, error) {
	if err := checkPred(pred); err != nil {
		return nil, err
	}
	hs := make([]string, Buckets)
	for b := range hs {
		hs[b] = hasVertex(pred, b)
	}
	return g.edgeUIDs(ctx, snap, hs)
}

// indexFor returns predicate pred's schema and the generation of its index
// tok, checking that the index is maintained and not being built.
func (g *Graph) indexFor(ctx context.Context, snap engineapi.Snapshot, pred, tok string) (schema.Predicate, uint64, error) {
	st, err := g.schemaAt(ctx, snap)
	if err != nil {
		return schema.Predicate{}, 0, err
	}
	P, ok := st.sch.Predicate(pred)
	if !ok || !P.Indexed(tok) {
		return P, 0, fmt.Errorf("%w: predicate %s has no %s index", ErrNoIndex, pred, tok)
	}
	if index.Get(tok) == nil {
		return P, 0, fmt.Errorf("%w: the %s index of %s is not maintained by this version", ErrNoIndex, tok, pred)
	}
	if st.meta.busy(pred) {
		return P, 0, fmt.Errorf("%w: %s", ErrBusy, pred)
	}
	gen, ok := st.meta.Index[pred+"|"+tok]
	if !ok {
		return P, 0, fmt.Errorf("%w: index %s(%s) has no generation", ErrCorrupt, pred, tok)
	}
	return P, gen, nil
}

// Tokenize returns the tokens tokenizer name gives value v, converted first
// to the tokenizer's type (so Tokenize("int", "42") works). The executor
// uses it for allofterms/anyofterms with Lookup.
func Tokenize(name string, v value.Value) ([]string, error) {
	t := index.Get(name)
	if t == nil {
		return nil, fmt.Errorf("%w: tokenizer %q is not maintained", ErrNoIndex, name)
	}
	cv, err := convertValue(v, t.Scalar())
	if err != nil {
		return nil, err
	}
	return t.Tokens(cv), nil
}

// Lookup returns the nodes whose value of pred in language lang has token
// in index tok (Tokenize computes tokens): the building block of eq,
// allofterms and anyofterms.
func (g *Graph) Lookup(ctx context.Context, snap engineapi.Snapshot, pred, lang, tok, token string) ([]uint64, error) {
	if _, gen, err := g.indexFor(ctx, snap, pred, tok); err != nil {
		return nil, err
	} else {
		return g.lookup(ctx, snap, gen, tok, ValueKey(pred, lang), token)
	}
}

func (g *Graph) lookup(ctx context.Context, snap engineapi.Snapshot, gen uint64, tok, key, token string) ([]uint64, error) {
	hs := make([]string, Buckets)
	for b := range hs {
		hs[b] = indexVertex(gen, tok, key, b, token)
	}
	return g.edgeUIDs(ctx, snap, hs)
}

// eqOrder is the preference among indexes for eq: exact ones first, then
// the finest datetime granularity.
var eqOrder = []string{"exact", "int", "float", "bool", "hash", "hour", "day", "month", "year"}

// Eq returns the nodes whose value of pred in language lang equals v
// (converted to the predicate's type; any element, for a list): DQL's
// eq(pred, v). Lossy indexes (hash, datetime granularities) have their
// candidates checked against the stored values.
func (g *Graph) Eq(ctx context.Context, snap engineapi.Snapshot, pred, lang string, v value.Value) ([]uint64, error) {
	st, err := g.schemaAt(ctx, snap)
	if err != nil {
		return nil, err
	}
	P, ok := st.sch.Predicate(pred)
	if !ok {
		return nil, fmt.Errorf("%w: predicate %s is not in the schema", ErrNoIndex, pred)
	}
	var tk *index.Tokenizer
	for _, name := range eqOrder {
		if P.Indexed(name) {
			tk = index.Get(name)
			break
		}
	}
	if tk == nil {
		return nil, fmt.Errorf("%w: eq on %s needs an exact, hash, int, float, bool or datetime index", ErrNoIndex, pred)
	}
	_, gen, err := g.indexFor(ctx, snap, pred, tk.Name())
	if err != nil {
		return nil, err
	}
	cv, err := convertValue(v, P.Type)
	if err != nil {
		return nil, err
	}
	key := ValueKey(pred, lang)
	uids, err := g.lookup(ctx, snap, gen, tk.Name(), key, tk.Tokens(cv)[0])
	if err != nil || !tk.Lossy() {
		return uids, err
	}
	return g.filter(ctx, snap, uids, key, func(x value.Value) bool { return sameValue(x, cv) })
}

// filter keeps the nodes whose value key (any element of a list) passes ok.
func (g *Graph) filter(ctx context.Context, snap engineapi.Snapshot, uids []uint64, key string, ok func(value.Value) bool) ([]uint64, error) {
	keep := make([]bool, len(uids))
	err := parallel(len(uids), g.cfg.ReadsParallelMax, func(i int) error {
		v, err := g.db.GetVertex(ctx, snap, engineapi.VertexRef{Name: FormatUID(uids[i])}, engineapi.ReadOptions{Props: true})
		if err != nil {
			return err
		}
		x, found := v.Props[key]
		keep[i] = found && slices.ContainsFunc(listOf(x), ok)
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := uids[:0:0]
	for i, u := range uids {
		if keep[i] {
			out = append(out, u)
		}
	}
	return out, nil
}

// Bound is one end of a range; nil means unbounded.
type Bound struct {
	Value     value.Value
	Exclusive bool
}

// Range returns the nodes with a value of pred in language lang within
// [lo, hi] (either end open when Exclusive, absent when nil): DQL's
// le/lt/ge/gt/between. It needs the predicate's sortable index (exact,
// int, float, or a datetime granularity) and costs a read of every distinct
// token of the index (its directory), plus the matching token vertices;
// values in the boundary tokens of a lossy index are checked.
func (g *Graph) Range(ctx context.Context, snap engineapi.Snapshot, pred, lang string, lo, hi *Bound) ([]uint64, error) {
	st, err := g.schemaAt(ctx, snap)
	if err != nil {
		return nil, err
	}
	P, ok := st.sch.Predicate(pred)
	if !ok {
		return nil, fmt.Errorf("%w: predicate %s is not in the schema", ErrNoIndex, pred)
	}
	var tk *index.Tokenizer
	for _, t := range P.Index {
		if x := index.Get(t.Name); x != nil && x.Sortable() {
			tk = x
		}
	}
	if tk == nil {
		return nil, fmt.Errorf("%w: a range on %s needs a sortable index (exact, int, float, year, month, day, hour)", ErrNoIndex, pred)
	}
	_, gen, err := g.indexFor(ctx, snap, pred, tk.Name())
	if err != nil {
		return nil, err
	}
	var clo, chi *Bound
	for _, b := range []struct {
		in  *Bound
		out **Bound
	}{{lo, &clo}, {hi, &chi}} {
		if b.in != nil {
			cv, err := convertValue(b.in.Value, P.Type)
			if err != nil {
				return nil, err
			}
			*b.out = &Bound{Value: cv, Exclusive: b.in.Exclusive}
		}
	}
	key := ValueKey(pred, lang)
	inside, edge, err := g.rangeTokens(ctx, snap, gen, key, tk, clo, chi)
	if err != nil {
		return nil, err
	}
	all, err := g.edgeUIDs(ctx, snap, inside)
	if err != nil {
		return nil, err
	}
	cand, err := g.edgeUIDs(ctx, snap, edge)
	if err != nil {
		return nil, err
	}
	cand, err = g.filter(ctx, snap, cand, key, func(x value.Value) bool { return within(x, clo, chi) })
	if err != nil {
		return nil, err
	}
	all = append(all, cand...)
	slices.Sort(all)
	return slices.Compact(all), nil
}

// rangeTokens lists the token vertices of an index whose tokens lie inside
// [lo, hi] and those that straddle a bound (their values need a check).
func (g *Graph) rangeTokens(ctx context.Context, snap engineapi.Snapshot, gen uint64, key string, tk *index.Tokenizer, lo, hi *Bound) (inside, edge []string, err error) {
	pred, _, _ := strings.Cut(key, "@")
	refs := make([]engineapi.VertexRef, Buckets)
	for b := range Buckets {
		refs[b] = engineapi.VertexRef{Name: dirVertexIn(g.cfg.Placement, pred, gen, b)}
	}
	// One batched read of the 16 directories: one request per shard (one
	// in the predicate placement, where they are in the predicate's group).
	vs, _, err := engineapi.GetVertices(ctx, g.db, snap, refs, engineapi.ReadOptions{Edges: true, EdgesMax: g.cfg.EdgesMax})
	if err != nil {
		return nil, nil, err
	}
	for _, v := range vs {
		if v.EdgesTruncated {
			return nil, nil, fmt.Errorf("%w: index directory %s has more than %d tokens", ErrLimit, v.Handle, g.cfg.EdgesMax)
		}
		for _, e := range v.Edges {
			name, ok := strings.CutPrefix(e.Handle, key+"|")
			if !ok {
				continue
			}
			tlo, thi, ok := tk.Span(name)
			switch {
			case !ok:
				edge = append(edge, e.Dst)
			case !within(tlo, lo, hi) && !within(thi, lo, hi) && !spans(tlo, thi, lo, hi):
			case within(tlo, lo, hi) && within(thi, lo, hi):
				inside = append(inside, e.Dst)
			default:
				edge = append(edge, e.Dst)
			}
		}
	}
	return inside, edge, nil
}

// within reports whether x lies inside the bounds.
func within(x value.Value, lo, hi *Bound) bool {
	if lo != nil {
		c, ok := value.Compare(x, lo.Value)
		if !ok || c < 0 || c == 0 && lo.Exclusive {
			return false
		}
	}
	if hi != nil {
		c, ok := value.Compare(x, hi.Value)
		if !ok || c > 0 || c == 0 && hi.Exclusive {
			return false
		}
	}
	return true
}

// spans reports whether the interval [tlo, thi] contains the whole query
// range (both ends inside neither: a token wider than the range).
func spans(tlo, thi value.Value, lo, hi *Bound) bool {
	if lo == nil || hi == nil {
		return false
	}
	c1, ok1 := value.Compare(tlo, lo.Value)
	c2, ok2 := value.Compare(thi, hi.Value)
	return ok1 && ok2 && c1 <= 0 && c2 >= 0
}
