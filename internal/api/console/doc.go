// Package console serves Weft's web console: the single-page application
// built from web/console (npm, esbuild, Cytoscape.js) into dist/ and
// embedded here with go:embed, so the binary serves it with no network and
// `go build` needs no npm.
//
// Paths: / and /console/ answer index.html (no-cache); /console/assets/NAME
// answers a bundled file, its name carrying its content hash, cached for a
// year as immutable; /console/config.json says which optional faces the
// console can reach; GET /console/cluster.json answers the cluster view
// (Options.Cluster: members, slots, epochs, with each gatekeeper's
// request, latency and Kronos counters read from its /metrics); POST /console/dgraph/query forwards DQL to the Dgraph
// face's HTTP API when that face runs (Options.DgraphHTTP). Nothing here
// touches the JSON API's paths.
//
// The committed dist/ is checked against a fresh build of web/console by
// TestDistUpToDate. A Handler is safe for concurrent use.
package console
