// Package kronos reproduces the micro-benchmarks of the Kronos paper
// (EuroSys'14 §4.2) against Weft's Kronos (`weft bench kronos`,
// docs/benchmarks.md): event-creation latency over gRPC (create, with and
// without an fsync per commit), query_order throughput on Erdős–Rényi graphs
// of growing density (query, er.go), assign_order cost on a growing graph
// (assign), memory per event (memory) and strict garbage-collection time
// against chain length (gc). Everything but create drives the pure core
// (internal/kronos) in-process, one call at a time, so the figures are the
// core's own cost, without RPC or replication. kronos_bench_test.go has the
// same costs as Go benchmarks.
//
//	weft bench kronos                          # all five, full size
//	weft bench kronos --quick --out /tmp/k     # smoke run
//	weft bench kronos --only query,gc
//	go test ./internal/bench/kronos -run '^$' -bench . -benchmem
//
// Each sub-benchmark writes NAME.json and its PNG plots to --out
// (bench/results/kronos). Workloads are seeded, so a run with the same seed
// builds the same graphs and asks the same questions; only the timings
// differ. An interval during which the OS took the benchmark's thread off
// the CPU is timed by the thread's CPU clock instead of the wall clock
// (stopwatch.go), so a busy machine distorts the in-process figures less.
//
// Nothing here is safe for concurrent use: Run runs the sub-benchmarks one
// after another on the calling goroutine, which keeps them from disturbing
// each other's timings.
package kronos
