package dql

import (
	"testing"

	"github.com/weft-db/weft/internal/dgraph/schema"
)

const testSchema = `
name: string @index(exact, term, trigram, fulltext) @lang .
nick: string .
title: string @index(hash) .
age: int @index(int) .
score: float .
born: datetime @index(year) .
alive: bool .
friend: [uid] @reverse @count .
boss: uid .
tags: [string] @index(exact) .
loc: geo @index(geo) .
pw: password .
emb: float32vector @index(hnsw(metric: "cosine")) .
`

func TestValidateSchema(t *testing.T) {
	s, err := schema.Parse(testSchema)
	if err != nil {
		t.Fatal(err)
	}
	ok := []string{
		`{ q(func: eq(name@en, "a")) @filter(eq(nick, "x") AND lt(score, 1.5) AND eq(alive, true)) { name@en:fr nick } }`,
		`{ q(func: ge(born, "1977-01-01"), orderasc: name@en, orderdesc: age) { born } }`,
		`{ q(func: eq(title, "x")) { ~friend @filter(uid_in(boss, 0x1)) { uid } } }`,
		`{ q(func: gt(count(friend), 3)) { count(~friend) } }`,
		`{ q(func: allofterms(name, "a b")) @filter(anyoftext(name, "c") AND regexp(nick, /x/)) { uid } }`,
		`{ q(func: match(name, "abc", 2)) { checkpwd(pw, "secret") } }`,
		`{ q(func: near(loc, [1, 2], 10)) @filter(within(loc, [[[1, 2], [3, 4], [1, 2]]])) { uid } }`,
		`{ q(func: similar_to(emb, 3, "[1, 2]")) { uid } }`,
		`{ q(func: between(age, 1, 10)) @filter(le(undefined_pred, 3)) { friend (orderasc: age) { uid } } }`,
		`{ var(func: has(age)) { v as age } q(func: eq(val(v), 3), orderasc: val(v)) { uid } }`,
		`{ q(func: type(Person)) @filter(has(name)) { name@. } }`,
	}
	for _, text := range ok {
		q := mustParse(t, text)
		if err := q.Validate(s); err != nil {
			t.Errorf("Validate(%s): %v", text, err)
		}
	}
	for _, c := range []errCase{
		{"eq at root without index", `{ q(func: eq(nick, "a")) { uid } }`, 1, 11, "Attribute nick is not indexed."},
		{"eq at root on an unknown predicate", `{ q(func: eq(nope, "a")) { uid } }`, 1, 11, "Attribute nope is not indexed."},
		{"inequality without a sortable index", `{ q(func: le(title, "a")) { uid } }`, 1, 11, "Attribute title does not have a sortable index for le at the root (exact)"},
		{"count at root without @count", `{ q(func: gt(count(boss), 1)) { uid } }`, 1, 11, "Need @count directive in schema for attr: boss for fn: gt at root"},
		{"term search without term index", `{ q(func: has(a)) @filter(allofterms(title, "a")) { uid } }`, 1, 27, "Attribute title is not indexed with type term"},
		{"full-text search without index", `{ q(func: anyoftext(nick, "a")) { uid } }`, 1, 11, "Attribute nick is not indexed with type fulltext"},
		{"regexp at root without trigram", `{ q(func: regexp(title, /abc/)) { uid } }`, 1, 11, "Attribute title is not indexed with type trigram"},
		{"match without trigram", `{ q(func: has(a)) @filter(match(title, "a", 1)) { uid } }`, 1, 27, "Attribute title is not indexed with type trigram"},
		{"geo without index", `{ q(func: near(nick, [1, 2], 1)) { uid } }`, 1, 11, "Attribute nick is not indexed with type geo"},
		{"vector without index", `{ q(func: similar_to(score, 1, "[1]")) { uid } }`, 1, 11, "Attribute score is not indexed with type hnsw"},
		{"uid_in on a scalar", `{ q(func: has(a)) @filter(uid_in(name, 0x1)) { uid } }`, 1, 27, "uid_in needs a uid predicate, name is string"},
		{"checkpwd on a string", `{ q(func: has(a)) { checkpwd(nick, "x") } }`, 1, 21, "checkpwd fn can only be used on attr: [nick] with schema type password. Got type: string"},
		{"order by a uid predicate", `{ q(func: has(a), orderasc: friend) { uid } }`, 1, 29, "Cannot sort attribute friend of type object."},
		{"order by a list", `{ q(func: has(a)) { friend (orderdesc: tags) { uid } } }`, 1, 40, "Sorting not supported on attr: tags of type: [scalar]"},
		{"reverse without @reverse", `{ q(func: has(a)) { ~boss { uid } } }`, 1, 21, "Predicate boss doesn't have reverse edge"},
		{"language without @lang", `{ q(func: has(a)) { nick@en } }`, 1, 21, "Language tags can only be used with predicates of string type having @lang directive in schema. Got: [nick]"},
		{"language in a function", `{ q(func: has(a)) @filter(eq(title@en, "x")) { uid } }`, 1, 27, "Got: [title]"},
		{"bad int argument", `{ q(func: eq(age, "ten")) { uid } }`, 1, 11, `"ten" is not a valid int`},
		{"bad datetime argument", `{ q(func: has(a)) @filter(lt(born, "yesterday")) { uid } }`, 1, 27, `"yesterday" is not a valid datetime`},
		{"bad bool argument", `{ q(func: has(a)) @filter(eq(alive, "maybe")) { uid } }`, 1, 27, `"maybe" is not a valid bool`},
	} {
		q, err := Parse(c.text)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		checkErr(t, c, q.Validate(s))
	}
	// An upsert's query and conditions are checked too.
	u, err := ParseUpsert(`upsert { query { q(func: eq(nick, "x")) { v as uid } } mutation @if(eq(len(v), 0)) { set { _:a <nick> "x" . } } }`)
	if err != nil {
		t.Fatal(err)
	}
	if err := u.Validate(s); err == nil {
		t.Errorf("upsert over an unindexed eq: no error")
	}
}
