package nodeprog

// The parameter metadata of the built-ins, from which docs/programs-reference.md
// is generated (go run ./internal/doctest/progref) and GET /v1/programs'
// descriptions come. A test checks it against the programs: every built-in
// has a Doc, its documented parameters are the ones the program decodes
// (Registry.Params), and every example compiles.

// ProgramDoc documents one program or analysis.
type ProgramDoc struct {
	Name     string
	Analysis bool // a whole-snapshot analysis, not a node program
	// Summary is the one-line description GET /v1/programs shows.
	Summary string
	// About says more: what it computes and how it treats edges.
	About  string
	Params []ParamDoc
	// Result describes the result's JSON shape.
	Result string
	// Example is a params object to run against the demo graph.
	Example string
	// More are further examples, each run and shown like Example.
	More []string
}

// ParamDoc documents one parameter.
type ParamDoc struct {
	Name string
	// Type is the JSON type: string, int, float, bool, handle (a vertex
	// handle, a string), a list of one of them ([]string), filter (a property
	// filter, see Filters), value (a typed value).
	Type     string
	Required bool
	Default  string // empty when Required or when absent means "none"
	Doc      string
}

// Filters documents the property filters that filter-typed parameters take.
const Filters = "A filter is `{\"key\": value, ...}` (every key equal) or `[{\"key\", \"rel\", \"value\"}, ...]` " +
	"with `rel` one of `EQUALS` (default), `LESS`, `GREATER`, `LESS_EQUAL`, `GREATER_EQUAL`, `STARTS_WITH`, " +
	"`ENDS_WITH`, `CONTAINS`. Values are typed (`3` is an int, `3.0` a float, `{\"$datetime\": \"...\"}` a " +
	"datetime) and compared with value.Compare: numbers with numbers, strings with strings; a property of " +
	"another kind never matches. `CONTAINS` is a substring test on a string and membership on a list."

// Doc returns the documentation of a registered program or analysis.
func (r *Registry) Doc(name string) (ProgramDoc, bool) {
	d, ok := r.docs[name]
	return d, ok
}

// Summary is the one-line description of a built-in ("" when unknown).
func Summary(name string) string { return builtinDocs[name].Summary }

// BuiltinDocs returns the documentation of every built-in: node programs,
// then analyses, in the order of the package documentation's tables.
func BuiltinDocs() []ProgramDoc {
	out := make([]ProgramDoc, 0, len(builtinDocOrder))
	for _, n := range builtinDocOrder {
		out = append(out, builtinDocs[n])
	}
	return out
}

var (
	pNode      = ParamDoc{Name: "node", Type: "handle", Required: true, Doc: "the vertex"}
	pSrc       = ParamDoc{Name: "src", Type: "handle", Required: true, Doc: "where the search starts"}
	pDest      = ParamDoc{Name: "dest", Type: "handle", Required: true, Doc: "the destination"}
	pEdgeProps = ParamDoc{Name: "edge_props", Type: "filter", Doc: "follow only edges whose properties match"}
	pTop       = ParamDoc{Name: "top", Type: "int", Default: "0", Doc: "return only the k best vertices (0: see nodes)"}
	pNodes     = ParamDoc{Name: "nodes", Type: "[]handle", Doc: "return only these vertices; with neither top nor nodes, every vertex (up to the results bound)"}
	pNbrs      = ParamDoc{Name: "nbrs", Type: "[]handle", Doc: "only edges to these neighbours"}
	pEdges     = ParamDoc{Name: "edges", Type: "[]string", Doc: "only these edge handles"}
	pSelProps  = ParamDoc{Name: "edge_props", Type: "filter", Doc: "only edges whose properties match"}
	pWeight    = ParamDoc{Name: "weight", Type: "string", Required: true, Doc: "the edge property holding the weight (a number > 0; edges without it are not followed)"}
	pDestOpt   = ParamDoc{Name: "dest", Type: "handle", Doc: "the destination; without it, the costs to every vertex reached"}
	pathResult = "`{\"reachable\": bool, \"hops\": int, \"path\": [handle]}`: the path with the fewest hops (ties: the " +
		"lexicographically smallest handle sequence); unreachable: `{\"reachable\": false, \"hops\": 0, \"path\": []}`"
)

var builtinDocOrder = []string{"get_node", "read_node_props", "get_edges", "count_edges", "reachability",
	"pathless_reachability", "n_hop_reachability", "bfs", "shortest_path", "widest_path", "clustering",
	"triangle_count", "two_neighborhood", "traverse_props", "discover_paths",
	"pagerank", "wcc", "lcc", "triangles"}

// pAggregate is the aggregate parameter of the traversal programs.
var pAggregate = ParamDoc{Name: "aggregate", Type: "aggregate", Doc: "instead of the vertices, `\"count\"`, or `{\"op\": OP, \"prop\": key}` with OP one of sum, avg, min, max, " +
	"or `{\"op\": \"top\", \"prop\": key, \"k\": n}` (k up to 1000) over the vertices' numeric property `prop`"}

// aggregateResult is what an aggregate answers.
const aggregateResult = "`{\"count\"}` (how many vertices), other ops adding `\"with_prop\"` (vertices with a numeric prop) and the op's value " +
	"(`null` without any; top: `[{\"node\", \"value\"}]`, largest first)"

var builtinDocs = map[string]ProgramDoc{
	"get_node": {Name: "get_node", Summary: "a vertex with its properties, aliases and out-edges (TAO obj_get)",
		Params: []ParamDoc{pNode,
			{Name: "props", Type: "bool", Default: "true", Doc: "return its properties"},
			{Name: "edges", Type: "bool", Default: "true", Doc: "return its out-edges (with their properties)"},
			{Name: "aliases", Type: "bool", Default: "true", Doc: "return its aliases"}},
		Result:  "`{\"handle\", \"props\", \"edges\": [{\"handle\", \"src\", \"dst\", \"props\"}], \"aliases\"}` (empty parts left out), or `null` when the vertex does not exist",
		Example: `{"node": "city/oslo", "edges": false}`},
	"read_node_props": {Name: "read_node_props", Summary: "selected properties of a vertex",
		Params:  []ParamDoc{pNode, {Name: "keys", Type: "[]string", Doc: "the property keys to return (empty: all)"}},
		Result:  "`{\"node\", \"props\": {key: value}}`, or `null` when the vertex does not exist",
		Example: `{"node": "person/alice", "keys": ["name", "age", "joined"]}`},
	"get_edges": {Name: "get_edges", Summary: "out-edges of a vertex, filtered by neighbour and edge properties, first N (TAO assoc_get/assoc_range)",
		Params: []ParamDoc{pNode, pNbrs, pEdges, pSelProps,
			{Name: "limit", Type: "int", Default: "0", Doc: "at most this many edges, in the vertex's edge order (0: all)"},
			{Name: "with_props", Type: "bool", Default: "true", Doc: "return the edges' properties"}},
		Result:  "`{\"edges\": [{\"handle\", \"src\", \"dst\", \"props\"}]}`, or `null` when the vertex does not exist",
		Example: `{"node": "person/alice", "edge_props": {"type": "knows"}, "limit": 2}`},
	"count_edges": {Name: "count_edges", Summary: "number of out-edges of a vertex matching a property filter (TAO assoc_count)",
		Params:  []ParamDoc{pNode, pNbrs, pEdges, pSelProps},
		Result:  "`{\"count\": int}`, or `null` when the vertex does not exist",
		Example: `{"node": "person/alice", "edge_props": [{"key": "weight", "rel": "GREATER", "value": 0.6}]}`},
	"reachability": {Name: "reachability", Summary: "whether a destination is reachable, with the number of hops and a path",
		Params: []ParamDoc{pSrc, pDest, pEdgeProps}, Result: pathResult,
		Example: `{"src": "person/alice", "dest": "topic/cooking"}`},
	"pathless_reachability": {Name: "pathless_reachability", Summary: "whether a destination is reachable",
		About:  "Answers as soon as the destination is found, without a path.",
		Params: []ParamDoc{pSrc, pDest, pEdgeProps}, Result: "`{\"reachable\": bool}`",
		Example: `{"src": "company/acme", "dest": "person/alice"}`},
	"n_hop_reachability": {Name: "n_hop_reachability", Summary: "whether a destination is reachable within max_hops",
		Params: []ParamDoc{pSrc, pDest,
			{Name: "max_hops", Type: "int", Required: true, Doc: "the most hops a path may have (0 to 1024)"}, pEdgeProps},
		Result:  "as reachability, within max_hops",
		Example: `{"src": "person/alice", "dest": "city/paris", "max_hops": 2}`},
	"bfs": {Name: "bfs", Summary: "breadth-first search depths from sources, with a depth limit",
		Params: []ParamDoc{pSrc,
			{Name: "max_depth", Type: "int", Doc: "the deepest level visited (absent: no bound)"}, pEdgeProps, pAggregate},
		Result:  "`{\"depths\": {handle: hops}}`, the source at 0; with aggregate " + aggregateResult + " over the vertices reached (the source included)",
		Example: `{"src": "person/alice", "max_depth": 1, "edge_props": {"type": "knows"}}`,
		More:    []string{`{"src": "person/alice", "max_depth": 2, "edge_props": {"type": "knows"}, "aggregate": {"op": "max", "prop": "score"}}`}},
	"shortest_path": {Name: "shortest_path", Summary: "least total weight path to a destination (edge weight property)",
		Params: []ParamDoc{pSrc, pWeight, pDestOpt, pEdgeProps},
		Result: "with dest: `{\"reachable\", \"cost\", \"hops\", \"path\"}` (the least total weight; ties: fewest hops, then the smallest handle sequence; " +
			"unreachable: `cost` null, `path` empty); without: `{\"costs\": {handle: cost}}`",
		Example: `{"src": "person/alice", "dest": "person/bob", "weight": "weight"}`},
	"widest_path": {Name: "widest_path", Summary: "path to a destination maximising the smallest edge weight",
		Params:  []ParamDoc{pSrc, pWeight, pDestOpt, pEdgeProps},
		Result:  "as shortest_path; `cost` is the path's width (its smallest weight), and the source is left out of `costs`",
		Example: `{"src": "person/alice", "dest": "person/bob", "weight": "weight"}`},
	"clustering": {Name: "clustering", Summary: "local clustering coefficient of a vertex",
		About: "Over out-edges only (Weaver's definition): of the vertex's out-neighbours, the share of ordered pairs linked by an edge. " +
			"For the undirected or directed definitions run the lcc analysis.",
		Params:  []ParamDoc{pNode, {Name: "mode", Type: "string", Default: `"out"`, Doc: "only \"out\""}},
		Result:  "`{\"node\", \"coefficient\": float, \"degree\": int, \"links\": int}`, or `null` when the vertex does not exist",
		Example: `{"node": "person/alice"}`},
	"triangle_count": {Name: "triangle_count", Summary: "triangles around given vertices",
		Params:  []ParamDoc{{Name: "nodes", Type: "[]handle", Required: true, Doc: "the vertices whose triangles are counted"}},
		Result:  "`{\"total\": int, \"per_node\": {handle: int}}`",
		Example: `{"nodes": ["person/alice", "person/bob"]}`},
	"two_neighborhood": {Name: "two_neighborhood", Summary: "vertices within two out-hops, with a property value",
		Params: []ParamDoc{pNode,
			{Name: "prop_key", Type: "string", Required: true, Doc: "the property to return (vertices without it are left out)"},
			{Name: "prop_value", Type: "value", Doc: "only vertices whose property equals this"}, pEdgeProps},
		Result:  "`{\"nodes\": [{\"node\", \"value\"}]}`, sorted by handle",
		Example: `{"node": "person/alice", "prop_key": "kind", "prop_value": "city"}`},
	"traverse_props": {Name: "traverse_props", Summary: "path-pattern traversal with per-hop vertex and edge filters",
		About: "Level 0 is src; level i+1 are the out-neighbours of level i over edges matching edge_props[i] whose vertices match node_props[i+1] " +
			"(and have an alias in node_aliases[i+1], when given).",
		Params: []ParamDoc{pSrc,
			{Name: "node_props", Type: "[]filter", Required: true, Doc: "one filter per level, level 0 (src) first"},
			{Name: "node_aliases", Type: "[][]string", Doc: "per level, aliases one of which the vertex must have"},
			{Name: "edge_props", Type: "[]filter", Doc: "one filter per step; one more than the steps collects the last level's out-edges"},
			{Name: "collect_nodes", Type: "bool", Default: "false", Doc: "return the vertices of every level, not only the last"},
			{Name: "collect_edges", Type: "bool", Default: "false", Doc: "return the edges followed"},
			pAggregate},
		Result:  "`{\"nodes\": [handle], \"edges\": [handle]}`; with aggregate " + aggregateResult + " (and `\"edge_count\"` when edges are collected)",
		Example: `{"src": "person/alice", "node_props": [{}, {"kind": "person"}, {"kind": "city"}], "edge_props": [{"type": "knows"}, {"type": "lives_in"}]}`,
		More: []string{`{"src": "person/alice", "node_props": [{}, {}, {}], "edge_props": [{}, {}], "aggregate": "count"}`,
			`{"src": "person/alice", "node_props": [{}, {"kind": "person"}], "edge_props": [{"type": "knows"}], "aggregate": {"op": "top", "prop": "age", "k": 2}}`}},
	"discover_paths": {Name: "discover_paths", Summary: "all simple paths to a destination up to a length, with predicates",
		Params: []ParamDoc{pSrc, pDest,
			{Name: "path_len", Type: "int", Default: "1024", Doc: "the most edges a path may have"},
			{Name: "node_preds", Type: "filter", Doc: "every vertex on a path matches"},
			{Name: "edge_preds", Type: "filter", Doc: "every edge on a path matches"}},
		Result:  "`{\"paths\": {handle: [edge]}, \"count\": int}`: the edges of the paths found, by source vertex, and how many paths",
		Example: `{"src": "person/alice", "dest": "person/frank", "path_len": 2, "edge_preds": {"type": "knows"}}`},
	"pagerank": {Name: "pagerank", Analysis: true, Summary: "PageRank over the whole snapshot",
		Params: []ParamDoc{
			{Name: "damping", Type: "float", Default: "0.85", Doc: "the damping factor, in (0, 1)"},
			{Name: "iterations", Type: "int", Default: "20", Doc: "the most iterations"},
			{Name: "tolerance", Type: "float", Default: "0", Doc: "stop when the L1 change of an iteration is below it (0: run every iteration)"},
			{Name: "directed", Type: "bool", Default: "true", Doc: "follow out-edges only (false: edges both ways)"}, pTop, pNodes},
		Result:  "`{\"iterations\", \"delta\", \"ranks\": {handle: rank}, \"top\": [{\"node\", \"value\"}]}` (`top` with top, `ranks` otherwise)",
		Example: `{"top": 3}`},
	"wcc": {Name: "wcc", Analysis: true, Summary: "weakly connected components over the whole snapshot",
		Params:  []ParamDoc{pTop, pNodes},
		Result:  "`{\"count\", \"largest\", \"labels\": {handle: label}, \"top\": [{\"label\", \"size\"}]}`: a component's label is its smallest handle",
		Example: `{"top": 2}`},
	"lcc": {Name: "lcc", Analysis: true, Summary: "local clustering coefficients over the whole snapshot",
		Params: []ParamDoc{
			{Name: "mode", Type: "string", Default: `"out"`, Doc: "\"out\" (Weaver's, as clustering), \"undirected\" (LDBC Graphalytics on the simple undirected graph) or \"directed\" (in ∪ out neighbours)"},
			pTop, pNodes},
		Result:  "`{\"mode\", \"average\", \"coefficients\": {handle: float}, \"top\": [{\"node\", \"value\"}]}`",
		Example: `{"mode": "undirected", "nodes": ["person/alice", "city/paris"]}`},
	"triangles": {Name: "triangles", Analysis: true, Summary: "triangle count over the whole snapshot",
		About:   "Triangles of the simple undirected graph, each counted once.",
		Params:  []ParamDoc{pTop, pNodes},
		Result:  "`{\"triangles\": int, \"per_node\": {handle: n}, \"top\": [{\"node\", \"value\"}]}`",
		Example: `{"top": 2}`},
}
