package nodeprog

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
)

// Param describes one parameter of a program or analysis as a client sends
// it: its JSON name and a type name, one of "string", "bool", "int",
// "number", "string[]", "string[][]", "filter" (a FilterSpec), "filter[]",
// "json" (any JSON value) or "object".
type Param struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// paramDescriber is implemented by programs and analyses that can list their
// parameters (every built-in does; a user program may not).
type paramDescriber interface {
	Params() []Param
}

// Params lists a registered program's or analysis's parameters in their
// declaration order; nil for an unknown name or one that does not describe
// its parameters.
func (r *Registry) Params(name string) []Param {
	var d any
	if p, ok := r.progs[name]; ok {
		d = p
	} else if a, ok := r.analyses[name]; ok {
		d = a
	}
	if pd, ok := d.(paramDescriber); ok {
		return pd.Params()
	}
	return nil
}

// Params implements paramDescriber from P's exported JSON fields.
func (d *Def[P, A, E]) Params() []Param {
	return slices.DeleteFunc(paramsOf(reflect.TypeFor[P]()), func(p Param) bool { return slices.Contains(d.Rejects, p.Name) })
}

var (
	rawType    = reflect.TypeFor[json.RawMessage]()
	filterType = reflect.TypeFor[FilterSpec]()
)

// paramsOf lists the JSON fields of struct type t, embedded structs' fields
// in place.
func paramsOf(t reflect.Type) []Param {
	var out []Param
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			out = append(out, paramsOf(f.Type)...)
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "" || name == "-" {
			continue
		}
		out = append(out, Param{Name: name, Type: paramType(f.Type)})
	}
	return out
}

func paramType(t reflect.Type) string {
	switch {
	case t == rawType:
		return "json"
	case t == filterType:
		return "filter"
	}
	switch t.Kind() {
	case reflect.Pointer:
		return paramType(t.Elem())
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "bool"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "int"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice, reflect.Array:
		return paramType(t.Elem()) + "[]"
	}
	return "object"
}
