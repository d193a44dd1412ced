package dql

import "strings"

// fieldCtx says what a selection may hold: under @groupby only aggregates
// and counts; in a block without a root function only aggregates and math.
type fieldCtx struct {
	groupBy bool
	aggOnly bool
}

// fieldSpread is a ...fragment reference, replaced by the fragment's fields
// before Parse returns.
const fieldSpread FieldKind = 255

// fields reads fields up to the closing '}' (its '{' already read).
func (p *parser) fields(sel *Selection, ctx fieldCtx) error {
	if err := p.enter(p.peek().pos); err != nil {
		return err
	}
	defer p.leave()
	for {
		t := p.peek()
		switch {
		case t.is("}"):
			p.next()
			return nil
		case t.is(","):
			p.next()
			continue
		case t.is("."):
			f, err := p.spread()
			if err != nil {
				return err
			}
			sel.Fields = append(sel.Fields, f)
			continue
		}
		f, err := p.field(ctx)
		if err != nil {
			return err
		}
		sel.Fields = append(sel.Fields, f)
		if f.Kind != FieldPred && f.Kind != FieldExpand {
			if t := p.peek(); t.is("{") || t.is("@") || t.is("(") {
				return errorAt(t.pos, "%s cannot take %s", f.Kind, t.describe())
			}
		}
	}
}

// spread reads ...name, a fragment reference.
func (p *parser) spread() (*Field, error) {
	t := p.peek()
	d2, d3, w := p.peekAt(1), p.peekAt(2), p.peekAt(3)
	if !d2.is(".") || !d3.is(".") || d2.off != t.end || d3.off != d2.end || w.kind != tokWord {
		return nil, errorAt(t.pos, "expected a field or ...fragment, found '.'")
	}
	p.next()
	p.next()
	p.next()
	p.next()
	p.hasSpread = true
	return &Field{Pos: t.pos, Kind: fieldSpread, Attr: w.text}, nil
}

// field reads [alias:] [v as] head, where head is a predicate with its
// languages, arguments, directives and sub-fields, or one of count(...),
// val(v), min|max|sum|avg(...), math(...), expand(...), checkpwd(...).
func (p *parser) field(ctx fieldCtx) (*Field, error) {
	start := p.peek()
	f := &Field{Pos: start.pos}
	if err := p.fieldPrefix(f); err != nil {
		return nil, err
	}
	head := p.peek()
	if head.kind == tokWord && p.peekAt(1).is("(") {
		done, err := p.funcField(f, head, ctx)
		if done || err != nil {
			return f, err
		}
	}
	name, _, err := p.name("a predicate, '}' or a field function (count, val, math, expand, ...)")
	if err != nil {
		return nil, err
	}
	switch {
	case ctx.groupBy:
		return nil, errorAt(head.pos, "only aggregates and count are allowed inside @groupby, found %s", name)
	case ctx.aggOnly:
		return nil, errorAt(head.pos, "a block without func only aggregates: use min/max/sum/avg(val(v)) or math(...), found %s", name)
	}
	f.Kind, f.Attr = FieldPred, name
	if err := p.fieldTail(f, tailPred); err != nil {
		return nil, err
	}
	if t := p.peek(); t.is("{") {
		if len(f.Langs) > 0 {
			return nil, errorAt(t.pos, "%s@%s cannot have sub-fields", name, strings.Join(f.Langs, ":"))
		}
		p.next()
		if err := p.fields(&f.Selection, fieldCtx{groupBy: f.GroupBy != nil}); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// fieldPrefix reads "alias:" and "v as", in either order, each at most
// once.
func (p *parser) fieldPrefix(f *Field) error {
	for {
		t := p.peek()
		if t.kind == tokWord && p.isAsAt(1) {
			if f.Var != "" {
				return errorAt(t.pos, "a field can define one variable only")
			}
			v, _, err := p.varName("a variable name")
			if err != nil {
				return err
			}
			p.next() // as
			f.Var = v
			continue
		}
		if n := p.nameSpan(0); n > 0 && p.peekAt(n).is(":") {
			if f.Alias != "" {
				return errorAt(t.pos, "a field can have one alias only")
			}
			f.Alias, _, _ = p.name("")
			p.next() // :
			continue
		}
		return nil
	}
}

// funcField reads a field that looks like a function call. done is false
// when head(...) is a predicate with arguments, name(first: 10).
func (p *parser) funcField(f *Field, head token, ctx fieldCtx) (done bool, err error) {
	fn := strings.ToLower(head.text)
	switch fn {
	case "count":
		return true, p.countField(f, ctx)
	case "min", "max", "sum", "avg":
		return true, p.aggField(f, fn, ctx)
	case "math":
		if ctx.groupBy {
			return true, errorAt(head.pos, "math is not allowed inside @groupby")
		}
		return true, p.mathField(f)
	}
	switch {
	case fn == "uid":
		return true, errorAt(head.pos, "uid(...) is not a field: use uid, or val(v) for a value variable")
	case ctx.groupBy && (fn == "val" || fn == "expand" || fn == "checkpwd"):
		return true, errorAt(head.pos, "only aggregates and count are allowed inside @groupby, found %s", head.text)
	case ctx.aggOnly && (fn == "val" || fn == "expand" || fn == "checkpwd"):
		return true, errorAt(head.pos, "a block without func only aggregates: use min/max/sum/avg(val(v)) or math(...), found %s", head.text)
	case fn == "val":
		return true, p.valField(f)
	case fn == "expand":
		return true, p.expandField(f)
	case fn == "checkpwd":
		return true, p.checkpwdField(f)
	}
	return false, nil
}

// countField reads count(uid) or count(pred@lang (args) @filter(...)).
func (p *parser) countField(f *Field, ctx fieldCtx) error {
	head := p.next()
	p.next() // (
	if ctx.aggOnly {
		return errorAt(head.pos, "a block without func only aggregates: count is not allowed")
	}
	if t := p.peek(); t.isWord("uid") && p.peekAt(1).is(")") {
		p.next()
		p.next()
		f.Kind = FieldCountUID
		return nil
	}
	if t := p.peek(); t.is(")") {
		return errorAt(t.pos, "count() needs a predicate; count the nodes with count(uid)")
	}
	name, _, err := p.name("a predicate inside count()")
	if err != nil {
		return err
	}
	f.Kind, f.Attr = FieldCount, name
	if err := p.fieldTail(f, tailCount); err != nil {
		return err
	}
	_, err = p.expect(")", "')' to close count(")
	return err
}

// valField reads val(v).
func (p *parser) valField(f *Field) error {
	head := p.next()
	p.next() // (
	if f.Var != "" {
		return errorAt(f.Pos, "cannot assign a variable to val()")
	}
	v, _, err := p.varName("a value variable inside val()")
	if err != nil {
		return err
	}
	if t := p.peek(); !t.is(")") {
		return errorAt(head.pos, "val() takes exactly one variable")
	}
	p.next()
	f.Kind, f.ValVar = FieldVal, v
	return nil
}

// aggField reads min|max|sum|avg(val(v)), or of a predicate under
// @groupby.
func (p *parser) aggField(f *Field, agg string, ctx fieldCtx) error {
	head := p.next()
	p.next() // (
	f.Kind, f.Agg = FieldAgg, agg
	if ctx.groupBy {
		name, _, err := p.name("a predicate to aggregate")
		if err != nil {
			return err
		}
		f.Attr = name
		if p.peek().is("@") {
			p.next()
			if f.Langs, err = p.langs(); err != nil {
				return err
			}
		}
	} else {
		if t := p.peek(); !t.isWord("val") || !p.peekAt(1).is("(") {
			return errorAt(t.pos, "%s takes a value variable, %s(val(v)), found %s", head.text, agg, t.describe())
		}
		p.next()
		p.next()
		v, _, err := p.varName("a value variable inside val()")
		if err != nil {
			return err
		}
		f.ValVar = v
		if _, err := p.expect(")", "')' to close val("); err != nil {
			return err
		}
	}
	_, err := p.expect(")", "')' to close "+agg+"(")
	return err
}

// mathField reads math(expr).
func (p *parser) mathField(f *Field) error {
	head := p.next()
	open := p.next()
	if f.Var == "" && f.Alias == "" {
		return errorAt(head.pos, "math() must define a variable (v as math(...)) or have an alias")
	}
	if p.peek().is(")") {
		return errorAt(open.pos, "math() needs an expression")
	}
	m, err := p.mathExpr(0)
	if err != nil {
		return err
	}
	f.Kind, f.Math = FieldMath, m
	_, err = p.expect(")", "')' to close math(")
	return err
}

// expandField reads expand(_all_ | val(v) | Type, ...) [@filter(type(...))] [{ fields }].
func (p *parser) expandField(f *Field) error {
	head := p.next()
	p.next() // (
	switch {
	case f.Var != "":
		return errorAt(f.Pos, "expand() cannot define a variable")
	case f.Alias != "":
		return errorAt(f.Pos, "expand() cannot have an alias")
	}
	f.Kind = FieldExpand
	t := p.peek()
	switch {
	case t.isWord("val") && p.peekAt(1).is("("):
		p.next()
		p.next()
		v, _, err := p.varName("a variable inside val()")
		if err != nil {
			return err
		}
		f.ValVar = v
		if _, err := p.expect(")", "')' to close val("); err != nil {
			return err
		}
	case t.kind == tokWord && (t.text == "_forward_" || t.text == "_reverse_"):
		return errorAt(t.pos, "expand(%s) is no longer supported; use expand(_all_) or a type", t.text)
	default:
		for {
			name, _, err := p.name("_all_, val(v) or a type name inside expand()")
			if err != nil {
				return err
			}
			f.Expand = append(f.Expand, name)
			if !p.peek().is(",") {
				break
			}
			p.next()
		}
		for _, e := range f.Expand {
			if e == "_all_" && len(f.Expand) > 1 {
				return errorAt(head.pos, "expand(_all_) cannot list types too")
			}
		}
	}
	if _, err := p.expect(")", "')' to close expand("); err != nil {
		return err
	}
	if err := p.fieldTail(f, tailExpand); err != nil {
		return err
	}
	if t := p.peek(); t.is("{") {
		p.next()
		return p.fields(&f.Selection, fieldCtx{})
	}
	return nil
}

// checkpwdField reads checkpwd(pred, "password").
func (p *parser) checkpwdField(f *Field) error {
	p.next()
	p.next() // (
	name, _, err := p.name("a password predicate")
	if err != nil {
		return err
	}
	if _, err := p.expect(",", "',' and the password to check"); err != nil {
		return err
	}
	pw, _, err := p.scalar("the password to check")
	if err != nil {
		return err
	}
	f.Kind, f.Attr, f.Password = FieldCheckpwd, name, pw
	_, err = p.expect(")", "')' to close checkpwd(")
	return err
}

// tailMode says what may follow a field's head.
type tailMode uint8

const (
	tailPred   tailMode = iota // languages, arguments, any field directive
	tailCount                  // inside count(): languages, arguments, @filter
	tailExpand                 // after expand(...): @filter of types only
)

// fieldDirectives are the directives a predicate takes; any other word
// after '@' is a language list (name@en).
var fieldDirectives = map[string]bool{"filter": true, "facets": true, "cascade": true, "normalize": true,
	"groupby": true, "recurse": true, "ignorereflex": true}

// fieldTail reads, in any order, a field's languages @en:fr, arguments
// (first: n, ...) and directives.
func (p *parser) fieldTail(f *Field, mode tailMode) error {
	seen := map[string]bool{}
	for {
		t := p.peek()
		switch {
		case t.is("("):
			if mode == tailExpand {
				return errorAt(t.pos, "expand() takes no arguments")
			}
			if seen["("] {
				return errorAt(t.pos, "arguments given twice: put them in one (...)")
			}
			seen["("] = true
			p.next()
			if err := p.fieldArgs(f); err != nil {
				return err
			}
		case t.is("@"):
			p.next()
			if err := p.fieldAt(f, mode, seen); err != nil {
				return err
			}
		default:
			return nil
		}
	}
}

// fieldArgs reads a field's arguments after '('.
func (p *parser) fieldArgs(f *Field) error {
	if t := p.peek(); t.is(")") {
		return errorAt(t.pos, "empty arguments ()")
	}
	seen := map[string]bool{}
	for {
		kt := p.peek()
		if kt.kind != tokWord {
			return p.unexpected(kt, "an argument name (first, offset, after, orderasc, orderdesc)")
		}
		key := kt.text
		switch {
		case !isArgKey(key):
			return errorAt(kt.pos, "unknown argument %q of %s (first, offset, after, orderasc, orderdesc)", key, f.Attr)
		case seen[key] && key != "orderasc" && key != "orderdesc":
			return errorAt(kt.pos, "argument %s given twice", key)
		}
		seen[key] = true
		p.next()
		if _, err := p.expect(":", "':' after "+key); err != nil {
			return err
		}
		if err := p.selectionArg(&f.Selection, key, seen); err != nil {
			return err
		}
		if done, err := p.argSeparator(); done || err != nil {
			return err
		}
	}
}

// fieldAt reads what follows '@' on a field: a directive or languages.
func (p *parser) fieldAt(f *Field, mode tailMode, seen map[string]bool) error {
	t := p.peek()
	name := strings.ToLower(t.text)
	if t.kind != tokWord || !fieldDirectives[name] {
		if mode == tailExpand {
			return p.unexpected(t, "@filter after expand()")
		}
		if len(f.Langs) > 0 {
			return errorAt(t.pos, "languages given twice")
		}
		langs, err := p.langs()
		f.Langs = langs
		return err
	}
	p.next()
	switch {
	case mode == tailCount && name != "filter":
		return errorAt(t.pos, "only @filter applies inside count()")
	case mode == tailExpand && name != "filter":
		return errorAt(t.pos, "expand() takes only @filter of type() functions")
	case name == "recurse" || name == "ignorereflex":
		return errorAt(t.pos, "@%s applies to query blocks only", name)
	}
	if name != "facets" {
		if seen[name] {
			return errorAt(t.pos, "@%s given twice (combine filters with AND, OR and parentheses)", name)
		}
		seen[name] = true
	}
	var err error
	switch name {
	case "filter":
		if f.Filter, err = p.filterDirective(ctxFilter); err == nil && mode == tailExpand {
			err = onlyTypeFuncs(f.Filter)
		}
	case "facets":
		err = p.facets(f)
	case "cascade":
		f.Cascade, err = p.cascade()
	case "normalize":
		f.Normalize = true
	case "groupby":
		f.GroupBy, err = p.groupBy()
	}
	return err
}

func onlyTypeFuncs(f *Filter) error {
	if f == nil {
		return nil
	}
	if f.Op == FilterFunc && f.Func.Name != "type" {
		return errorAt(f.Func.Pos, "expand is only compatible with type filters, found %s", f.Func.Name)
	}
	for _, c := range f.Children {
		if err := onlyTypeFuncs(c); err != nil {
			return err
		}
	}
	return nil
}

// facets reads @facets, @facets(keys...) or @facets(filter).
func (p *parser) facets(f *Field) error {
	at := p.peek()
	if !at.is("(") {
		if f.Facets != nil {
			return errorAt(at.pos, "@facets given twice")
		}
		f.Facets = &Facets{All: true}
		return nil
	}
	t1, t2 := p.peekAt(1), p.peekAt(2)
	isFilter := t1.is("(") || t1.kind == tokWord && (t2.is("(") ||
		t1.isWord("not") && t2.kind == tokWord && !t2.isWord("as"))
	if isFilter {
		if f.FacetsFilter != nil {
			return errorAt(at.pos, "only one facets filter is allowed")
		}
		ft, err := p.filterDirective(ctxFacet)
		f.FacetsFilter = ft
		return err
	}
	if f.Facets != nil {
		return errorAt(at.pos, "@facets given twice")
	}
	p.next() // (
	fc := &Facets{}
	f.Facets = fc
	if p.peek().is(")") {
		p.next()
		return nil
	}
	index := map[string]int{} // key → position in fc.Keys
	ordered := map[string]bool{}
	for {
		if err := p.facetItem(fc, index, ordered); err != nil {
			return err
		}
		if done, err := p.argSeparator(); done || err != nil {
			return err
		}
	}
}

// facetItem reads [orderasc: | orderdesc: | alias:] [v as] key and merges
// it into fc: a key listed twice (as it is when a facet is both fetched and
// ordered by) appears once.
func (p *parser) facetItem(fc *Facets, index map[string]int, ordered map[string]bool) error {
	var alias string
	order := 0 // 1 asc, 2 desc
	if n := p.nameSpan(0); n > 0 && p.peekAt(n).is(":") {
		name, _, _ := p.name("")
		p.next()
		switch name {
		case "orderasc":
			order = 1
		case "orderdesc":
			order = 2
		default:
			alias = name
		}
	}
	var v string
	if p.peek().kind == tokWord && p.isAsAt(1) {
		var err error
		if v, _, err = p.varName("a variable name"); err != nil {
			return err
		}
		p.next()
	}
	key, pos, err := p.name("a facet name")
	if err != nil {
		return err
	}
	i, ok := index[key]
	if !ok {
		i = len(fc.Keys)
		index[key] = i
		fc.Keys = append(fc.Keys, FacetKey{Key: key})
	}
	k := &fc.Keys[i]
	switch {
	case alias != "" && k.Alias != "" && alias != k.Alias:
		return errorAt(pos, "facet %s has two aliases, %s and %s", key, k.Alias, alias)
	case v != "" && k.Var != "" && v != k.Var:
		return errorAt(pos, "facet %s is assigned to two variables, %s and %s", key, k.Var, v)
	}
	if alias != "" {
		k.Alias = alias
	}
	if v != "" {
		k.Var = v
	}
	if order != 0 {
		if ordered[key] {
			return errorAt(pos, "ordering by facet %s given twice", key)
		}
		ordered[key] = true
		fc.Order = append(fc.Order, FacetOrder{Key: key, Desc: order == 2})
	}
	return nil
}
