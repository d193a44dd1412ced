package monitor

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"gopkg.in/yaml.v3"
)

// SpecBytesMax bounds the size of a spec document ParseJSON and ParseYAML accept.
const SpecBytesMax = 16 << 20

// The document schema, in JSON (YAML is the same tree). It follows the paper's
// XML of Fig. 3: a predicate has a type and conjunctive clauses of variables.
//
//	{"servers": 3,
//	 "predicates": [
//	   {"name": "not-p", "type": "semilinear",
//	    "clauses": [
//	      {"id": "0", "vars": [{"server": 1, "key": "x", "value": 1},
//	                           {"server": 1, "key": "y", "value": 1}]},
//	      {"id": "1", "vars": [{"server": 2, "key": "z", "op": "ne", "value": "0"}]}]}]}
//
// "op" is eq (default) or ne; "value" may be a string, number or boolean and
// is compared as text (numbers in their shortest decimal form).
type specDoc struct {
	Servers    int       `json:"servers"`
	Predicates []predDoc `json:"predicates"`
}

type predDoc struct {
	Name    string      `json:"name"`
	Type    string      `json:"type"`
	Clauses []clauseDoc `json:"clauses"`
}

type clauseDoc struct {
	ID   scalar   `json:"id,omitzero"`
	Vars []litDoc `json:"vars"`
}

type litDoc struct {
	Server *int   `json:"server"`
	Key    string `json:"key"`
	Op     string `json:"op,omitempty"`
	Value  scalar `json:"value"`
}

// scalar is a JSON string, number or boolean, kept as text.
type scalar struct {
	text string
	set  bool
}

func (s *scalar) UnmarshalJSON(b []byte) error {
	var v any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		return err
	}
	switch v := v.(type) {
	case string:
		s.text = v
	case json.Number:
		s.text = canonicalNumber(v)
	case bool:
		s.text = strconv.FormatBool(v)
	default:
		return fmt.Errorf("want a string, number or boolean, got %s", b)
	}
	s.set = true
	return nil
}

func (s scalar) MarshalJSON() ([]byte, error) { return json.Marshal(s.text) }

func (s scalar) IsZero() bool { return !s.set }

// canonicalNumber writes integers as they are and other numbers in their
// shortest form, so 1, 1.0 and 1e0 all compare as "1".
func canonicalNumber(n json.Number) string {
	if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
		return strconv.FormatInt(i, 10)
	}
	if f, err := strconv.ParseFloat(string(n), 64); err == nil {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return string(n)
}

// ParseJSON reads and validates a spec. Unknown fields, missing required
// fields ("servers", each literal's "server", "key" and "value") and
// trailing data are errors; all errors wrap ErrSpec.
func ParseJSON(data []byte) (*Spec, error) {
	if len(data) > SpecBytesMax {
		return nil, fmt.Errorf("%w: %d bytes, at most %d", ErrSpec, len(data), SpecBytesMax)
	}
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	var doc specDoc
	if err := d.Decode(&doc); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSpec, err)
	}
	if _, err := d.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: trailing data after the spec", ErrSpec)
	}
	s, err := doc.spec()
	if err != nil {
		return nil, err
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return s, nil
}

// ParseYAML reads a spec written in YAML (one document, the same tree as
// the JSON form) and validates it.
func ParseYAML(data []byte) (*Spec, error) {
	if len(data) > SpecBytesMax {
		return nil, fmt.Errorf("%w: %d bytes, at most %d", ErrSpec, len(data), SpecBytesMax)
	}
	d := yaml.NewDecoder(bytes.NewReader(data))
	var tree any
	if err := d.Decode(&tree); err != nil {
		return nil, fmt.Errorf("%w: yaml: %w", ErrSpec, err)
	}
	var more any
	if err := d.Decode(&more); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: yaml: want exactly one document", ErrSpec)
	}
	// Maps with non-string keys fail here, as they have no JSON form.
	j, err := json.Marshal(tree)
	if err != nil {
		return nil, fmt.Errorf("%w: yaml: %w", ErrSpec, err)
	}
	return ParseJSON(j)
}

func (doc *specDoc) spec() (*Spec, error) {
	s := &Spec{Servers: doc.Servers}
	for i, pd := range doc.Predicates {
		t, err := ParseType(pd.Type)
		if err != nil {
			return nil, fmt.Errorf("predicates[%d] (%q): %w", i, pd.Name, err)
		}
		p := Predicate{Name: pd.Name, Type: t}
		for k, cd := range pd.Clauses {
			c := Clause{ID: cd.ID.text}
			for l, ld := range cd.Vars {
				lit, err := ld.literal()
				if err != nil {
					return nil, fmt.Errorf("%w: predicates[%d].clauses[%d].vars[%d]: %w", ErrSpec, i, k, l, err)
				}
				c.Literals = append(c.Literals, lit)
			}
			p.Clauses = append(p.Clauses, c)
		}
		s.Predicates = append(s.Predicates, p)
	}
	return s, nil
}

func (ld litDoc) literal() (Literal, error) {
	switch {
	case ld.Server == nil:
		return Literal{}, errors.New(`missing "server"`)
	case ld.Key == "":
		return Literal{}, errors.New(`missing "key"`)
	case !ld.Value.set:
		return Literal{}, errors.New(`missing "value"`)
	}
	op, err := parseOp(ld.Op)
	if err != nil {
		return Literal{}, err
	}
	return Literal{Server: *ld.Server, Key: ld.Key, Op: op, Value: ld.Value.text}, nil
}

// MarshalJSON writes the spec in the form ParseJSON reads.
func (s *Spec) MarshalJSON() ([]byte, error) {
	doc := specDoc{Servers: s.Servers, Predicates: []predDoc{}}
	for _, p := range s.Predicates {
		pd := predDoc{Name: p.Name, Type: p.Type.String(), Clauses: []clauseDoc{}}
		for _, c := range p.Clauses {
			cd := clauseDoc{ID: scalar{text: c.ID, set: c.ID != ""}, Vars: []litDoc{}}
			for _, l := range c.Literals {
				server := l.Server
				cd.Vars = append(cd.Vars, litDoc{Server: &server, Key: l.Key, Op: l.Op.String(), Value: scalar{text: l.Value, set: true}})
			}
			pd.Clauses = append(pd.Clauses, cd)
		}
		doc.Predicates = append(doc.Predicates, pd)
	}
	return json.Marshal(doc)
}
