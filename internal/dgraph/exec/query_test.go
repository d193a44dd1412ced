package exec

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/weft-db/weft/internal/dgraph"
	"github.com/weft-db/weft/internal/dgraph/dql"
	"github.com/weft-db/weft/internal/rdf"
	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/value"
)

// cases are hand-checked answers over peopleData (smoke_test.go).
var cases = []struct {
	name, q string
	vars    map[string]string
	want    string
}{
	{"eq", `{ q(func: eq(name, "Bob")) { uid name age } }`, nil,
		`{"q":[{"uid":"0x2","name":"Bob","age":25}]}`},
	{"has", `{ q(func: has(age)) { name } }`, nil,
		`{"q":[{"name":"Alice"},{"name":"Bob"},{"name":"Carol Ann"}]}`},
	{"type count", `{ q(func: type(Person)) { count(uid) } }`, nil, `{"q":[{"count":3}]}`},
	{"no result", `{ q(func: eq(name, "Zed")) { name } }`, nil, `{"q":[]}`},
	{"has reverse", `{ q(func: has(~friend)) { name } }`, nil, `{"q":[{"name":"Bob"},{"name":"Carol Ann"}]}`},
	{"reverse", `{ q(func: uid(0x3)) { name ~friend { name } } }`, nil,
		`{"q":[{"name":"Carol Ann","~friend":[{"name":"Alice"},{"name":"Bob"}]}]}`},
	{"aliases", `{ q(func: uid(0x1)) { n: name, pals: friend { n: name } } }`, nil,
		`{"q":[{"n":"Alice","pals":[{"n":"Bob"},{"n":"Carol Ann"}]}]}`},
	{"langs", `{ q(func: uid(0x1)) { name@es name@. name@fr:es name@fr } }`, nil,
		`{"q":[{"name@es":"Alicia","name@.":"Alice","name@fr:es":"Alicia"}]}`},
	{"uid edge without braces", `{ q(func: uid(0x2)) { friend } }`, nil, `{"q":[]}`},
	{"cascade on uid edge without braces", `{ q(func: has(name)) @cascade { name friend } }`, nil,
		`{"q":[{"name":"Alice"},{"name":"Bob"}]}`},
	{"list predicate", `{ q(func: uid(0x2)) { dgraph.type } }`, nil, `{"q":[{"dgraph.type":["Person"]}]}`},
	{"gql default", `query q($n: string = "Bob") { q(func: eq(name, $n)) { name } }`, nil, `{"q":[{"name":"Bob"}]}`},
	{"gql given", `query q($n: string = "Bob") { q(func: eq(name, $n)) { name } }`, map[string]string{"$n": "Alice"},
		`{"q":[{"name":"Alice"}]}`},
	{"root range", `{ q(func: ge(age, 30)) { name } }`, nil, `{"q":[{"name":"Alice"},{"name":"Carol Ann"}]}`},
	{"root between", `{ q(func: between(age, 26, 34)) { name } }`, nil, `{"q":[{"name":"Alice"}]}`},
	{"root terms", `{ q(func: anyofterms(name, "ann bob")) { name } }`, nil, `{"q":[{"name":"Bob"},{"name":"Carol Ann"}]}`},
	{"root allofterms", `{ q(func: allofterms(name, "ann carol")) { name } }`, nil, `{"q":[{"name":"Carol Ann"}]}`},
	{"filter or", `{ q(func: has(name)) @filter(ge(age, 30) OR eq(name, "Dave")) { name } }`, nil,
		`{"q":[{"name":"Alice"},{"name":"Carol Ann"},{"name":"Dave"}]}`},
	{"filter not", `{ q(func: has(name)) @filter(NOT has(age)) { name } }`, nil, `{"q":[{"name":"Dave"}]}`},
	{"filter and lt", `{ q(func: has(name)) @filter(lt(age, 35) AND gt(age, 25)) { name } }`, nil, `{"q":[{"name":"Alice"}]}`},
	{"filter le", `{ q(func: has(name)) @filter(le(age, 25)) { name } }`, nil, `{"q":[{"name":"Bob"}]}`},
	{"filter terms", `{ q(func: has(name)) @filter(anyofterms(name, "ann bob")) { name } }`, nil,
		`{"q":[{"name":"Bob"},{"name":"Carol Ann"}]}`},
	{"filter regexp", `{ q(func: has(name)) @filter(regexp(name, /^[ab]/i)) { name } }`, nil,
		`{"q":[{"name":"Alice"},{"name":"Bob"}]}`},
	{"filter uid_in", `{ q(func: has(name)) @filter(uid_in(friend, 0x3)) { name } }`, nil,
		`{"q":[{"name":"Alice"},{"name":"Bob"}]}`},
	{"filter uid", `{ q(func: has(name)) @filter(uid(0x2, 0x4)) { name } }`, nil, `{"q":[{"name":"Bob"},{"name":"Dave"}]}`},
	{"filter type", `{ q(func: has(name)) @filter(type(Person) AND NOT eq(age, 30)) { name } }`, nil,
		`{"q":[{"name":"Bob"},{"name":"Carol Ann"}]}`},
	{"nested filter", `{ q(func: uid(0x1)) { friend @filter(gt(age, 30)) { name } } }`, nil,
		`{"q":[{"friend":[{"name":"Carol Ann"}]}]}`},
	{"orderdesc first", `{ q(func: has(name), orderdesc: age, first: 2) { name } }`, nil,
		`{"q":[{"name":"Carol Ann"},{"name":"Alice"}]}`},
	{"orderasc offset", `{ q(func: has(name), orderasc: name, offset: 1, first: 2) { name } }`, nil,
		`{"q":[{"name":"Bob"},{"name":"Carol Ann"}]}`},
	{"after", `{ q(func: has(name), after: 0x2) { name } }`, nil, `{"q":[{"name":"Carol Ann"},{"name":"Dave"}]}`},
	{"last", `{ q(func: has(name), first: -1) { name } }`, nil, `{"q":[{"name":"Dave"}]}`},
	{"nested order", `{ q(func: uid(0x1)) { friend(orderdesc: age) { name } } }`, nil,
		`{"q":[{"friend":[{"name":"Carol Ann"},{"name":"Bob"}]}]}`},
	{"nested first", `{ q(func: uid(0x1)) { friend(first: 1) { name } } }`, nil, `{"q":[{"friend":[{"name":"Bob"}]}]}`},
	{"count pred", `{ q(func: uid(0x1, 0x2)) { name count(friend) c: count(~friend) } }`, nil,
		`{"q":[{"name":"Alice","count(friend)":2,"c":0},{"name":"Bob","count(friend)":1,"c":1}]}`},
	{"nested count uid", `{ q(func: uid(0x1)) { friend { count(uid) } } }`, nil, `{"q":[{"friend":[{"count":2}]}]}`},
	{"facets", `{ q(func: uid(0x1)) { friend @facets { name } } }`, nil,
		`{"q":[{"friend":[{"name":"Bob","friend|close":true,"friend|since":2010},{"name":"Carol Ann"}]}]}`},
	{"facet filter", `{ q(func: uid(0x1)) { friend @facets(eq(close, true)) { name } } }`, nil,
		`{"q":[{"friend":[{"name":"Bob"}]}]}`},
	{"facet alias", `{ q(func: uid(0x1)) { friend @facets(c: close) { name } } }`, nil,
		`{"q":[{"friend":[{"name":"Bob","c":true},{"name":"Carol Ann"}]}]}`},
	{"uid var", `{ var(func: uid(0x1)) { f as friend } q(func: uid(f)) { name } }`, nil,
		`{"q":[{"name":"Bob"},{"name":"Carol Ann"}]}`},
	{"blocks run after the variables they use", `{ q(func: uid(f)) { name } a(func: uid(0x4)) { name } var(func: uid(0x2)) { f as friend } }`, nil,
		`{"q":[{"name":"Carol Ann"}],"a":[{"name":"Dave"}]}`},
	{"var block without fields", `{ u as var(func: eq(name, "Bob")) q(func: uid(u)) { name } }`, nil,
		`{"q":[{"name":"Bob"}]}`},
	{"eq list", `{ q(func: eq(name, ["Bob", "Dave"])) { name } }`, nil, `{"q":[{"name":"Bob"},{"name":"Dave"}]}`},
	{"value var order", `{ var(func: has(age)) { a as age } q(func: uid(a), orderdesc: val(a)) { name val(a) } }`, nil,
		`{"q":[{"name":"Carol Ann","val(a)":35},{"name":"Alice","val(a)":30},{"name":"Bob","val(a)":25}]}`},
	{"aggregates", `{ var(func: has(age)) { a as age } s() { min(val(a)) max(val(a)) sum(val(a)) avg(val(a)) } }`, nil,
		`{"s":[{"min(val(a))":25},{"max(val(a))":35},{"sum(val(a))":90},{"avg(val(a))":30}]}`},
	{"math", `{ var(func: has(age)) { a as age } q(func: uid(a)) { name double: math(a * 2 + 1) } }`, nil,
		`{"q":[{"name":"Alice","double":61},{"name":"Bob","double":51},{"name":"Carol Ann","double":71}]}`},
	{"nested aggregate", `{ q(func: uid(0x1)) { friend { a as age } m: max(val(a)) } }`, nil,
		`{"q":[{"friend":[{"age":25},{"age":35}],"m":35}]}`},
	{"value propagation", `{ q(func: uid(0x1)) { friend { a as age } total: val(a) } }`, nil,
		`{"q":[{"friend":[{"age":25},{"age":35}],"total":60}]}`},
	{"cascade", `{ q(func: has(name)) @cascade { name age } }`, nil,
		`{"q":[{"name":"Alice","age":30},{"name":"Bob","age":25},{"name":"Carol Ann","age":35}]}`},
	{"cascade nested", `{ q(func: has(name)) @cascade { name friend { name } } }`, nil,
		`{"q":[{"name":"Alice","friend":[{"name":"Bob"},{"name":"Carol Ann"}]},{"name":"Bob","friend":[{"name":"Carol Ann"}]}]}`},
	{"normalize", `{ q(func: uid(0x1)) @normalize { n: name friend { f: name age } } }`, nil,
		`{"q":[{"n":"Alice","f":"Bob"},{"n":"Alice","f":"Carol Ann"}]}`},
	{"expand all", `{ q(func: uid(0x2)) { expand(_all_) } }`, nil, `{"q":[{"age":25,"name":"Bob"}]}`},
	{"expand nested", `{ q(func: uid(0x2)) { expand(_all_) { name } } }`, nil,
		`{"q":[{"age":25,"friend":[{"name":"Carol Ann"}],"name":"Bob"}]}`},
	{"recurse loop", `{ q(func: uid(0x1)) @recurse(depth: 3, loop: true) { name friend } }`, nil,
		`{"q":[{"name":"Alice","friend":[{"name":"Bob","friend":[{"name":"Carol Ann"}]},{"name":"Carol Ann"}]}]}`},
	{"recurse no loop", `{ q(func: uid(0x1)) @recurse(depth: 3) { name friend } }`, nil,
		`{"q":[{"name":"Alice","friend":[{"name":"Bob","friend":[{"name":"Carol Ann"}]},{"name":"Carol Ann"}]}]}`},
	{"groupby nested", `{ q(func: uid(0x1, 0x2)) { friend @groupby(age) { count(uid) } } }`, nil,
		`{"q":[{"friend":[{"@groupby":[{"age":25,"count":1},{"age":35,"count":1}]}]},{"friend":[{"@groupby":[{"age":35,"count":1}]}]}]}`},
	{"groupby root", `{ q(func: has(friend)) @groupby(friend) { count(uid) } }`, nil,
		`{"q":[{"@groupby":[{"friend":"0x2","count":1},{"friend":"0x3","count":2}]}]}`},
	{"shortest", `{ p as shortest(from: 0x1, to: 0x3) { friend } q(func: uid(p)) { name } }`, nil,
		`{"_path_":[{"uid":"0x1","friend":{"uid":"0x3"},"_weight_":1}],"q":[{"name":"Alice"},{"name":"Carol Ann"}]}`},
	{"k shortest", `{ shortest(from: 0x1, to: 0x3, numpaths: 2) { friend } }`, nil,
		`{"_path_":[{"uid":"0x1","friend":{"uid":"0x3"},"_weight_":1},{"uid":"0x1","friend":{"uid":"0x2","friend":{"uid":"0x3"}},"_weight_":2}]}`},
	{"no path", `{ shortest(from: 0x3, to: 0x1) { friend } }`, nil, `{}`},
	{"checkpwd absent", `{ q(func: uid(0x4)) { name } }`, nil, `{"q":[{"name":"Dave"}]}`},
}

func TestQueries(t *testing.T) {
	f := newFixture(t, peopleSchema, peopleData)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { f.expect(t, c.q, c.vars, c.want) })
	}
}

func TestVariablesInResult(t *testing.T) {
	f := newFixture(t, peopleSchema, peopleData)
	res := f.query(t, `{ f as var(func: uid(0x1)) { g as friend { a as age } } q(func: uid(f, g)) @filter(lt(val(a), 30)) { uid } }`, nil)
	if !slices.Equal(res.UIDVars["f"], []uint64{1}) || !slices.Equal(res.UIDVars["g"], []uint64{2, 3}) {
		t.Fatalf("uid vars %v", res.UIDVars)
	}
	if v := res.ValueVars["a"]; len(v) != 2 || v[2].Int() != 25 || v[3].Int() != 35 {
		t.Fatalf("value vars %v", res.ValueVars)
	}
	if string(res.Data) != `{"q":[{"uid":"0x2"}]}` {
		t.Fatalf("var blocks are not returned: %s", res.Data)
	}
}

func TestErrors(t *testing.T) {
	f := newFixture(t, peopleSchema+"bio: string .\n", peopleData)
	for _, c := range []struct {
		q    string
		want error
	}{
		{`{ q(func: alloftext(name, "x")) { name } }`, dgraph.ErrNoIndex},
		{`{ q(func: has(name)) @filter(anyoftext(name, "x")) { name } }`, dgraph.ErrNoIndex},
		{`{ q(func: eq(bio, "x")) { name } }`, dgraph.ErrNoIndex},
		{`{ q(func: has(name)) @filter(match(name, "x", 2)) { name } }`, dgraph.ErrNoIndex},
		{`{ q(func: ngram(name, "x")) { name } }`, ErrUnsupported},
		{`{ q(func: has(name)) @filter(eq(age, "old")) { name } }`, ErrInvalid},
	} {
		_, err := f.e.Query(context.Background(), f.reader(t, false), c.q, nil)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: error %v, want %v", c.q, err, c.want)
		}
	}
	if _, err := f.e.Query(context.Background(), f.reader(t, false), `{ q(func: `, nil); err == nil {
		t.Error("a syntax error was accepted")
	}
}

// TestReadsRecorded checks that a recording reader sees every vertex the
// query read: the schema, the index vertices of eq, the nodes.
func TestReadsRecorded(t *testing.T) {
	f := newFixture(t, peopleSchema, peopleData)
	r := f.reader(t, true)
	if _, err := f.e.Query(context.Background(), r, `{ q(func: eq(name, "Alice")) { friend { name } } }`, nil); err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, rd := range r.Reads() {
		names[rd.Vertex] = true
	}
	wants, never := []string{dgraph.SchemaVertex, "0x1", "0x2", "0x3"}, "0x4"
	if f.g.Placement() == dgraph.PlacementPredicate { // the predicates each level reads
		wants = []string{dgraph.SchemaVertex, dgraph.PlacedVertex("friend", 1), dgraph.PlacedVertex("name", 2), dgraph.PlacedVertex("name", 3)}
		never = dgraph.PlacedVertex("name", 4)
	}
	for _, want := range wants {
		if !names[want] {
			t.Errorf("read of %s not recorded (%d reads)", want, len(names))
		}
	}
	if names[never] {
		t.Errorf("%s was never read but is recorded", never)
	}
	index := 0
	for n := range names {
		if g, ok := txn.GroupOf(n); ok { // the predicate placement's name of an index vertex
			n = n[len(g)+1:]
		}
		if len(n) > 4 && n[:4] == "_dg|" && n != dgraph.SchemaVertex {
			index++
		}
	}
	if index < dgraph.Buckets {
		t.Errorf("%d index vertex reads recorded, want at least %d (every bucket of the token)", index, dgraph.Buckets)
	}
	if nr := dgraph.NewSnapshotReader(f.db, r.Snapshot(), false); len(nr.Reads()) != 0 {
		t.Error("a fresh reader has reads")
	}
}

func TestUpsert(t *testing.T) {
	f := newFixture(t, peopleSchema, peopleData)
	ctx := context.Background()
	text := `upsert {
  query { q(func: eq(name, "%s")) { v as uid  a as age } }
  mutation @if(eq(len(v), 1)) { set {
uid(v) <age> val(a) .
uid(v) <nick> "found" .
} }
  mutation @if(eq(len(v), 0)) { set {
uid(v) <name> "%s" .
} }
}`
	run := func(name string) ([]dgraph.Mutation, *Result) {
		u, err := dql.ParseUpsert(sprintf(text, name, name))
		if err != nil {
			t.Fatal(err)
		}
		ms, res, err := f.e.Upsert(ctx, f.reader(t, false), u, nil)
		if err != nil {
			t.Fatal(err)
		}
		return ms, res
	}
	ms, res := run("Bob")
	if canon(t, res.Data) != canon(t, []byte(`{"q":[{"uid":"0x2","age":25}]}`)) {
		t.Fatalf("query part: %s", res.Data)
	}
	if len(ms) != 1 || len(ms[0].Set) != 2 || len(ms[0].Del) != 0 {
		t.Fatalf("mutations %+v", ms)
	}
	age, nick := ms[0].Set[0], ms[0].Set[1]
	if age.Subject.Kind != rdf.UID || age.Subject.UID != 2 || age.Object.Kind != rdf.Literal || age.Object.Value.Int() != 25 {
		t.Fatalf("val(a) substitution: %s", age.String())
	}
	if nick.Subject.UID != 2 || nick.Object.Value.Str() != "found" {
		t.Fatalf("uid(v) substitution: %s", nick.String())
	}
	if _, err := f.g.Mutate(ctx, ms[0]); err != nil {
		t.Fatal(err)
	}
	f.expect(t, `{ q(func: uid(0x2)) { nick age } }`, nil, `{"q":[{"nick":"found","age":25}]}`)

	ms, _ = run("Zed")
	if len(ms) != 1 || len(ms[0].Set) != 1 || ms[0].Set[0].Subject.Kind != rdf.Blank || ms[0].Set[0].Subject.Name != "uid(v)" {
		t.Fatalf("empty variable: %+v", ms)
	}
	mres, err := f.g.Mutate(ctx, ms[0])
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := mres.UIDs["uid(v)"]; !ok {
		t.Fatalf("new node not reported: %v", mres.UIDs)
	}
	del := substitute(quads(t, "uid(v) <name> * ."), &Result{UIDVars: map[string][]uint64{}}, false)
	if len(del) != 0 {
		t.Fatalf("a deletion of an empty uid(v) kept %v", del)
	}
	viaValue := substitute(quads(t, "uid(a) <seen> \"1\" ."), &Result{UIDVars: map[string][]uint64{},
		ValueVars: map[string]map[uint64]value.Value{"a": {7: value.I64(1)}}}, true)
	if len(viaValue) != 1 || viaValue[0].Subject.UID != 7 {
		t.Fatalf("uid(valueVar): %v", viaValue)
	}
	if _, ok := mres.UIDs["uid(v)"]; !ok {
		t.Fatalf("new node not reported: %v", mres.UIDs)
	}
	f.expect(t, `{ q(func: eq(name, "Zed")) { name } }`, nil, `{"q":[{"name":"Zed"}]}`)
}

func TestUpsertCondForms(t *testing.T) {
	res := &Result{UIDVars: map[string][]uint64{"v": {1, 2}, "w": nil}, ValueVars: map[string]map[uint64]value.Value{}}
	for _, c := range []struct {
		cond string
		want bool
	}{
		{"@if(eq(len(v), 2))", true},
		{"@if(gt(len(v), 2))", false},
		{"@if(eq(len(w), 0) AND ge(len(v), 1))", true},
		{"@if(NOT eq(len(w), 0) OR lt(len(v), 2))", false},
		{"@if(le(len(v), 2))", true},
	} {
		f, err := dql.ParseCond(c.cond)
		if err != nil {
			t.Fatalf("%s: %v", c.cond, err)
		}
		got, err := cond(f, res)
		if err != nil || got != c.want {
			t.Errorf("%s = %v, %v; want %v", c.cond, got, err, c.want)
		}
	}
}
