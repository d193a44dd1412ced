// Package dql runs the Dgraph report's film-data experiment
// (002_540afcce1dbf62cd.txt, §3 "Loader" and §4.1–4.2) on Weft
// (`weft bench dql`, docs/dgraph.md, "Benchmarks"). It loads Dgraph's film
// N-Quads, schema first, into a fresh engine and measures the load rate
// against the report's (21 million edges in 25 minutes), then runs the
// report's two 2-hop queries (Queries, adapted to the film data's
// predicates) from 1 to 100 concurrent clients, a cell of fixed duration per
// (query, clients), through Dgraph's HTTP API on loopback (POST /query, the
// handler weft serve --dgraph-http runs) or the DQL executor in-process.
// Throughput and latency are plotted against clients beside the report's
// 1-node, 2-core figures.
//
// The same cells run on a cluster in this process (Options.Cluster: reads
// cross the network, internal calls counted at the shards) or against an
// external server (Options.Target). CompareLoads measures only the load
// rate of the direct bulk load, the transactional bulk load and the online
// load (--bulk-load).
//
//	weft bench dql --quick                    # first 5,000 lines, 300 ms cells
//	weft bench dql                            # all 200k lines, 3 s cells
//	weft bench dql --mode inproc
//	weft bench dql --quick --placement predicate
//	weft bench dql --bulk-load 3              # the load rates only
//
// Results go to film-<mode>-<placement>[-quick].json and its PNGs in --out.
// Run measures one cell after another; two runs at once would distort each
// other's figures.
package dql
