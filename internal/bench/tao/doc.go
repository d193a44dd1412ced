// Package tao runs Facebook's TAO read/write mix (Bronson et al., ATC'13),
// as Weaver's soc_net_bench.py runs it, over a social graph with LinkBench's
// out-degree distribution and access skew (`weft bench tao`,
// docs/benchmarks.md, "TAO"). Weaver reports 10.9× Titan's throughput on
// this mix (VLDB'16); the suite measures Weft's throughput, latency per
// operation, memory per edge and Kronos calls per operation on it.
//
// It generates the graph (graph.go, from the embedded thinned copy of
// LinkBench's Distribution.dat in nlinks.go, or --distribution), loads it
// through engine commits, then runs the mix — reads 99.8% (get_edges
// 59.4%, count_edges 11.7%, get_node 28.9%), writes 0.2% (create_edge 80%,
// delete_edge 20%) — from closed-loop clients against the embedded engine
// in-process, or through the gRPC server on loopback and the Go client
// (--mode net).
//
//	weft bench tao --quick                          # 20k vertices, 3 s
//	weft bench tao --duration 20s                   # 1M vertices, in-process
//	weft bench tao --mode net --mix 75
//	weft bench tao --duration 20s --sweep-clients 16,32,128
//
// Results go to <mix>-<mode>[-quick].json with its latency and throughput
// plots in --out (bench/results/tao). The workload's pieces — Graph,
// LoadGraph, Mix, Backend, Worker, RunClients, Summarise — are exported for
// internal/bench/scale, which runs the same mix over a cluster of
// processes. Workers run concurrently, one goroutine each, and each keeps
// its own records, merged by Summarise after the run; Run itself measures
// one run after another.
package tao
