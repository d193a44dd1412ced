package dgraph

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/weft-db/weft/internal/value"
)

const indexSchema = `
	name: string @index(exact, term) @lang .
	email: string @index(hash) .
	age: int @index(int) .
	score: float @index(float) .
	born: datetime @index(year) .
	alive: bool @index(bool) .
	tags: [string] @index(exact) .
	bio: string @index(ngram) .
`

// TestIndexLookups: each maintained tokenizer answers Eq, Range and Lookup
// from entries written in the data's transactions, and follows updates and
// deletes (issue §3).
func TestIndexLookups(t *testing.T) {
	g := newGraph(t, indexSchema)
	ctx := context.Background()
	mustMutate(t, g, `
		<a> <name> "Ada Lovelace" .
		<a> <name> "Ada"@fr .
		<a> <email> "ada@example.com" .
		<a> <age> "36" .
		<a> <score> "9.5" .
		<a> <born> "1815-12-10" .
		<a> <alive> "false" .
		<a> <tags> "math" .
		<a> <tags> "poetry" .
		<a> <bio> "first programmer" .
		<b> <name> "Alan Turing" .
		<b> <email> "alan@example.com" .
		<b> <age> "41" .
		<b> <score> "-1.25" .
		<b> <born> "1912-06-23" .
		<b> <alive> "false" .
		<b> <tags> "math" .
		<c> <name> "Grace Hopper" .
		<c> <age> "85" .
		<c> <score> "9.5" .
		<c> <born> "1906-12-09T10:00:00Z" .
		<c> <alive> "true" .
	`, "")
	a, b, c := uidOf(t, g, "a"), uidOf(t, g, "b"), uidOf(t, g, "c")
	sorted := func(us ...uint64) []uint64 { slices.Sort(us); return us }
	eq := func(pred, lang string, v value.Value) []uint64 {
		t.Helper()
		got, err := g.Eq(ctx, snapshot(t, g), pred, lang, v)
		if err != nil {
			t.Fatalf("eq(%s@%s, %v): %v", pred, lang, v, err)
		}
		return got
	}
	rng := func(pred string, lo, hi *Bound) []uint64 {
		t.Helper()
		got, err := g.Range(ctx, snapshot(t, g), pred, "", lo, hi)
		if err != nil {
			t.Fatalf("range(%s): %v", pred, err)
		}
		return got
	}
	term := func(tok string) []uint64 {
		t.Helper()
		got, err := g.Lookup(ctx, snapshot(t, g), "name", "", "term", tok)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	incl := func(v value.Value) *Bound { return &Bound{Value: v} }
	excl := func(v value.Value) *Bound { return &Bound{Value: v, Exclusive: true} }
	check := func(what string, got, want []uint64) {
		t.Helper()
		if !slices.Equal(got, want) {
			t.Errorf("%s = %v, want %v", what, got, want)
		}
	}
	check("eq name", eq("name", "", value.Str("Ada Lovelace")), sorted(a))
	check("eq name@fr", eq("name", "fr", value.Str("Ada")), sorted(a))
	check("eq name untagged Ada", eq("name", "", value.Str("Ada")), nil)
	check("eq email (hash)", eq("email", "", value.Str("alan@example.com")), sorted(b))
	check("eq age from string", eq("age", "", value.Str("41")), sorted(b))
	check("eq score", eq("score", "", value.F64(9.5)), sorted(a, c))
	check("eq alive", eq("alive", "", value.Boolean(false)), sorted(a, b))
	check("eq tags (list)", eq("tags", "", value.Str("math")), sorted(a, b))
	check("eq born (year index, checked)", eq("born", "", value.Str("1912-06-23")), sorted(b))
	check("eq born other day", eq("born", "", value.Str("1912-06-24")), nil)
	check("age in [36,41]", rng("age", incl(value.I64(36)), incl(value.I64(41))), sorted(a, b))
	check("age in (36,85)", rng("age", excl(value.I64(36)), excl(value.I64(85))), sorted(b))
	check("age >= 40", rng("age", incl(value.I64(40)), nil), sorted(b, c))
	check("score < 9.5", rng("score", nil, excl(value.F64(9.5))), sorted(b))
	check("score <= 0", rng("score", nil, incl(value.F64(0))), sorted(b))
	check("born < 1912-06-23", rng("born", nil, excl(value.Str("1912-06-23"))), sorted(a, c))
	check("born in 1900s", rng("born", incl(value.Str("1900")), excl(value.Str("2000"))), sorted(b, c))
	check("born 1906-12-09T10", rng("born", incl(value.Str("1906-12-09T10:00:00Z")), incl(value.Str("1906-12-09T10:00:00Z"))), sorted(c))
	check("name exact range", rng("name", incl(value.Str("Alan")), excl(value.Str("B"))), sorted(b))
	check("term ada", term("ada"), sorted(a))
	check("term turing", term("turing"), sorted(b))
	if toks, _ := Tokenize("term", value.Str("Grace, HOPPER!")); !slices.Equal(toks, []string{"grace", "hopper"}) {
		t.Errorf("term tokens %v", toks)
	}
	// Updates move entries; deletes remove them.
	mustMutate(t, g, `
		<a> <name> "Ada King" .
		<b> <age> "42" .
		<c> <score> "1" .
		<b> <tags> "logic" .
	`, `
		<a> <tags> "math" .
		<c> <alive> * .
		<b> <email> "alan@example.com" .
	`)
	check("eq old name", eq("name", "", value.Str("Ada Lovelace")), nil)
	check("eq new name", eq("name", "", value.Str("Ada King")), sorted(a))
	check("term lovelace gone", term("lovelace"), nil)
	check("term king", term("king"), sorted(a))
	check("term ada stays", term("ada"), sorted(a))
	check("age 41 gone", eq("age", "", value.I64(41)), nil)
	check("age 42", eq("age", "", value.I64(42)), sorted(b))
	check("score 9.5", eq("score", "", value.F64(9.5)), sorted(a))
	check("tags math", eq("tags", "", value.Str("math")), sorted(b))
	check("tags logic", eq("tags", "", value.Str("logic")), sorted(b))
	check("alive true gone", eq("alive", "", value.Boolean(true)), nil)
	check("email gone", eq("email", "", value.Str("alan@example.com")), nil)
	has, err := g.Has(ctx, snapshot(t, g), "email")
	if err != nil || !slices.Equal(has, sorted(a)) {
		t.Errorf("has(email) = %v %v", has, err)
	}
	mustMutate(t, g, "", `<a> * * .`)
	check("name after <a> * *", eq("name", "", value.Str("Ada King")), nil)
	check("name@fr after <a> * *", eq("name", "fr", value.Str("Ada")), nil)
	// Unmaintained and missing indexes say so.
	if _, err := g.Lookup(ctx, snapshot(t, g), "bio", "", "ngram", "first"); !errors.Is(err, ErrNoIndex) {
		t.Errorf("ngram lookup: %v", err)
	}
	if _, err := g.Range(ctx, snapshot(t, g), "email", "", nil, nil); !errors.Is(err, ErrNoIndex) {
		t.Errorf("range on hash: %v", err)
	}
	checkConsistency(t, g)
}

// TestLongTokens: values too long for a handle are indexed under a hashed
// token name, and still found exactly.
func TestLongTokens(t *testing.T) {
	g := newGraph(t, `s: string @index(exact, term) .`)
	long1 := string(make([]byte, 0)) + repeat("x", 300) + "1"
	long2 := repeat("x", 300) + "2"
	mustMutate(t, g, `<a> <s> "`+long1+`" .`+"\n"+`<b> <s> "`+long2+`" .`, "")
	got, err := g.Eq(context.Background(), snapshot(t, g), "s", "", value.Str(long2))
	if err != nil || !slices.Equal(got, []uint64{uidOf(t, g, "b")}) {
		t.Fatalf("eq long: %v %v", got, err)
	}
	got, err = g.Range(context.Background(), snapshot(t, g), "s", "", &Bound{Value: value.Str(long1)}, &Bound{Value: value.Str(long1)})
	if err != nil || !slices.Equal(got, []uint64{uidOf(t, g, "a")}) {
		t.Fatalf("range long: %v %v", got, err)
	}
	checkConsistency(t, g)
}

func repeat(s string, n int) string {
	out := make([]byte, 0, len(s)*n)
	for range n {
		out = append(out, s...)
	}
	return string(out)
}
