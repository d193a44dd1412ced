package engine

// programDoc describes the built-in programs for Programs(); docs/api.md has
// their parameters.
var programDoc = map[string]string{
	"get_node":              "a vertex with its properties, aliases and out-edges (TAO obj_get)",
	"read_node_props":       "selected properties of a vertex",
	"get_edges":             "out-edges of a vertex, filtered by neighbour and edge properties, first N (TAO assoc_get/assoc_range)",
	"count_edges":           "number of out-edges of a vertex matching a property filter (TAO assoc_count)",
	"reachability":          "whether a destination is reachable, with the number of hops and a path",
	"pathless_reachability": "whether a destination is reachable",
	"n_hop_reachability":    "whether a destination is reachable within max_hops",
	"shortest_path":         "least total weight path to a destination (edge weight property)",
	"widest_path":           "path to a destination maximising the smallest edge weight",
	"clustering":            "local clustering coefficient of a vertex",
	"two_neighborhood":      "vertices within two out-hops, with a property value",
	"traverse_props":        "path-pattern traversal with per-hop vertex and edge filters",
	"discover_paths":        "all simple paths to a destination up to a length, with predicates",
	"triangle_count":        "triangles around given vertices",
	"bfs":                   "breadth-first search depths from sources, with a depth limit",
	"pagerank":              "PageRank over the whole snapshot",
	"wcc":                   "weakly connected components over the whole snapshot",
	"lcc":                   "local clustering coefficients over the whole snapshot",
	"triangles":             "triangle count over the whole snapshot",
}
