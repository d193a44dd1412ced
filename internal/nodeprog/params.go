package nodeprog

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/weft-db/weft/internal/value"
)

// Bounds on params, so a request cannot ask for unbounded work up front.
const (
	// ParamsBytesMax bounds the JSON params of one program run.
	ParamsBytesMax = 1 << 20
	// PredicatesMax bounds the predicates of one filter.
	PredicatesMax = 64
	// NodesMax bounds a list of vertex handles in params (nbrs, nodes, keys).
	NodesMax = 1 << 14
	// LevelsMax bounds the levels of traverse_props.
	LevelsMax = 64
	// PathLenMax bounds discover_paths' path_len and n_hop_reachability's
	// max_hops.
	PathLenMax = 1 << 10
)

// DecodeParams strictly decodes the raw params of program prog into dst:
// unknown fields, wrong types and trailing data are ParamErrors naming the
// field. Empty or null params decode as {}.
func DecodeParams(prog string, raw json.RawMessage, dst any) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) > ParamsBytesMax {
		return badParam(prog, "", "params are %d bytes, more than %d", len(raw), ParamsBytesMax)
	}
	if len(raw) == 0 || string(raw) == "null" {
		raw = []byte("{}")
	}
	if raw[0] != '{' {
		return badParam(prog, "", "params must be a JSON object")
	}
	if fastDecode(raw, dst) {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return jsonParamErr(prog, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return badParam(prog, "", "trailing data after the params object")
	}
	return nil
}

func jsonParamErr(prog string, err error) error {
	var pe *ParamError
	if errors.As(err, &pe) {
		pe.Program = prog
		return pe
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return badParam(prog, te.Field, "want %s, got JSON %s", te.Type, te.Value)
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return badParam(prog, "", "invalid JSON at byte %d: %v", se.Offset, se)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return badParam(prog, "", "invalid JSON: unexpected end")
	}
	if f, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return badParam(prog, strings.Trim(f, `"`), "unknown field")
	}
	return badParam(prog, "", "%v", err)
}

// requireHandle checks a required vertex handle.
func requireHandle(prog, field, h string) error {
	if h == "" {
		return badParam(prog, field, "required (a vertex handle)")
	}
	return nil
}

// checkHandles checks a list of vertex or edge handles.
func checkHandles(prog, field string, hs []string) error {
	if len(hs) > NodesMax {
		return badParam(prog, field, "%d entries, more than %d", len(hs), NodesMax)
	}
	for i, h := range hs {
		if h == "" {
			return badParam(prog, field+"["+strconv.Itoa(i)+"]", "empty handle")
		}
	}
	return nil
}

// Relation is how a predicate compares a property with its value.
type Relation uint8

// Relations, as Weaver named them. Comparisons are typed (value.Compare):
// numbers compare with numbers (ints and floats numerically), strings with
// strings, datetimes with datetimes; a property of an incomparable kind never
// matches. STARTS_WITH and ENDS_WITH apply to string properties; CONTAINS is a
// substring test on a string property and a membership test on a list one.
const (
	Equals Relation = iota
	Less
	Greater
	LessEqual
	GreaterEqual
	StartsWith
	EndsWith
	Contains
)

var relationNames = [...]string{"EQUALS", "LESS", "GREATER", "LESS_EQUAL", "GREATER_EQUAL", "STARTS_WITH", "ENDS_WITH", "CONTAINS"}

func (r Relation) String() string {
	if int(r) < len(relationNames) {
		return relationNames[r]
	}
	return "Relation(" + strconv.Itoa(int(r)) + ")"
}

// MarshalJSON writes the relation's name.
func (r Relation) MarshalJSON() ([]byte, error) { return json.Marshal(r.String()) }

// parseRelation accepts the names above in any case; "" is EQUALS.
func parseRelation(s string) (Relation, bool) {
	if s == "" {
		return Equals, true
	}
	i := slices.Index(relationNames[:], strings.ToUpper(s))
	return Relation(i), i >= 0
}

// Predicate is one compiled property test.
type Predicate struct {
	Key   string      `json:"key"`
	Rel   Relation    `json:"rel"`
	Value value.Value `json:"value"`
}

// Match reports whether property value v (present) satisfies p.
func (p Predicate) Match(v value.Value) bool {
	switch p.Rel {
	case Equals:
		return value.Equal(v, p.Value)
	case Less, Greater, LessEqual, GreaterEqual:
		c, ok := value.Compare(v, p.Value)
		if !ok {
			return false
		}
		switch p.Rel {
		case Less:
			return c < 0
		case Greater:
			return c > 0
		case LessEqual:
			return c <= 0
		}
		return c >= 0
	case StartsWith:
		return v.Kind() == value.String && strings.HasPrefix(v.Str(), p.Value.Str())
	case EndsWith:
		return v.Kind() == value.String && strings.HasSuffix(v.Str(), p.Value.Str())
	case Contains:
		if v.Kind() == value.List {
			return slices.ContainsFunc(v.List(), func(e value.Value) bool { return value.Equal(e, p.Value) })
		}
		return v.Kind() == value.String && p.Value.Kind() == value.String && strings.Contains(v.Str(), p.Value.Str())
	}
	return false
}

// Filter is a conjunction of predicates; the empty filter matches everything.
type Filter []Predicate

// Match reports whether every predicate holds for the properties get reads;
// a missing property fails its predicate.
func (f Filter) Match(get func(key string) (value.Value, bool)) bool {
	for _, p := range f {
		v, ok := get(p.Key)
		if !ok || !p.Match(v) {
			return false
		}
	}
	return true
}

// MatchEdge and MatchVertex apply f to an element's properties.
func (f Filter) MatchEdge(e Edge) bool     { return len(f) == 0 || f.Match(e.Prop) }
func (f Filter) MatchVertex(v Vertex) bool { return len(f) == 0 || f.Match(v.Prop) }

// FilterSpec is the JSON form of a Filter: either an object whose every key
// must equal its value ({"color": "red", "weight": 3}), or a list of
// predicates ([{"key": "weight", "rel": "LESS", "value": 3}], rel defaulting
// to EQUALS). Null or absent means no filter.
type FilterSpec []PredicateSpec

// PredicateSpec is the JSON form of one predicate.
type PredicateSpec struct {
	Key   string          `json:"key"`
	Rel   string          `json:"rel,omitempty"`
	Value json.RawMessage `json:"value"`
}

// UnmarshalJSON accepts the object and the list forms.
func (f *FilterSpec) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) == 0 || string(b) == "null":
		*f = nil
		return nil
	case b[0] == '{':
		var m map[string]json.RawMessage
		if err := json.Unmarshal(b, &m); err != nil {
			return err
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		out := make(FilterSpec, len(keys))
		for i, k := range keys {
			out[i] = PredicateSpec{Key: k, Value: m[k]}
		}
		*f = out
		return nil
	case b[0] == '[':
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		var out []PredicateSpec
		if err := dec.Decode(&out); err != nil {
			return &ParamError{Msg: "filter: " + err.Error()}
		}
		*f = out
		return nil
	}
	return &ParamError{Msg: "a filter is an object {key: value} or a list of {key, rel, value}"}
}

// Compile validates the spec for program prog; field names it in errors.
func (f FilterSpec) Compile(prog, field string) (Filter, error) {
	if len(f) > PredicatesMax {
		return nil, badParam(prog, field, "%d predicates, more than %d", len(f), PredicatesMax)
	}
	if len(f) == 0 {
		return nil, nil
	}
	out := make(Filter, len(f))
	for i, ps := range f {
		at := field + "[" + strconv.Itoa(i) + "]"
		if ps.Key == "" {
			return nil, badParam(prog, at+".key", "required")
		}
		rel, ok := parseRelation(ps.Rel)
		if !ok {
			return nil, badParam(prog, at+".rel", "unknown relation %q (want one of %s)", ps.Rel, strings.Join(relationNames[:], ", "))
		}
		raw := bytes.TrimSpace(ps.Value)
		if len(raw) == 0 || string(raw) == "null" {
			return nil, badParam(prog, at+".value", "required")
		}
		var v value.Value
		if err := v.UnmarshalJSON(raw); err != nil {
			return nil, badParam(prog, at+".value", "%v", err)
		}
		if (rel == StartsWith || rel == EndsWith) && v.Kind() != value.String {
			return nil, badParam(prog, at+".value", "%s needs a string, got %s", rel, v.Kind())
		}
		out[i] = Predicate{Key: ps.Key, Rel: rel, Value: v}
	}
	return out, nil
}
