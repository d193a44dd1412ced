package dgraph

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/weft-db/weft/internal/rdf"
	"github.com/weft-db/weft/internal/value"
)

// TestParseJSON: Dgraph's JSON mutations become the quads their RDF form
// would give (issue §2).
func TestParseJSON(t *testing.T) {
	for _, c := range []struct {
		name string
		in   string
		del  bool
		want string // quads, one per line, in NQuad.String form
	}{
		{"scalars", `{"uid": "_:a", "name": "Alice", "age": 30, "score": 2.5, "ok": true, "name@fr": "Alice"}`, false,
			`_:a <age> "30"^^<xs:int> .
_:a <name> "Alice" .
_:a <name> "Alice"@fr .
_:a <ok> "true"^^<xs:boolean> .
_:a <score> "2.5"^^<xs:float> .`},
		{"nested with edge facets", `{"uid": "0x1", "friend": [{"uid": "_:b", "name": "B", "friend|close": true}, {"name": "C"}]}`, false,
			`_:b <name> "B" .
<0x1> <friend> _:b (close=true) .
_:dg.1 <name> "C" .
<0x1> <friend> _:dg.1 .`},
		{"scalar facets and lists", `[{"uid": "_:a", "name": "A", "name|since": "2006-01-02", "name|n": 3, "tags": ["x", "y"], "dgraph.type": "Person"}]`, false,
			`_:a <dgraph.type> "Person" .
_:a <name> "A" (n=3, since=2006-01-02T00:00:00Z) .
_:a <tags> "x" .
_:a <tags> "y" .`},
		{"geo", `{"uid": "_:a", "loc": {"type": "Point", "coordinates": [1.5, 2]}}`, false,
			`_:a <loc> "{\"coordinates\":[1.5,2],\"type\":\"Point\"}"^^<geo:geojson> .`},
		{"delete values, predicates, nodes", `[{"uid": "0x1", "name": null, "age": 3, "friend": {"uid": "0x2"}}, {"uid": "0x3"}]`, true,
			`<0x1> <age> "3"^^<xs:int> .
<0x1> <friend> <0x2> .
<0x1> <name> * .
<0x3> * * .`},
	} {
		qs, err := ParseJSON([]byte(c.in), c.del)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		var lines []string
		for _, q := range qs {
			lines = append(lines, q.String())
		}
		if got := strings.Join(lines, "\n"); got != c.want {
			t.Errorf("%s:\n%s\nwant\n%s", c.name, got, c.want)
		}
		for _, q := range qs { // what the RDF parser gives back
			back, err := rdf.Parse(q.String())
			if err != nil || len(back) != 1 || !back[0].Equal(q) {
				t.Errorf("%s: %s does not round-trip: %v", c.name, q, err)
			}
		}
	}
	for _, bad := range []struct{ in, want string }{
		{`"x"`, "object"},
		{`[1]`, "not an object"},
		{`{"uid": 5.5}`, "not a uid"},
		{`{"uid": "_:a", "name|f": 1}`, "names no predicate"},
		{`{"name": "x"`, "JSON"},
		{`{"uid": "_:a", "tags": ["x"], "tags|k": {"0": "a"}}`, "list values"},
	} {
		if _, err := ParseJSON([]byte(bad.in), false); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: err %v, want %q", bad.in, err, bad.want)
		}
	}
	if _, err := ParseJSON([]byte(`{"name": "x"}`), true); !errors.Is(err, ErrInvalid) {
		t.Errorf("delete without uid: %v", err)
	}
}

// TestMutateJSON applies set_json and delete_json end to end.
func TestMutateJSON(t *testing.T) {
	ctx := context.Background()
	g := newGraph(t, "name: string @index(exact) .\nage: int .\nfriend: [uid] @reverse .")
	res, err := g.MutateJSON(ctx, []byte(`{"uid": "_:a", "name": "A", "age": "7", "friend": [{"name": "B"}, {"uid": "_:c", "name": "C"}]}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.UIDs) != 3 || res.UIDs["dg.1"] == "" {
		t.Fatalf("uids %v", res.UIDs)
	}
	a, c := blankUID(t, res, "a"), blankUID(t, res, "c")
	if n := readNode(t, g, a); n.Values["age"].Int() != 7 || len(n.Edges["friend"]) != 2 {
		t.Fatalf("a: %s", renderNode(n))
	}
	_, err = g.MutateJSON(ctx, nil, []byte(`{"uid": "`+FormatUID(a)+`", "friend": {"uid": "`+FormatUID(c)+`"}, "age": null}`))
	if err != nil {
		t.Fatal(err)
	}
	if n := readNode(t, g, a); n.Values["age"].Kind() != value.Null || len(n.Edges["friend"]) != 1 {
		t.Fatalf("a after delete: %s", renderNode(n))
	}
	if n := readNode(t, g, c); len(n.Edges["~friend"]) != 0 {
		t.Fatalf("c after delete: %s", renderNode(n))
	}
	checkConsistency(t, g)
}
