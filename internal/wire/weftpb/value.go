package weftpb

import (
	"fmt"
	"math"
	"time"

	"github.com/weft-db/weft/internal/value"
)

// Conversions between value.Value and the wire's Value, shared by the server
// (internal/api) and the Go client (client/weft). Hand-written, beside the
// generated code.

// ValueOf returns the wire form of v.
func ValueOf(v value.Value) *Value {
	switch v.Kind() {
	case value.String:
		return &Value{Kind: &Value_StringValue{StringValue: v.Str()}}
	case value.Int:
		return &Value{Kind: &Value_IntValue{IntValue: v.Int()}}
	case value.Float:
		return &Value{Kind: &Value_FloatValue{FloatValue: v.Float()}}
	case value.Bool:
		return &Value{Kind: &Value_BoolValue{BoolValue: v.Bool()}}
	case value.Datetime:
		return &Value{Kind: &Value_DatetimeUnixNanos{DatetimeUnixNanos: v.Time().UnixNano()}}
	case value.List:
		items := make([]*Value, len(v.List()))
		for i, e := range v.List() {
			items[i] = ValueOf(e)
		}
		return &Value{Kind: &Value_ListValue{ListValue: &ValueList{Values: items}}}
	}
	return &Value{}
}

// Decode returns the value.Value of x (nil and kind-less: null). It rejects
// what value.Value has no JSON form for or does not allow: non-finite floats,
// lists longer than value.ListLenMax or nested deeper than value.NestingMax.
// Errors wrap value.ErrMalformed.
func (x *Value) Decode() (value.Value, error) { return x.decode(0) }

func (x *Value) decode(depth int) (value.Value, error) {
	switch k := x.GetKind().(type) {
	case nil:
		return value.Value{}, nil
	case *Value_StringValue:
		return value.Str(k.StringValue), nil
	case *Value_IntValue:
		return value.I64(k.IntValue), nil
	case *Value_FloatValue:
		if math.IsNaN(k.FloatValue) || math.IsInf(k.FloatValue, 0) {
			return value.Value{}, fmt.Errorf("%w: float value %v is not finite", value.ErrMalformed, k.FloatValue)
		}
		return value.F64(k.FloatValue), nil
	case *Value_BoolValue:
		return value.Boolean(k.BoolValue), nil
	case *Value_DatetimeUnixNanos:
		return value.Time(time.Unix(0, k.DatetimeUnixNanos)), nil
	case *Value_ListValue:
		if depth >= value.NestingMax {
			return value.Value{}, fmt.Errorf("%w: lists nest deeper than %d", value.ErrMalformed, value.NestingMax)
		}
		items := k.ListValue.GetValues()
		if len(items) > value.ListLenMax {
			return value.Value{}, fmt.Errorf("%w: list of %d values, at most %d", value.ErrMalformed, len(items), value.ListLenMax)
		}
		out := make([]value.Value, len(items))
		for i, e := range items {
			var err error
			if out[i], err = e.decode(depth + 1); err != nil {
				return value.Value{}, err
			}
		}
		return value.ListOf(out...), nil
	}
	return value.Value{}, fmt.Errorf("%w: unknown value kind", value.ErrMalformed)
}
