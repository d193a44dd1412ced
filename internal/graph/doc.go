// Package graph is a shard's in-memory multi-version property graph: one
// partition's vertices (handle, properties, aliases, out-edges with their own
// properties), every element versioned by refinable timestamps (dissertation
// §3.5.2: a write marks objects with its stamp and a delete is a tombstone,
// never an overwrite), so node programs read a consistent snapshot at their
// stamp while later writes proceed, and old versions go at a GC watermark
// (§4.3). AliasIndex is the partition's share of the alias → handle map.
//
// It is a pure data structure: no goroutines, clocks, I/O or randomness, and
// no output depends on map iteration order. It is not safe for concurrent use,
// except that reads (View, LastWrite, Vertices, Stats and the views they
// return) may run concurrently with each other while nothing writes.
//
// Ordering. Writes are applied in the partition's execution order, which is
// consistent with timestamp order. A read at stamp R sees an element iff
// created ≤ R and not deleted ≤ R; ≤ is decided by vector clock, and for
// concurrent clocks by an Orderer (Kronos), which must be consistent and agree
// with apply order. Collect uses vector clocks only.
//
// Invariants (CheckInvariants; checked after every write and Collect in
// builds with -tags invariants):
//   - at every stamp, at most one version of a vertex, of an edge handle on a
//     vertex, of a property key on an element and of an alias on a vertex is
//     live; a deleted vertex has nothing live;
//   - a failed write changes nothing;
//   - reference counts of interned stamps, handles and keys equal the number
//     of fields naming them; unused ones are freed;
//   - reads at or after the last Collect's watermark are unchanged by it;
//   - LastWrite(h, R) is the newest write ≤ R in the vertex's apply-order
//     write log, even after the vertex was collected (a tombstone).
//
// Memory. Stamps are interned per partition (elements hold 4-byte ids; GC
// replaces creation stamps before the watermark with 0 so old transactions'
// stamps are freed), vertex handles are interned (an edge names its
// destination by id), an edge is 24 bytes plus its handle's bytes in a
// per-vertex arena, and vertices with at least Config.EdgeIndexMin edge
// versions get an open-addressing index on edge handles. A vertex costs about
// 200 bytes. TestMemoryPerEdge measures heap bytes per edge.
package graph
