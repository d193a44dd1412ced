package weft

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/weft-db/weft/internal/value"
	pb "github.com/weft-db/weft/internal/wire/weftpb"
)

// Ref names a vertex by handle or by alias.
type Ref struct {
	Name  string
	Alias bool
}

// Handle names a vertex by its handle.
func Handle(h string) Ref { return Ref{Name: h} }

// Alias names a vertex by one of its aliases.
func Alias(a string) Ref { return Ref{Name: a, Alias: true} }

func (r Ref) pb() *pb.VertexRef { return &pb.VertexRef{Name: r.Name, Alias: r.Alias} }

// Op is one write operation in the HTTP API's JSON form, for tools that build
// transactions from data (weft tx). Op names the kind: create_vertex,
// delete_vertex, create_edge, delete_edge, set_vertex_prop,
// delete_vertex_prop, set_edge_prop, delete_edge_prop, add_alias,
// remove_alias. Value is a Go property value (see the package comment); in
// JSON it takes the API's value form (ints stay ints, datetimes are
// {"$datetime": "RFC 3339"}). Most code uses Tx's typed methods instead.
type Op struct {
	Op          string `json:"op"`
	Vertex      string `json:"vertex,omitempty"`
	VertexAlias bool   `json:"vertex_alias,omitempty"`
	Edge        string `json:"edge,omitempty"`
	Dst         string `json:"dst,omitempty"`
	DstAlias    bool   `json:"dst_alias,omitempty"`
	Key         string `json:"key,omitempty"`
	Value       any    `json:"-"`
	Alias       string `json:"alias,omitempty"`
}

// plainOp is Op without its JSON methods (so they do not recurse).
type plainOp Op

// MarshalJSON writes the API's JSON form of the operation.
func (o Op) MarshalJSON() ([]byte, error) {
	var v *value.Value
	if o.Value != nil {
		val, err := toValue(o.Value, 0)
		if err != nil {
			return nil, fmt.Errorf("weft: op %s: value: %w", o.Op, err)
		}
		v = &val
	}
	return json.Marshal(struct {
		plainOp
		Value *value.Value `json:"value,omitempty"`
	}{plainOp(o), v})
}

// UnmarshalJSON reads the API's JSON form, rejecting unknown fields.
func (o *Op) UnmarshalJSON(b []byte) error {
	var j struct {
		plainOp
		Value *value.Value `json:"value"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		return err
	}
	*o = Op(j.plainOp)
	if j.Value != nil {
		o.Value = fromValue(*j.Value)
	}
	return nil
}

// toPB checks the kind and value and returns the wire form.
func (o *Op) toPB() (*pb.Op, error) {
	kind, ok := pb.OpKind_value[strings.ToUpper(o.Op)]
	if !ok || kind == 0 || o.Op != strings.ToLower(o.Op) {
		return nil, &Error{Code: CodeInvalidArgument, Message: fmt.Sprintf("weft: unknown op %q", o.Op)}
	}
	out := &pb.Op{Kind: pb.OpKind(kind), Vertex: o.Vertex, VertexAlias: o.VertexAlias, Edge: o.Edge,
		Dst: o.Dst, DstAlias: o.DstAlias, Key: o.Key, Alias: o.Alias}
	if o.Value != nil {
		v, err := toValue(o.Value, 0)
		if err != nil {
			return nil, &Error{Code: CodeInvalidArgument, Message: fmt.Sprintf("weft: %s %q: %v", o.Op, o.Key, err)}
		}
		out.Value = pb.ValueOf(v)
	}
	return out, nil
}

// opArgs lists each op's positional arguments in the one-line syntax.
var opArgs = map[string][]string{
	"create_vertex":      {"[handle]"},
	"delete_vertex":      {"vertex"},
	"create_edge":        {"src", "dst", "[edge]"},
	"delete_edge":        {"src", "edge"},
	"set_vertex_prop":    {"vertex", "key", "value"},
	"delete_vertex_prop": {"vertex", "key"},
	"set_edge_prop":      {"src", "edge", "key", "value"},
	"delete_edge_prop":   {"src", "edge", "key"},
	"add_alias":          {"vertex", "alias"},
	"remove_alias":       {"vertex", "alias"},
}

// OpSyntax describes ParseOp's syntax, one line per op.
func OpSyntax() string {
	var b strings.Builder
	for _, k := range []string{"create_vertex", "delete_vertex", "create_edge", "delete_edge", "set_vertex_prop",
		"delete_vertex_prop", "set_edge_prop", "delete_edge_prop", "add_alias", "remove_alias"} {
		fmt.Fprintf(&b, "  %s %s\n", k, strings.Join(opArgs[k], " "))
	}
	return b.String()
}

// ParseOp parses the one-line syntax of `weft tx`: the op's name, then its
// arguments separated by spaces (OpSyntax lists them). A vertex, src or dst
// written @name names the vertex by alias. A value is the rest of the line as
// JSON in the API's value form: "Alice", 42, 4.0, true, [1, 2],
// {"$datetime": "2024-01-02T03:04:05Z"}.
func ParseOp(line string) (Op, error) {
	if !utf8.ValidString(line) {
		return Op{}, fmt.Errorf("%q is not valid UTF-8", line)
	}
	name, rest := next(line)
	args, ok := opArgs[name]
	if !ok {
		return Op{}, fmt.Errorf("unknown op %q; ops are:\n%s", name, OpSyntax())
	}
	o := Op{Op: name}
	for _, a := range args {
		var tok string
		if a == "value" {
			tok, rest = strings.TrimSpace(rest), ""
		} else {
			tok, rest = next(rest)
		}
		if tok == "" {
			if strings.HasPrefix(a, "[") {
				continue
			}
			return Op{}, fmt.Errorf("%s: missing %s (usage: %s %s)", name, a, name, strings.Join(args, " "))
		}
		if err := o.set(a, tok); err != nil {
			return Op{}, fmt.Errorf("%s: %s: %w", name, a, err)
		}
	}
	if extra := strings.TrimSpace(rest); extra != "" {
		return Op{}, fmt.Errorf("%s: unexpected %q (usage: %s %s)", name, extra, name, strings.Join(args, " "))
	}
	return o, nil
}

func next(s string) (tok, rest string) {
	s = strings.TrimLeft(s, " \t")
	if i := strings.IndexAny(s, " \t"); i >= 0 {
		return s[:i], s[i:]
	}
	return s, ""
}

func (o *Op) set(arg, tok string) error {
	ref := func() (string, bool) {
		if a, ok := strings.CutPrefix(tok, "@"); ok {
			return a, true
		}
		return tok, false
	}
	switch arg {
	case "[handle]":
		o.Vertex = tok
	case "vertex", "src":
		o.Vertex, o.VertexAlias = ref()
	case "dst":
		o.Dst, o.DstAlias = ref()
	case "edge", "[edge]":
		o.Edge = tok
	case "key":
		o.Key = tok
	case "alias":
		o.Alias = tok
	case "value":
		var v value.Value
		if err := v.UnmarshalJSON([]byte(tok)); err != nil {
			return fmt.Errorf("%s is not a JSON value (quote strings: %q): %v", tok, tok, err)
		}
		o.Value = fromValue(v)
	}
	return nil
}
