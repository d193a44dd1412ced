// Package order refines the order of refinable timestamps (vclock.Stamp):
// vector clocks decide most pairs; the rest go to an Oracle (Kronos) in
// batches, and answers are cached because Kronos never changes one
// (monotonicity).
//
// Oracle is the seam between the shard and gatekeeper cores and Kronos: Local
// wraps an in-process kronos.Graph (weft serve, simulation) and a cluster wraps
// the Kronos client. Resolver is not safe for concurrent use (one per shard);
// Local is.
package order
