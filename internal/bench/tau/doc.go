// Package tau measures coordination per operation against the gatekeepers'
// clock announce period τ: Figure 5.11 of the Weaver dissertation, where
// announce messages per query fall and Kronos calls per query rise as τ
// grows from 10 µs to 1 s. For each τ it runs a fresh cluster (gatekeepers
// and shards, each behind its own gRPC server on loopback, in this process;
// in-process Kronos, in-memory store), drives get_node programs and
// create_edge transactions through random gatekeepers from concurrent
// clients, and counts gatekeeper clock announcements and Kronos calls per
// operation (docs/cluster.md, "Coordination overhead").
//
//	weft bench tau                                  # τ = 10µs … 1s, 3 s each
//	weft bench tau --taus 100us,10ms --duration 10s
//
// Results go to tau.json, tau.png and tau-latency.png in --out
// (bench/results/cluster). Run measures one τ after another; two runs at
// once would distort each other's figures.
package tau
