package dql

import (
	"slices"
	"testing"
)

func ptr[T any](v T) *T { return &v }

// TestBlocks covers the query's outer structure: blocks, var blocks, named
// queries, blocks without braces, aggregation blocks.
func TestBlocks(t *testing.T) {
	q := mustParse(t, `query films {
		a as var(func: eq(name@en, "x"))
		me(func: uid(a)) { name }
		stats() { m: max(val(n)) }
		var(func: has(age)) { n as age }
	}`)
	if q.Name != "films" || len(q.Blocks) != 4 {
		t.Fatalf("name %q, %d blocks", q.Name, len(q.Blocks))
	}
	b := q.Blocks[0]
	if b.Name != "var" || b.Var != "a" || b.Func.Name != "eq" || len(b.Fields) != 0 {
		t.Errorf("block 0 = %+v", b)
	}
	if b := q.Blocks[2]; b.Func != nil || b.Fields[0].Kind != FieldAgg || b.Fields[0].Alias != "m" {
		t.Errorf("aggregation block = %+v", b)
	}
	if b.Pos != (Pos{Line: 2, Col: 3}) {
		t.Errorf("block 0 at %v", b.Pos)
	}
	// Two brace groups make one query.
	q = mustParse(t, `{ a(func: has(x)) { uid } } { b(func: has(y)) { uid } }`)
	if len(q.Blocks) != 2 || q.Blocks[1].Name != "b" {
		t.Errorf("blocks = %v", q.Blocks)
	}
	if q := mustParse(t, "{}"); len(q.Blocks) != 0 || q.String() != "{\n}\n" {
		t.Errorf("empty query = %q", q)
	}
	if q := mustParse(t, "  # only a comment\n"); len(q.Blocks) != 0 {
		t.Errorf("comment only = %q", q)
	}
}

// TestRootFunctions covers every function with its argument forms.
func TestRootFunctions(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Func
	}{
		{`uid(0x1)`, Func{Name: "uid", UIDs: []uint64{1}}},
		{`uid(0x1, 31, v)`, Func{Name: "uid", UIDs: []uint64{1, 31}, Vars: []string{"v"}}},
		{`UID(a, b)`, Func{Name: "uid", Vars: []string{"a", "b"}}},
		{`eq(name, "a")`, Func{Name: "eq", Attr: "name", Args: []Arg{{Value: "a"}}}},
		{`eq(name@en, "a", "b")`, Func{Name: "eq", Attr: "name", Lang: "en", Args: []Arg{{Value: "a"}, {Value: "b"}}}},
		{`eq(name, ["a", b, 3])`, Func{Name: "eq", Attr: "name", Args: []Arg{{Value: "a"}, {Value: "b"}, {Value: "3"}}}},
		{`eq(age, -5)`, Func{Name: "eq", Attr: "age", Args: []Arg{{Value: "-5"}}}},
		{`eq(count(friend), 3)`, Func{Name: "eq", Attr: "friend", Count: true, Args: []Arg{{Value: "3"}}}},
		{`eq(val(x), 3)`, Func{Name: "eq", ValVar: "x", Args: []Arg{{Value: "3"}}}},
		{`eq(name, val(x))`, Func{Name: "eq", Attr: "name", Args: []Arg{{Kind: ArgValVar, Value: "x"}}}},
		{`le(age, 30)`, Func{Name: "le", Attr: "age", Args: []Arg{{Value: "30"}}}},
		{`lt(d, "2006-01-02")`, Func{Name: "lt", Attr: "d", Args: []Arg{{Value: "2006-01-02"}}}},
		{`ge(d, 2006-01-02)`, Func{Name: "ge", Attr: "d", Args: []Arg{{Value: "2006-01-02"}}}},
		{`gt(count(~genre), 30000)`, Func{Name: "gt", Attr: "~genre", Count: true, Args: []Arg{{Value: "30000"}}}},
		{`between(d, "1977-01-01", "1977-12-31")`, Func{Name: "between", Attr: "d", Args: []Arg{{Value: "1977-01-01"}, {Value: "1977-12-31"}}}},
		{`has(director.film)`, Func{Name: "has", Attr: "director.film"}},
		{`has(<http://x/y>)`, Func{Name: "has", Attr: "http://x/y"}},
		{`has(~genre)`, Func{Name: "has", Attr: "~genre"}},
		{`type(Person)`, Func{Name: "type", Args: []Arg{{Value: "Person"}}}},
		{`type("Film Genre")`, Func{Name: "type", Args: []Arg{{Value: "Film Genre"}}}},
		{`allofterms(name@en, "jones indiana")`, Func{Name: "allofterms", Attr: "name", Lang: "en", Args: []Arg{{Value: "jones indiana"}}}},
		{`anyofterms(name, "a b")`, Func{Name: "anyofterms", Attr: "name", Args: []Arg{{Value: "a b"}}}},
		{`alloftext(name, "the dog")`, Func{Name: "alloftext", Attr: "name", Args: []Arg{{Value: "the dog"}}}},
		{`anyoftext(name, "dog")`, Func{Name: "anyoftext", Attr: "name", Args: []Arg{{Value: "dog"}}}},
		{`ngram(name, "dog")`, Func{Name: "ngram", Attr: "name", Args: []Arg{{Value: "dog"}}}},
		{`regexp(name, /^Ste\/ven.*$/i)`, Func{Name: "regexp", Attr: "name", Args: []Arg{{Kind: ArgRegex, Value: "^Ste/ven.*$", Flags: "i"}}}},
		{`regexp(name, /a\.b(c)/)`, Func{Name: "regexp", Attr: "name", Args: []Arg{{Kind: ArgRegex, Value: `a\.b(c)`}}}},
		{`match(name@en, Stephen, 8)`, Func{Name: "match", Attr: "name", Lang: "en", Args: []Arg{{Value: "Stephen"}, {Value: "8"}}}},
		{`near(loc, [-122.4, 37.7], 1000)`, Func{Name: "near", Attr: "loc", Args: []Arg{{Kind: ArgGeo, Value: "[-122.4,37.7]"}, {Value: "1000"}}}},
		{`within(loc, [[[1, 2], [3, 4], [1,2]]])`, Func{Name: "within", Attr: "loc", Args: []Arg{{Kind: ArgGeo, Value: "[[[1,2],[3,4],[1,2]]]"}}}},
		{`contains(loc, [1.5, -2])`, Func{Name: "contains", Attr: "loc", Args: []Arg{{Kind: ArgGeo, Value: "[1.5,-2]"}}}},
		{`intersects(loc, [[[1, 2], [3, 4]]])`, Func{Name: "intersects", Attr: "loc", Args: []Arg{{Kind: ArgGeo, Value: "[[[1,2],[3,4]]]"}}}},
		{`similar_to(v, 3, [0.1, 0.2])`, Func{Name: "similar_to", Attr: "v", Args: []Arg{{Value: "3"}, {Kind: ArgGeo, Value: "[0.1,0.2]"}}}},
		{`similar_to(v, 3, "[0.1, 0.2]")`, Func{Name: "similar_to", Attr: "v", Args: []Arg{{Value: "3"}, {Value: "[0.1, 0.2]"}}}},
		{`eq(name@., "x")`, Func{Name: "eq", Attr: "name", Lang: ".", Args: []Arg{{Value: "x"}}}},
		{`eq(Jean-Pierre, "x")`, Func{Name: "eq", Attr: "Jean-Pierre", Args: []Arg{{Value: "x"}}}},
	} {
		got := rootFunc(t, tc.in)
		if !equalTrees(got, &tc.want) {
			t.Errorf("%s = %+v; want %+v", tc.in, *got, tc.want)
		}
	}
}

func TestFilterFunctions(t *testing.T) {
	f := filterOf(t, `uid_in(~director.film, 0x99706)`).Func
	if !equalTrees(f, &Func{Name: "uid_in", Attr: "~director.film", UIDs: []uint64{0x99706}}) {
		t.Errorf("uid_in literal = %+v", f)
	}
	f = filterOf(t, `uid_in(friend, [0x1, 0x2], uid(v))`).Func
	if !slices.Equal(f.UIDs, []uint64{1, 2}) || !slices.Equal(f.Vars, []string{"v"}) {
		t.Errorf("uid_in list = %+v", f)
	}
}

// TestFilterPrecedence: NOT binds tighter than AND, AND than OR;
// parentheses group; chains flatten; keywords in any case.
func TestFilterPrecedence(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`has(a)`, `a`},
		{`has(a) AND has(b) OR has(c)`, `(or (and a b) c)`},
		{`has(a) OR has(b) AND has(c)`, `(or a (and b c))`},
		{`has(a) and has(b) and has(c)`, `(and a b c)`},
		{`(has(a) AND has(b)) AND has(c)`, `(and a b c)`},
		{`has(a) AND (has(b) OR has(c))`, `(and a (or b c))`},
		{`NOT has(a) AND has(b)`, `(and (not a) b)`},
		{`NOT (has(a) AND has(b))`, `(not (and a b))`},
		{`not not has(a)`, `(not (not a))`},
		{`has(a) OR NOT has(b) OR has(c)`, `(or a (not b) c)`},
		{`((has(a)))`, `a`},
		{`NOT(has(a))`, `(not a)`},
		{`has(a) AND NOT has(b) AND NOT has(c) OR has(d) AND has(e)`, `(or (and a (not b) (not c)) (and d e))`},
	} {
		if got := sexpr(filterOf(t, tc.in)); got != tc.want {
			t.Errorf("%s = %s; want %s", tc.in, got, tc.want)
		}
	}
	// @filter() is no filter, as in Dgraph.
	if q := mustParse(t, `{ q(func: has(a)) @filter() { uid } }`); q.Blocks[0].Filter != nil {
		t.Errorf("empty filter = %v", q.Blocks[0].Filter)
	}
}

// TestMathPrecedence follows Dgraph's table: * / > dot > % > - > + >
// comparisons, left associative, unary minus tightest.
func TestMathPrecedence(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`a + b * c`, `(+ a (* b c))`},
		{`a * b + c`, `(+ (* a b) c)`},
		{`a - b - c`, `(- (- a b) c)`},
		{`a / b / c`, `(/ (/ a b) c)`},
		{`5 * 10 / 50`, `(/ (* 5 10) 50)`},
		{`a + b - c`, `(+ a (- b c))`},
		{`a - b + c`, `(+ (- a b) c)`},
		{`a % b * c`, `(% a (* b c))`},
		{`a * b % c`, `(% (* a b) c)`},
		{`(a + b) * c`, `(* (+ a b) c)`},
		{`-a * b`, `(* (neg a) b)`},
		{`-(a * b)`, `(neg (* a b))`},
		{`a - -3`, `(- a -3)`},
		{`-(3)`, `-3`},
		{`--a`, `(neg (neg a))`},
		{`a < b + 1`, `(< a (+ b 1))`},
		{`a == b != c`, `(!= (== a b) c)`},
		{`a dot b * 2`, `(dot a (* b 2))`},
		{`cond(a > 10, 0, ln(b) + c - ln(a))`, `(cond (> a 10) 0 (+ (ln b) (- c (ln a))))`},
		{`since(d) / (365 * 24)`, `(/ (since d) (* 365 24))`},
		{`pow(a, 2) + logbase(b, 10)`, `(+ (pow a 2) (logbase b 10))`},
		{`min(a, b) - max(c, d)`, `(- (min a b) (max c d))`},
		{`floor(a) + ceil(b) + exp(c) + sqrt(d)`, `(+ (+ (+ (floor a) (ceil b)) (exp c)) (sqrt d))`},
		{`1.5 * a`, `(* 1.5f a)`},
		{`2e3 + a`, `(+ 2000f a)`},
		{`-0.0 + a`, `(+ -0f a)`},
		{`-9223372036854775808 + a`, `(+ -9223372036854775808 a)`},
	} {
		if got := mexpr(mathOf(t, tc.in)); got != tc.want {
			t.Errorf("math(%s) = %s; want %s", tc.in, got, tc.want)
		}
	}
	// A constant alone, as in Dgraph's facet examples.
	q := mustParse(t, `{ var(func: has(r)) { n as math(1) } q(func: uid(n)) { val(n) } }`)
	if c := q.Blocks[0].Fields[0].Math.Const; c == nil || c.Int != 1 {
		t.Errorf("math(1) = %+v", q.Blocks[0].Fields[0].Math)
	}
}

// TestFields covers every kind of field with aliases and variables.
func TestFields(t *testing.T) {
	q := mustParse(t, `{
		a as var(func: has(x)) { v as x }
		q(func: uid(a)) {
			uid
			dgraph.type
			name@en
			n2: name@en:fr:.
			n3: name@.
			n4: name@*
			~genre { uid }
			<http://x.org/p> { uid }
			alias : friend { name }
			c as count(friend)
			count(uid)
			total: count(~genre @filter(has(x)))
			val(v)
			s: sum(val(v))
			mn: min(val(v))
			m as math(v * 2)
			expand(_all_)
			expand(Person, Film)
			checkpwd(password, "secret")
			Jean-Pierre
			bag: val(m)
			val(c)
		}
	}`)
	fs := q.Blocks[1].Fields
	for i, want := range []Field{
		{Kind: FieldPred, Attr: "uid"},
		{Kind: FieldPred, Attr: "dgraph.type"},
		{Kind: FieldPred, Attr: "name", Langs: []string{"en"}},
		{Kind: FieldPred, Alias: "n2", Attr: "name", Langs: []string{"en", "fr", "."}},
		{Kind: FieldPred, Alias: "n3", Attr: "name", Langs: []string{"."}},
		{Kind: FieldPred, Alias: "n4", Attr: "name", Langs: []string{"*"}},
	} {
		if !equalTrees(fs[i], &want) {
			t.Errorf("field %d = %+v; want %+v", i, *fs[i], want)
		}
	}
	check := func(i int, kind FieldKind, alias, v, attr string) {
		t.Helper()
		f := fs[i]
		if f.Kind != kind || f.Alias != alias || f.Var != v || f.Attr != attr {
			t.Errorf("field %d = %v %q %q %q; want %v %q %q %q", i, f.Kind, f.Alias, f.Var, f.Attr, kind, alias, v, attr)
		}
	}
	check(6, FieldPred, "", "", "~genre")
	check(7, FieldPred, "", "", "http://x.org/p")
	check(8, FieldPred, "alias", "", "friend")
	check(9, FieldCount, "", "c", "friend")
	check(10, FieldCountUID, "", "", "")
	check(11, FieldCount, "total", "", "~genre")
	if fs[11].Filter == nil || fs[11].Filter.Func.Name != "has" {
		t.Errorf("count filter = %+v", fs[11].Filter)
	}
	check(12, FieldVal, "", "", "")
	if fs[13].Kind != FieldAgg || fs[13].Agg != "sum" || fs[13].ValVar != "v" || fs[14].Agg != "min" {
		t.Errorf("aggregates = %+v %+v", fs[13], fs[14])
	}
	if fs[15].Kind != FieldMath || mexpr(fs[15].Math) != "(* v 2)" {
		t.Errorf("math = %+v", fs[15])
	}
	if !slices.Equal(fs[16].Expand, []string{"_all_"}) || !slices.Equal(fs[17].Expand, []string{"Person", "Film"}) {
		t.Errorf("expand = %v %v", fs[16].Expand, fs[17].Expand)
	}
	check(18, FieldCheckpwd, "", "", "password")
	if fs[18].Password != "secret" {
		t.Errorf("checkpwd = %+v", fs[18])
	}
	check(19, FieldPred, "", "", "Jean-Pierre")
	// Predicates named like field functions, without '(' after them.
	f := firstField(t, `count val math expand min`)
	if f.Kind != FieldPred || f.Attr != "count" {
		t.Errorf("count as a predicate = %+v", f)
	}
	// A predicate with a function's name and arguments renders as <count>.
	q = mustParse(t, `{ q(func: has(a)) { <count> (first: 1) { uid } } }`)
	if f := q.Blocks[0].Fields[0]; f.Kind != FieldPred || f.Attr != "count" || *f.Page.First != 1 {
		t.Errorf("<count>(first: 1) = %+v", f)
	}
	// Variable and alias in either order; AS in any case.
	for _, in := range []string{`a: v AS name`, `v as a: name`} {
		q := mustParse(t, `{ q(func: has(a)) { `+in+` } r(func: uid(v)) { uid } }`)
		if f := q.Blocks[0].Fields[0]; f.Alias != "a" || f.Var != "v" || f.Attr != "name" {
			t.Errorf("%s = %+v", in, f)
		}
	}
	// Commas between fields are allowed.
	if q := mustParse(t, `{ q(func: has(a)) { a, b, c } }`); len(q.Blocks[0].Fields) != 3 {
		t.Errorf("comma-separated fields = %v", q.Blocks[0].Fields)
	}
	// expand(val(v)) with a type filter and sub-fields.
	q = mustParse(t, `{ var(func: has(a)) { t as dgraph.type } q(func: has(a)) { expand(val(t)) @filter(type(A) OR type(B)) { uid } } }`)
	if f := q.Blocks[1].Fields[0]; f.ValVar != "t" || f.Filter == nil || len(f.Fields) != 1 {
		t.Errorf("expand(val(t)) = %+v", f)
	}
}

// TestPagination covers first, offset, after and ordering.
func TestPagination(t *testing.T) {
	q := mustParse(t, `{ q(func: has(a), first: 10, offset: 5, after: 0x1f, orderasc: name@en, orderdesc: age) {
		friend (first: -3, orderdesc: val(v), offset: 0) { v as age }
	} }`)
	b := q.Blocks[0]
	if *b.Page.First != 10 || *b.Page.Offset != 5 || *b.Page.After != 0x1f {
		t.Errorf("page = %+v", b.Page)
	}
	want := []Order{{Attr: "name", Langs: []string{"en"}}, {Attr: "age", Desc: true}}
	if !equalTrees(b.Order, want) {
		t.Errorf("order = %+v", b.Order)
	}
	f := b.Fields[0]
	if *f.Page.First != -3 || *f.Page.Offset != 0 || f.Page.After != nil || !equalTrees(f.Order, []Order{{Var: "v", Desc: true}}) {
		t.Errorf("field page %+v order %+v", f.Page, f.Order)
	}
}

// TestDirectives covers @cascade, @normalize, @recurse, @groupby,
// @ignorereflex and @facets.
func TestDirectives(t *testing.T) {
	q := mustParse(t, `{ q(func: has(a)) @cascade @normalize @ignorereflex @recurse(depth: 5, loop: true) @groupby(age, n: name@en) {
		count(uid)
	} }`)
	b := q.Blocks[0]
	if b.Cascade == nil || len(b.Cascade.Fields) != 0 || !b.Normalize || !b.IgnoreReflex {
		t.Errorf("flags = %+v", b)
	}
	if *b.Recurse != (Recurse{Depth: 5, Loop: true}) {
		t.Errorf("recurse = %+v", b.Recurse)
	}
	if !equalTrees(b.GroupBy, []GroupAttr{{Attr: "age"}, {Attr: "name", Alias: "n", Langs: []string{"en"}}}) {
		t.Errorf("groupby = %+v", b.GroupBy)
	}
	f := firstField(t, `friend @cascade(name, age) @normalize { name age }`)
	if !slices.Equal(f.Cascade.Fields, []string{"name", "age"}) || !f.Normalize {
		t.Errorf("field directives = %+v", f)
	}
	f = firstField(t, `friend @facets`)
	if !equalTrees(f.Facets, &Facets{All: true}) {
		t.Errorf("@facets = %+v", f.Facets)
	}
	f = firstField(t, `friend @facets()`)
	if !equalTrees(f.Facets, &Facets{}) {
		t.Errorf("@facets() = %+v", f.Facets)
	}
	q = mustParse(t, `{ var(func: has(a)) { friend @facets(since, c: close, w as weight, orderdesc: weight, orderasc: since, orderasc: rank) }
		q(func: uid(w)) { val(w) } }`)
	want := &Facets{
		Keys:  []FacetKey{{Key: "since"}, {Key: "close", Alias: "c"}, {Key: "weight", Var: "w"}, {Key: "rank"}},
		Order: []FacetOrder{{Key: "weight", Desc: true}, {Key: "since"}, {Key: "rank"}},
	}
	if got := q.Blocks[0].Fields[0].Facets; !equalTrees(got, want) {
		t.Errorf("facets = %+v; want %+v", got, want)
	}
	f = firstField(t, `friend @facets(eq(close, true) AND NOT eq(relative, true)) @facets(relative) { name }`)
	if f.FacetsFilter == nil || sexpr(f.FacetsFilter) != "(and close (not relative))" || f.Facets.Keys[0].Key != "relative" {
		t.Errorf("facet filter = %+v %+v", f.FacetsFilter, f.Facets)
	}
	f = firstField(t, `name @facets(<वंश>)`)
	if f.Facets.Keys[0].Key != "वंश" {
		t.Errorf("IRI facet = %+v", f.Facets)
	}
	f = firstField(t, `friend @filter(has(a)) (first: 2) @facets(w) { uid }`)
	if f.Filter == nil || *f.Page.First != 2 || f.Facets == nil {
		t.Errorf("directives and arguments in any order = %+v", f)
	}
}

func TestShortest(t *testing.T) {
	q := mustParse(t, `{
		A as var(func: eq(name, "a"))
		p as shortest(from: uid(A), to: 0x5, numpaths: 2, depth: 3, minweight: 1, maxweight: 10.5, maxfrontiersize: 100) {
			friend @facets(weight)
		}
		path(func: uid(p)) { name }
	}`)
	s := q.Blocks[1].Shortest
	want := &Shortest{From: UIDRef{Var: "A"}, To: UIDRef{UID: 5}, NumPaths: ptr[int64](2), Depth: ptr[int64](3),
		MinWeight: ptr(1.0), MaxWeight: ptr(10.5), MaxFrontierSize: ptr[int64](100)}
	if !equalTrees(s, want) || q.Blocks[1].Var != "p" {
		t.Errorf("shortest = %+v", s)
	}
	q = mustParse(t, `{ shortest(from: uid(0x2), to: uid(0x3)) { friend } }`)
	if s := q.Blocks[0].Shortest; s.From.UID != 2 || s.To.UID != 3 {
		t.Errorf("shortest uid() = %+v", s)
	}
}

func TestFragments(t *testing.T) {
	q := mustParse(t, `query {
		q(func: uid(0x1)) { ...A friend { ...A } }
	}
	fragment A { uid name ...B }
	fragment B { age }`)
	var names []string
	for _, f := range q.Blocks[0].Fields {
		names = append(names, f.Attr)
	}
	if !slices.Equal(names, []string{"uid", "name", "age", "friend"}) {
		t.Errorf("expanded fields = %v", names)
	}
	inner := q.Blocks[0].Fields[3].Fields
	if len(inner) != 3 || inner[0] == q.Blocks[0].Fields[0] {
		t.Errorf("fragment copies share fields or are missing: %v", inner)
	}
}

func TestSchemaQuery(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want SchemaQuery
	}{
		{`schema {}`, SchemaQuery{}},
		{`schema { type index }`, SchemaQuery{Fields: []string{"type", "index"}}},
		{`schema(pred: name) { type }`, SchemaQuery{Preds: []string{"name"}, Fields: []string{"type"}}},
		{`schema(pred: [name, age]) {}`, SchemaQuery{Preds: []string{"name", "age"}}},
		{`schema(type: [Person]) {}`, SchemaQuery{Types: []string{"Person"}}},
	} {
		q := mustParse(t, tc.in)
		if !equalTrees(q.Schema, &tc.want) {
			t.Errorf("%s = %+v", tc.in, q.Schema)
		}
	}
}

// TestCanonical pins the canonical rendering of a few inputs.
func TestCanonical(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{me(func:uid(1)){name}}`, "{\n  me(func: uid(0x1)) {\n    name\n  }\n}\n"},
		{`{q(func: eq(<http://a/b>, "x\ty")) @filter(has(c)) { x : <AS> }}`,
			"{\n  q(func: eq(<http://a/b>, \"x\\ty\")) @filter(has(c)) {\n    x: <AS>\n  }\n}\n"},
		{`{q(func: has(a)) @filter(has(a) and (has(b) or has(c))) { u as uid } v(func: uid(u)) {}}`,
			"{\n  q(func: has(a)) @filter(has(a) AND (has(b) OR has(c))) {\n    u as uid\n  }\n  v(func: uid(u)) {\n  }\n}\n"},
		{`query q($a: int = 3) { q(func: has(a), first: $a) { x } }`,
			"query q {\n  q(func: has(a), first: 3) {\n    x\n  }\n}\n"},
		{`{ q(func: regexp(name, /a\/b/i)) { uid } }`,
			"{\n  q(func: regexp(name, /a\\/b/i)) {\n    uid\n  }\n}\n"},
	} {
		q, err := Parse(tc.in)
		if err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		if got := q.String(); got != tc.want {
			t.Errorf("%s renders\n%s\nwant\n%s", tc.in, got, tc.want)
		}
	}
}

// TestLexer covers tokens whose boundaries matter.
func TestLexer(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{`director.film ~genre 0x1f 1.5e-3 2e+6`, []string{"director.film", "~genre", "0x1f", "1.5e-3", "2e+6"}},
		{`a-b 2006-01-02`, []string{"a", "'-'", "b", "2006", "'-'", "01", "'-'", "02"}},
		{`<http://x/y#z> <a`, []string{"<http://x/y#z>", "'<'", "a"}},
		{`a<=b a<b> a>=b == != !`, []string{"a", "'<='", "b", "a", "<b>", "a", "'>='", "b", "'=='", "'!='", "'!'"}},
		{`"a\"b\u00e9" $x # comment`, []string{`"a\"bé"`, "$x"}},
		{"@en:fr\n...", []string{"'@'", "en", "':'", "fr", "'.'", "'.'", "'.'"}},
	} {
		lx := newLexer(tc.in)
		var got []string
		for {
			tok := lx.next()
			if tok.kind == tokEOF {
				break
			}
			if tok.kind == tokError {
				t.Fatalf("%s: %s", tc.in, tok.text)
			}
			s := tok.text
			if tok.kind != tokWord {
				s = tok.describe()
			}
			got = append(got, s)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: tokens %q; want %q", tc.in, got, tc.want)
		}
	}
	// Positions count characters, from 1.
	lx := newLexer("\"é\"  a\n  \"b\"")
	lx.next()
	if a := lx.next(); a.pos != (Pos{1, 6}) {
		t.Errorf("a at %v", a.pos)
	}
	if b := lx.next(); b.pos != (Pos{2, 3}) {
		t.Errorf("b at %v", b.pos)
	}
}

func TestBlockVars(t *testing.T) {
	q := mustParse(t, `{
		a as var(func: has(x)) { f as friend { s as score } }
		me(func: uid(a), orderdesc: val(s)) @filter(uid(f) AND gt(val(s), 1)) { n as name m as math(s * 2) val(m) }
		r(func: uid(n)) { uid }
	}`)
	d, u := q.Blocks[1].Vars()
	if !slices.Equal(d, []string{"n", "m"}) || !slices.Equal(u, []string{"a", "s", "f", "m"}) {
		t.Errorf("Vars = %v, %v", d, u)
	}
	d, u = q.Blocks[0].Vars()
	if !slices.Equal(d, []string{"a", "f", "s"}) || len(u) != 0 {
		t.Errorf("Vars = %v, %v", d, u)
	}
}
