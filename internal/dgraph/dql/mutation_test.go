package dql

import (
	"slices"
	"testing"

	"github.com/weft-db/weft/internal/rdf"
)

func mustParseMutation(t *testing.T, text string) *Upsert {
	t.Helper()
	u, err := ParseMutation(text)
	if err != nil {
		t.Fatalf("ParseMutation: %v\n%s", err, text)
	}
	back, err := ParseMutation(u.String())
	if err != nil || !back.Equal(u) || back.String() != u.String() {
		t.Fatalf("round trip of\n%s\n-> %v\n%s", u, err, back)
	}
	return u
}

func TestMutationBlock(t *testing.T) {
	u := mustParseMutation(t, `{
  set {
    _:alice <name> "Alice" .
    _:alice <friend> _:bob (close=true) .   # a comment
    <0x1> <name> "{braces} inside a \"literal\"" .
  }
  delete { <0x2> * * . }
}`)
	if u.Query != nil || len(u.Mutations) != 1 {
		t.Fatalf("upsert = %+v", u)
	}
	m := u.Mutations[0]
	if len(m.Set) != 3 || len(m.Delete) != 1 || m.Cond != nil {
		t.Fatalf("mutation = %+v", m)
	}
	if m.Set[2].Object.Value.Str() != `{braces} inside a "literal"` || m.Delete[0].Predicate != rdf.Star {
		t.Errorf("quads = %v / %v", m.Set[2], m.Delete[0])
	}
	// del is delete; one line holds the whole block.
	u = mustParseMutation(t, `{ del { <0x1> <name> * . } }`)
	if len(u.Mutations[0].Delete) != 1 {
		t.Errorf("del = %+v", u.Mutations[0])
	}
}

func TestUpsertBlock(t *testing.T) {
	text := `upsert {
  query {
    q(func: eq(email, "a@b.c")) {
      v as uid
      n as name
    }
  }
  mutation @if(eq(len(v), 0)) {
    set {
      _:new <email> "a@b.c" .
    }
  }
  mutation @if(eq(len(v), 1) AND NOT gt(len(v), 1) OR lt(len(v), 0)) {
    set {
      uid(v) <seen> "true" .
      uid(v) <old_name> val(n) .
    }
    delete {
      uid(v) <name> * .
    }
  }
  mutation {
    set { uid(v) <touched> "1" . }
  }
}`
	u, err := ParseUpsert(text)
	if err != nil {
		t.Fatal(err)
	}
	if back, err := ParseUpsert(u.String()); err != nil || !back.Equal(u) {
		t.Fatalf("round trip: %v\n%s", err, u)
	}
	if len(u.Query.Blocks) != 1 || len(u.Mutations) != 3 {
		t.Fatalf("upsert = %+v", u)
	}
	if c := u.Mutations[0].Cond; c.Func.LenVar != "v" || c.Func.Name != "eq" || c.Func.Args[0].Value != "0" {
		t.Errorf("cond 0 = %+v", c.Func)
	}
	if got := sexprLen(u.Mutations[1].Cond); got != "(or (and eq (not gt)) lt)" {
		t.Errorf("cond 1 = %s", got)
	}
	if u.Mutations[2].Cond != nil {
		t.Errorf("cond 2 = %v", u.Mutations[2].Cond)
	}
	if got := u.Mutations[1].Uses(); !slices.Equal(got, []string{"v", "v", "v", "v", "v", "n", "v"}) {
		t.Errorf("Uses = %v", got)
	}
	if u.Mutations[1].Set[1].Object.Kind != rdf.ValVar {
		t.Errorf("val(n) = %+v", u.Mutations[1].Set[1])
	}
	// ParseMutation takes upserts too; ParseUpsert takes only upserts.
	if _, err := ParseMutation(text); err != nil {
		t.Errorf("ParseMutation(upsert): %v", err)
	}
	if _, err := ParseUpsert(`{ set { <a> <b> <c> . } }`); err == nil {
		t.Errorf("ParseUpsert of a plain mutation: no error")
	}
}

// sexprLen is sexpr naming functions rather than attributes (conditions on
// len(v) have none).
func sexprLen(f *Filter) string {
	g := cloneFilter(f)
	var rename func(*Filter)
	rename = func(f *Filter) {
		if f.Func != nil {
			f.Func.Attr = f.Func.Name
		}
		for _, c := range f.Children {
			rename(c)
		}
	}
	rename(g)
	return sexpr(g)
}

func TestParseCond(t *testing.T) {
	f, err := ParseCond(`@if(eq(len(v), 1) AND gt(len(w), 0))`)
	if err != nil {
		t.Fatal(err)
	}
	if f.Op != FilterAnd || f.Children[1].Func.LenVar != "w" {
		t.Errorf("cond = %+v", f)
	}
	if f.String() != "eq(len(v), 1) AND gt(len(w), 0)" {
		t.Errorf("String = %s", f)
	}
	for _, empty := range []string{"", "  ", "@if()"} {
		if f, err := ParseCond(empty); f != nil || err != nil {
			t.Errorf("ParseCond(%q) = %v, %v", empty, f, err)
		}
	}
	for _, c := range []errCase{
		{"not @if", `@filter(has(a))`, 1, 2, "expected @if"},
		{"trailing", `@if(eq(len(v), 1)) x`, 1, 20, "expected the end of the condition"},
		{"unbalanced", `@if(eq(len(v), 1)`, 1, 18, "expected AND, OR or ')'"},
	} {
		_, err := ParseCond(c.text)
		checkErr(t, c, err)
	}
}

func TestMutationErrors(t *testing.T) {
	for _, c := range []errCase{
		{"empty text", ``, 1, 1, "expected '{' or upsert"},
		{"query text", `{ me(func: uid(1)) { uid } }`, 1, 3, "expected set, delete or '}'"},
		{"unknown op", `{ add { <a> <b> <c> . } }`, 1, 3, "expected set, delete or '}'"},
		{"set twice", `{ set { <a> <b> <c> . } set { <a> <b> <d> . } }`, 1, 25, "set given twice"},
		{"empty", `{ set { } }`, 1, 1, "empty mutation"},
		{"comment only", "{ set {\n # nothing\n } }", 1, 1, "empty mutation"},
		{"brace in body", `{ set { <a> <b> { . } }`, 1, 17, "'{' inside a mutation block"},
		{"unterminated body", `{ set { <a> <b> <c> .`, 1, 8, "unterminated mutation block"},
		{"unterminated literal", `{ set { <a> <b> "c . } }`, 1, 17, "unterminated literal"},
		{"rdf error on the first line", `{ set { <a> <b> . } }`, 1, 17, "expected an object"},
		{"rdf error on a later line", "{\n  set {\n    <a> <b> <c> .\n    <a> <b> \"x\"^^<xs:int> .\n  }\n}", 4, 13, `int "x"`},
		{"trailing text", `{ set { <a> <b> <c> . } } }`, 1, 27, "expected the end of the mutation"},
		{"uid var without a query", `{ set { uid(v) <b> <c> . } }`, 1, 9, "variable v is used but not defined"},
		{"upsert without query", `upsert { mutation { set { <a> <b> <c> . } } }`, 1, 1, "needs a query"},
		{"upsert without mutation", `upsert { query { q(func: has(a)) { uid } } }`, 1, 1, "needs at least one mutation"},
		{"upsert two queries", `upsert { query { } query { } }`, 1, 20, "takes one query"},
		{"upsert fragment", `upsert { fragment f { a } }`, 1, 10, "fragments are not supported"},
		{"upsert unknown op", `upsert { mutate { } }`, 1, 10, "expected query, mutation or '}'"},
		{"undefined in mutation", "upsert {\n query { q(func: has(a)) { v as uid } }\n mutation { set { uid(v) <a> uid(w) . } }\n}", 3, 19, "variable w is used but not defined"},
		{"undefined in condition", "upsert {\n query { q(func: has(a)) { v as uid } }\n mutation @if(eq(len(x), 0)) { set { uid(v) <a> \"b\" . } }\n}", 3, 15, "variable x is used but not defined"},
		{"unused query variable", "upsert {\n query { q(func: has(a)) { v as uid  w as name } }\n mutation { set { uid(v) <a> \"b\" . } }\n}", 2, 38, "variable w is defined but not used"},
		{"bad condition", "upsert { query { q(func: has(a)) { v as uid } } mutation @if(has(v) AND) { set { uid(v) <a> \"b\" . } } }", 1, 72, "expected a function"},
		{"@filter instead of @if", "upsert { query { q(func: has(a)) { v as uid } } mutation @filter(has(v)) { set { uid(v) <a> \"b\" . } } }", 1, 59, "expected @if"},
	} {
		_, err := ParseMutation(c.text)
		checkErr(t, c, err)
	}
}
