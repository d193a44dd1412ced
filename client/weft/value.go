package weft

import (
	"fmt"
	"math"
	"reflect"
	"time"

	"github.com/weft-db/weft/internal/value"
)

// toValue converts a Go value to a property value: strings, bools, integers
// (uint64 up to MaxInt64), finite floats, time.Time, slices and arrays of
// these (nested at most value.NestingMax deep); nil only inside a list.
func toValue(x any, depth int) (value.Value, error) {
	switch v := x.(type) {
	case nil:
		if depth == 0 {
			return value.Value{}, fmt.Errorf("nil value (to remove a property, delete it)")
		}
		return value.Value{}, nil
	case string:
		return value.Str(v), nil
	case bool:
		return value.Boolean(v), nil
	case int:
		return value.I64(int64(v)), nil
	case int64:
		return value.I64(v), nil
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return value.Value{}, fmt.Errorf("float %v is not finite", v)
		}
		return value.F64(v), nil
	case time.Time:
		return value.Time(v), nil
	case []byte:
		return value.Value{}, fmt.Errorf("[]byte is not a property value (convert it to a string)")
	}
	rv := reflect.ValueOf(x)
	switch rv.Kind() {
	case reflect.Int8, reflect.Int16, reflect.Int32:
		return value.I64(rv.Int()), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if rv.Uint() > math.MaxInt64 {
			return value.Value{}, fmt.Errorf("integer %d out of int64 range", rv.Uint())
		}
		return value.I64(int64(rv.Uint())), nil
	case reflect.Float32:
		return toValue(rv.Float(), depth)
	case reflect.Slice, reflect.Array:
		if depth >= value.NestingMax {
			return value.Value{}, fmt.Errorf("lists nest deeper than %d", value.NestingMax)
		}
		if rv.Len() > value.ListLenMax {
			return value.Value{}, fmt.Errorf("list of %d values, at most %d", rv.Len(), value.ListLenMax)
		}
		out := make([]value.Value, rv.Len())
		for i := range out {
			var err error
			if out[i], err = toValue(rv.Index(i).Interface(), depth+1); err != nil {
				return value.Value{}, err
			}
		}
		return value.ListOf(out...), nil
	}
	return value.Value{}, fmt.Errorf("%T is not a property value (string, integer, float, bool, time.Time or a slice of these)", x)
}

// fromValue converts a property value to its Go form: string, int64,
// float64, bool, time.Time (UTC), []any, or nil.
func fromValue(v value.Value) any {
	switch v.Kind() {
	case value.String:
		return v.Str()
	case value.Int:
		return v.Int()
	case value.Float:
		return v.Float()
	case value.Bool:
		return v.Bool()
	case value.Datetime:
		return v.Time()
	case value.List:
		out := make([]any, len(v.List()))
		for i, e := range v.List() {
			out[i] = fromValue(e)
		}
		return out
	}
	return nil
}
