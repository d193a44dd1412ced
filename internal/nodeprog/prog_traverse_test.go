package nodeprog_test

import (
	"fmt"
	"testing"

	"github.com/weft-db/weft/internal/nodeprog"
)

func TestTraverseProps(t *testing.T) {
	g := godsGraph()
	for _, tc := range []struct{ params, want string }{
		// hercules' father, if a god
		{`{"src":"hercules","node_props":[{},{"type":"god"}],"edge_props":[{"label":"father"}]}`,
			`{"nodes":["jupiter"],"edges":[]}`},
		// his father's brothers, collecting the whole match
		{`{"src":"hercules","node_props":[{},{},{}],"edge_props":[{"label":"father"},{"label":"brother"}],"collect_nodes":true,"collect_edges":true}`,
			`{"nodes":["hercules","jupiter","neptune","pluto"],"edges":["e3","e4","e8"]}`},
		// a trailing edge filter collects the last level's edges
		{`{"src":"hercules","node_props":[{},{}],"edge_props":[{"label":"father"},{"label":"lives"}]}`,
			`{"nodes":["jupiter"],"edges":["e2"]}`},
		// level filters with typed predicates: old gods' brothers' homes
		{`{"src":"jupiter","node_props":[[{"key":"age","rel":"GREATER","value":4999}],[{"key":"age","rel":"LESS","value":4600}],{}],"edge_props":[{"label":"brother"},{"label":"lives"}]}`,
			`{"nodes":["sea","tartarus"],"edges":[]}`},
		// aliases: every listed alias is required
		{`{"src":"hercules","node_props":[{},{}],"node_aliases":[["heracles"],["zeus"]],"edge_props":[{}]}`,
			`{"nodes":["jupiter"],"edges":[]}`},
		{`{"src":"hercules","node_props":[{},{}],"node_aliases":[["heracles","alcides"],[]],"edge_props":[{}]}`,
			`{"nodes":[],"edges":[]}`},
		// the source must match level 0
		{`{"src":"hercules","node_props":[{"type":"god"}]}`, `{"nodes":[],"edges":[]}`},
		// a vertex reached at two levels is matched at each: pluto is a
		// brother of jupiter (level 1) and of neptune (level 2)
		{`{"src":"jupiter","node_props":[{},{},{}],"edge_props":[{"label":"brother"},{"label":"brother"}]}`,
			`{"nodes":["jupiter","neptune","pluto"],"edges":[]}`},
	} {
		jsonEq(t, runAll(t, g, "traverse_props", tc.params), tc.want)
	}
}

// TestTraverseAggregate: an aggregate is the full result reduced, each
// vertex once, on every layout of shards.
func TestTraverseAggregate(t *testing.T) {
	g := godsGraph()
	// hercules, his father jupiter and jupiter's brothers neptune and pluto
	// (ages 30, 5000, 4500, 4000), and the three edges followed
	whole := `"src":"hercules","node_props":[{},{},{}],"edge_props":[{"label":"father"},{"label":"brother"}],"collect_nodes":true,"collect_edges":true`
	// the monsters hercules battled: no ages
	monsters := `"src":"hercules","node_props":[{},{"type":"monster"}],"edge_props":[{"label":"battled"}]`
	for _, tc := range []struct{ params, want string }{
		{`{` + whole + `,"aggregate":"count"}`, `{"count":4,"edge_count":3}`},
		{`{` + whole + `,"aggregate":{"op":"count"}}`, `{"count":4,"edge_count":3}`},
		{`{` + whole + `,"aggregate":{"op":"sum","prop":"age"}}`, `{"count":4,"edge_count":3,"with_prop":4,"sum":13530}`},
		{`{` + whole + `,"aggregate":{"op":"avg","prop":"age"}}`, `{"count":4,"edge_count":3,"with_prop":4,"avg":3382.5}`},
		{`{` + whole + `,"aggregate":{"op":"min","prop":"age"}}`, `{"count":4,"edge_count":3,"with_prop":4,"min":30}`},
		{`{` + whole + `,"aggregate":{"op":"max","prop":"age"}}`, `{"count":4,"edge_count":3,"with_prop":4,"max":5000}`},
		{`{` + whole + `,"aggregate":{"op":"top","prop":"age","k":2}}`,
			`{"count":4,"edge_count":3,"with_prop":4,"top":[{"node":"jupiter","value":5000},{"node":"neptune","value":4500}]}`},
		{`{` + whole + `,"aggregate":{"op":"sum","prop":"name"}}`, `{"count":4,"edge_count":3,"with_prop":0,"sum":null}`},
		{`{` + monsters + `,"aggregate":"count"}`, `{"count":3}`},
		{`{` + monsters + `,"aggregate":{"op":"max","prop":"age"}}`, `{"count":3,"with_prop":0,"max":null}`},
		{`{` + monsters + `,"aggregate":{"op":"top","prop":"age","k":5}}`, `{"count":3,"with_prop":0,"top":[]}`},
		// pluto at levels 1 and 2, counted once
		{`{"src":"jupiter","node_props":[{},{},{}],"edge_props":[{"label":"brother"},{"label":"brother"}],"aggregate":"count"}`, `{"count":3}`},
		{`{"src":"nobody","node_props":[{}],"aggregate":"count"}`, `{"count":0}`},
	} {
		jsonEq(t, runAll(t, g, "traverse_props", tc.params), tc.want)
	}
}

// TestBFSAggregate: bfs' aggregates reduce the vertices it reaches, the
// source included, each once.
func TestBFSAggregate(t *testing.T) {
	g := godsGraph()
	ages := map[string]int{"saturn": 10000, "jupiter": 5000, "neptune": 4500, "pluto": 4000, "hercules": 30, "alcmene": 45}
	for _, q := range []string{`"src":"hercules","max_depth":2`, `"src":"jupiter","edge_props":{"label":"brother"}`,
		`"src":"hercules","edge_props":[{"key":"label","rel":"STARTS_WITH","value":"b"}]`, `"src":"sky"`} {
		// The expected reductions, from the depths bfs answers without aggregate.
		depths := runAll(t, g, "bfs", `{`+q+`}`).(nodeprog.Depths).Depths
		sum, with := 0, 0
		for v := range depths {
			if a, ok := ages[v]; ok {
				sum, with = sum+a, with+1
			}
		}
		jsonEq(t, runAll(t, g, "bfs", `{`+q+`,"aggregate":"count"}`), fmt.Sprintf(`{"count":%d}`, len(depths)))
		want := fmt.Sprintf(`{"count":%d,"with_prop":%d,"sum":%d}`, len(depths), with, sum)
		if with == 0 {
			want = fmt.Sprintf(`{"count":%d,"with_prop":0,"sum":null}`, len(depths))
		}
		jsonEq(t, runAll(t, g, "bfs", `{`+q+`,"aggregate":{"op":"sum","prop":"age"}}`), want)
	}
	jsonEq(t, runAll(t, g, "bfs", `{"src":"jupiter","edge_props":{"label":"brother"},"aggregate":{"op":"top","prop":"age","k":1}}`),
		`{"count":3,"with_prop":3,"top":[{"node":"jupiter","value":5000}]}`)
}

func TestDiscoverPaths(t *testing.T) {
	g := godsGraph()
	res := runAll(t, g, "discover_paths", `{"src":"hercules","dest":"tartarus"}`).(nodeprog.Paths)
	if res.Count != 5 {
		t.Fatalf("%d paths, want 5: %+v", res.Count, res.Paths)
	}
	jsonEq(t, runAll(t, g, "discover_paths", `{"src":"hercules","dest":"tartarus","path_len":3}`), `{"count":2,"paths":{
		"hercules":[{"handle":"e12","src":"hercules","dst":"cerberus"},{"handle":"e8","src":"hercules","dst":"jupiter"}],
		"cerberus":[{"handle":"e17","src":"cerberus","dst":"tartarus"}],
		"jupiter":[{"handle":"e4","src":"jupiter","dst":"pluto"}],
		"pluto":[{"handle":"e15","src":"pluto","dst":"tartarus"}],
		"tartarus":[]}}`)
	// node predicates hold on every vertex of a path, endpoints included
	jsonEq(t, runAll(t, g, "discover_paths", `{"src":"hercules","dest":"tartarus","node_preds":[{"key":"name","rel":"CONTAINS","value":"r"}]}`), `{"count":1,"paths":{
		"hercules":[{"handle":"e12","src":"hercules","dst":"cerberus"}],
		"cerberus":[{"handle":"e17","src":"cerberus","dst":"tartarus"}],
		"tartarus":[]}}`)
	jsonEq(t, runAll(t, g, "discover_paths", `{"src":"hercules","dest":"tartarus","edge_preds":{"label":"battled"}}`), `{"count":0,"paths":{}}`)
	jsonEq(t, runAll(t, g, "discover_paths", `{"src":"sky","dest":"sky"}`), `{"count":1,"paths":{"sky":[]}}`)
}
