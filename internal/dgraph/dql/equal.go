package dql

import (
	"reflect"

	"github.com/weft-db/weft/internal/rdf"
)

// Equal reports whether two queries are the same, ignoring positions (and
// nil versus empty lists).
func (q *Query) Equal(o *Query) bool { return equalTrees(q, o) }

// Equal reports whether two mutation requests are the same, ignoring
// positions.
func (u *Upsert) Equal(o *Upsert) bool { return equalTrees(u, o) }

// Equal reports whether two filters are the same, ignoring positions.
func (f *Filter) Equal(o *Filter) bool { return equalTrees(f, o) }

func equalTrees(a, b any) bool {
	return equalValues(reflect.ValueOf(a), reflect.ValueOf(b))
}

var (
	posType   = reflect.TypeFor[Pos]()
	nquadType = reflect.TypeFor[rdf.NQuad]()
)

func equalValues(a, b reflect.Value) bool {
	if a.Type() != b.Type() {
		return false
	}
	switch a.Type() {
	case posType:
		return true
	case nquadType:
		return a.Interface().(rdf.NQuad).Equal(b.Interface().(rdf.NQuad))
	}
	switch a.Kind() {
	case reflect.Pointer:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		return equalValues(a.Elem(), b.Elem())
	case reflect.Struct:
		for i := range a.NumField() {
			if !equalValues(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	case reflect.Slice:
		if a.Len() != b.Len() {
			return false
		}
		for i := range a.Len() {
			if !equalValues(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.String:
		return a.String() == b.String()
	case reflect.Bool:
		return a.Bool() == b.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return a.Int() == b.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return a.Uint() == b.Uint()
	case reflect.Float32, reflect.Float64:
		return a.Float() == b.Float()
	}
	panic("dql: equalValues: unexpected kind " + a.Kind().String())
}
