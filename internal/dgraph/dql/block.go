package dql

import (
	"strconv"
	"strings"
)

// document reads a whole query request: { blocks }, query name(vars) {
// blocks }, schema {...} and fragment definitions.
func (p *parser) document() (*Query, error) {
	q := &Query{}
	var named, anonymous bool
	for {
		t := p.peek()
		var err error
		switch {
		case t.kind == tokEOF:
			return p.finish(q)
		case t.is("{"):
			p.next()
			anonymous = true
			err = p.blocks(q)
		case t.kind == tokWord && t.text == "query":
			if named {
				return nil, errorAt(t.pos, "only one query operation is allowed per request")
			}
			named = true
			err = p.operation(q)
		case t.kind == tokWord && t.text == "schema":
			if q.Schema != nil {
				return nil, errorAt(t.pos, "only one schema block is allowed")
			}
			q.Schema, err = p.schemaQuery()
		case t.kind == tokWord && t.text == "fragment":
			err = p.fragmentDef()
		case t.kind == tokWord && (t.text == "mutation" || t.text == "upsert"):
			return nil, errorAt(t.pos, "%s blocks are not queries: send them as mutations", t.text)
		default:
			return nil, p.unexpected(t, "'{', query, schema or fragment")
		}
		if err != nil {
			return nil, err
		}
		if q.Schema != nil && (named || anonymous) {
			return nil, errorAt(t.pos, "a schema block cannot be combined with query blocks")
		}
	}
}

func (p *parser) finish(q *Query) (*Query, error) {
	if p.hasSpread || len(p.frags) > 0 {
		if err := p.expandFragments(q); err != nil {
			return nil, err
		}
	}
	return q, nil
}

// operation reads query [name] [($a: type = default, ...)] { blocks }.
func (p *parser) operation(q *Query) error {
	p.next() // query
	if t := p.peek(); t.kind == tokWord {
		p.next()
		q.Name = t.text
	}
	if t := p.peek(); t.is("(") {
		if q.Name == "" {
			return errorAt(t.pos, "variables can be declared only in a named query: query name($a: int) {...}")
		}
		p.next()
		if err := p.varDecls(t.pos); err != nil {
			return err
		}
	}
	if _, err := p.expect("{", "'{' to open the query"); err != nil {
		return err
	}
	return p.blocks(q)
}

// blocks reads query blocks up to the closing '}'.
func (p *parser) blocks(q *Query) error {
	for {
		t := p.peek()
		if t.is("}") {
			p.next()
			return nil
		}
		if t.kind == tokEOF || t.kind == tokError {
			return p.unexpected(t, "a query block or '}'")
		}
		b, err := p.block()
		if err != nil {
			return err
		}
		q.Blocks = append(q.Blocks, b)
	}
}

// rootKeys are the arguments of a query block; the second group is for
// shortest blocks only.
var rootKeys = map[string]bool{
	"func": false, "orderasc": false, "orderdesc": false, "first": false, "offset": false, "after": false,
	"from": true, "to": true, "numpaths": true, "depth": true, "minweight": true, "maxweight": true,
	"maxfrontiersize": true,
}

// block reads [v as] name(args) @directives [{ fields }].
func (p *parser) block() (*Block, error) {
	start := p.peek()
	b := &Block{Pos: start.pos}
	if start.kind == tokWord && p.isAsAt(1) {
		v, _, err := p.varName("a variable name")
		if err != nil {
			return nil, err
		}
		p.next() // as
		b.Var = v
	}
	name, _, err := p.name("a query block name")
	if err != nil {
		return nil, err
	}
	b.Name = name
	if name == "shortest" {
		b.Shortest = &Shortest{}
	}
	if _, err := p.expect("(", "'(' after the block name "+strconv.Quote(name)); err != nil {
		return nil, err
	}
	if err := p.rootArgs(b); err != nil {
		return nil, err
	}
	if err := p.rootDirectives(b); err != nil {
		return nil, err
	}
	// Without a root function a block only aggregates variables (name() {
	// max(val(v)) }), as Dgraph's empty blocks do.
	ctx := fieldCtx{groupBy: b.GroupBy != nil, aggOnly: b.Func == nil && b.Shortest == nil}
	if t := p.peek(); t.is("{") {
		p.next()
		if err := p.fields(&b.Selection, ctx); err != nil {
			return nil, err
		}
	}
	return b, p.checkBlock(b, start.pos)
}

func (p *parser) checkBlock(b *Block, at Pos) error {
	if s := b.Shortest; s != nil {
		if b.Func != nil {
			return errorAt(b.Func.Pos, "a shortest block takes from and to, not func")
		}
		if s.From == (UIDRef{}) || s.To == (UIDRef{}) {
			return errorAt(at, "a shortest block needs both from and to")
		}
		if s.NumPaths != nil && *s.NumPaths < 1 {
			return errorAt(at, "numpaths must be at least 1, found %d", *s.NumPaths)
		}
		if s.Depth != nil && *s.Depth < 0 {
			return errorAt(at, "depth must not be negative, found %d", *s.Depth)
		}
		if s.MinWeight != nil && s.MaxWeight != nil && *s.MinWeight > *s.MaxWeight {
			return errorAt(at, "minweight %g is greater than maxweight %g", *s.MinWeight, *s.MaxWeight)
		}
	}
	if b.Recurse != nil && len(b.Fields) == 0 {
		return errorAt(at, "@recurse needs the predicates to follow inside braces")
	}
	return nil
}

// rootArgs reads the arguments of a query block after its '('.
func (p *parser) rootArgs(b *Block) error {
	if p.peek().is(")") {
		p.next()
		return nil
	}
	seen := map[string]bool{}
	for {
		kt := p.peek()
		if kt.kind != tokWord {
			return p.unexpected(kt, "an argument name (func, first, offset, after, orderasc, orderdesc)")
		}
		key := kt.text
		shortestOnly, ok := rootKeys[key]
		switch {
		case !ok:
			return errorAt(kt.pos, "unknown argument %q of a query block", key)
		case shortestOnly && b.Shortest == nil:
			return errorAt(kt.pos, "%s is only allowed in shortest path blocks", key)
		case seen[key] && key != "orderasc" && key != "orderdesc":
			return errorAt(kt.pos, "argument %s given twice", key)
		}
		seen[key] = true
		p.next()
		if _, err := p.expect(":", "':' after "+key); err != nil {
			return err
		}
		if err := p.rootArg(b, key, seen); err != nil {
			return err
		}
		if done, err := p.argSeparator(); done || err != nil {
			return err
		}
	}
}

// argSeparator reads ',' (more arguments follow) or ')' (done).
func (p *parser) argSeparator() (done bool, err error) {
	t := p.next()
	switch {
	case t.is(")"):
		return true, nil
	case t.is(","):
		return false, nil
	}
	return false, p.unexpected(t, "',' or ')'")
}

func (p *parser) rootArg(b *Block, key string, seen map[string]bool) error {
	var err error
	s := b.Shortest
	switch key {
	case "func":
		b.Func, err = p.function(ctxRoot)
	case "from":
		s.From, err = p.uidRef(key)
	case "to":
		s.To, err = p.uidRef(key)
	case "numpaths":
		s.NumPaths, err = p.intPtr(key)
	case "depth":
		s.Depth, err = p.intPtr(key)
	case "maxfrontiersize":
		s.MaxFrontierSize, err = p.intPtr(key)
	case "minweight", "maxweight":
		var f float64
		if f, _, err = p.floatValue(key); err == nil {
			if key == "minweight" {
				s.MinWeight = &f
			} else {
				s.MaxWeight = &f
			}
		}
	default:
		err = p.selectionArg(&b.Selection, key, seen)
	}
	return err
}

func (p *parser) intPtr(what string) (*int64, error) {
	n, _, err := p.intValue(what)
	if err != nil {
		return nil, err
	}
	return &n, nil
}

// selectionArg reads the value of an argument shared by blocks and fields:
// first, offset, after, orderasc, orderdesc. seen holds the argument keys
// read so far, and "order:" keys for the orderings.
func (p *parser) selectionArg(sel *Selection, key string, seen map[string]bool) error {
	switch key {
	case "first", "offset":
		n, pos, err := p.intValue(key)
		if err != nil {
			return err
		}
		if key == "offset" && n < 0 {
			return errorAt(pos, "offset must not be negative, found %d", n)
		}
		if key == "first" {
			sel.Page.First = &n
		} else {
			sel.Page.Offset = &n
		}
	case "after":
		u, _, err := p.uidValue(key)
		if err != nil {
			return err
		}
		sel.Page.After = &u
	case "orderasc", "orderdesc":
		o, err := p.order(key == "orderdesc")
		if err != nil {
			return err
		}
		return addOrder(sel, o, seen)
	}
	return nil
}

// order reads the value of orderasc or orderdesc: pred[@lang] or val(v).
func (p *parser) order(desc bool) (Order, error) {
	t := p.peek()
	o := Order{Pos: t.pos, Desc: desc}
	if t.isWord("val") && p.peekAt(1).is("(") {
		p.next()
		p.next()
		v, _, err := p.varName("a value variable inside val()")
		if err != nil {
			return o, err
		}
		o.Var = v
		_, err = p.expect(")", "')' to close val(")
		return o, err
	}
	name, _, err := p.name("a predicate or val(v) to order by")
	if err != nil {
		return o, err
	}
	o.Attr = name
	if p.peek().is("@") {
		p.next()
		if o.Langs, err = p.langs(); err != nil {
			return o, err
		}
		if len(o.Langs) > 1 {
			return o, errorAt(t.pos, "ordering by %s can only use one language", name)
		}
	}
	return o, nil
}

// addOrder appends o, as Dgraph allows: several predicates, or one value
// variable alone, and no key twice.
func addOrder(sel *Selection, o Order, seen map[string]bool) error {
	if len(sel.Order) > 0 && (o.Var != "" || sel.Order[0].Var != "") {
		return errorAt(o.Pos, "ordering by a value variable cannot be combined with other orderings")
	}
	key := "order:" + o.Attr + "@" + strings.Join(o.Langs, ":")
	if seen[key] {
		return errorAt(o.Pos, "ordering by %s given twice", o.Attr)
	}
	seen[key] = true
	sel.Order = append(sel.Order, o)
	return nil
}

// uidRef reads from/to of a shortest block: a uid, uid(0x1) or uid(v).
func (p *parser) uidRef(what string) (UIDRef, error) {
	t := p.peek()
	if t.isWord("uid") && p.peekAt(1).is("(") {
		f, err := p.function(ctxRoot)
		if err != nil {
			return UIDRef{}, err
		}
		switch {
		case len(f.UIDs)+len(f.Vars) != 1:
			return UIDRef{}, errorAt(t.pos, "%s takes one node: a uid or uid(v)", what)
		case len(f.UIDs) == 1:
			return UIDRef{UID: f.UIDs[0]}, nil
		}
		return UIDRef{Var: f.Vars[0]}, nil
	}
	u, pos, err := p.uidValue(what)
	if err == nil && u == 0 {
		err = errorAt(pos, "%s cannot be uid 0", what)
	}
	return UIDRef{UID: u}, err
}

// rootDirectives reads the directives of a query block.
func (p *parser) rootDirectives(b *Block) error {
	seen := map[string]bool{}
	for p.peek().is("@") {
		p.next()
		t := p.peek()
		if t.kind != tokWord {
			return p.unexpected(t, "a directive name")
		}
		name := strings.ToLower(t.text)
		if seen[name] {
			return errorAt(t.pos, "@%s given twice (combine filters with AND, OR and parentheses)", name)
		}
		seen[name] = true
		p.next()
		var err error
		switch name {
		case "filter":
			b.Filter, err = p.filterDirective(ctxFilter)
		case "normalize":
			b.Normalize = true
		case "cascade":
			b.Cascade, err = p.cascade()
		case "groupby":
			b.GroupBy, err = p.groupBy()
		case "ignorereflex":
			b.IgnoreReflex = true
		case "recurse":
			b.Recurse, err = p.recurse()
		case "facets":
			err = errorAt(t.pos, "@facets applies to predicates, not to a query block")
		default:
			err = errorAt(t.pos, "unknown directive @%s", t.text)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
