package exec

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// FuzzQuery runs arbitrary query text over the people graph: it may fail,
// but never panics, and what it answers is valid JSON.
//
//	go test ./internal/dgraph/exec -run '^$' -fuzz FuzzQuery -fuzztime 60s
func FuzzQuery(f *testing.F) {
	for _, c := range cases {
		f.Add(c.q)
	}
	fx := newFixture(f, peopleSchema, peopleData)
	f.Fuzz(func(t *testing.T, q string) {
		runChecked(t, fx, q)
	})
}

func runChecked(t *testing.T, fx *fixture, q string) {
	t.Helper()
	res, err := fx.e.Query(context.Background(), fx.reader(t, false), q, nil)
	if err != nil {
		return
	}
	if !json.Valid(res.Data) {
		t.Fatalf("query %q answered invalid JSON %s", q, res.Data)
	}
}

// Pieces of random queries: root functions, filters, fields, directives.
var (
	fuzzRoots = []string{`uid(0x1, 0x2, 0x3, 0x4)`, `has(name)`, `has(friend)`, `type(Person)`, `eq(name, "Bob", "Alice")`,
		`ge(age, 26)`, `between(age, 20, 40)`, `anyofterms(name, "carol bob")`, `uid(v)`, `regexp(name, /a/)`, `eq(count(friend), 1)`}
	fuzzFilters = []string{`has(age)`, `NOT has(friend)`, `eq(age, 30) OR lt(age, 26)`, `uid_in(friend, 0x3)`,
		`allofterms(name, "ann")`, `type(Person) AND gt(age, 1)`, `uid(v)`, `eq(val(a), 25)`, `gt(count(friend), 0)`}
	fuzzFields = []string{`uid`, `name`, `name@es`, `name@.`, `name@*`, `age`, `count(friend)`, `count(~friend)`, `dgraph.type`,
		`a2 as age`, `val(a)`, `m: math(a + 1)`, `expand(_all_)`, `count(uid)`, `total: sum(val(a))`}
	fuzzDirectives = []string{``, `@cascade`, `@normalize`, `@filter(has(name))`, `@facets`, `@facets(close)`, `@cascade(name)`}
)

// randomQuery builds a query that usually parses: a var block defining v
// and a, then a block with random root, filter, order, pagination,
// directives and up to three levels of fields.
func randomQuery(r *rand.Rand) string {
	pick := func(xs []string) string { return xs[r.IntN(len(xs))] }
	var b strings.Builder
	b.WriteString(`{ var(func: has(age)) { v as uid a as age } q(func: ` + pick(fuzzRoots))
	if r.IntN(2) == 0 {
		b.WriteString([]string{`, first: 2`, `, offset: 1`, `, orderdesc: age`, `, orderasc: val(a)`, `, first: -1`, `, after: 0x1`}[r.IntN(6)])
	}
	b.WriteString(`)`)
	if r.IntN(3) == 0 {
		b.WriteString(` @filter(` + pick(fuzzFilters) + `)`)
	}
	if r.IntN(4) == 0 {
		b.WriteString(` ` + []string{`@recurse(depth: 3)`, `@groupby(age)`, `@cascade`, `@normalize`}[r.IntN(4)])
	}
	b.WriteString(` {`)
	fields(r, &b, 3, pick)
	b.WriteString(`} used(func: uid(v)) { val(a) } }`)
	return b.String()
}

func fields(r *rand.Rand, b *strings.Builder, depth int, pick func([]string) string) {
	for range 1 + r.IntN(4) {
		b.WriteString(` `)
		if depth > 0 && r.IntN(3) == 0 {
			b.WriteString(pick([]string{`f: friend`, `friend`, `~friend`}) + ` ` + pick(fuzzDirectives) + ` {`)
			fields(r, b, depth-1, pick)
			b.WriteString(` }`)
			continue
		}
		b.WriteString(pick(fuzzFields))
	}
}

// TestRandomQueries runs a thousand seeded random queries: none panics,
// every answer is valid JSON, and most of them parse and run (so the test
// exercises the executor, not only the parser).
func TestRandomQueries(t *testing.T) {
	fx := newFixture(t, peopleSchema, peopleData)
	r := rand.New(rand.NewPCG(1, 2))
	ran := 0
	for range 1000 {
		q := randomQuery(r)
		res, err := fx.e.Query(context.Background(), fx.reader(t, false), q, nil)
		if err != nil {
			continue
		}
		ran++
		if !json.Valid(res.Data) {
			t.Fatalf("query %s answered invalid JSON %s", q, res.Data)
		}
	}
	if ran < 300 {
		t.Fatalf("only %d of 1000 random queries ran", ran)
	}
	t.Logf("%d of 1000 random queries ran", ran)
}
