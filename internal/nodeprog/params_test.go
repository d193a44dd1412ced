package nodeprog_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/weft-db/weft/internal/nodeprog"
	"github.com/weft-db/weft/internal/value"
)

// TestBadParams: every bad request is refused up front with ErrBadParams
// naming the field (or ErrUnknownProgram), before anything runs.
func TestBadParams(t *testing.T) {
	for _, tc := range []struct {
		prog, params, field, msg string
	}{
		{"get_node", `{}`, "node", "required"},
		{"get_node", `{"node":"a","colour":1}`, "colour", "unknown field"},
		{"get_node", `{"node":5}`, "node", "want string"},
		{"get_node", `{"node":"a"} {}`, "", "trailing data"},
		{"get_node", `[1]`, "", "JSON object"},
		{"get_node", `{"node":`, "", "JSON"},
		{"get_node", `{"node":"a","props":"yes"}`, "props", "want bool"},
		{"read_node_props", `{"node":"a","keys":["x",""]}`, "keys[1]", "empty"},
		{"get_edges", `{"node":"a","limit":-1}`, "limit", ">= 0"},
		{"get_edges", `{"node":"a","edge_props":[{"key":"w","rel":"ABOUT","value":1}]}`, "edge_props[0].rel", "unknown relation"},
		{"get_edges", `{"node":"a","edge_props":[{"key":"","value":1}]}`, "edge_props[0].key", "required"},
		{"get_edges", `{"node":"a","edge_props":[{"key":"w"}]}`, "edge_props[0].value", "required"},
		{"get_edges", `{"node":"a","edge_props":[{"key":"w","rel":"starts_with","value":3}]}`, "edge_props[0].value", "needs a string"},
		{"get_edges", `{"node":"a","edge_props":[{"key":"w","value":{"x":1}}]}`, "edge_props[0].value", "not property values"},
		{"get_edges", `{"node":"a","edge_props":7}`, "", "a filter is"},
		{"count_edges", `{"node":"a","nbrs":[""]}`, "nbrs[0]", "empty handle"},
		{"reachability", `{"src":"a"}`, "dest", "required"},
		{"reachability", `{"src":"a","dest":"b","max_hops":3}`, "max_hops", "n_hop_reachability"},
		{"n_hop_reachability", `{"src":"a","dest":"b"}`, "max_hops", "required"},
		{"n_hop_reachability", `{"src":"a","dest":"b","max_hops":-1}`, "max_hops", "must be in"},
		{"pathless_reachability", `{"dest":"b"}`, "src", "required"},
		{"bfs", `{"src":"a","max_depth":-2}`, "max_depth", ">= 0"},
		{"shortest_path", `{"src":"a"}`, "weight", "required"},
		{"widest_path", `{"src":"a","weight":"w","edge_props":{"k":null}}`, "edge_props[0].value", "required"},
		{"clustering", `{"node":"a","mode":"undirected"}`, "mode", "lcc analysis"},
		{"clustering", `{"node":"a","mode":"sideways"}`, "mode", "unknown mode"},
		{"triangle_count", `{}`, "nodes", "triangles analysis"},
		{"two_neighborhood", `{"node":"a"}`, "prop_key", "required"},
		{"two_neighborhood", `{"node":"a","prop_key":"k","prop_value":{"no":1}}`, "prop_value", "not property values"},
		{"traverse_props", `{"src":"a"}`, "node_props", "required"},
		{"traverse_props", `{"src":"a","node_props":[{},{}]}`, "edge_props", "want one per step"},
		{"traverse_props", `{"src":"a","node_props":[{},{}],"edge_props":[{}],"node_aliases":[[]]}`, "node_aliases", "one per level"},
		{"traverse_props", `{"src":"a","node_props":[{},{"k":[1,{"a":2}]}],"edge_props":[{}]}`, "node_props[1][0].value", "not property values"},
		{"traverse_props", `{"src":"a","node_props":[{}],"aggregate":"median"}`, "aggregate", `op "median": want one of`},
		{"traverse_props", `{"src":"a","node_props":[{}],"aggregate":{"op":"count","prop":"x"}}`, "aggregate", "count takes no prop"},
		{"traverse_props", `{"src":"a","node_props":[{}],"aggregate":{"op":"sum"}}`, "aggregate", "sum needs prop"},
		{"traverse_props", `{"src":"a","node_props":[{}],"aggregate":{"op":"top","prop":"x"}}`, "aggregate", "top needs k in [1, 1000]"},
		{"traverse_props", `{"src":"a","node_props":[{}],"aggregate":{"op":"max","prop":"x","k":3}}`, "aggregate", "k is top's"},
		{"traverse_props", `{"src":"a","node_props":[{}],"aggregate":{"op":"sum","prop":"x","by":1}}`, "aggregate", "unknown field"},
		{"traverse_props", `{"src":"a","node_props":[{}],"aggregate":7}`, "aggregate", "want \"count\" or"},
		{"discover_paths", `{"src":"a","dest":"b","path_len":-1}`, "path_len", "must be in"},
		{"discover_paths", `{"src":"a","dest":"b","node_preds":[{"key":"k","rel":"LESS","value":1,"extra":2}]}`, "", "unknown field"},
		{"pagerank", `{"damping":1}`, "damping", "[0, 1)"},
		{"pagerank", `{"iterations":0}`, "iterations", "must be in"},
		{"pagerank", `{"tolerance":-1}`, "tolerance", ">= 0"},
		{"wcc", `{"top":-1}`, "top", "must be in"},
		{"lcc", `{"mode":"both"}`, "mode", "unknown mode"},
		{"triangles", `{"nodes":[""]}`, "nodes[0]", "empty handle"},
	} {
		var err error
		if _, isAnalysis := reg.Analysis(tc.prog); isAnalysis {
			_, err = reg.CompileAnalysis(tc.prog, []byte(tc.params))
		} else {
			_, err = reg.Compile(tc.prog, []byte(tc.params))
		}
		if !errors.Is(err, nodeprog.ErrBadParams) {
			t.Errorf("%s %s: err = %v, want ErrBadParams", tc.prog, tc.params, err)
			continue
		}
		var pe *nodeprog.ParamError
		if !errors.As(err, &pe) || pe.Field != tc.field || pe.Program != tc.prog || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s %s: %v (field %q); want field %q and %q in the message", tc.prog, tc.params, err, pe.Field, tc.field, tc.msg)
		}
	}
}

// TestUnknownProgram names what was asked for, and tells programs from
// analyses.
func TestUnknownProgram(t *testing.T) {
	for name, want := range map[string]string{"frobnicate": `"frobnicate"`, "pagerank": "analysis"} {
		if _, err := reg.Compile(name, nil); !errors.Is(err, nodeprog.ErrUnknownProgram) || !strings.Contains(err.Error(), want) {
			t.Errorf("Compile(%s): %v", name, err)
		}
	}
	if _, err := reg.CompileAnalysis("bfs", nil); !errors.Is(err, nodeprog.ErrUnknownProgram) || !strings.Contains(err.Error(), "node program") {
		t.Errorf("CompileAnalysis(bfs): %v", err)
	}
	if _, _, err := nodeprog.NewCoordinator(reg, 1, "nope", nil, func(string) int { return 0 }, nodeprog.CoordinatorConfig{}); !errors.Is(err, nodeprog.ErrUnknownProgram) {
		t.Errorf("NewCoordinator: %v", err)
	}
}

// TestRegistry lists the built-ins and refuses a taken name.
func TestRegistry(t *testing.T) {
	want := "bfs clustering count_edges discover_paths get_edges get_node n_hop_reachability pathless_reachability reachability read_node_props shortest_path traverse_props triangle_count two_neighborhood widest_path"
	if got := strings.Join(reg.Programs(), " "); got != want {
		t.Fatalf("programs: %s", got)
	}
	if got := strings.Join(reg.Analyses(), " "); got != "lcc pagerank triangles wcc" {
		t.Fatalf("analyses: %s", got)
	}
	p, _ := reg.Program("bfs")
	if err := nodeprog.Builtins().Register(p); err == nil {
		t.Fatal("registered bfs twice")
	}
}

// TestPredicates: relations compare typed values.
func TestPredicates(t *testing.T) {
	day := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		rel  nodeprog.Relation
		prop value.Value
		arg  value.Value
		want bool
	}{
		{nodeprog.Equals, value.I64(3), value.F64(3), true},
		{nodeprog.Equals, value.Str("3"), value.I64(3), false}, // no string/number coercion
		{nodeprog.Less, value.I64(9), value.I64(10), true},     // numeric, not "9" > "10"
		{nodeprog.Less, value.Str("9"), value.Str("10"), false},
		{nodeprog.Greater, value.F64(2.5), value.I64(2), true},
		{nodeprog.LessEqual, value.I64(2), value.I64(2), true},
		{nodeprog.GreaterEqual, value.I64(1), value.I64(2), false},
		{nodeprog.Less, value.Str("a"), value.I64(1), false}, // incomparable
		{nodeprog.Less, value.Time(day), value.Time(day.Add(time.Hour)), true},
		{nodeprog.Greater, value.Boolean(true), value.Boolean(false), true},
		{nodeprog.StartsWith, value.Str("hercules"), value.Str("herc"), true},
		{nodeprog.StartsWith, value.I64(123), value.Str("1"), false},
		{nodeprog.EndsWith, value.Str("hercules"), value.Str("les"), true},
		{nodeprog.Contains, value.Str("hercules"), value.Str("rcu"), true},
		{nodeprog.Contains, value.ListOf(value.I64(1), value.I64(2)), value.F64(2), true},
		{nodeprog.Contains, value.ListOf(value.Str("a")), value.Str("b"), false},
		{nodeprog.Contains, value.I64(12), value.I64(1), false},
	} {
		p := nodeprog.Predicate{Key: "k", Rel: tc.rel, Value: tc.arg}
		if got := p.Match(tc.prop); got != tc.want {
			t.Errorf("%v %v %v = %v, want %v", tc.prop, tc.rel, tc.arg, got, tc.want)
		}
	}
}

// TestFilterForms: the object and list forms of a filter are the same
// filter; a missing property fails its predicate.
func TestFilterForms(t *testing.T) {
	g := godsGraph()
	obj := runAll(t, g, "get_edges", `{"node":"hercules","edge_props":{"label":"battled","time":2},"with_props":false}`)
	list := runAll(t, g, "get_edges", `{"node":"hercules","edge_props":[{"key":"time","value":2},{"key":"label","rel":"equals","value":"battled"}],"with_props":false}`)
	jsonEq(t, obj, mustJSON(list))
	jsonEq(t, obj, `{"edges":[{"handle":"e11","src":"hercules","dst":"hydra"}]}`)
	none := runAll(t, g, "get_edges", `{"node":"jupiter","edge_props":[{"key":"time","rel":"GREATER","value":0}]}`)
	jsonEq(t, none, `{"edges":[]}`)
}
