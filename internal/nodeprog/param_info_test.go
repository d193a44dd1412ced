package nodeprog

import (
	"reflect"
	"testing"
)

// TestParamsDescribeEveryBuiltin checks each built-in lists its parameters,
// with the names Compile decodes.
func TestParamsDescribeEveryBuiltin(t *testing.T) {
	r := Builtins()
	for _, n := range append(r.Programs(), r.Analyses()...) {
		if len(r.Params(n)) == 0 {
			t.Errorf("%s: no params listed", n)
		}
	}
	for _, tc := range []struct {
		name string
		want []Param
	}{
		{"get_node", []Param{{"node", "string"}, {"props", "bool"}, {"edges", "bool"}, {"aliases", "bool"}}},
		{"get_edges", []Param{{"node", "string"}, {"nbrs", "string[]"}, {"edges", "string[]"},
			{"edge_props", "filter"}, {"limit", "int"}, {"with_props", "bool"}}},
		{"pagerank", []Param{{"damping", "number"}, {"iterations", "int"}, {"tolerance", "number"},
			{"directed", "bool"}, {"top", "int"}, {"nodes", "string[]"}}},
		{"traverse_props", nil}, // checked below for its filter lists
		{"no_such_program", nil},
	} {
		got := r.Params(tc.name)
		if tc.want != nil && !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: params %v, want %v", tc.name, got, tc.want)
		}
	}
	if got := r.Params("no_such_program"); got != nil {
		t.Errorf("unknown program: params %v, want nil", got)
	}
	found := false
	for _, p := range r.Params("traverse_props") {
		if p.Name == "node_props" {
			found = p.Type == "filter[]"
		}
	}
	if !found {
		t.Errorf("traverse_props: node_props not listed as filter[]: %v", r.Params("traverse_props"))
	}
}
