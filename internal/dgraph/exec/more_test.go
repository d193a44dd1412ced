package exec

import (
	"context"
	"testing"

	"github.com/weft-db/weft/internal/dgraph"
	"github.com/weft-db/weft/internal/dgraph/dql"
	"github.com/weft-db/weft/internal/rdf"
)

const moreData = `
<0x5> <name> "Eve" .
<0x5> <pass> "secret99"^^<xs:password> .
<0x5> <friend> <0x1> (weight=5) .
<0x5> <friend> <0x2> (weight=1) .
<0x2> <name> "Bobby"@en .
`

func TestMoreFeatures(t *testing.T) {
	f := newFixture(t, peopleSchema+"pass: password .\n", peopleData+moreData)
	for _, c := range []struct{ name, q, want string }{
		{"all langs", `{ q(func: uid(0x1)) { name@* } }`, `{"q":[{"name":"Alice","name@es":"Alicia"}]}`},
		{"checkpwd", `{ q(func: uid(0x5)) { name checkpwd(pass, "secret99") bad: checkpwd(pass, "nope") pass } }`,
			`{"q":[{"name":"Eve","checkpwd(pass)":true,"bad":false}]}`},
		{"facet order", `{ q(func: uid(0x5)) { friend @facets(orderasc: weight) { name } } }`,
			`{"q":[{"friend":[{"name":"Bob","friend|weight":1},{"name":"Alice","friend|weight":5}]}]}`},
		{"facet var", `{ var(func: uid(0x5)) { friend @facets(w as weight) } q(func: uid(w), orderdesc: val(w)) { name val(w) } }`,
			`{"q":[{"name":"Alice","val(w)":5},{"name":"Bob","val(w)":1}]}`},
		{"facet filter range", `{ q(func: uid(0x5)) { friend @facets(gt(weight, 2)) { name } } }`,
			`{"q":[{"friend":[{"name":"Alice"}]}]}`},
		{"weighted shortest", `{ shortest(from: 0x5, to: 0x3) { friend @facets(weight) } }`,
			`{"_path_":[{"uid":"0x5","friend":{"uid":"0x2","friend":{"uid":"0x3"}},"_weight_":2}]}`},
		{"shortest minweight", `{ shortest(from: 0x5, to: 0x3, numpaths: 3, minweight: 3) { friend @facets(weight) } }`,
			`{"_path_":[{"uid":"0x5","friend":{"uid":"0x1","friend":{"uid":"0x3"}},"_weight_":6},{"uid":"0x5","friend":{"uid":"0x1","friend":{"uid":"0x2","friend":{"uid":"0x3"}}},"_weight_":7}]}`},
		{"expand type", `{ q(func: uid(0x3)) { expand(Person) } }`, `{"q":[{"age":35,"name":"Carol Ann"}]}`},
		{"groupby aggregate", `{ q(func: uid(0x1, 0x5)) { friend @groupby(dgraph.type) { count(uid) min(age) max(age) } } }`,
			`{"q":[{"friend":[{"@groupby":[{"dgraph.type":"Person","count":2,"min(age)":25,"max(age)":35}]}]},{"friend":[{"@groupby":[{"dgraph.type":"Person","count":2,"min(age)":25,"max(age)":30}]}]}]}`},
		{"math functions", `{ var(func: uid(0x1)) { a as age } q(func: uid(a)) { r: math(sqrt(a * a) + max(a, 40) / 2) c: math(cond(a > 20, 1, 2)) } }`,
			`{"q":[{"r":50,"c":1}]}`},
		{"count at root and fields", `{ q(func: uid(0x1, 0x2)) { count(uid) name } }`,
			`{"q":[{"count":2},{"name":"Alice"},{"name":"Bob"}]}`},
		{"filter eq count", `{ q(func: has(name)) @filter(eq(count(friend), 2)) { name } }`,
			`{"q":[{"name":"Alice"},{"name":"Eve"}]}`},
		{"root eq count", `{ q(func: eq(count(friend), 1)) { name } }`, `{"q":[{"name":"Bob"}]}`},
		{"root regexp", `{ q(func: regexp(name, /^E/)) { name } }`, `{"q":[{"name":"Eve"}]}`},
		{"lang filter", `{ q(func: has(name)) @filter(eq(name@en, "Bobby")) { name@en } }`, `{"q":[{"name@en":"Bobby"}]}`},
		{"order by lang", `{ q(func: uid(0x1, 0x2), orderasc: name@es) { uid } }`, `{"q":[{"uid":"0x1"},{"uid":"0x2"}]}`},
		{"cascade listed", `{ q(func: uid(0x1, 0x4)) @cascade(age) { name age friend { name } } }`,
			`{"q":[{"name":"Alice","age":30,"friend":[{"name":"Bob"},{"name":"Carol Ann"}]}]}`},
		{"nested normalize", `{ q(func: uid(0x1)) { name friend @normalize { n: name } } }`,
			`{"q":[{"name":"Alice","friend":[{"n":"Bob"},{"n":"Carol Ann"}]}]}`},
		{"aggregate of another block", `{ var(func: has(age)) { a as age } q(func: uid(0x4)) { name m: max(val(a)) } }`,
			`{"q":[{"name":"Dave","m":35}]}`},
		{"schema", `schema(pred: [age]) { type index }`, `{"schema":[{"predicate":"age","type":"int","index":true}]}`},
	} {
		t.Run(c.name, func(t *testing.T) { f.expect(t, c.q, nil, c.want) })
	}
}

// TestLevelBatches checks the execution model: a 2-hop query reads its
// nodes in one batch per level, whatever the number of results.
func TestLevelBatches(t *testing.T) {
	f := newFixture(t, peopleSchema, peopleData+moreData)
	res := f.query(t, `{ q(func: uid(0x5)) { name friend { name friend { name } } } }`, nil)
	if res.Stats.Batches != 3 {
		t.Errorf("%d batches for three levels, want 3", res.Stats.Batches)
	}
	if res.Stats.Nodes != 4 { // 0x5; 0x1 0x2; 0x3 (0x2 already read)
		t.Errorf("%d distinct nodes read, want 4", res.Stats.Nodes)
	}
	res = f.query(t, `{ q(func: uid(0x1)) { friend { uid } } }`, nil)
	if res.Stats.Batches != 1 {
		t.Errorf("a uid-only level was read: %d batches", res.Stats.Batches)
	}
}

func TestUpsertDeleteAndJSON(t *testing.T) {
	f := newFixture(t, peopleSchema, peopleData)
	ctx := context.Background()
	u, err := dql.ParseUpsert(`upsert {
  query { q(func: eq(name, "Bob")) { v as uid } }
  mutation { delete {
uid(v) <friend> * .
} }
}`)
	if err != nil {
		t.Fatal(err)
	}
	// A JSON mutation naming uid(v), as an endpoint gets it: dgraph.ParseJSON
	// turns it into quads, put in the parsed upsert's mutation.
	js, err := dgraph.ParseJSON([]byte(`{"uid": "uid(v)", "nick": "json"}`), false)
	if err != nil {
		t.Fatal(err)
	}
	u.Mutations = append(u.Mutations, &dql.Mutation{Set: js})
	ms, _, err := f.e.Upsert(ctx, f.reader(t, false), u, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 2 || len(ms[0].Del) != 1 || ms[0].Del[0].Subject.UID != 2 || ms[0].Del[0].Object.Kind != rdf.Wildcard {
		t.Fatalf("delete mutation %+v", ms)
	}
	if len(ms[1].Set) != 1 || ms[1].Set[0].Subject.Kind != rdf.UID || ms[1].Set[0].Subject.UID != 2 {
		t.Fatalf("json mutation %+v", ms[1])
	}
	for _, m := range ms {
		if _, err := f.g.Mutate(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	f.expect(t, `{ q(func: uid(0x2)) { name nick count(friend) } }`, nil, `{"q":[{"name":"Bob","nick":"json","count(friend)":0}]}`)
}

// TestDgraphSemantics covers rules taken from Dgraph's own query tests: an
// edge is walked once by @recurse without loop (a node may show again),
// uid variables hold what @cascade kept, groups come by size, facet
// variables also print, math is done in floats, eq compares with a value
// variable's values, and the sum of nothing is 0.
func TestDgraphSemantics(t *testing.T) {
	f := newFixture(t, peopleSchema+"school: [uid] .\nbest: uid .\n", `
<0x1> <name> "A" .
<0x1> <best> <0x2> .
<0x1> <age> "20" .
<0x1> <friend> <0x2> (w=0.5) .
<0x1> <friend> <0x4> .
<0x2> <name> "B" .
<0x2> <age> "20" .
<0x2> <friend> <0x1> .
<0x2> <friend> <0x3> .
<0x3> <name> "C" .
<0x3> <age> "30" .
<0x4> <name> "D" .
<0x4> <age> "20" .
<0x5> <name> "B" .
`)
	for _, c := range []struct{ name, q, want string }{
		{"recurse walks edges once", `{ q(func: uid(0x1)) @recurse { name friend } }`,
			`{"q":[{"name":"A","friend":[{"name":"B","friend":[{"name":"A"},{"name":"C"}]},{"name":"D"}]}]}`},
		{"recurse depth", `{ q(func: uid(0x1)) @recurse(depth: 2) { name friend } }`,
			`{"q":[{"name":"A","friend":[{"name":"B"},{"name":"D"}]}]}`},
		{"var after cascade", `{ q(func: uid(0x1)) @cascade { L as friend { friend name } } r(func: uid(L)) { name } }`,
			`{"q":[{"friend":[{"name":"B"}]}],"r":[{"name":"B"}]}`},
		{"groups by size", `{ q(func: uid(0x1, 0x2, 0x3, 0x4)) @groupby(age) { count(uid) } }`,
			`{"q":[{"@groupby":[{"age":30,"count":1},{"age":20,"count":3}]}]}`},
		{"no groups", `{ q(func: uid(0x1)) @groupby(school) { count(uid) } }`, `{}`},
		{"facet var prints", `{ q(func: uid(0x1)) { friend @facets(v as w) { name } } r(func: uid(v)) { val(v) } }`,
			`{"q":[{"friend":[{"name":"B","friend|w":0.5},{"name":"D"}]}],"r":[{"val(v)":0.5}]}`},
		{"math floats", `{ var(func: uid(0x3)) { a as age } q(func: uid(a)) { m: math(a / 4) } }`,
			`{"q":[{"m":7.5}]}`},
		{"eq val root", `{ var(func: uid(0x2)) { n as name } q(func: eq(name, val(n))) { uid } }`,
			`{"q":[{"uid":"0x2"},{"uid":"0x5"}]}`},
		{"eq val filter", `{ var(func: uid(0x2)) { n as name } q(func: has(name)) @filter(eq(name, val(n))) { uid } }`,
			`{"q":[{"uid":"0x2"},{"uid":"0x5"}]}`},
		{"non-list uid predicate", `{ q(func: uid(0x1)) { best { name } n: ~best { name } } }`,
			`{"q":[{"best":{"name":"B"}}]}`},
		{"non-list uid normalize", `{ q(func: uid(0x1)) @normalize { a: name best { b: name } } }`,
			`{"q":[{"a":"A","b":"B"}]}`},
		{"ignorereflex", `{ q(func: uid(0x1)) @ignorereflex { name friend { name friend { name } } } }`,
			`{"q":[{"name":"A","friend":[{"name":"B","friend":[{"name":"C"}]},{"name":"D"}]}]}`},
		{"reflex kept without the directive", `{ q(func: uid(0x1)) { name friend { name friend { name } } } }`,
			`{"q":[{"name":"A","friend":[{"name":"B","friend":[{"name":"A"},{"name":"C"}]},{"name":"D"}]}]}`},
		{"later sort key missing", `{ q(func: uid(0x1, 0x2, 0x4, 0x5), orderasc: name, orderdesc: age) { uid } }`,
			`{"q":[{"uid":"0x1"},{"uid":"0x5"},{"uid":"0x2"},{"uid":"0x4"}]}`},
		{"later sort key missing asc", `{ q(func: uid(0x5, 0x2, 0x1), orderasc: name, orderasc: age) { uid } }`,
			`{"q":[{"uid":"0x1"},{"uid":"0x2"},{"uid":"0x5"}]}`},
		{"sum of nothing", `{ var(func: uid(0x5)) { a as age } s() { sum(val(a)) } }`, `{"s":[{"sum(val(a))":0}]}`},
	} {
		t.Run(c.name, func(t *testing.T) { f.expect(t, c.q, nil, c.want) })
	}
	res := f.query(t, `{ var(func: uid(0x3)) { a as age } q(func: uid(a)) { m: math(a + 1) } }`, nil)
	if string(res.Data) != `{"q":[{"m":31}]}` || res.ValueVars == nil {
		t.Errorf("math output %s", res.Data)
	}
}
