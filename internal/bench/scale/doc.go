// Package scale measures how throughput moves with the number of
// gatekeepers and shards (`weft bench scale`, docs/scale-out.md). For each
// shape of a grid of gatekeeper and shard counts it starts a cluster of
// real processes with this binary's `weft cluster up` (Kronos, coordinator,
// PostgreSQL, shards, gatekeepers) in a temporary directory, loads a TAO
// graph (internal/bench/tao) through the gatekeepers, runs the TAO mix and
// a get_node-only mix from clients spread over every gatekeeper, reads the
// CPU every process used (proc.go), and stops the cluster, always, also on
// error or interrupt (cluster.go). It reports ops/s, latency percentiles,
// CPU by role, throughput per core and Kronos traffic per operation, and
// from the CPU each role spent per operation extrapolates, by a stated
// model (model.go), to one machine of --model-cores cores per process.
//
//	weft bench scale --quick                 # 1×1 and 2×2, 5k vertices, 2 s each
//	weft bench scale                         # 3 × 4 shapes, 50k vertices, 10 s per mix
//	weft bench scale --shape 2x4 --shape 4x8
//
// Results go to scale[-quick].json and its plots in --out
// (bench/results/scale). Run measures one shape after another; two runs at
// once would distort each other's figures.
package scale
