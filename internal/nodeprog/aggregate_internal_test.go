package nodeprog

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/weft-db/weft/internal/value"
)

// TestAggregateSums: a sum of ints stays an int until it would overflow;
// with a float among the values it is a float.
func TestAggregateSums(t *testing.T) {
	v := func(x value.Value) *value.Value { return &x }
	for _, tc := range []struct {
		nodes map[string]*value.Value
		want  string
	}{
		{map[string]*value.Value{"a": v(value.I64(2)), "b": v(value.I64(-5)), "c": nil}, `{"count":3,"sum":-3,"with_prop":2}`},
		{map[string]*value.Value{"a": v(value.I64(2)), "b": v(value.F64(0.5))}, `{"count":2,"sum":2.5,"with_prop":2}`},
		{map[string]*value.Value{"a": v(value.I64(math.MaxInt64)), "b": v(value.I64(1))}, `{"count":2,"sum":9223372036854776000,"with_prop":2}`},
	} {
		got, err := json.Marshal((&AggregateSpec{Op: "sum", Prop: "p"}).result(tc.nodes, 0, false))
		if err != nil || string(got) != tc.want {
			t.Errorf("sum of %v: %s (%v), want %s", tc.nodes, got, err, tc.want)
		}
	}
}
