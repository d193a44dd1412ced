package exec

import (
	"fmt"
	"slices"
	"strings"

	"github.com/weft-db/weft/internal/dgraph"
	"github.com/weft-db/weft/internal/dgraph/dql"
	"github.com/weft-db/weft/internal/dgraph/index"
	"github.com/weft-db/weft/internal/dgraph/schema"
	"github.com/weft-db/weft/internal/value"
)

// levelCtx is what a level inherits from the levels above it.
type levelCtx struct {
	cascade *dql.Cascade // @cascade without fields applies to every level below
	rec     *recursion   // inside @recurse
	depth   int          // 1 at the root
}

// recursion is the state of a @recurse block.
type recursion struct {
	sel   *dql.Selection
	depth int // levels to produce, the root included
	loop  bool
	// seen holds the edges (predicate, from, to) followed so far: without
	// loop, an edge is followed once (Dgraph's rule: a node reached again by
	// another edge shows, but edges already walked are not walked again).
	seen map[recEdge]bool
}

type recEdge struct {
	pred     string
	from, to uint64
}

// block runs one query block and returns its entry in "data".
func (x *run) block(b *dql.Block) (*blockOut, error) {
	switch {
	case b.Shortest != nil:
		return x.shortest(b)
	case b.Func == nil:
		return x.aggBlock(b)
	}
	uids, err := x.root(b.Func)
	if err != nil {
		return nil, err
	}
	if uids, err = x.filter(b.Filter, uids); err != nil {
		return nil, err
	}
	if uids, err = x.orderPage(&b.Selection, uids); err != nil {
		return nil, err
	}
	if b.Var != "" {
		x.uidVars[b.Var] = sortedUnion(uids)
	}
	if b.GroupBy != nil {
		g, err := x.groupBy(&b.Selection, uids)
		if err != nil || g == nil {
			return nil, err // no groups: Dgraph omits the block
		}
		return &blockOut{key: b.Name, val: []*object{g}}, nil
	}
	lc := levelCtx{depth: 1}
	if b.Cascade != nil {
		lc.cascade = b.Cascade
	}
	if b.Recurse != nil {
		d := int(b.Recurse.Depth)
		if d == 0 || d > x.cfg.RecurseDepthMax {
			if b.Recurse.Loop && d == 0 {
				return nil, fmt.Errorf("%w: @recurse(loop: true) needs a depth", ErrInvalid)
			}
			d = x.cfg.RecurseDepthMax
		}
		lc.rec = &recursion{sel: &b.Selection, depth: d, loop: b.Recurse.Loop, seen: map[recEdge]bool{}}
	}
	objs, err := x.level(&b.Selection, uids, lc)
	if err != nil {
		return nil, err
	}
	list := x.listOf(&b.Selection, uids, objs, nil)
	if b.IgnoreReflex {
		for i, o := range list {
			list[i] = ignoreReflex(o, map[uint64]bool{})
		}
	}
	if b.Normalize {
		list = normalizeList(list)
	}
	return &blockOut{key: b.Name, val: list}, nil
}

// listOf renders a level's nodes in order: {"count": n} first when the
// selection asks count(uid), then each node's object unless @cascade
// removed it or it is empty (Dgraph omits empty objects). Edge facets
// (pred|key) are added per (parent, child) when facets is set.
func (x *run) listOf(sel *dql.Selection, uids []uint64, objs map[uint64]*object, facets func(u uint64) []facetOut) []*object {
	out := []*object{}
	for _, f := range sel.Fields {
		if f.Kind == dql.FieldCountUID {
			o := &object{}
			k, aliased := keyOf(f, "count")
			o.add(k, value.I64(int64(len(uids))), aliased)
			out = append(out, o)
		}
	}
	for _, u := range uids {
		o := objs[u]
		if o == nil {
			continue
		}
		if facets != nil {
			if fs := facets(u); len(fs) > 0 {
				o = o.clone()
				addFacets(o, fs)
			}
		}
		if len(o.keys) > 0 {
			out = append(out, o)
		}
	}
	return out
}

// keyOf is a field's output key: its alias, else def.
func keyOf(f *dql.Field, def string) (string, bool) {
	if f.Alias != "" {
		return f.Alias, true
	}
	return def, false
}

// level evaluates a selection for the distinct nodes uids: their nodes are
// read as one batch, then each field is computed for all of them at once,
// and uid-valued fields recurse one level down with all their children as
// the next batch. It returns each node's object (nil when @cascade
// removed it).
func (x *run) level(sel *dql.Selection, uids []uint64, lc levelCtx) (map[uint64]*object, error) {
	objs := make(map[uint64]*object, len(uids))
	if len(uids) == 0 {
		return objs, nil
	}
	if err := x.ctx.Err(); err != nil {
		return nil, err
	}
	if lc.rec != nil || needsData(sel) {
		if err := x.fetchPreds(uids, levelPreds(sel, lc.rec != nil)); err != nil {
			return nil, err
		}
	}
	for _, u := range uids {
		objs[u] = &object{uid: u}
	}
	for _, f := range sel.Fields {
		if err := x.field(sel, f, uids, objs, lc); err != nil {
			return nil, err
		}
	}
	cascade := sel.Cascade
	if cascade == nil {
		cascade = lc.cascade
	}
	if cascade != nil {
		x.applyCascade(sel, cascade, uids, objs)
	}
	return objs, nil
}

// needsData reports whether a selection reads its nodes: anything but uid
// and count(uid) fields does (a uid-only level costs no reads).
func needsData(sel *dql.Selection) bool {
	for _, f := range sel.Fields {
		if f.Kind == dql.FieldCountUID || f.Kind == dql.FieldPred && f.Attr == "uid" {
			continue
		}
		if f.Kind == dql.FieldVal || f.Kind == dql.FieldMath || f.Kind == dql.FieldAgg && f.ValVar != "" {
			continue
		}
		return true
	}
	return false
}

// applyCascade removes the objects missing a field the cascade requires.
func (x *run) applyCascade(sel *dql.Selection, c *dql.Cascade, uids []uint64, objs map[uint64]*object) {
	for _, f := range sel.Fields {
		if f.Kind != dql.FieldPred && f.Kind != dql.FieldCount || f.Attr == "uid" {
			continue
		}
		if len(c.Fields) > 0 && !slices.Contains(c.Fields, f.Attr) {
			continue
		}
		k, _ := keyOf(f, fieldKey(f))
		for _, u := range uids {
			if o := objs[u]; o != nil && !o.has(k) && !(len(f.Langs) == 1 && f.Langs[0] == "*" && hasPrefixKey(o, f.Attr)) {
				objs[u] = nil
			}
		}
	}
}

func hasPrefixKey(o *object, pred string) bool {
	for _, k := range o.keys {
		if k == pred || strings.HasPrefix(k, pred+"@") {
			return true
		}
	}
	return false
}

// fieldKey is the key a field answers under without an alias.
func fieldKey(f *dql.Field) string {
	switch f.Kind {
	case dql.FieldCount:
		return "count(" + f.Attr + langSuffix(f.Langs) + ")"
	case dql.FieldVal:
		return "val(" + f.ValVar + ")"
	case dql.FieldAgg:
		if f.ValVar != "" {
			return f.Agg + "(val(" + f.ValVar + "))"
		}
		return f.Agg + "(" + f.Attr + ")"
	case dql.FieldCheckpwd:
		return "checkpwd(" + f.Attr + ")"
	case dql.FieldCountUID:
		return "count"
	}
	return f.Attr + langSuffix(f.Langs)
}

func langSuffix(langs []string) string {
	if len(langs) == 0 {
		return ""
	}
	return "@" + strings.Join(langs, ":")
}

// field computes one field for every node of a level.
func (x *run) field(sel *dql.Selection, f *dql.Field, uids []uint64, objs map[uint64]*object, lc levelCtx) error {
	switch f.Kind {
	case dql.FieldPred:
		switch {
		case f.Attr == "uid":
			k, aliased := keyOf(f, "uid")
			for _, u := range uids {
				objs[u].add(k, value.Str(dgraph.FormatUID(u)), aliased)
			}
			if f.Var != "" {
				x.uidVars[f.Var] = sortedUnion(x.uidVars[f.Var], uids)
			}
			return nil
		case x.isEdge(f, uids):
			return x.edgeField(f, uids, objs, lc)
		}
		return x.scalarField(f, uids, objs)
	case dql.FieldCount:
		return x.countField(f, uids, objs)
	case dql.FieldCountUID:
		return nil // listOf renders it
	case dql.FieldVal:
		k, aliased := keyOf(f, fieldKey(f))
		vals := map[uint64]value.Value{}
		for _, u := range uids {
			if v, ok := x.varValue(sel, f.ValVar, u); ok {
				objs[u].add(k, v, aliased)
				vals[u] = v
			}
		}
		x.defineVal(f.Var, vals)
		return nil
	case dql.FieldAgg:
		return x.aggField(sel, f, uids, objs)
	case dql.FieldMath:
		return x.mathField(sel, f, uids, objs)
	case dql.FieldExpand:
		return x.expand(sel, f, uids, objs, lc)
	case dql.FieldCheckpwd:
		k, aliased := keyOf(f, fieldKey(f))
		for _, u := range uids {
			if v, ok := x.node(u).Values[f.Attr]; ok && v.Kind() == value.String {
				objs[u].add(k, value.Boolean(dgraph.CheckPassword(v.Str(), f.Password)), aliased)
			}
		}
		return nil
	}
	return fmt.Errorf("%w: field kind %s", ErrUnsupported, f.Kind)
}

// defineVal merges values into value variable name ("" defines nothing).
func (x *run) defineVal(name string, vals map[uint64]value.Value) {
	if name == "" {
		return
	}
	m := x.valVars[name]
	if m == nil {
		m = map[uint64]value.Value{}
		x.valVars[name] = m
	}
	for u, v := range vals {
		m[u] = v
	}
}

// isEdge decides whether a field is uid-valued: reverse predicates, uid
// types, fields with sub-fields, and predicates the schema lacks that the
// nodes hold as edges.
func (x *run) isEdge(f *dql.Field, uids []uint64) bool {
	if strings.HasPrefix(f.Attr, "~") || len(f.Fields) > 0 {
		return true
	}
	if P, ok := x.predOf(f.Attr); ok {
		return P.Type == schema.UID
	}
	for _, u := range uids {
		if len(x.node(u).Edges[f.Attr]) > 0 {
			return true
		}
	}
	return false
}

// scalarField outputs a value predicate (in the languages asked for) and
// its facets ("name@en|origin", before the value, as Dgraph prints them),
// and defines its value variable.
func (x *run) scalarField(f *dql.Field, uids []uint64, objs map[uint64]*object) error {
	if P, ok := x.predOf(f.Attr); ok && P.Type == schema.Password {
		return nil // passwords are never returned, only checked with checkpwd
	}
	k, aliased := keyOf(f, fieldKey(f))
	vals := map[uint64]value.Value{}
	all := len(f.Langs) == 1 && f.Langs[0] == "*"
	for _, u := range uids {
		n := x.node(u)
		if all {
			for _, vk := range slicesSortedKeys(n.Values) {
				if vk == f.Attr || strings.HasPrefix(vk, f.Attr+"@") {
					addFacets(objs[u], selectFacets(f, vk, n.Facets[vk]))
					objs[u].add(vk, n.Values[vk], false)
				}
			}
			continue
		}
		v, vk, ok := langValue(n, f.Attr, f.Langs)
		if !ok {
			continue
		}
		addFacets(objs[u], selectFacets(f, fieldKey(f), n.Facets[vk]))
		objs[u].add(k, v, aliased)
		vals[u] = v
		if f.Facets != nil {
			for _, fk := range f.Facets.Keys {
				if fv, ok := n.Facets[vk][fk.Key]; ok && fk.Var != "" {
					x.defineVal(fk.Var, map[uint64]value.Value{u: fv})
				}
			}
		}
	}
	x.defineVal(f.Var, vals)
	return nil
}

// facetOut is one facet as printed: its key ("pred|facet" or an alias).
type facetOut struct {
	key string
	val value.Value
}

func addFacets(o *object, fs []facetOut) {
	for _, f := range fs {
		o.add(f.key, f.val, true)
	}
}

// selectFacets returns the facets field f asks for among fs, in facet key
// order, named "prefix|facet" or by their alias.
func selectFacets(f *dql.Field, prefix string, fs map[string]value.Value) []facetOut {
	if f.Facets == nil || len(fs) == 0 {
		return nil
	}
	var out []facetOut
	for _, k := range slicesSortedKeys(fs) {
		if f.Facets.All {
			out = append(out, facetOut{prefix + "|" + k, fs[k]})
			continue
		}
		for _, fk := range f.Facets.Keys {
			if fk.Key != k {
				continue
			}
			name := prefix + "|" + k
			if fk.Alias != "" {
				name = fk.Alias
			}
			out = append(out, facetOut{name, fs[k]})
		}
	}
	return out
}

// countField outputs count(pred) per node: its edges (those passing the
// field's filter when it has one) or its values.
func (x *run) countField(f *dql.Field, uids []uint64, objs map[uint64]*object) error {
	k, aliased := keyOf(f, fieldKey(f))
	vals := map[uint64]value.Value{}
	var keep map[uint64]bool
	if f.Filter != nil {
		var all []uint64
		for _, u := range uids {
			for _, e := range x.node(u).Edges[f.Attr] {
				all = append(all, e.UID)
			}
		}
		kept, err := x.filter(f.Filter, sortedUnion(all))
		if err != nil {
			return err
		}
		keep = map[uint64]bool{}
		for _, c := range kept {
			keep[c] = true
		}
	}
	for _, u := range uids {
		n := x.node(u)
		c := count(n, f.Attr)
		if len(f.Langs) > 0 {
			v, _, _ := langValue(n, f.Attr, f.Langs)
			c = int64(len(elems(v)))
		}
		if keep != nil {
			c = 0
			for _, e := range n.Edges[f.Attr] {
				if keep[e.UID] {
					c++
				}
			}
		}
		objs[u].add(k, value.I64(c), aliased)
		vals[u] = value.I64(c)
	}
	x.defineVal(f.Var, vals)
	return nil
}

// edgeField follows a uid-valued predicate from every node of the level:
// facet filter, @filter (once, over all children), order and pagination
// per parent, then the children's own level as one batch.
func (x *run) edgeField(f *dql.Field, uids []uint64, objs map[uint64]*object, lc levelCtx) error {
	sub := &f.Selection
	if lc.rec != nil {
		if lc.depth >= lc.rec.depth {
			return nil
		}
		sub = lc.rec.sel
	}
	es := x.collectEdges(f, uids, lc)
	final, err := x.narrowEdges(f, uids, es)
	if err != nil {
		return err
	}
	if f.Var != "" {
		x.uidVars[f.Var] = sortedUnion(x.uidVars[f.Var], final)
	}
	x.recordFacetVars(f, uids, es.lists, es.facets)
	defer x.keepLists(f, es.lists) // as they are when the field is done (after @cascade)
	k, aliased := keyOf(f, f.Attr)
	switch {
	case f.GroupBy != nil:
		for _, u := range uids {
			g, err := x.groupBy(&f.Selection, es.lists[u])
			if err != nil {
				return err
			}
			if g != nil {
				objs[u].add(k, []*object{g}, aliased)
			}
		}
		return nil
	case len(sub.Fields) == 0 && f.Facets == nil:
		// Without braces a uid predicate prints nothing (as in Dgraph); it
		// still defines its variable and counts for @cascade.
		for _, u := range uids {
			if len(es.lists[u]) > 0 {
				objs[u].hidden = append(objs[u].hidden, k)
			}
		}
		return nil
	}
	child := levelCtx{depth: lc.depth + 1, rec: lc.rec}
	if lc.cascade != nil && len(lc.cascade.Fields) == 0 {
		child.cascade = lc.cascade
	}
	if f.Cascade != nil {
		child.cascade = f.Cascade
	}
	cobjs, err := x.level(sub, final, child)
	if err != nil {
		return err
	}
	if child.cascade != nil || sub.Cascade != nil {
		x.dropCascaded(f, uids, es.lists, final, cobjs)
	}
	x.renderEdges(f, sub, uids, es, cobjs, objs)
	return nil
}

// edgeSet is what a uid-valued field reaches from a level's nodes: each
// parent's children (in uid order, then as ordered and paginated), and
// the facets of each (parent, child) edge that has some.
type edgeSet struct {
	lists  map[uint64][]uint64
	facets map[[2]uint64]map[string]value.Value
	all    []uint64
}

// collectEdges gathers the edges of f from every node of the level,
// keeping those passing @facets(filter) (and, inside @recurse without loop,
// those not walked yet).
func (x *run) collectEdges(f *dql.Field, uids []uint64, lc levelCtx) edgeSet {
	es := edgeSet{lists: make(map[uint64][]uint64, len(uids)), facets: map[[2]uint64]map[string]value.Value{}}
	for _, u := range uids {
		for _, e := range x.node(u).Edges[f.Attr] {
			if lc.rec != nil && !lc.rec.loop {
				k := recEdge{f.Attr, u, e.UID}
				if lc.rec.seen[k] {
					continue
				}
				lc.rec.seen[k] = true
			}
			if f.FacetsFilter != nil && !x.facetsPass(f.FacetsFilter, e.Facets) {
				continue
			}
			es.lists[u] = append(es.lists[u], e.UID)
			es.all = append(es.all, e.UID)
			if len(e.Facets) > 0 {
				es.facets[[2]uint64{u, e.UID}] = e.Facets
			}
		}
	}
	return es
}

// narrowEdges applies @filter to all the children at once, then facet
// order, order and pagination per parent; it returns the children left,
// sorted and distinct (the next level).
func (x *run) narrowEdges(f *dql.Field, uids []uint64, es edgeSet) ([]uint64, error) {
	kept, err := x.filter(f.Filter, sortedUnion(es.all))
	if err != nil {
		return nil, err
	}
	keep := make(map[uint64]bool, len(kept))
	for _, c := range kept {
		keep[c] = true
	}
	if len(f.Order) > 0 {
		if err := x.fetchPreds(kept, orderPreds(f.Order)); err != nil { // one batch for every parent's ordering
			return nil, err
		}
	}
	var final []uint64
	for _, u := range uids {
		l := slices.DeleteFunc(es.lists[u], func(c uint64) bool { return !keep[c] })
		if f.Facets != nil && len(f.Facets.Order) > 0 {
			sortByFacets(l, f.Facets.Order, func(c uint64) map[string]value.Value { return es.facets[[2]uint64{u, c}] })
		}
		if l, err = x.orderPage(&f.Selection, l); err != nil {
			return nil, err
		}
		es.lists[u] = l
		final = append(final, l...)
	}
	return sortedUnion(final), nil
}

// renderEdges adds each parent's children to its object: a list, or one
// object for a non-list uid predicate, with the edges' facets.
func (x *run) renderEdges(f *dql.Field, sub *dql.Selection, uids []uint64, es edgeSet, cobjs, objs map[uint64]*object) {
	k, aliased := keyOf(f, f.Attr)
	single := x.singleUID(f) && !slices.ContainsFunc(sub.Fields, func(g *dql.Field) bool { return g.Kind == dql.FieldCountUID })
	for _, u := range uids {
		out := x.listOf(sub, es.lists[u], cobjs, func(c uint64) []facetOut {
			return selectFacets(f, f.Attr, es.facets[[2]uint64{u, c}])
		})
		if f.Normalize {
			out = normalizeList(out)
		}
		switch {
		case len(out) == 0:
		case single:
			objs[u].add(k, out[0], aliased) // Dgraph prints a non-list uid predicate as one object
		default:
			objs[u].add(k, out, aliased)
		}
	}
}

// singleUID reports whether f is a predicate of schema type uid (not
// [uid]): at most one edge, printed as an object.
func (x *run) singleUID(f *dql.Field) bool {
	P, ok := x.predOf(f.Attr)
	return ok && P.Type == schema.UID && !P.List
}

// keepLists records each parent's children of a uid-valued field, for
// aggregates and values summed from below. A copy: @recurse evaluates the
// same field again at deeper levels.
func (x *run) keepLists(f *dql.Field, lists map[uint64][]uint64) {
	m := x.edgeLists[f]
	if m == nil {
		m = make(map[uint64][]uint64, len(lists))
		x.edgeLists[f] = m
	}
	for u, l := range lists {
		m[u] = l
	}
}

// dropCascaded removes the children @cascade removed from each parent's
// list and from the field's uid variable (Dgraph's variables hold what
// survived the cascade).
func (x *run) dropCascaded(f *dql.Field, uids []uint64, lists map[uint64][]uint64, final []uint64, cobjs map[uint64]*object) {
	gone := map[uint64]bool{}
	for _, c := range final {
		if cobjs[c] == nil {
			gone[c] = true
		}
	}
	if len(gone) == 0 {
		return
	}
	for _, u := range uids {
		lists[u] = slices.DeleteFunc(lists[u], func(c uint64) bool { return gone[c] })
	}
	if f.Var != "" {
		x.uidVars[f.Var] = slices.DeleteFunc(x.uidVars[f.Var], func(c uint64) bool { return gone[c] })
	}
}

// recordFacetVars defines the value variables of @facets(v as key): the
// facet of the edge reaching each child.
func (x *run) recordFacetVars(f *dql.Field, uids []uint64, lists map[uint64][]uint64, facetsOf map[[2]uint64]map[string]value.Value) {
	if f.Facets == nil {
		return
	}
	for _, fk := range f.Facets.Keys {
		if fk.Var == "" {
			continue
		}
		vals := map[uint64]value.Value{}
		for _, u := range uids {
			for _, c := range lists[u] {
				if v, ok := facetsOf[[2]uint64{u, c}][fk.Key]; ok {
					vals[c] = v
				}
			}
		}
		x.defineVal(fk.Var, vals)
	}
}

// facetsPass evaluates @facets(filter) on an edge's facets.
func (x *run) facetsPass(f *dql.Filter, fs map[string]value.Value) bool {
	switch f.Op {
	case dql.FilterFunc:
		fn := f.Func
		v, ok := fs[fn.Attr]
		if !ok {
			return false
		}
		var args []value.Value
		for _, a := range fn.Args {
			args = append(args, value.Str(a.Value))
		}
		switch fn.Name {
		case "eq", "le", "lt", "ge", "gt", "between":
			return compareOne(fn.Name, v, args)
		case "allofterms", "anyofterms":
			c := &compiled{f: fn}
			for _, a := range fn.Args {
				c.terms = append(c.terms, index.TermTokens(a.Value)...)
			}
			return matchTerms(c, []value.Value{v})
		case "has":
			return true
		}
		return false
	case dql.FilterNot:
		return !x.facetsPass(f.Children[0], fs)
	}
	and := f.Op == dql.FilterAnd
	for _, c := range f.Children {
		if x.facetsPass(c, fs) != and {
			return !and
		}
	}
	return and
}

func sortByFacets(l []uint64, order []dql.FacetOrder, facets func(c uint64) map[string]value.Value) {
	slices.SortStableFunc(l, func(a, b uint64) int {
		for _, o := range order {
			va, oka := facets(a)[o.Key]
			vb, okb := facets(b)[o.Key]
			if c := cmpMissingLast(va, oka, vb, okb, o.Desc); c != 0 {
				return c
			}
		}
		return 0
	})
}

// cmpMissingLast orders present values (descending when desc) before
// missing ones.
func cmpMissingLast(a value.Value, oka bool, b value.Value, okb bool, desc bool) int {
	switch {
	case !oka && !okb:
		return 0
	case !oka:
		return 1
	case !okb:
		return -1
	}
	c, ok := value.Compare(a, b)
	if !ok {
		c = strings.Compare(a.Kind().String(), b.Kind().String())
	}
	if desc {
		return -c
	}
	return c
}

// orderPage applies after, the orderings and offset/first to a list of
// uids in uid order.
func (x *run) orderPage(sel *dql.Selection, uids []uint64) ([]uint64, error) {
	p := sel.Page
	if p.After != nil {
		after := *p.After
		uids = slices.DeleteFunc(slices.Clone(uids), func(u uint64) bool { return u <= after })
	}
	if len(sel.Order) > 0 {
		if err := x.fetchPreds(uids, orderPreds(sel.Order)); err != nil {
			return nil, err
		}
		uids = slices.Clone(uids)
		keys := make(map[uint64][]orderKey, len(uids))
		for _, u := range uids {
			ks := make([]orderKey, len(sel.Order))
			for i, o := range sel.Order {
				if o.Var != "" {
					ks[i].v, ks[i].ok = x.valVars[o.Var][u]
				} else {
					ks[i].v, _, ks[i].ok = langValue(x.node(u), o.Attr, o.Langs)
				}
				if ks[i].ok && ks[i].v.Kind() == value.List {
					ks[i].ok = len(ks[i].v.List()) > 0
					if ks[i].ok {
						ks[i].v = ks[i].v.List()[0]
					}
				}
			}
			keys[u] = ks
		}
		slices.SortStableFunc(uids, func(a, b uint64) int {
			for i, o := range sel.Order {
				ka, kb := keys[a][i], keys[b][i]
				c := cmpMissingLast(ka.v, ka.ok, kb.v, kb.ok, o.Desc)
				if i > 0 && ka.ok != kb.ok {
					// Dgraph sorts a missing value of a later key as the
					// greatest: last ascending, first descending.
					c = -c
					if !o.Desc {
						c = -c
					}
				}
				if c != 0 {
					return c
				}
			}
			return 0
		})
	}
	return page(uids, p), nil
}

type orderKey struct {
	v  value.Value
	ok bool
}

// page applies offset and first (negative first: the last -first).
func page(uids []uint64, p dql.Page) []uint64 {
	if p.Offset != nil {
		off := int(min(max(*p.Offset, 0), int64(len(uids))))
		uids = uids[off:]
	}
	if p.First != nil {
		n := *p.First
		switch {
		case n >= 0 && n < int64(len(uids)):
			uids = uids[:n]
		case n < 0 && -n < int64(len(uids)):
			uids = uids[int64(len(uids))+n:]
		}
	}
	return uids
}

func slicesSortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
