package dql

import (
	"regexp"
	"strconv"
	"strings"
)

// funcCtx says where a function appears, which decides what it may do.
type funcCtx uint8

const (
	ctxRoot   funcCtx = iota // func: at a block's root
	ctxFilter                // @filter
	ctxFacet                 // @facets(filter): on facet values, no variables
	ctxCond                  // an upsert mutation's @if: len(v) allowed
)

// argShape is what a function takes after its attribute.
type argShape uint8

const (
	shapeNone    argShape = iota // has(pred)
	shapeCmp                     // eq/le/lt/ge/gt/between: values, val(v), lists
	shapeText                    // one string: term, full-text and ngram search
	shapeRegexp                  // regexp(pred, /re/flags)
	shapeMatch                   // match(pred, "text", distance)
	shapeNear                    // near(pred, [lng, lat], meters)
	shapeGeo                     // within/contains/intersects(pred, [[...]])
	shapeSimilar                 // similar_to(pred, k, vector)
	shapeUID                     // uid(0x1, v, $v): no attribute
	shapeUIDIn                   // uid_in(pred, 0x1 | [0x1, ...] | uid(v) | $v)
	shapeType                    // type(Name): no attribute
)

type funcSpec struct {
	shape   argShape
	min     int // arguments after the attribute
	max     int // -1: no limit
	inequal bool
}

// funcSpecs lists the functions of roots and filters (Dgraph's set).
var funcSpecs = map[string]funcSpec{
	"eq": {shapeCmp, 1, -1, true}, "le": {shapeCmp, 1, 1, true}, "lt": {shapeCmp, 1, 1, true},
	"ge": {shapeCmp, 1, 1, true}, "gt": {shapeCmp, 1, 1, true}, "between": {shapeCmp, 2, 2, true},
	"has": {shapeNone, 0, 0, false}, "type": {shapeType, 1, 1, false},
	"uid": {shapeUID, 0, 0, false}, "uid_in": {shapeUIDIn, 0, 0, false},
	"allofterms": {shapeText, 1, 1, false}, "anyofterms": {shapeText, 1, 1, false},
	"alloftext": {shapeText, 1, 1, false}, "anyoftext": {shapeText, 1, 1, false},
	"ngram": {shapeText, 1, 1, false}, "regexp": {shapeRegexp, 1, 1, false},
	"match": {shapeMatch, 2, 2, false}, "near": {shapeNear, 2, 2, false},
	"within": {shapeGeo, 1, 1, false}, "contains": {shapeGeo, 1, 1, false},
	"intersects": {shapeGeo, 1, 1, false}, "similar_to": {shapeSimilar, 2, 2, false},
}

// facetFuncs are the functions a facet filter may use.
var facetFuncs = map[string]bool{"eq": true, "le": true, "lt": true, "ge": true, "gt": true,
	"allofterms": true, "anyofterms": true}

// filterDirective reads (expr) after @filter, @facets or @if; an empty ()
// is no filter, as in Dgraph.
func (p *parser) filterDirective(ctx funcCtx) (*Filter, error) {
	if _, err := p.expect("(", "'(' to open the filter"); err != nil {
		return nil, err
	}
	if p.peek().is(")") {
		p.next()
		return nil, nil
	}
	f, err := p.filterOr(ctx)
	if err != nil {
		return nil, err
	}
	_, err = p.expect(")", "AND, OR or ')' to close the filter")
	return f, err
}

// Filters: NOT binds tighter than AND, AND tighter than OR; keywords in
// any case. A chain of one operator becomes one node.
func (p *parser) filterOr(ctx funcCtx) (*Filter, error) {
	return p.filterChain(ctx, FilterOr, "or", func() (*Filter, error) { return p.filterAnd(ctx) })
}

func (p *parser) filterAnd(ctx funcCtx) (*Filter, error) {
	return p.filterChain(ctx, FilterAnd, "and", func() (*Filter, error) { return p.filterNot(ctx) })
}

// filterChain reads operand (keyword operand)*.
func (p *parser) filterChain(ctx funcCtx, op FilterOp, keyword string, operand func() (*Filter, error)) (*Filter, error) {
	first, err := operand()
	if err != nil || !p.peek().isWord(keyword) {
		return first, err
	}
	out := &Filter{Op: op}
	out.addChild(first)
	for p.peek().isWord(keyword) {
		p.next()
		f, err := operand()
		if err != nil {
			return nil, err
		}
		out.addChild(f)
	}
	return out, nil
}

// addChild appends c to an AND or OR node, merging a parenthesized chain
// of the same operator, so (a AND b) AND c is a AND b AND c.
func (f *Filter) addChild(c *Filter) {
	if c.Op == f.Op {
		f.Children = append(f.Children, c.Children...)
		return
	}
	f.Children = append(f.Children, c)
}

func (p *parser) filterNot(ctx funcCtx) (*Filter, error) {
	t := p.peek()
	if err := p.enter(t.pos); err != nil {
		return nil, err
	}
	defer p.leave()
	switch {
	case t.isWord("not"):
		p.next()
		c, err := p.filterNot(ctx)
		if err != nil {
			return nil, err
		}
		return &Filter{Op: FilterNot, Children: []*Filter{c}}, nil
	case t.is("("):
		p.next()
		f, err := p.filterOr(ctx)
		if err != nil {
			return nil, err
		}
		_, err = p.expect(")", "AND, OR or ')'")
		return f, err
	}
	fn, err := p.function(ctx)
	if err != nil {
		return nil, err
	}
	return &Filter{Op: FilterFunc, Func: fn}, nil
}

// function reads name(attr, args...) and checks its arity and arguments.
func (p *parser) function(ctx funcCtx) (*Func, error) {
	t := p.peek()
	if t.kind != tokWord {
		return nil, p.unexpected(t, "a function")
	}
	name := strings.ToLower(t.text)
	spec, ok := funcSpecs[name]
	if !ok {
		if name == "var" {
			return nil, errorAt(t.pos, "var() is not a function: use uid(v) for the nodes of a variable")
		}
		return nil, errorAt(t.pos, "unknown function %s", t.text)
	}
	if ctx == ctxFacet && !facetFuncs[name] {
		return nil, errorAt(t.pos, "%s cannot filter facets (eq, le, lt, ge, gt, allofterms, anyofterms)", name)
	}
	if ctx == ctxRoot && name == "uid_in" {
		return nil, errorAt(t.pos, "uid_in cannot be used at the root; use it in @filter")
	}
	p.next()
	if _, err := p.expect("(", "'(' after "+name); err != nil {
		return nil, err
	}
	f := &Func{Pos: t.pos, Name: name}
	var err error
	switch spec.shape {
	case shapeUID:
		err = p.uidItems(f, false)
	case shapeType:
		err = p.funcArgs(f, spec)
	default:
		if err = p.funcAttr(f, spec, ctx); err == nil {
			if spec.shape == shapeUIDIn {
				if _, err = p.expect(",", "',' and the uids of uid_in"); err == nil {
					err = p.uidItems(f, true)
				}
			} else {
				err = p.funcArgs(f, spec)
			}
		}
	}
	if err != nil {
		return nil, err
	}
	if _, err := p.expect(")", "',' or ')' to close "+name+"("); err != nil {
		return nil, err
	}
	return f, checkFunc(f, spec, ctx)
}

// funcAttr reads a function's first argument: pred[@lang], or for
// comparisons count(pred), val(v) or (in conditions) len(v).
func (p *parser) funcAttr(f *Func, spec funcSpec, ctx funcCtx) error {
	t := p.peek()
	if t.kind == tokWord && p.peekAt(1).is("(") {
		inner := strings.ToLower(t.text)
		switch inner {
		case "count", "val", "len":
			if !spec.inequal {
				return errorAt(t.pos, "%s(...) can only be the first argument of eq, le, lt, ge, gt or between", inner)
			}
			if ctx == ctxFacet {
				return errorAt(t.pos, "%s(...) cannot be used in a facet filter", inner)
			}
			if inner == "len" && ctx != ctxCond {
				return errorAt(t.pos, "len(v) is only allowed in an upsert's @if condition")
			}
			p.next()
			p.next()
			var err error
			switch inner {
			case "count":
				f.Count = true
				f.Attr, _, err = p.name("a predicate inside count()")
			case "val":
				f.ValVar, _, err = p.varName("a value variable inside val()")
			case "len":
				f.LenVar, _, err = p.varName("a uid variable inside len()")
			}
			if err != nil {
				return err
			}
			_, err = p.expect(")", "')' to close "+inner+"(")
			return err
		}
	}
	if t.kind == tokString {
		return errorAt(t.pos, "the attribute of %s must not be quoted: %s", f.Name, t.describe())
	}
	name, _, err := p.name("a predicate as the first argument of " + f.Name)
	if err != nil {
		return err
	}
	f.Attr = name
	if p.peek().is("@") {
		p.next()
		lt := p.peek()
		switch {
		case lt.is("*"):
			return errorAt(lt.pos, "* cannot be used as a language inside functions")
		case lt.is("."):
			p.next()
			f.Lang = "."
			return nil
		}
		l, pos, err := p.name("a language")
		if err != nil {
			return err
		}
		if !validLang(l) {
			return errorAt(pos, "bad language tag %q", l)
		}
		f.Lang = l
	}
	return nil
}

// funcArgs reads the arguments after the attribute (all of them for type).
func (p *parser) funcArgs(f *Func, spec funcSpec) error {
	if spec.shape != shapeType {
		if !p.peek().is(",") {
			return nil
		}
		p.next()
	}
	for {
		if err := p.funcArg(f, spec); err != nil {
			return err
		}
		if !p.peek().is(",") {
			return nil
		}
		p.next()
	}
}

// funcArg reads one argument (a list adds several).
func (p *parser) funcArg(f *Func, spec funcSpec) error {
	t := p.peek()
	switch {
	case t.isWord("val") && p.peekAt(1).is("("):
		p.next()
		p.next()
		v, _, err := p.varName("a value variable inside val()")
		if err != nil {
			return err
		}
		f.Args = append(f.Args, Arg{Kind: ArgValVar, Value: v})
		_, err = p.expect(")", "')' to close val(")
		return err
	case t.kind == tokWord && p.peekAt(1).is("("):
		return errorAt(t.pos, "only val(v) may be an argument of %s, found %s(", f.Name, t.text)
	case t.is("/"):
		if spec.shape != shapeRegexp {
			return errorAt(t.pos, "a regular expression is only an argument of regexp")
		}
		p.restartAt(t.off, t.pos)
		r := p.lx.regex()
		if r.kind == tokError {
			return errorAt(r.pos, "%s", r.text)
		}
		f.Args = append(f.Args, Arg{Kind: ArgRegex, Value: r.text, Flags: r.aux})
		return nil
	case t.kind == tokVar && spec.shape == shapeRegexp:
		p.next()
		v, err := p.gqlValue(t)
		if err != nil {
			return err
		}
		a, err := regexFromText(v, t.pos)
		f.Args = append(f.Args, a)
		return err
	case t.is("["):
		if spec.shape == shapeNear || spec.shape == shapeGeo || spec.shape == shapeSimilar {
			lit, err := p.bracketLiteral()
			f.Args = append(f.Args, Arg{Kind: ArgGeo, Value: lit})
			return err
		}
		if spec.shape != shapeCmp {
			return errorAt(t.pos, "%s takes no list", f.Name)
		}
		return p.valueList(f)
	}
	v, _, err := p.scalar("an argument of " + f.Name)
	f.Args = append(f.Args, Arg{Kind: ArgValue, Value: v})
	return err
}

// valueList reads [v1, "v2", $v3] as arguments of eq and friends.
func (p *parser) valueList(f *Func) error {
	open := p.next()
	if p.peek().is("]") {
		return errorAt(open.pos, "empty list")
	}
	for {
		v, _, err := p.scalar("a value in the list")
		if err != nil {
			return err
		}
		f.Args = append(f.Args, Arg{Kind: ArgValue, Value: v})
		t := p.next()
		if t.is("]") {
			return nil
		}
		if !t.is(",") {
			return p.unexpected(t, "',' or ']'")
		}
	}
}

// bracketLiteral reads a geo coordinate list or a vector, [[1, 2], [3,
// 4]], nested at most 4 deep as in Dgraph, into its canonical text with no
// spaces.
func (p *parser) bracketLiteral() (string, error) {
	var b strings.Builder
	depth := 0
	for {
		t := p.next()
		switch {
		case t.is("["):
			if depth++; depth > 4 {
				return "", errorAt(t.pos, "coordinates nested deeper than 4")
			}
			b.WriteByte('[')
			if n := p.peek(); n.is("]") {
				return "", errorAt(n.pos, "empty list")
			}
			continue
		case t.is("-") || t.is("+") || t.kind == tokWord:
			if t.kind != tokWord {
				b.WriteString(t.text)
				t = p.next()
			}
			if t.kind != tokWord {
				return "", p.unexpected(t, "a number")
			}
			if _, err := strconv.ParseFloat(t.text, 64); err != nil {
				return "", errorAt(t.pos, "expected a number, found %q", t.text)
			}
			b.WriteString(t.text)
		default:
			return "", p.unexpected(t, "a number or '['")
		}
		// After a number or a closed list: ',' or ']'.
		for {
			s := p.next()
			switch {
			case s.is(","):
				b.WriteByte(',')
			case s.is("]"):
				b.WriteByte(']')
				if depth--; depth == 0 {
					return b.String(), nil
				}
				continue
			default:
				return "", p.unexpected(s, "',' or ']'")
			}
			break
		}
	}
}

// uidItems reads the node set of uid(...) or of uid_in's second argument
// up to the closing ')': literal uids, variable names, $variables holding a
// uid or "[0x1, 0x2]", and for uid_in also [0x1, ...] and uid(v).
func (p *parser) uidItems(f *Func, uidIn bool) error {
	if t := p.peek(); t.is(")") {
		return errorAt(t.pos, "%s needs at least one uid or variable", f.Name)
	}
	for {
		t := p.peek()
		var err error
		switch {
		case uidIn && t.isWord("uid") && p.peekAt(1).is("("):
			p.next()
			p.next()
			var v string
			if v, _, err = p.varName("a uid variable inside uid()"); err == nil {
				f.Vars = append(f.Vars, v)
				_, err = p.expect(")", "')': a nested uid() takes one variable")
			}
		case uidIn && t.is("["):
			err = p.uidList(f)
		case t.kind == tokVar:
			p.next()
			var v string
			if v, err = p.gqlValue(t); err == nil {
				var us []uint64
				us, err = parseUIDText(v, t.pos)
				f.UIDs = append(f.UIDs, us...)
			}
		case t.kind == tokWord && isDigit(t.text[0]):
			p.next()
			var u uint64
			u, err = parseUID(t.text, t.pos)
			f.UIDs = append(f.UIDs, u)
		case t.kind == tokWord && !uidIn:
			var v string
			v, _, err = p.varName("a uid or a variable")
			f.Vars = append(f.Vars, v)
		default:
			err = p.unexpected(t, "a uid or a variable")
		}
		if err != nil {
			return err
		}
		if !p.peek().is(",") {
			return nil
		}
		p.next()
	}
}

// uidList reads [0x1, 0x2] of uid_in.
func (p *parser) uidList(f *Func) error {
	open := p.next()
	if p.peek().is("]") {
		return errorAt(open.pos, "empty list")
	}
	for {
		u, _, err := p.uidValue("uid_in")
		if err != nil {
			return err
		}
		f.UIDs = append(f.UIDs, u)
		t := p.next()
		if t.is("]") {
			return nil
		}
		if !t.is(",") {
			return p.unexpected(t, "',' or ']'")
		}
	}
}

// parseUIDText reads the value of a GraphQL variable used as uids: "0x1"
// or "[0x1, 0x2]".
func parseUIDText(v string, pos Pos) ([]uint64, error) {
	s := strings.TrimSpace(v)
	if !strings.HasPrefix(s, "[") {
		u, err := parseUID(s, pos)
		return []uint64{u}, err
	}
	if !strings.HasSuffix(s, "]") {
		return nil, errorAt(pos, "bad uid list %q (want [0x1, 0x2])", v)
	}
	var out []uint64
	for _, part := range strings.Split(s[1:len(s)-1], ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		u, err := parseUID(part, pos)
		if err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	if len(out) == 0 {
		return nil, errorAt(pos, "empty uid list %q", v)
	}
	return out, nil
}

// regexFromText reads a regexp given as a GraphQL variable: "/re/flags".
func regexFromText(v string, pos Pos) (Arg, error) {
	if !strings.HasPrefix(v, "/") {
		return Arg{}, errorAt(pos, "expected a regular expression /re/flags, found %q", v)
	}
	lx := newLexer(v)
	r := lx.regex()
	if r.kind == tokError || lx.i != len(v) {
		return Arg{}, errorAt(pos, "bad regular expression %q", v)
	}
	return Arg{Kind: ArgRegex, Value: r.text, Flags: r.aux}, nil
}

// checkFunc checks a function's arity and the kinds of its arguments.
func checkFunc(f *Func, spec funcSpec, ctx funcCtx) error {
	n := len(f.Args)
	switch {
	case spec.shape == shapeUID || spec.shape == shapeUIDIn:
		if len(f.UIDs)+len(f.Vars) == 0 {
			return errorAt(f.Pos, "%s needs at least one uid or variable", f.Name)
		}
		return nil
	case n < spec.min || spec.max >= 0 && n > spec.max:
		return errorAt(f.Pos, "%s takes %s, found %d", f.Name, arityText(f.Name, spec), n)
	case ctx == ctxFacet && (f.Lang != "" || n != 1 || f.Args[0].Kind != ArgValue):
		return errorAt(f.Pos, "a facet filter function takes a facet name and one value")
	}
	for i, a := range f.Args {
		if err := checkArg(f, spec, i, a); err != nil {
			return err
		}
	}
	return nil
}

func arityText(name string, spec funcSpec) string {
	switch {
	case spec.shape == shapeType:
		return "one type name"
	case name == "eq":
		return "a predicate and at least one value"
	case spec.shape == shapeMatch:
		return "a predicate, a string and a distance"
	case spec.shape == shapeNear:
		return "a predicate, a point [lng, lat] and a distance"
	case spec.shape == shapeSimilar:
		return "a predicate, a count and a vector"
	case spec.shape == shapeNone:
		return "only a predicate"
	case spec.max == 2:
		return "a predicate and two values"
	}
	return "a predicate and one value"
}

var validRegexFlags = "i"

func checkArg(f *Func, spec funcSpec, i int, a Arg) error {
	switch {
	case a.Kind == ArgValVar && !spec.inequal:
		return errorAt(f.Pos, "val(%s) can only be an argument of eq, le, lt, ge, gt or between", a.Value)
	case spec.shape == shapeRegexp && a.Kind != ArgRegex:
		return errorAt(f.Pos, "regexp takes a regular expression /re/flags, found %q", a.Value)
	case a.Kind == ArgRegex:
		for _, c := range a.Flags {
			if !strings.ContainsRune(validRegexFlags, c) {
				return errorAt(f.Pos, "invalid regexp flag %q (only i is supported)", c)
			}
		}
		if a.Value == "" {
			return errorAt(f.Pos, "empty regular expression")
		}
		if _, err := regexp.Compile(a.Value); err != nil {
			return errorAt(f.Pos, "bad regular expression: %v", err)
		}
	case spec.shape == shapeMatch && i == 1:
		d, err := strconv.ParseInt(a.Value, 10, 32)
		if err != nil || a.Kind != ArgValue {
			return errorAt(f.Pos, "the distance of match must be an integer, found %q", a.Value)
		}
		if d < 0 {
			return errorAt(f.Pos, "the distance of match must not be negative, found %d", d)
		}
	case spec.shape == shapeNear && i == 0 || spec.shape == shapeGeo:
		if a.Kind != ArgGeo && a.Kind != ArgValue {
			return errorAt(f.Pos, "%s takes coordinates, found %q", f.Name, a.Value)
		}
	case spec.shape == shapeNear && i == 1:
		if _, err := strconv.ParseFloat(a.Value, 64); err != nil || a.Kind != ArgValue {
			return errorAt(f.Pos, "the distance of near must be a number of meters, found %q", a.Value)
		}
	case spec.shape == shapeSimilar && i == 0:
		if k, err := strconv.ParseInt(a.Value, 10, 64); err != nil || k < 1 || a.Kind != ArgValue {
			return errorAt(f.Pos, "the count of similar_to must be a positive integer, found %q", a.Value)
		}
	case spec.shape == shapeType && a.Value == "":
		return errorAt(f.Pos, "type() needs a type name")
	case a.Kind == ArgGeo && spec.shape != shapeNear && spec.shape != shapeGeo && spec.shape != shapeSimilar:
		return errorAt(f.Pos, "%s takes no coordinates", f.Name)
	}
	return nil
}
