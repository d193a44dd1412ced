package weftpb

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/weft-db/weft/internal/value"
)

func TestValueRoundTrip(t *testing.T) {
	for _, v := range []value.Value{
		value.Str(""), value.Str("héllo"), value.I64(math.MinInt64), value.I64(42), value.F64(3),
		value.F64(-0.5), value.Boolean(true), value.Boolean(false),
		value.Time(time.Date(1969, 7, 20, 20, 17, 40, 123456789, time.UTC)),
		value.ListOf(), value.ListOf(value.I64(1), value.ListOf(value.Str("x"), value.Value{})),
	} {
		got, err := ValueOf(v).Decode()
		if err != nil || string(value.Append(nil, got)) != string(value.Append(nil, v)) {
			t.Errorf("%v: round trip gave %v (%v)", v, got, err)
		}
	}
	if got, err := (*Value)(nil).Decode(); err != nil || !got.IsNull() {
		t.Errorf("nil: %v %v", got, err)
	}
}

func TestValueDecodeRejects(t *testing.T) {
	deep := &Value{Kind: &Value_IntValue{IntValue: 1}}
	for range value.NestingMax + 1 {
		deep = &Value{Kind: &Value_ListValue{ListValue: &ValueList{Values: []*Value{deep}}}}
	}
	long := &Value{Kind: &Value_ListValue{ListValue: &ValueList{Values: make([]*Value, value.ListLenMax+1)}}}
	for name, v := range map[string]*Value{
		"NaN":  {Kind: &Value_FloatValue{FloatValue: math.NaN()}},
		"+Inf": {Kind: &Value_FloatValue{FloatValue: math.Inf(1)}},
		"deep": deep,
		"long": long,
	} {
		if _, err := v.Decode(); !errors.Is(err, value.ErrMalformed) {
			t.Errorf("%s: %v, want value.ErrMalformed", name, err)
		}
	}
}
