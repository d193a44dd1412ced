// Package txn defines Weft's write operations and read checks, the backing
// store's key layout, and the pure logic that executes a transaction's writes
// on a store transaction (the gatekeeper's commit step, dissertation §3.5.2).
//
// Execution validates every operation against the store's state at the
// transaction's snapshot plus its own earlier operations (writes to missing or
// deleted elements, duplicate handles and aliases abort with a clear error and
// change nothing), resolves aliases to handles, expands a vertex deletion into
// the deletion of its out-edges, in-edges, properties and aliases, and returns
// the resulting graph operations grouped by owning shard, together with the set
// of vertices the transaction touched (for last-access ordering).
//
// Per-transaction caches (cache.go) spare the store reads whose answers the
// transaction already knows — a vertex record read or written earlier in it,
// an edge of a vertex that had no record or was deleted at the snapshot —
// without changing any check, result, or what the store's read set covers.
//
// ShardOf places vertices and aliases on shards; names of the form
// "_pl|<group>|<rest>" form placement groups that share one shard
// (placement.go), a general co-location feature.
//
// Nothing here is concurrent; an Exec is used by one goroutine.
package txn
