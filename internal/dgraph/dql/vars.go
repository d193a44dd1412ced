package dql

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
)

// gqlVar is a declared GraphQL variable and its value (given, or the
// default).
type gqlVar struct {
	typ      string // int, float, bool, string or float32vector
	required bool   // type!
	value    string
	has      bool
	pos      Pos
}

// gqlTypes are the types a GraphQL variable may declare.
var gqlTypes = []string{"int", "float", "bool", "string", "float32vector"}

// varDecls reads $a: type[!] [= default], ... up to ')' and binds each
// variable to the request's value or its default. As in Dgraph, a request
// value for a variable the list does not declare is an error.
func (p *parser) varDecls(open Pos) error {
	p.gql = map[string]*gqlVar{}
	if p.peek().is(")") {
		p.next()
		return p.checkGivenDeclared(open)
	}
	for {
		if err := p.varDecl(); err != nil {
			return err
		}
		if done, err := p.argSeparator(); err != nil {
			return err
		} else if done {
			return p.checkGivenDeclared(open)
		}
	}
}

func (p *parser) varDecl() error {
	t := p.peek()
	if t.kind != tokVar {
		return p.unexpected(t, "a variable declaration $name: type")
	}
	p.next()
	if _, dup := p.gql[t.text]; dup {
		return errorAt(t.pos, "variable $%s declared twice", t.text)
	}
	if _, err := p.expect(":", "':' and the type of $"+t.text); err != nil {
		return err
	}
	tt := p.peek()
	if tt.kind != tokWord {
		return p.unexpected(tt, "the type of $"+t.text)
	}
	p.next()
	if !slices.Contains(gqlTypes, tt.text) {
		return errorAt(tt.pos, "variable $%s: type %q is not supported (int, float, bool, string, float32vector)", t.text, tt.text)
	}
	v := &gqlVar{typ: tt.text, pos: t.pos}
	if p.peek().is("!") {
		p.next()
		v.required = true
	}
	if eq := p.peek(); eq.is("=") {
		p.next()
		if v.required {
			return errorAt(eq.pos, "variable $%s of type %s! cannot have a default value", t.text, v.typ)
		}
		d, _, err := p.defaultValue(t.text)
		if err != nil {
			return err
		}
		v.value, v.has = d, d != ""
	}
	if given, ok := p.vals[t.text]; ok {
		v.value, v.has = given, true
	}
	if v.required && !v.has {
		return errorAt(t.pos, "variable $%s of type %s! needs a value", t.text, v.typ)
	}
	if v.has && !validGQLValue(v.typ, v.value) {
		return errorAt(t.pos, "variable $%s: expected %s, found %q", t.text, v.typ, v.value)
	}
	p.gql[t.text] = v
	return nil
}

// defaultValue reads a default: "text", a number, true or false.
func (p *parser) defaultValue(name string) (string, Pos, error) {
	t := p.peek()
	if t.kind == tokVar {
		return "", t.pos, errorAt(t.pos, "the default of $%s must be a literal", name)
	}
	return p.scalar("a default value for $" + name)
}

// checkGivenDeclared rejects request values for undeclared variables.
func (p *parser) checkGivenDeclared(open Pos) error {
	names := make([]string, 0, len(p.vals))
	for name := range p.vals {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if _, ok := p.gql[name]; !ok {
			return errorAt(open, "variable $%s is given but the query does not declare it", name)
		}
	}
	return nil
}

// validGQLValue reports whether value parses as typ, as Dgraph checks it.
func validGQLValue(typ, value string) bool {
	var err error
	switch typ {
	case "int":
		_, err = strconv.ParseInt(value, 0, 64)
	case "float":
		_, err = strconv.ParseFloat(value, 64)
	case "bool":
		_, err = strconv.ParseBool(value)
	case "float32vector":
		_, err = parseVector(value)
	}
	return err == nil
}

// parseVector reads "[1.5, 2, -3e2]".
func parseVector(s string) ([]float32, error) {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "[") || !strings.HasSuffix(s, "]") {
		return nil, strconv.ErrSyntax
	}
	body := strings.TrimSpace(s[1 : len(s)-1])
	if body == "" {
		return nil, nil
	}
	var out []float32
	for _, part := range strings.Split(body, ",") {
		f, err := strconv.ParseFloat(strings.TrimSpace(part), 32)
		if err != nil {
			return nil, err
		}
		out = append(out, float32(f))
	}
	return out, nil
}

// gqlValue is the value of GraphQL variable t where the query uses it.
func (p *parser) gqlValue(t token) (string, error) {
	v, ok := p.gql[t.text]
	switch {
	case !ok:
		return "", errorAt(t.pos, "variable $%s is not declared: declare it in query name($%s: type) {...}", t.text, t.text)
	case !v.has:
		return "", errorAt(t.pos, "variable $%s has no value: give it in the request's variables or as a default", t.text)
	}
	return v.value, nil
}

// DecodeVars reads a JSON variables object, as sent to Dgraph's HTTP
// /query in "variables": {"$a": "1", "$b": 2, "$c": true, "$ids":
// ["0x1", "0x2"]}. Strings stay as they are; numbers and booleans become
// their JSON text; arrays of those become "[a, b]" (uid lists, vectors);
// null is absent. Anything else is an error.
func DecodeVars(data []byte) (map[string]string, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var raw map[string]any
	if err := dec.Decode(&raw); err != nil {
		return nil, errorAt(Pos{}, "variables are not a JSON object: %v", err)
	}
	if dec.More() {
		return nil, errorAt(Pos{}, "variables: trailing data after the JSON object")
	}
	out := make(map[string]string, len(raw))
	for k, v := range raw {
		if v == nil {
			continue
		}
		s, ok := varText(v)
		if !ok {
			if list, isList := v.([]any); isList {
				parts := make([]string, len(list))
				for i, e := range list {
					if parts[i], ok = varText(e); !ok || e == nil {
						return nil, errorAt(Pos{}, "variable %s: a list may hold only strings, numbers and booleans", k)
					}
				}
				out[k] = "[" + strings.Join(parts, ", ") + "]"
				continue
			}
			return nil, errorAt(Pos{}, "variable %s: expected a string, a number, a boolean or a list of them", k)
		}
		out[k] = s
	}
	return out, nil
}

func varText(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case json.Number:
		return x.String(), true
	case bool:
		return strconv.FormatBool(x), true
	}
	return "", false
}
