package weft_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/weft-db/weft/client/weft"
)

func TestParseOp(t *testing.T) {
	for _, c := range []struct {
		line string
		want weft.Op
	}{
		{"create_vertex", weft.Op{Op: "create_vertex"}},
		{"create_vertex a", weft.Op{Op: "create_vertex", Vertex: "a"}},
		{"  delete_vertex   @alice ", weft.Op{Op: "delete_vertex", Vertex: "alice", VertexAlias: true}},
		{"create_edge a @bob", weft.Op{Op: "create_edge", Vertex: "a", Dst: "bob", DstAlias: true}},
		{"create_edge @a b knows", weft.Op{Op: "create_edge", Vertex: "a", VertexAlias: true, Dst: "b", Edge: "knows"}},
		{"delete_edge a knows", weft.Op{Op: "delete_edge", Vertex: "a", Edge: "knows"}},
		{`set_vertex_prop a name "Alice Smith"`, weft.Op{Op: "set_vertex_prop", Vertex: "a", Key: "name", Value: "Alice Smith"}},
		{"set_vertex_prop a age 42", weft.Op{Op: "set_vertex_prop", Vertex: "a", Key: "age", Value: int64(42)}},
		{"set_vertex_prop a score 4.0", weft.Op{Op: "set_vertex_prop", Vertex: "a", Key: "score", Value: 4.0}},
		{`set_vertex_prop a tags ["x", 1, true]`, weft.Op{Op: "set_vertex_prop", Vertex: "a", Key: "tags", Value: []any{"x", int64(1), true}}},
		{`set_edge_prop a knows since {"$datetime": "2024-01-02T03:04:05Z"}`, weft.Op{Op: "set_edge_prop", Vertex: "a", Edge: "knows", Key: "since",
			Value: time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)}},
		{"delete_vertex_prop a age", weft.Op{Op: "delete_vertex_prop", Vertex: "a", Key: "age"}},
		{"delete_edge_prop a knows since", weft.Op{Op: "delete_edge_prop", Vertex: "a", Edge: "knows", Key: "since"}},
		{"add_alias a alice", weft.Op{Op: "add_alias", Vertex: "a", Alias: "alice"}},
		{"remove_alias @alice alice", weft.Op{Op: "remove_alias", Vertex: "alice", VertexAlias: true, Alias: "alice"}},
	} {
		got, err := weft.ParseOp(c.line)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("ParseOp(%q) = %+v, %v; want %+v", c.line, got, err, c.want)
		}
	}
	for _, c := range []struct{ line, msg string }{
		{"", `unknown op ""`},
		{"make_vertex a", `unknown op "make_vertex"`},
		{"delete_vertex", "delete_vertex: missing vertex"},
		{"create_edge a", "create_edge: missing dst"},
		{"set_vertex_prop a name", "missing value"},
		{"set_vertex_prop a name Alice", `Alice is not a JSON value (quote strings: "Alice")`},
		{"delete_vertex a b", `delete_vertex: unexpected "b"`},
	} {
		if _, err := weft.ParseOp(c.line); err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("ParseOp(%q): %v, want %q", c.line, err, c.msg)
		}
	}
}

func TestOpJSON(t *testing.T) {
	const in = `[{"op":"create_vertex","vertex":"a"},{"op":"set_vertex_prop","vertex":"a","key":"f","value":3.0},` +
		`{"op":"set_vertex_prop","vertex":"a","key":"d","value":{"$datetime":"2024-01-02T03:04:05Z"}},` +
		`{"op":"create_edge","vertex":"a","vertex_alias":true,"dst":"b","dst_alias":true}]`
	var ops []weft.Op
	if err := json.Unmarshal([]byte(in), &ops); err != nil {
		t.Fatal(err)
	}
	if ops[1].Value != 3.0 || ops[2].Value != time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC) || !ops[3].DstAlias {
		t.Fatalf("decoded %+v", ops)
	}
	out, err := json.Marshal(ops)
	if err != nil || string(out) != in {
		t.Fatalf("round trip:\n%s\n%s %v", out, in, err)
	}
	if err := json.Unmarshal([]byte(`[{"op":"create_vertex","color":1}]`), &ops); err == nil || !strings.Contains(err.Error(), `unknown field "color"`) {
		t.Fatalf("unknown field: %v", err)
	}
}

func TestVertexJSONUsesValueForm(t *testing.T) {
	v := weft.Vertex{Handle: "a", Exists: true, Props: map[string]any{"f": 3.0, "i": int64(3),
		"d": time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)}, Aliases: []string{"x"},
		Edges: []weft.Edge{{Handle: "e", Src: "a", Dst: "b", Exists: true, Props: map[string]any{"w": 1.0}}}}
	b, err := json.Marshal(v)
	want := `{"handle":"a","exists":true,"aliases":["x"],"edges":[{"handle":"e","src":"a","dst":"b","exists":true,"props":{"w":1.0}}],` +
		`"props":{"d":{"$datetime":"2024-01-02T03:04:05Z"},"f":3.0,"i":3}}`
	if err != nil || string(b) != want {
		t.Fatalf("got  %s\nwant %s (%v)", b, want, err)
	}
}

// ParseOp never panics, and what it accepts survives a JSON round trip.
func FuzzParseOp(f *testing.F) {
	for _, s := range []string{"create_vertex a", `set_vertex_prop @a k [1, 2.5, "x"]`, "create_edge a b e",
		`set_edge_prop a e k {"$datetime": "2024-01-02T03:04:05Z"}`, "remove_alias @a a", "delete_vertex"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		op, err := weft.ParseOp(line)
		if err != nil {
			return
		}
		b, err := json.Marshal(op)
		if err != nil {
			t.Fatalf("%q parsed to %+v, which does not marshal: %v", line, op, err)
		}
		var back weft.Op
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("%q: %s does not unmarshal: %v", line, b, err)
		}
		b2, _ := json.Marshal(back)
		if string(b) != string(b2) {
			t.Fatalf("%q: round trip %s != %s", line, b, b2)
		}
	})
}
