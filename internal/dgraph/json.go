package dgraph

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/weft-db/weft/internal/rdf"
	"github.com/weft-db/weft/internal/value"
)

// Dgraph's JSON mutations, converted to the same quads as RDF:
//
//	{"uid": "_:alice", "name": "Alice", "name@fr": "Alice",
//	 "age": 30, "dgraph.type": ["Person"], "name|source": "census",
//	 "friend": [{"uid": "0x2", "friend|close": true}, {"name": "Carol"}],
//	 "loc": {"type": "Point", "coordinates": [1.5, 2.5]}}
//
// An object is a node: "uid" names it (a blank node "_:x" or a uid); an
// object without one is a new blank node "dg.<n>" (numbered in document
// order). Strings are untyped literals (converted by the schema), integers
// and floats and bools typed ones; "p@lang" carries a language; a nested
// object is an edge to it (its "p|f" keys are the edge's facets), a list
// of objects several edges, a list of scalars several values; a GeoJSON
// object is a geo value. Facets of a scalar are "p|f" keys beside it. In a
// deletion, null deletes every value of the predicate (<s> <p> *) and an
// object holding only "uid" deletes the whole node (<s> * *).

// JSONDepthMax bounds the nesting of a JSON mutation.
const JSONDepthMax = 64

// ParseJSON converts a JSON mutation (an object or a list of objects) to
// quads; del selects the deletion rules.
func ParseJSON(data []byte, del bool) ([]rdf.NQuad, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var raw any
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("%w: JSON mutation: %v", ErrInvalid, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: JSON mutation: more than one value", ErrInvalid)
	}
	c := &jsonConv{del: del}
	var objs []any
	switch x := raw.(type) {
	case map[string]any:
		objs = []any{x}
	case []any:
		objs = x
	default:
		return nil, fmt.Errorf("%w: a JSON mutation is an object or a list of objects, not %s", ErrInvalid, jsonKind(raw))
	}
	for i, o := range objs {
		m, ok := o.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%w: JSON mutation item %d is %s, not an object", ErrInvalid, i, jsonKind(o))
		}
		if _, err := c.object(m, "", 0); err != nil {
			return nil, err
		}
	}
	return c.quads, nil
}

// MutateJSON applies Dgraph's set_json and delete_json bodies (either may
// be empty) as one mutation.
func (g *Graph) MutateJSON(ctx context.Context, setJSON, delJSON []byte) (*Result, error) {
	var m Mutation
	var err error
	if len(bytes.TrimSpace(setJSON)) > 0 {
		if m.Set, err = ParseJSON(setJSON, false); err != nil {
			return nil, err
		}
	}
	if len(bytes.TrimSpace(delJSON)) > 0 {
		if m.Del, err = ParseJSON(delJSON, true); err != nil {
			return nil, err
		}
	}
	return g.Mutate(ctx, m)
}

type jsonConv struct {
	del   bool
	quads []rdf.NQuad
	blank int
}

func jsonKind(x any) string {
	switch x.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	case string:
		return "a string"
	case bool:
		return "a bool"
	}
	return "a number"
}

// object emits the quads of one node object and returns its subject.
// parent is the predicate of the edge leading to it ("" at the top).
func (c *jsonConv) object(m map[string]any, parent string, depth int) (rdf.Term, error) {
	if depth > JSONDepthMax {
		return rdf.Term{}, fmt.Errorf("%w: JSON mutation nests deeper than %d", ErrInvalid, JSONDepthMax)
	}
	subj, err := c.subject(m)
	if err != nil {
		return rdf.Term{}, err
	}
	keys := slices.Sorted(maps.Keys(m))
	if c.del && len(m) == 1 && m["uid"] != nil && parent == "" {
		c.quads = append(c.quads, rdf.NQuad{Subject: subj, Predicate: rdf.Star, Object: rdf.Term{Kind: rdf.Wildcard}})
		return subj, nil
	}
	for _, k := range keys {
		if k == "uid" || strings.Contains(k, "|") {
			continue
		}
		pred, lang := k, ""
		if i := strings.LastIndexByte(k, '@'); i > 0 {
			pred, lang = k[:i], k[i+1:]
		}
		facets, err := c.facets(m, k)
		if err != nil {
			return rdf.Term{}, err
		}
		if err := c.value(subj, pred, lang, m[k], facets, depth); err != nil {
			return rdf.Term{}, fmt.Errorf("JSON key %q: %w", k, err)
		}
	}
	for _, k := range keys {
		p, _, ok := strings.Cut(k, "|")
		if ok && p != parent && m[p] == nil {
			return rdf.Term{}, fmt.Errorf("%w: JSON facet key %q names no predicate of its object", ErrInvalid, k)
		}
	}
	return subj, nil
}

func (c *jsonConv) subject(m map[string]any) (rdf.Term, error) {
	raw, ok := m["uid"]
	if !ok || raw == nil {
		if c.del {
			return rdf.Term{}, fmt.Errorf("%w: an object in a JSON deletion needs a \"uid\"", ErrInvalid)
		}
		c.blank++
		return rdf.Term{Kind: rdf.Blank, Name: "dg." + strconv.Itoa(c.blank)}, nil
	}
	s, ok := raw.(string)
	if !ok {
		if n, isNum := raw.(json.Number); isNum {
			s = n.String()
		} else {
			return rdf.Term{}, fmt.Errorf("%w: \"uid\" is %s, not a string", ErrInvalid, jsonKind(raw))
		}
	}
	switch {
	case strings.HasPrefix(s, "_:") && len(s) > 2:
		return rdf.Term{Kind: rdf.Blank, Name: s[2:]}, nil
	case strings.HasPrefix(s, "uid(") && strings.HasSuffix(s, ")"):
		return rdf.Term{Kind: rdf.UIDVar, Name: s[4 : len(s)-1]}, nil
	}
	u, err := ParseUID(s)
	if err != nil {
		return rdf.Term{}, err
	}
	return rdf.Term{Kind: rdf.UID, UID: u}, nil
}

// facets returns the facets of key k's value: "k|f" keys of the object.
func (c *jsonConv) facets(m map[string]any, k string) ([]rdf.Facet, error) {
	var out []rdf.Facet
	for _, fk := range slices.Sorted(maps.Keys(m)) {
		p, f, ok := strings.Cut(fk, "|")
		if !ok || p != k {
			continue
		}
		v, err := facetValue(m[fk])
		if err != nil {
			return nil, fmt.Errorf("JSON facet %q: %w", fk, err)
		}
		out = append(out, rdf.Facet{Key: f, Value: v})
	}
	return out, nil
}

// edgeFacets returns the facets of the edge pred leading to object m.
func edgeFacets(m map[string]any, pred string) ([]rdf.Facet, error) {
	var out []rdf.Facet
	for _, fk := range slices.Sorted(maps.Keys(m)) {
		p, f, ok := strings.Cut(fk, "|")
		if !ok || p != pred || m[p] != nil {
			continue
		}
		v, err := facetValue(m[fk])
		if err != nil {
			return nil, fmt.Errorf("JSON facet %q: %w", fk, err)
		}
		out = append(out, rdf.Facet{Key: f, Value: v})
	}
	return out, nil
}

// facetValue types a JSON facet as Dgraph does: a string that parses as a
// datetime is a datetime.
func facetValue(raw any) (value.Value, error) {
	switch x := raw.(type) {
	case string:
		if t, err := rdf.ParseDatetime(x); err == nil {
			return value.Time(t), nil
		}
		return value.Str(x), nil
	case bool:
		return value.Boolean(x), nil
	case json.Number:
		return numberValue(x)
	case map[string]any:
		return value.Value{}, fmt.Errorf("%w: facets of list values", ErrUnsupported)
	}
	return value.Value{}, fmt.Errorf("%w: a facet is a string, number or bool, not %s", ErrInvalid, jsonKind(raw))
}

func numberValue(n json.Number) (value.Value, error) {
	if !strings.ContainsAny(n.String(), ".eE") {
		if i, err := n.Int64(); err == nil {
			return value.I64(i), nil
		}
	}
	f, err := n.Float64()
	if err != nil {
		return value.Value{}, fmt.Errorf("%w: number %s", ErrInvalid, n)
	}
	return value.F64(f), nil
}

// literal converts a JSON scalar to a literal term.
func literal(raw any) (rdf.Term, error) {
	switch x := raw.(type) {
	case string:
		return rdf.Term{Kind: rdf.Literal, Value: value.Str(x)}, nil
	case bool:
		return rdf.Term{Kind: rdf.Literal, Value: value.Boolean(x), Datatype: rdf.TypeBool}, nil
	case json.Number:
		v, err := numberValue(x)
		if err != nil {
			return rdf.Term{}, err
		}
		dt := rdf.TypeInt
		if v.Kind() == value.Float {
			dt = rdf.TypeFloat
		}
		return rdf.Term{Kind: rdf.Literal, Value: v, Datatype: dt}, nil
	}
	return rdf.Term{}, fmt.Errorf("%w: unexpected %s", ErrInvalid, jsonKind(raw))
}

// geoJSON reports whether m is a GeoJSON geometry, returning its text.
func geoJSON(m map[string]any) (string, bool) {
	t, ok := m["type"].(string)
	_, coords := m["coordinates"]
	_, geoms := m["geometries"]
	if !ok || !(coords || geoms) || m["uid"] != nil {
		return "", false
	}
	b, err := json.Marshal(m)
	return string(b), err == nil && t != ""
}

// value emits the quads of subj's key pred(@lang) = raw.
func (c *jsonConv) value(subj rdf.Term, pred, lang string, raw any, facets []rdf.Facet, depth int) error {
	nq := rdf.NQuad{Subject: subj, Predicate: pred, Lang: lang}
	switch x := raw.(type) {
	case nil:
		if c.del {
			nq.Object = rdf.Term{Kind: rdf.Wildcard}
			c.quads = append(c.quads, nq)
		}
		return nil
	case map[string]any:
		if g, ok := geoJSON(x); ok {
			nq.Object = rdf.Term{Kind: rdf.Literal, Value: value.Str(g), Datatype: rdf.TypeGeo}
			c.quads = append(c.quads, nq)
			return nil
		}
		return c.edge(nq, x, depth)
	case []any:
		for _, e := range x {
			if m, ok := e.(map[string]any); ok {
				if _, isGeo := geoJSON(m); !isGeo {
					if err := c.edge(nq, m, depth); err != nil {
						return err
					}
					continue
				}
			}
			if err := c.value(subj, pred, lang, e, nil, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	lit, err := literal(raw)
	if err != nil {
		return err
	}
	nq.Object, nq.Facets = lit, facets
	c.quads = append(c.quads, nq)
	return nil
}

// edge emits the edge nq.Predicate from nq.Subject to the node object m
// (and m's own quads).
func (c *jsonConv) edge(nq rdf.NQuad, m map[string]any, depth int) error {
	if nq.Lang != "" {
		return fmt.Errorf("%w: a language on an edge", ErrInvalid)
	}
	obj, err := c.object(m, nq.Predicate, depth+1)
	if err != nil {
		return err
	}
	if nq.Facets, err = edgeFacets(m, nq.Predicate); err != nil {
		return err
	}
	nq.Object = obj
	c.quads = append(c.quads, nq)
	return nil
}
