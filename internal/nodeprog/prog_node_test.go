package nodeprog_test

import "testing"

// TAO's obj_get, assoc_get, assoc_range and assoc_count on the graph of the
// gods.

func TestGetNode(t *testing.T) {
	g := godsGraph()
	res := runAll(t, g, "get_node", `{"node":"jupiter"}`)
	jsonEq(t, res, `{"handle":"jupiter","props":{"age":5000,"name":"jupiter","type":"god"},
		"edges":[
			{"handle":"e1","src":"jupiter","dst":"saturn","props":{"label":"father"}},
			{"handle":"e2","src":"jupiter","dst":"sky","props":{"label":"lives","reason":"loves fresh breezes"}},
			{"handle":"e3","src":"jupiter","dst":"neptune","props":{"label":"brother"}},
			{"handle":"e4","src":"jupiter","dst":"pluto","props":{"label":"brother"}}],
		"aliases":["zeus"]}`)
	res = runAll(t, g, "get_node", `{"node":"jupiter","props":false,"edges":false}`)
	jsonEq(t, res, `{"handle":"jupiter","aliases":["zeus"]}`)
	if res := runAll(t, g, "get_node", `{"node":"zeus"}`); res != nil {
		t.Fatalf("an alias is not a handle: %v", res)
	}
}

func TestReadNodeProps(t *testing.T) {
	g := godsGraph()
	jsonEq(t, runAll(t, g, "read_node_props", `{"node":"hercules","keys":["age","weight"]}`), `{"node":"hercules","props":{"age":30}}`)
	jsonEq(t, runAll(t, g, "read_node_props", `{"node":"sky"}`), `{"node":"sky","props":{"name":"sky","type":"location"}}`)
	if res := runAll(t, g, "read_node_props", `{"node":"minerva"}`); res != nil {
		t.Fatalf("missing vertex: %v", res)
	}
}

func TestGetEdges(t *testing.T) {
	g := godsGraph()
	for _, tc := range []struct{ params, want string }{
		// assoc_get: edges to given neighbours
		{`{"node":"hercules","nbrs":["hydra","alcmene","zeus"],"with_props":false}`,
			`{"edges":[{"handle":"e9","src":"hercules","dst":"alcmene"},{"handle":"e11","src":"hercules","dst":"hydra"}]}`},
		// by edge handle
		{`{"node":"hercules","edges":["e12","e1"],"with_props":false}`,
			`{"edges":[{"handle":"e12","src":"hercules","dst":"cerberus"}]}`},
		// assoc_range: the first N matching, in edge order
		{`{"node":"hercules","edge_props":{"label":"battled"},"limit":2,"with_props":false}`,
			`{"edges":[{"handle":"e10","src":"hercules","dst":"nemean"},{"handle":"e11","src":"hercules","dst":"hydra"}]}`},
		// typed predicates: time is an int, compared numerically with a float
		{`{"node":"hercules","edge_props":[{"key":"time","rel":"GREATER_EQUAL","value":2.0}]}`,
			`{"edges":[{"handle":"e11","src":"hercules","dst":"hydra","props":{"label":"battled","time":2}},
			           {"handle":"e12","src":"hercules","dst":"cerberus","props":{"label":"battled","time":12}}]}`},
		{`{"node":"hercules","edge_props":[{"key":"label","rel":"STARTS_WITH","value":"m"}],"with_props":false}`,
			`{"edges":[{"handle":"e9","src":"hercules","dst":"alcmene"}]}`},
		{`{"node":"sea"}`, `{"edges":[]}`},
	} {
		jsonEq(t, runAll(t, g, "get_edges", tc.params), tc.want)
	}
	if res := runAll(t, g, "get_edges", `{"node":"nobody"}`); res != nil {
		t.Fatalf("missing vertex: %v", res)
	}
}

func TestCountEdges(t *testing.T) {
	g := godsGraph()
	for params, want := range map[string]string{
		`{"node":"hercules"}`: `{"count":5}`,
		`{"node":"hercules","edge_props":{"label":"battled"}}`:                      `{"count":3}`,
		`{"node":"hercules","edge_props":[{"key":"time","rel":"LESS","value":10}]}`: `{"count":2}`,
		`{"node":"pluto","nbrs":["jupiter","neptune"]}`:                             `{"count":2}`,
		`{"node":"tartarus"}`: `{"count":0}`,
	} {
		jsonEq(t, runAll(t, g, "count_edges", params), want)
	}
}
