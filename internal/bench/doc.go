// Package bench runs Weft's micro-benchmarks and records their results as
// JSON documents and PNG plots (`weft bench`; see docs/benchmarks.md).
//
// The Kronos suite (kronos.go) reproduces the micro-benchmarks of the Kronos
// paper (EuroSys'14 §4.2): event-creation latency over gRPC, query_order
// throughput on Erdős–Rényi graphs, assign_order cost, memory per event and
// garbage-collection time against chain length. Everything but event creation
// drives the pure core (internal/kronos) in-process, one call at a time, so
// the figures are the core's own cost, without RPC or replication.
//
// Workloads are seeded (math/rand/v2 PCG), so a run with the same seed builds
// the same graphs and asks the same questions; only the timings differ.
// Benchmarks measure and report; they never judge a time (targets are recorded
// beside the figures for the reader). An interval during which the OS took
// the benchmark's thread off the CPU is timed by the thread's CPU clock
// instead of the wall clock (stopwatch.go), so a busy machine distorts the
// in-process figures less.
//
// Nothing here is safe for concurrent use: a suite runs its sub-benchmarks one
// after another on the calling goroutine, which keeps them from disturbing
// each other's timings.
package bench
