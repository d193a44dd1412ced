package dql

import (
	"strconv"
	"strings"
)

// mathBinary holds the binary operators of math(...) and their precedence,
// Dgraph's table: * and / bind tightest, then dot, %, -, +, then the
// comparisons < > <= >= == != (each its own level). Operators of one level
// associate to the left. Note Dgraph's quirk kept for compatibility:
// a % b * c is a % (b * c), and a + b - c is a + (b - c).
var mathBinary = map[string]int{
	"*": 50, "/": 50, "dot": 49, "%": 48, "-": 47, "+": 46,
	"<": 10, ">": 9, "<=": 8, ">=": 7, "==": 6, "!=": 5,
}

// mathFuncs holds the functions of math(...) and their arity.
var mathFuncs = map[string]int{
	"floor": 1, "ceil": 1, "ln": 1, "exp": 1, "sqrt": 1, "since": 1,
	"pow": 2, "logbase": 2, "min": 2, "max": 2, "cond": 3,
}

// mathOpNeg is the Op of unary minus.
const mathOpNeg = "neg"

func mathOpOf(t token) string {
	switch {
	case t.kind == tokPunct:
		return t.text
	case t.isWord("dot"):
		return "dot"
	}
	return ""
}

// mathExpr reads a math expression whose operators bind at least as tight
// as minPrec (precedence climbing).
func (p *parser) mathExpr(minPrec int) (*Math, error) {
	left, err := p.mathUnary()
	if err != nil {
		return nil, err
	}
	for {
		t := p.peek()
		op := mathOpOf(t)
		prec, ok := mathBinary[op]
		if !ok || prec < minPrec {
			return left, nil
		}
		p.next()
		right, err := p.mathExpr(prec + 1)
		if err != nil {
			return nil, err
		}
		if (op == "/" || op == "%") && right.Const != nil && !right.Const.IsFloat && right.Const.Int == 0 {
			return nil, errorAt(t.pos, "division by zero")
		}
		left = &Math{Pos: t.pos, Op: op, Args: []*Math{left, right}}
	}
}

// mathUnary reads -x, (expr), f(args), a constant or a variable.
func (p *parser) mathUnary() (*Math, error) {
	t := p.peek()
	if err := p.enter(t.pos); err != nil {
		return nil, err
	}
	defer p.leave()
	switch {
	case t.is("-"):
		p.next()
		// -5 is the constant -5, so negative constants render and parse back.
		if n := p.peek(); n.kind == tokWord && isDigit(n.text[0]) {
			p.next()
			return mathConst("-"+n.text, t.pos)
		}
		a, err := p.mathUnary()
		if err != nil {
			return nil, err
		}
		if c := a.Const; c != nil && (c.IsFloat || c.Int != -c.Int || c.Int == 0) {
			return &Math{Pos: t.pos, Const: &Const{IsFloat: c.IsFloat, Int: -c.Int, Float: -c.Float}}, nil
		}
		return &Math{Pos: t.pos, Op: mathOpNeg, Args: []*Math{a}}, nil
	case t.is("("):
		p.next()
		m, err := p.mathExpr(0)
		if err != nil {
			return nil, err
		}
		_, err = p.expect(")", "an operator or ')'")
		return m, err
	case t.kind == tokWord && p.peekAt(1).is("("):
		return p.mathCall()
	case t.kind == tokWord && isDigit(t.text[0]):
		p.next()
		return mathConst(t.text, t.pos)
	case t.kind == tokWord:
		v, _, err := p.varName("a value variable")
		return &Math{Pos: t.pos, Var: v}, err
	case t.kind == tokVar:
		p.next()
		return p.mathGQL(t)
	}
	return nil, p.unexpected(t, "a value variable, a number, a function or '('")
}

// mathCall reads f(a, b, ...).
func (p *parser) mathCall() (*Math, error) {
	t := p.next()
	name := strings.ToLower(t.text)
	arity, ok := mathFuncs[name]
	if !ok {
		return nil, errorAt(t.pos, "unknown math function %s", t.text)
	}
	p.next() // (
	m := &Math{Pos: t.pos, Op: name}
	for {
		a, err := p.mathExpr(0)
		if err != nil {
			return nil, err
		}
		m.Args = append(m.Args, a)
		if !p.peek().is(",") {
			break
		}
		p.next()
	}
	if _, err := p.expect(")", "',' or ')' to close "+name+"("); err != nil {
		return nil, err
	}
	if len(m.Args) != arity {
		return nil, errorAt(t.pos, "%s takes %d arguments, found %d", name, arity, len(m.Args))
	}
	return m, nil
}

// mathConst reads a number: an int64 in base 10, else a finite float.
func mathConst(s string, pos Pos) (*Math, error) {
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return &Math{Pos: pos, Const: &Const{Int: i}}, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != f || f > maxFloat || f < -maxFloat {
		return nil, errorAt(pos, "bad number %q in math", s)
	}
	return &Math{Pos: pos, Const: &Const{IsFloat: true, Float: f}}, nil
}

// mathGQL substitutes a GraphQL variable: a number by its declared type.
func (p *parser) mathGQL(t token) (*Math, error) {
	v, err := p.gqlValue(t)
	if err != nil {
		return nil, err
	}
	switch p.gql[t.text].typ {
	case "int":
		i, err := strconv.ParseInt(v, 0, 64)
		if err != nil {
			return nil, errorAt(t.pos, "variable $%s: expected an int, found %q", t.text, v)
		}
		return &Math{Pos: t.pos, Const: &Const{Int: i}}, nil
	case "float":
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f != f || f > maxFloat || f < -maxFloat {
			return nil, errorAt(t.pos, "variable $%s: expected a finite float, found %q", t.text, v)
		}
		return &Math{Pos: t.pos, Const: &Const{IsFloat: true, Float: f}}, nil
	}
	return nil, errorAt(t.pos, "variable $%s is a %s: math takes int or float variables", t.text, p.gql[t.text].typ)
}
