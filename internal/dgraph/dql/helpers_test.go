package dql

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

func mustParse(t *testing.T, text string) *Query {
	t.Helper()
	return mustParseWith(t, text, Options{})
}

func mustParseWith(t *testing.T, text string, opt Options) *Query {
	t.Helper()
	q, err := ParseWith(text, opt)
	if err != nil {
		t.Fatalf("Parse: %v\n%s", err, text)
	}
	roundTripWith(t, q, Options{Uses: opt.Uses})
	return q
}

// varsDefined defines uid variables a, b, v and x for rootFunc and
// filterOf; Options.Uses marks them used whether the function uses them or
// not.
const varsDefined = `a as var(func: has(a)) b as var(func: has(b)) v as var(func: has(v)) x as var(func: has(x))`

var varsUsed = Options{Uses: []string{"a", "b", "v", "x"}}

// rootFunc parses f as the root function of a block and returns it.
func rootFunc(t *testing.T, f string) *Func {
	t.Helper()
	return mustParseWith(t, "{ "+varsDefined+" q(func: "+f+") { uid } }", varsUsed).Blocks[4].Func
}

// filterOf parses f as the filter of a block and returns it.
func filterOf(t *testing.T, f string) *Filter {
	t.Helper()
	return mustParseWith(t, "{ "+varsDefined+" q(func: has(a)) @filter("+f+") { uid } }", varsUsed).Blocks[4].Filter
}

// firstField parses fields as the body of a block and returns its first
// field.
func firstField(t *testing.T, fields string) *Field {
	t.Helper()
	return mustParse(t, "{ q(func: has(a)) { "+fields+" } }").Blocks[0].Fields[0]
}

// sexpr renders a filter as a fully parenthesized tree of function names,
// which shows its structure: (or (and a b) (not c)).
func sexpr(f *Filter) string {
	switch f.Op {
	case FilterFunc:
		return f.Func.Attr
	case FilterNot:
		return "(not " + sexpr(f.Children[0]) + ")"
	}
	op := "and"
	if f.Op == FilterOr {
		op = "or"
	}
	parts := []string{op}
	for _, c := range f.Children {
		parts = append(parts, sexpr(c))
	}
	return "(" + strings.Join(parts, " ") + ")"
}

// mexpr renders a math tree fully parenthesized.
func mexpr(m *Math) string {
	switch {
	case m.Var != "":
		return m.Var
	case m.Const != nil && m.Const.IsFloat:
		return strconv.FormatFloat(m.Const.Float, 'g', -1, 64) + "f"
	case m.Const != nil:
		return strconv.FormatInt(m.Const.Int, 10)
	}
	parts := []string{m.Op}
	for _, a := range m.Args {
		parts = append(parts, mexpr(a))
	}
	return "(" + strings.Join(parts, " ") + ")"
}

// mathOf parses expr inside math(...) and returns its tree.
func mathOf(t *testing.T, expr string) *Math {
	t.Helper()
	q := mustParse(t, `{ var(func: has(x)) { a as x  b as y  c as z  d as w  r as math(`+expr+`) }
		q(func: uid(r)) { val(a) val(b) val(c) val(d) } }`)
	return q.Blocks[0].Fields[4].Math
}

// errCase is a parse that must fail at a place with a message.
type errCase struct {
	name string
	text string
	line int
	col  int
	msg  string // a substring of the message
}

func checkErr(t *testing.T, c errCase, err error) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: no error for\n%s", c.name, c.text)
		return
	}
	var e *Error
	if !errors.As(err, &e) {
		t.Errorf("%s: error %v is not an *Error", c.name, err)
		return
	}
	if e.Line != c.line || e.Col != c.col || !strings.Contains(e.Msg, c.msg) {
		t.Errorf("%s: got %v; want line %d col %d: ...%s...", c.name, err, c.line, c.col, c.msg)
	}
	if !strings.HasPrefix(err.Error(), "dql: ") {
		t.Errorf("%s: error %q lacks the dql: prefix", c.name, err)
	}
}
