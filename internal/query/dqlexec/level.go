package dqlexec

import (
	"fmt"
	"slices"
	"strings"

	"github.com/weft-db/weft/internal/dgraph"
	"github.com/weft-db/weft/internal/query/dql"
	"github.com/weft-db/weft/internal/query/schema"
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
	seen  map[uint64]bool
}

// block runs one query block and returns its entry in "data".
func (x *run) block(b *dql.Block) (*blockOut, error) {
	switch {
	case b.Shortest != nil:
		return x.shortest(b)
	case b.Func == nil:
		return x.aggBlock(b)
	}
	if b.IgnoreReflex {
		return nil, fmt.Errorf("%w: @ignorereflex", ErrUnsupported)
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
		if err != nil {
			return nil, err
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
		lc.rec = &recursion{sel: &b.Selection, depth: d, loop: b.Recurse.Loop, seen: map[uint64]bool{}}
		for _, u := range uids {
			lc.rec.seen[u] = true
		}
	}
	objs, err := x.level(&b.Selection, uids, lc)
	if err != nil {
		return nil, err
	}
	list := x.listOf(&b.Selection, uids, objs, "", nil)
	if b.Normalize {
		list = normalizeList(list)
	}
	return &blockOut{key: b.Name, val: list}, nil
}

// listOf renders a level's nodes in order: {"count": n} first when the
// selection asks count(uid), then each node's object unless @cascade
// removed it or it is empty (Dgraph omits empty objects). Edge facets
// (pred|key) are added per (parent, child) when facets is set.
func (x *run) listOf(sel *dql.Selection, uids []uint64, objs map[uint64]*object, pred string, facets func(u uint64) map[string]value.Value) []*object {
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
				for _, k := range slicesSortedKeys(fs) {
					o.add(k, fs[k], true)
				}
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
		if err := x.fetch(uids); err != nil {
			return nil, err
		}
	}
	for _, u := range uids {
		objs[u] = &object{}
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
// its facets, and defines its value variable.
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
					objs[u].add(vk, n.Values[vk], false)
				}
			}
			continue
		}
		v, vk, ok := langValue(n, f.Attr, f.Langs)
		if !ok {
			continue
		}
		objs[u].add(k, v, aliased)
		vals[u] = v
		if f.Facets != nil {
			addFacets(objs[u], f, f.Attr, n.Facets[vk], nil)
		}
	}
	x.defineVal(f.Var, vals)
	return nil
}

// addFacets adds the facets a field selects as "pred|key" (or their
// alias) and records facet variables under node u (when vars is set).
func addFacets(o *object, f *dql.Field, pred string, fs map[string]value.Value, vars func(name string, v value.Value)) {
	sel := selectFacets(f, pred, fs, vars)
	for _, k := range slicesSortedKeys(sel) {
		o.add(k, sel[k], true)
	}
}

// selectFacets returns the output keys and values of the facets f selects.
func selectFacets(f *dql.Field, pred string, fs map[string]value.Value, vars func(name string, v value.Value)) map[string]value.Value {
	if f.Facets == nil || len(fs) == 0 {
		return nil
	}
	out := map[string]value.Value{}
	if f.Facets.All {
		for k, v := range fs {
			out[pred+"|"+k] = v
		}
		return out
	}
	for _, fk := range f.Facets.Keys {
		v, ok := fs[fk.Key]
		if !ok {
			continue
		}
		if fk.Var != "" && vars != nil {
			vars(fk.Var, v)
		}
		if fk.Var != "" && fk.Alias == "" {
			continue // a facet assigned to a variable only is not output
		}
		if fk.Alias != "" {
			out[fk.Alias] = v
		} else {
			out[pred+"|"+fk.Key] = v
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
	lists := make(map[uint64][]uint64, len(uids))
	facetsOf := map[[2]uint64]map[string]value.Value{}
	var all []uint64
	for _, u := range uids {
		for _, e := range x.node(u).Edges[f.Attr] {
			if lc.rec != nil && !lc.rec.loop && lc.rec.seen[e.UID] {
				continue
			}
			if f.FacetsFilter != nil && !x.facetsPass(f.FacetsFilter, e.Facets) {
				continue
			}
			lists[u] = append(lists[u], e.UID)
			all = append(all, e.UID)
			if len(e.Facets) > 0 {
				facetsOf[[2]uint64{u, e.UID}] = e.Facets
			}
		}
	}
	kept, err := x.filter(f.Filter, sortedUnion(all))
	if err != nil {
		return err
	}
	keep := make(map[uint64]bool, len(kept))
	for _, c := range kept {
		keep[c] = true
	}
	if len(f.Order) > 0 {
		if err := x.fetch(kept); err != nil {
			return err
		}
	}
	var final []uint64
	for _, u := range uids {
		l := slices.DeleteFunc(lists[u], func(c uint64) bool { return !keep[c] })
		if f.Facets != nil && len(f.Facets.Order) > 0 {
			sortByFacets(l, f.Facets.Order, func(c uint64) map[string]value.Value { return facetsOf[[2]uint64{u, c}] })
		}
		if l, err = x.orderPage(&f.Selection, l); err != nil {
			return err
		}
		lists[u] = l
		final = append(final, l...)
	}
	final = sortedUnion(final)
	if f.Var != "" {
		x.uidVars[f.Var] = sortedUnion(x.uidVars[f.Var], final)
	}
	x.recordFacetVars(f, uids, lists, facetsOf)
	if prev := x.edgeLists[f]; prev != nil {
		for u, l := range lists {
			prev[u] = l
		}
	} else {
		x.edgeLists[f] = lists
	}
	if lc.rec != nil && !lc.rec.loop {
		for _, c := range final {
			lc.rec.seen[c] = true
		}
	}
	k, aliased := keyOf(f, f.Attr)
	if f.GroupBy != nil {
		for _, u := range uids {
			g, err := x.groupBy(&f.Selection, lists[u])
			if err != nil {
				return err
			}
			objs[u].add(k, []*object{g}, aliased)
		}
		return nil
	}
	if len(sub.Fields) == 0 && f.Facets == nil {
		sub = uidOnly
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
	for _, u := range uids {
		out := x.listOf(sub, lists[u], cobjs, f.Attr, func(c uint64) map[string]value.Value {
			return selectFacets(f, f.Attr, facetsOf[[2]uint64{u, c}], nil)
		})
		if f.Normalize {
			out = normalizeList(out)
		}
		if len(out) > 0 {
			objs[u].add(k, out, aliased)
		}
	}
	return nil
}

// uidOnly is the selection of a uid predicate asked for without braces.
var uidOnly = &dql.Selection{Fields: []*dql.Field{{Kind: dql.FieldPred, Attr: "uid"}}}

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
				c.terms = append(c.terms, dgraph.TermTokens(a.Value)...)
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
		if err := x.fetch(uids); err != nil {
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
				if c := cmpMissingLast(ka.v, ka.ok, kb.v, kb.ok, o.Desc); c != 0 {
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
