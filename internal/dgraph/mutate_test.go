package dgraph

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/weft-db/weft/internal/rdf"
	"github.com/weft-db/weft/internal/value"
)

// TestModelRoundTrip writes every shape of Dgraph data (issue §1: nodes,
// uid edges with facets, scalars with languages and facets, lists, types,
// typed and untyped literals, XIDs and blank nodes) and reads it back.
func TestModelRoundTrip(t *testing.T) {
	g := newGraph(t, `
		name: string @index(exact) @lang .
		age: int .
		score: float .
		born: datetime .
		alive: bool .
		nick: [string] .
		friend: [uid] .
		boss: uid .
	`)
	res := mustMutate(t, g, `
		_:alice <name> "Alice" (source="census", year=2020) .
		_:alice <name> "Alicia"@es .
		_:alice <age> "42" .
		_:alice <score> "2.5"^^<xs:float> .
		_:alice <born> "1982-03-04" .
		_:alice <alive> "true" .
		_:alice <nick> "Al" .
		_:alice <nick> "Ally" .
		_:alice <dgraph.type> "Person" .
		_:alice <friend> _:bob (close=true, since=2006-01-02T15:04:05) .
		_:alice <friend> <carol> .
		_:alice <boss> <carol> .
		_:bob <name> "Bob" .
		<carol> <name> "Carol" .
		_:alice <free> "untyped" .
	`, "")
	alice, bob := blankUID(t, res, "alice"), blankUID(t, res, "bob")
	carol := uidOf(t, g, "carol")
	if len(res.UIDs) != 2 || alice == bob || carol == alice || carol == bob {
		t.Fatalf("uids %v, carol %d", res.UIDs, carol)
	}
	n := readNode(t, g, alice)
	want := map[string]value.Value{
		"name": value.Str("Alice"), "name@es": value.Str("Alicia"), "age": value.I64(42), "score": value.F64(2.5),
		"alive": value.Boolean(true), "nick": value.ListOf(value.Str("Al"), value.Str("Ally")),
		"dgraph.type": value.ListOf(value.Str("Person")), "free": value.Str("untyped"),
	}
	for k, v := range want {
		if !sameValue(n.Values[k], v) {
			t.Errorf("%s = %v, want %v", k, n.Values[k], v)
		}
	}
	if n.Values["born"].Kind() != value.Datetime || n.Values["born"].Time().Year() != 1982 {
		t.Errorf("born = %v", n.Values["born"])
	}
	if f := n.Facets["name"]; len(f) != 2 || f["source"].Str() != "census" || f["year"].Int() != 2020 {
		t.Errorf("name facets %v", f)
	}
	if es := n.Edges["friend"]; len(es) != 2 || es[0].UID != min(bob, carol) || n.Counts["friend"] != 2 {
		t.Errorf("friend edges %+v count %d", es, n.Counts["friend"])
	}
	for _, e := range n.Edges["friend"] {
		if e.UID == bob && (!e.Facets["close"].Bool() || e.Facets["since"].Kind() != value.Datetime) {
			t.Errorf("friend→bob facets %v", e.Facets)
		}
	}
	if es := n.Edges["boss"]; len(es) != 1 || es[0].UID != carol {
		t.Errorf("boss %+v", es)
	}
	if c := readNode(t, g, carol); c.Values[XIDPred].Str() != "carol" || c.Values["name"].Str() != "Carol" {
		t.Errorf("carol %+v", c.Values)
	}
	// Setting a single uid predicate replaces; setting a scalar replaces it
	// and its facets; a list grows; the same edge again changes nothing but
	// its facets.
	mustMutate(t, g, `
		<`+FormatUID(alice)+`> <boss> <`+FormatUID(bob)+`> .
		<`+FormatUID(alice)+`> <name> "Alice B." .
		<`+FormatUID(alice)+`> <nick> "Al" .
		<`+FormatUID(alice)+`> <friend> <`+FormatUID(bob)+`> (close=false) .
	`, "")
	n = readNode(t, g, alice)
	if es := n.Edges["boss"]; len(es) != 1 || es[0].UID != bob {
		t.Errorf("boss after replace %+v", es)
	}
	if n.Values["name"].Str() != "Alice B." || len(n.Facets["name"]) != 0 || len(n.Values["nick"].List()) != 2 {
		t.Errorf("after update: %s", renderNode(n))
	}
	for _, e := range n.Edges["friend"] {
		if e.UID == bob && (e.Facets["close"].Bool() || e.Facets["since"].Kind() != value.Null) {
			t.Errorf("friend→bob facets after update %v", e.Facets)
		}
	}
	// The schema gained the predicates the data introduced.
	sch, err := g.Schema(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"free", "xid", "dgraph.type"} {
		if _, ok := sch.Predicate(p); !ok {
			t.Errorf("schema lacks %s:\n%s", p, sch)
		}
	}
	checkConsistency(t, g)
}

// TestBadInputChangesNothing: invalid mutations fail with a clear error and
// leave every node as it was (DESIGN §3 invariant 6).
func TestBadInputChangesNothing(t *testing.T) {
	g := newGraph(t, `age: int . friend: [uid] . name: string @lang .  tag: [string] .`)
	mustMutate(t, g, "<a> <age> \"1\" .\n<a> <friend> <b> .", "")
	before := dump(t, g)
	for _, c := range []struct{ set, del, want string }{
		{`<a> <age> "forty" .`, ``, "cannot convert"},
		{"<a> <age> \"41\" .\n<a> <friend> \"x\" .", ``, "must be a node"},
		{`<a> <age> <b> .`, ``, "must be a literal"},
		{`<a> <age> "2"@en .`, ``, "@lang"},
		{"<a> <age> \"3\" .\nuid(v) <age> \"4\" .", ``, "upsert"},
		{`<a> <tag> "x" (k=1) .`, ``, "facets"},
		{`<0xffffff> <age> "5" .`, ``, "never allocated"},
		{``, `_:x <age> * .`, "blank node"},
		{`<a> <age> "6" (a|b=1) .`, ``, ""},
	} {
		var m Mutation
		var err error
		if m.Set, err = parseOrNil(c.set); err == nil {
			m.Del, err = parseOrNil(c.del)
		}
		if err == nil {
			_, err = g.Mutate(context.Background(), m)
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("set %q del %q: err %v, want %q", c.set, c.del, err, c.want)
		}
		if err != nil && !errors.Is(err, ErrInvalid) && !errors.Is(err, ErrUnsupported) && c.want != "" {
			t.Errorf("set %q: %v is neither ErrInvalid nor ErrUnsupported", c.set, err)
		}
		if after := dump(t, g); after != before {
			t.Errorf("set %q del %q changed the graph:\n%s\nto\n%s", c.set, c.del, before, after)
		}
	}
}

// TestDeleteSemantics covers Dgraph's deletions: a value, a list element,
// <s> <p> *, a language, <s> * *, and deletions naming nothing.
func TestDeleteSemantics(t *testing.T) {
	g := newGraph(t, `name: string @lang . tag: [string] . friend: [uid] . age: int .`)
	mustMutate(t, g, `
		<a> <name> "A" .
		<a> <name> "Ah"@fr .
		<a> <tag> "x" .
		<a> <tag> "y" .
		<a> <age> "7" .
		<a> <friend> <b> .
		<a> <friend> <c> .`, "")
	a := uidOf(t, g, "a")
	mustMutate(t, g, "", `<a> <tag> "x" .
		<a> <age> "8" .
		<a> <name@fr> * .
		<nobody> <age> * .
		<a> <friend> <nobody> .`)
	n := readNode(t, g, a)
	if got := renderNode(n); !strings.Contains(got, "age=7") || strings.Contains(got, "name@fr") ||
		!sameValue(n.Values["tag"], value.ListOf(value.Str("y"))) || n.Counts["friend"] != 2 {
		t.Fatalf("after deletes: %s", got)
	}
	mustMutate(t, g, "", "<a> <friend> * .\n<a> <age> \"7\" .")
	if n = readNode(t, g, a); len(n.Edges["friend"]) != 0 || n.Counts["friend"] != 0 || n.Values["age"].Kind() != value.Null {
		t.Fatalf("after wildcard: %s", renderNode(n))
	}
	mustMutate(t, g, "", `<a> * * .`)
	if n = readNode(t, g, a); len(n.Values) != 1 || n.Values[XIDPred].Str() != "a" {
		t.Fatalf("after <a> * *: %s", renderNode(n))
	}
	// The XID still names the same node.
	mustMutate(t, g, `<a> <age> "9" .`, "")
	if uidOf(t, g, "a") != a || readNode(t, g, a).Values["age"].Int() != 9 {
		t.Fatal("xid rebound after <a> * *")
	}
	checkConsistency(t, g)
}

func parseOrNil(s string) ([]rdf.NQuad, error) {
	if s == "" {
		return nil, nil
	}
	return rdf.Parse(s)
}
