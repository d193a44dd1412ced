package nodeprog

import (
	"bytes"
	"encoding/json"
	"maps"
	"math"
	"slices"

	"github.com/weft-db/weft/internal/value"
)

// Aggregates: a traversal program's result sized to the question. Instead
// of every vertex it reaches, a program given "aggregate" returns how many
// there are, or a sum, average, minimum, maximum or the top k of one
// numeric property over them. The gatekeeper reduces the emitted vertices
// as it would for the full result (each counted once), so an aggregate is
// exactly the full result's: count is len(nodes).

// AggregateTopMax bounds an aggregate's k.
const AggregateTopMax = 1000

// aggOps are the aggregate operations; all but count take a prop.
var aggOps = []string{"count", "sum", "avg", "min", "max", "top"}

// AggregateSpec is the "aggregate" parameter: "count", or {"op", "prop",
// "k"}.
type AggregateSpec struct {
	Op   string `json:"op"`
	Prop string `json:"prop"`
	K    int    `json:"k"`
}

// parseAggregate decodes and checks a program's "aggregate" parameter;
// absent or null is nil (the full result).
func parseAggregate(prog string, raw json.RawMessage) (*AggregateSpec, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var a AggregateSpec
	if raw[0] == '"' {
		if err := json.Unmarshal(raw, &a.Op); err != nil {
			return nil, badParam(prog, "aggregate", "%v", err)
		}
	} else if err := DecodeParams(prog, raw, &a); err != nil {
		return nil, badParam(prog, "aggregate", "want \"count\" or {\"op\", \"prop\", \"k\"}: %v", err)
	}
	switch {
	case !slices.Contains(aggOps, a.Op):
		return nil, badParam(prog, "aggregate", "op %q: want one of %v", a.Op, aggOps)
	case a.Op == "count" && (a.Prop != "" || a.K != 0):
		return nil, badParam(prog, "aggregate", "count takes no prop or k")
	case a.Op != "count" && a.Prop == "":
		return nil, badParam(prog, "aggregate", "%s needs prop, the numeric vertex property it reduces", a.Op)
	case a.Op == "top" && (a.K < 1 || a.K > AggregateTopMax):
		return nil, badParam(prog, "aggregate", "top needs k in [1, %d], got %d", AggregateTopMax, a.K)
	case a.Op != "top" && a.K != 0:
		return nil, badParam(prog, "aggregate", "k is top's")
	}
	return &a, nil
}

// valueOf is the property the aggregate reduces, as v holds it, for the
// emit; nil when the aggregate needs none or v lacks a numeric one.
func (a *AggregateSpec) valueOf(v Vertex) *value.Value {
	if a == nil || a.Prop == "" {
		return nil
	}
	x, ok := v.Prop(a.Prop)
	if _, num := x.Number(); !ok || !num {
		return nil
	}
	return &x
}

// result reduces the gathered vertices (handle → the property, nil without
// a numeric one) and, when edges were collected, their count:
// {"count": N[, "edge_count": M]} for count; other ops add "with_prop" (the
// vertices holding a numeric prop) and the op's value (null without any):
// sum (an int while every value is an int and it does not overflow), avg,
// min, max, or top ([{node, value}], largest first, ties by handle).
func (a *AggregateSpec) result(nodes map[string]*value.Value, edges int, withEdges bool) map[string]any {
	out := map[string]any{"count": len(nodes)}
	if withEdges {
		out["edge_count"] = edges
	}
	if a.Op == "count" {
		return out
	}
	var vals []NodeValue
	for _, h := range slices.Sorted(maps.Keys(nodes)) {
		if v := nodes[h]; v != nil {
			vals = append(vals, NodeValue{Node: h, Value: *v})
		}
	}
	out["with_prop"] = len(vals)
	if len(vals) == 0 {
		if a.Op == "top" {
			out["top"] = []NodeValue{}
		} else {
			out[a.Op] = nil
		}
		return out
	}
	num := func(v value.Value) float64 { f, _ := v.Number(); return f }
	switch a.Op {
	case "sum", "avg":
		var isum int64
		ints := true
		var fsum float64
		for _, nv := range vals {
			fsum += num(nv.Value)
			if nv.Value.Kind() != value.Int {
				ints = false
			} else if ints {
				n := nv.Value.Int()
				s := isum + n
				if (n > 0 && s < isum) || (n < 0 && s > isum) {
					ints = false // overflow: the float sum stands
				}
				isum = s
			}
		}
		if a.Op == "avg" {
			out["avg"] = fsum / float64(len(vals))
		} else if ints {
			out["sum"] = isum
		} else {
			out["sum"] = fsum
		}
	case "min", "max":
		best := vals[0].Value
		for _, nv := range vals[1:] {
			if f := num(nv.Value); (a.Op == "min" && f < num(best)) || (a.Op == "max" && f > num(best)) {
				best = nv.Value
			}
		}
		out[a.Op] = best
	case "top":
		slices.SortStableFunc(vals, func(x, y NodeValue) int {
			fx, fy := num(x.Value), num(y.Value)
			switch {
			case fx > fy || (!math.IsNaN(fx) && math.IsNaN(fy)):
				return -1
			case fx < fy || (math.IsNaN(fx) && !math.IsNaN(fy)):
				return 1
			}
			return 0 // handles are already in order
		})
		out["top"] = vals[:min(a.K, len(vals))]
	}
	return out
}
