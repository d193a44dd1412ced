// Package bench holds what Weft's benchmark suites share: the JSON result
// document every suite writes (Result, Env, WriteJSON, Finish; the envelope
// is described in bench/README.md), summary statistics and fits (stats.go),
// a log-linear latency histogram (Hist), line charts saved as PNG (Chart),
// progress bars (NewBar), the seeded generators (NewRand), and readings of
// the process and the machine: CPU time (ProcessCPU), settled heap and
// resident set (SettledHeap, SettledRSS), /proc/stat's CPU shares
// (ReadCPUTimes, Env.SetCPUShares).
//
// Each suite is a package below this one, run by a `weft bench` subcommand
// (docs/benchmarks.md):
//
//	kronos   weft bench kronos    the Kronos paper's micro-benchmarks (EuroSys'14 §4.2)
//	tao      weft bench tao       Facebook's TAO mix over a LinkBench-shaped graph
//	scale    weft bench scale     the TAO mix over local clusters of 1–4 gatekeepers and 1–8 shards
//	tau      weft bench tau       coordination per operation vs the announce period τ (Weaver's Figure 5.11)
//	dql      weft bench dql       the Dgraph report's film-data load and 2-hop queries
//	monitor  weft bench monitor   optimistic execution in the key-value store (§VI)
//
// Workloads are seeded (math/rand/v2 PCG, one stream per purpose), so a run
// with the same seed builds the same data and asks the same questions; only
// the timings differ. Benchmarks measure and report; they never judge a
// time (targets are recorded beside the figures for the reader).
//
// Hist is not safe for concurrent use (each client keeps its own and they
// are merged); the rest are functions and values without shared state.
package bench
