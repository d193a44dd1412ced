// Package twohop is `weft bench twohop` (docs/benchmarks.md, "Two-hop"):
// the query a user comparing graph databases tries first — "how many
// distinct c with v→b→c" for random v — on a seeded random directed graph,
// through each of Weft's interfaces, with every answer checked against the
// generator.
//
// It starts `weft serve` as its own process (so the server's CPU per query
// is read from /proc, apart from the clients'), loads the graph through the
// Go client in batched transactions, then, round after round, runs the same
// query sequence through every interface and client count in turn
// (interleaved, so a noisy machine affects all alike): the Go client over
// gRPC and a Go HTTP/JSON client, each asking traverse_props for the handles
// (and counting them) or for the count alone (its aggregate), and, when a
// Python with the weft package is at hand, the Python client over HTTP.
// Each cell reports queries per second, p50/p99 latency and server CPU per
// query; the medians over rounds go to twohop[-quick].json with PNG plots.
package twohop
