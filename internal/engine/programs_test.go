package engine

import "testing"

// TestProgramsListKindsAndParams checks Programs names every node program
// and analysis with its kind and its params from the registry.
func TestProgramsListKindsAndParams(t *testing.T) {
	db := openTest(t, memConfig())
	byName := map[string]ProgramInfo{}
	for _, p := range db.Programs() {
		byName[p.Name] = p
		if p.Description == "" || len(p.Params) == 0 {
			t.Errorf("%s: description %q, params %v", p.Name, p.Description, p.Params)
		}
	}
	for name, kind := range map[string]string{"get_node": "program", "get_edges": "program", "bfs": "program", "pagerank": "analysis", "wcc": "analysis"} {
		if got := byName[name].Kind; got != kind {
			t.Errorf("%s: kind %q, want %q", name, got, kind)
		}
	}
	if ps := byName["get_edges"].Params; len(ps) < 2 || ps[0] != (ProgramParam{Name: "node", Type: "string"}) || ps[1] != (ProgramParam{Name: "nbrs", Type: "string[]"}) {
		t.Errorf("get_edges params %v", ps)
	}
}
