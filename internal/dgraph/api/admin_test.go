package api

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestParseAdmin: the GraphQL /admin reads, and what it refuses.
func TestParseAdmin(t *testing.T) {
	vars := map[string]any{"pw": "from-var", "id": json.Number("7")}
	for _, c := range []struct {
		text string
		want string // fmt of the fields, or "error: <substring>"
	}{
		{`mutation { addNamespace(input: {password: "p\"w"}) { namespaceId message } }`,
			`[{addNamespace addNamespace map[input:map[password:p"w]] [{namespaceId namespaceId} {message message}]}]`},
		{"mutation m($pw: String! = \"x\", $id: Int) {\n # a comment\n a: addNamespace(input: {password: $pw}) { id: namespaceId }\n" +
			" deleteNamespace(input: {namespaceId: $id}) { message } }",
			`[{a addNamespace map[input:map[password:from-var]] [{id namespaceId}]} {deleteNamespace deleteNamespace map[input:map[namespaceId:7]] [{message message}]}]`},
		{`mutation { deleteNamespace(input: {namespaceId: 12}) { namespaceId } }`,
			`[{deleteNamespace deleteNamespace map[input:map[namespaceId:12]] [{namespaceId namespaceId}]}]`},
		{`{ state { groups } }`, "error: a query"},
		{`query { health { status } }`, "error: a query operation"},
		{`subscription { x }`, "error: a subscription operation"},
		{`mutation { addUser(input: []) { user { name } } }`, "error: the mutation addUser"},
		{`mutation { addNamespace(input: {}) { namespaceId other } }`, "error: the field other"},
		{`mutation { addNamespace(input: {}) }`, "error: needs a selection"},
		{`mutation { addNamespace(input: {}) { } }`, "error: selects no field"},
		{`mutation { }`, "error: an empty mutation"},
		{`mutation { addNamespace(input: {password: $nope}) { message } }`, "error: variable $nope"},
		{`mutation { addNamespace(input: {}) { message } } mutation { x }`, "error: one operation per request"},
		{`mutation { addNamespace(input: {password: "open}) { message } }`, "error: GraphQL syntax"},
		{`mutation { addNamespace(input: {password: %}) { message } }`, "error: GraphQL syntax"},
		{`mutation ( { x`, "error: unterminated variable definitions"},
		{`mutation { addNamespace(input: ` + strings.Repeat("{a: ", 9) + `1` + strings.Repeat("}", 9) + `) { message } }`,
			"error: nested deeper than 8"},
	} {
		fields, err := parseAdmin(c.text, vars)
		got := fmt.Sprint(fields)
		if err != nil {
			got = "error: " + err.Error()
		}
		if sub, ok := strings.CutPrefix(c.want, "error: "); ok {
			if err == nil || !strings.Contains(err.Error(), sub) || !strings.Contains(err.Error(), "GraphQL syntax") &&
				!strings.Contains(err.Error(), "addNamespace(input: {password})") {
				t.Errorf("%s:\n got %s\nwant an error with %q naming the supported mutations", c.text, got, sub)
			}
			continue
		}
		if got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.text, got, c.want)
		}
	}
}

// TestGQLUint: namespace ids from literals and JSON variables.
func TestGQLUint(t *testing.T) {
	for _, c := range []struct {
		in   any
		want uint64
		ok   bool
	}{
		{int64(3), 3, true}, {json.Number("18446744073709551615"), 1<<64 - 1, true}, {float64(5), 5, true},
		{"0x10", 16, true}, {int64(-1), 0, false}, {json.Number("-1"), 0, false}, {float64(1.5), 0, false},
		{nil, 0, false}, {true, 0, false},
	} {
		got, err := gqlUint(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("gqlUint(%#v) = %d, %v; want %d, ok %v", c.in, got, err, c.want, c.ok)
		}
	}
}

// FuzzParseAdmin: any text parses or fails cleanly, and what parses names
// only the two supported mutations and their two fields.
func FuzzParseAdmin(f *testing.F) {
	f.Add(`mutation { addNamespace(input: {password: "pw"}) { namespaceId message } }`)
	f.Add(`mutation m($id: Int!) { d: deleteNamespace(input: {namespaceId: $id}) { namespaceId } }`)
	f.Add(`{ x }`)
	f.Add(`mutation { addNamespace(input: {a: [1, {b: null}], c: true}) { message } }`)
	f.Fuzz(func(t *testing.T, text string) {
		fields, err := parseAdmin(text, map[string]any{"id": json.Number("1")})
		if err != nil {
			return
		}
		for _, fd := range fields {
			if fd.name != "addNamespace" && fd.name != "deleteNamespace" || len(fd.sel) == 0 {
				t.Fatalf("%q parsed to %+v", text, fd)
			}
			for _, s := range fd.sel {
				if s.name != "namespaceId" && s.name != "message" {
					t.Fatalf("%q selects %q", text, s.name)
				}
			}
		}
	})
}
