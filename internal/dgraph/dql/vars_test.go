package dql

import (
	"maps"
	"testing"
)

// TestGraphQLVariables covers substitution in every place a value may be
// a $variable, defaults, given values overriding them, and keys with or
// without '$'.
func TestGraphQLVariables(t *testing.T) {
	text := `query q($name: string, $first: int = 2, $off: int!, $ids: string = "[0x1, 0x2]", $one: string,
		$re: string = "/^Ste\\/v/i", $d: int = 3, $loop: bool = true, $w: float = 1.5, $f: float, $b: bool = false,
		$pw: string = "secret", $vec: float32vector = "[0.5, 1]", $after: string = "0x10") {
		me(func: allofterms(name@en, $name), first: $first, offset: $off, after: $after) @filter(regexp(name, $re) AND uid($ids) AND eq(ok, $b)) {
			friend(first: $first) @facets(eq(close, $b)) { name }
			checkpwd(pw, $pw)
		}
		r(func: uid($one)) @recurse(depth: $d, loop: $loop) { friend }
		s as shortest(from: $one, to: 0x9, minweight: $w, depth: $d) { friend }
		p(func: uid(s)) { uid }
		v(func: similar_to(emb, $d, $vec)) { uid }
		var(func: has(x)) { a as x  m as math(a * $w + $d) }
		mm(func: uid(m)) { val(m) }
	}`
	vars := map[string]string{"$name": "Steven Spielberg", "off": "5", "$one": "0x7", "$f": "2.5", "$first": "4", "first": "9"}
	q, err := ParseWithVars(text, vars)
	if err != nil {
		t.Fatal(err)
	}
	roundTrip(t, q)
	me := q.Blocks[0]
	if me.Func.Args[0].Value != "Steven Spielberg" || *me.Page.First != 4 || *me.Page.Offset != 5 || *me.Page.After != 0x10 {
		t.Errorf("root values: %+v %+v", me.Func, me.Page)
	}
	f := me.Filter.Children
	if !equalTrees(f[0].Func.Args, []Arg{{Kind: ArgRegex, Value: "^Ste/v", Flags: "i"}}) {
		t.Errorf("regexp from a variable = %+v", f[0].Func.Args)
	}
	if got := f[1].Func.UIDs; len(got) != 2 || got[0] != 1 || got[1] != 2 {
		t.Errorf("uid list from a variable = %v", got)
	}
	if f[2].Func.Args[0].Value != "false" {
		t.Errorf("bool default = %+v", f[2].Func)
	}
	if fr := me.Fields[0]; *fr.Page.First != 4 || fr.FacetsFilter.Func.Args[0].Value != "false" {
		t.Errorf("field values = %+v", fr)
	}
	if me.Fields[1].Password != "secret" {
		t.Errorf("checkpwd = %+v", me.Fields[1])
	}
	if r := q.Blocks[1]; r.Func.UIDs[0] != 7 || *r.Recurse != (Recurse{Depth: 3, Loop: true}) {
		t.Errorf("recurse = %+v %+v", r.Func, r.Recurse)
	}
	if s := q.Blocks[2].Shortest; s.From.UID != 7 || *s.MinWeight != 1.5 || *s.Depth != 3 {
		t.Errorf("shortest = %+v", s)
	}
	if v := q.Blocks[4].Func; v.Args[0].Value != "3" || v.Args[1].Value != "[0.5, 1]" {
		t.Errorf("similar_to = %+v", v)
	}
	if m := q.Blocks[5].Fields[1].Math; mexpr(m) != "(+ (* a 1.5f) 3)" {
		t.Errorf("math = %s", mexpr(m))
	}
	// The request's map is not changed.
	if !maps.Equal(vars, map[string]string{"$name": "Steven Spielberg", "off": "5", "$one": "0x7", "$f": "2.5", "$first": "4", "first": "9"}) {
		t.Errorf("vars changed: %v", vars)
	}
}

func TestGraphQLVariableErrors(t *testing.T) {
	for _, tc := range []struct {
		errCase
		vars map[string]string
	}{
		{errCase{"missing required", `query q($a: int!) { me(func: uid(0x1), first: $a) { uid } }`, 1, 9, "$a of type int! needs a value"}, nil},
		{errCase{"empty counts as missing", `query q($a: int!) { me(func: uid(0x1), first: $a) { uid } }`, 1, 9, "needs a value"}, map[string]string{"$a": ""}},
		{errCase{"used without a value", `query q($a: int) { me(func: uid(0x1), first: $a) { uid } }`, 1, 46, "$a has no value"}, nil},
		{errCase{"undeclared use", `query q($a: int = 1) { me(func: uid(0x1), first: $b) { uid } }`, 1, 50, "$b is not declared"}, nil},
		{errCase{"use without declarations", `{ me(func: uid(0x1), first: $b) { uid } }`, 1, 29, "$b is not declared"}, map[string]string{"$b": "1"}},
		{errCase{"given but undeclared", `query q($a: int = 1) { me(func: uid(0x1), first: $a) { uid } }`, 1, 8, "$z is given but the query does not declare it"}, map[string]string{"$z": "1"}},
		{errCase{"bad int", `query q($a: int) { me(func: uid(0x1), first: $a) { uid } }`, 1, 9, "expected int, found \"ten\""}, map[string]string{"$a": "ten"}},
		{errCase{"bad float default", `query q($a: float = "x") { me(func: uid(0x1)) { uid } }`, 1, 9, "expected float"}, nil},
		{errCase{"bad bool", `query q($a: bool) { me(func: uid(0x1)) { uid } }`, 1, 9, "expected bool"}, map[string]string{"a": "yes"}},
		{errCase{"bad vector", `query q($a: float32vector) { me(func: uid(0x1)) { uid } }`, 1, 9, "expected float32vector"}, map[string]string{"$a": "[1, x]"}},
		{errCase{"unknown type", `query q($a: date) { me(func: uid(0x1)) { uid } }`, 1, 13, `type "date" is not supported`}, nil},
		{errCase{"required with default", `query q($a: int! = 1) { me(func: uid(0x1)) { uid } }`, 1, 18, "cannot have a default"}, nil},
		{errCase{"declared twice", `query q($a: int, $a: int) { me(func: uid(0x1)) { uid } }`, 1, 18, "$a declared twice"}, nil},
		{errCase{"anonymous with declarations", `query ($a: int) { me(func: uid(0x1)) { uid } }`, 1, 7, "only in a named query"}, nil},
		{errCase{"string used as first", `query q($a: string = "x") { me(func: uid(0x1), first: $a) { uid } }`, 1, 55, `first must be an integer, found "x"`}, nil},
		{errCase{"bad uid list", `query q($a: string = "[0x1, y]") { me(func: uid($a)) { uid } }`, 1, 49, `expected a uid`}, nil},
		{errCase{"bad regexp", `query q($a: string = "abc") { me(func: regexp(name, $a)) { uid } }`, 1, 53, `expected a regular expression`}, nil},
		{errCase{"string in math", `query q($a: string = "1") { var(func: has(x)) { m as math($a) } q(func: uid(m)) { uid } }`, 1, 59, `math takes int or float`}, nil},
		{errCase{"variable default", `query q($a: int = $b) { me(func: uid(0x1)) { uid } }`, 1, 19, `must be a literal`}, nil},
	} {
		_, err := ParseWithVars(tc.text, tc.vars)
		checkErr(t, tc.errCase, err)
	}
}

func TestDecodeVars(t *testing.T) {
	got, err := DecodeVars([]byte(`{"$a": "x", "$b": 12.5, "$c": true, "$d": null, "$ids": ["0x1", 2], "e": -3}`))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"$a": "x", "$b": "12.5", "$c": "true", "$ids": "[0x1, 2]", "e": "-3"}
	if !maps.Equal(got, want) {
		t.Errorf("DecodeVars = %v; want %v", got, want)
	}
	for _, bad := range []string{`[1]`, `{"a": {"b": 1}}`, `{"a": [[1]]}`, `{"a": [null]}`, `{"a": 1} {}`, `{`} {
		if _, err := DecodeVars([]byte(bad)); err == nil {
			t.Errorf("DecodeVars(%s): no error", bad)
		}
	}
}
